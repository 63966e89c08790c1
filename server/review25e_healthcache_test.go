package server

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// review25eHealthServer is a server with background checks whose monitor checks only what
// only lists (nil: the model groups' members, the default); the monitor is not run: the test
// runs its rounds with Check. The upstream is OpenAI's format under the name "openai", so the
// catalogue's openai models are deployments outside any group.
func review25eHealthServer(t *testing.T, only func(g *completions.Gateway) []completions.Deployment) (*Server, *completions.HealthMonitor, *scriptedUpstream) {
	t.Helper()
	up := &scriptedUpstream{calls: map[string]int{}, down: map[string]bool{}}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "sk-test"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		ModelGroups: map[string]completions.ModelGroup{"grp": {Models: []string{"openai/gpt-4o", "openai/gpt-4.1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	opts := completions.HealthMonitorOptions{Interval: time.Hour}
	if only != nil {
		opts.Deployments = func() []completions.Deployment { return only(g) }
	}
	m, err := completions.NewHealthMonitor(g, opts)
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	for _, o := range []Option{Completions(g), BackgroundModelHealth(m)} {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	return s, m, up
}

// TestReview25eHealthUncoveredBeforeFirstRound: before the first background round has ended,
// /health?model= naming a catalogued model outside every group (which the background never
// checks) is checked on the spot, as after that round and as the README says, not answered
// with empty lists as if the model were unknown.
func TestReview25eHealthUncoveredBeforeFirstRound(t *testing.T) {
	s, _, up := review25eHealthServer(t, nil)
	h := cachedHealthOf(t, do(t, s, "GET", "/health?model=openai/gpt-4o-mini", testKey, ""))
	if h.HealthyCount != 1 || h.Healthy[0]["model"] != "openai/gpt-4o-mini" || h.CheckedAt == nil {
		t.Errorf("before the first round, model=openai/gpt-4o-mini: %+v, want it checked now", h)
	}
	if n := up.total(); n != 1 {
		t.Errorf("%d upstream calls, want the one check of openai/gpt-4o-mini", n)
	}
	// A group member before the first round: empty lists, no call (the round will say).
	h = cachedHealthOf(t, do(t, s, "GET", "/health?model=grp", testKey, ""))
	if h.HealthyCount+h.UnhealthyCount != 0 || h.CheckedAt != nil {
		t.Errorf("before the first round, model=grp: %+v, want empty lists", h)
	}
	if n := up.total(); n != 1 {
		t.Errorf("%d upstream calls, want still 1", n)
	}
}

// TestReview25eHealthPartlyCovered: when the background checks only some of the deployments
// asked for, /health checks them all now rather than answering the covered ones alone (the
// others silently missing from both lists).
func TestReview25eHealthPartlyCovered(t *testing.T) {
	s, m, up := review25eHealthServer(t, func(g *completions.Gateway) []completions.Deployment {
		return g.GroupDeployments()[:1] // grp's openai/gpt-4o only
	})
	m.Check(context.Background())
	if n := up.total(); n != 1 {
		t.Fatalf("%d upstream calls in the round, want 1", n)
	}
	h := cachedHealthOf(t, do(t, s, "GET", "/health?model=grp", testKey, ""))
	if h.HealthyCount != 2 {
		t.Errorf("model=grp, one of its two members checked in the background: %+v, want both", h)
	}
	// Wholly covered: answered from the round, no call.
	before := up.total()
	h = cachedHealthOf(t, do(t, s, "GET", "/health?model_id="+completions.DeploymentID("grp", "openai/gpt-4o"), testKey, ""))
	if h.HealthyCount != 1 || h.Healthy[0]["model_name"] != "grp" {
		t.Errorf("model_id of grp's openai/gpt-4o: %+v", h)
	}
	if n := up.total(); n != before {
		t.Errorf("%d upstream calls for a covered deployment, want none", n-before)
	}
}
