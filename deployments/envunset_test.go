package deployments

import (
	"context"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestEnvVariableGoneLeftOut: a stored deployment whose api_key is os.environ/NAME no longer
// stops Sync (the server's start after a restart) once NAME is unset: it is left out of
// routing and listed by Unserved naming the variable, the others are served; with NAME set
// again, the next start serves it.
func TestEnvVariableGoneLeftOut(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	env := map[string]string{"TEAM_KEY": "sk-team"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	service := func() (*Service, *completions.Gateway) {
		t.Helper()
		reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
		g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog()})
		if err != nil {
			t.Fatal(err)
		}
		svc, err := New(Options{Store: st, Gateway: g, Registry: reg, SecretKey: []byte("salt"), LookupEnv: lookup})
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.Sync(ctx); err != nil {
			t.Fatalf("Sync: %v", err)
		}
		return svc, g
	}
	svc, _ := service()
	team, err := svc.Add(ctx, Input{ModelName: "team", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "os.environ/TEAM_KEY"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Add(ctx, Input{ModelName: "other", LiteLLMParams: map[string]any{"model": "openai/gpt-4o-mini", "api_key": "sk-x"}}); err != nil {
		t.Fatal(err)
	}

	delete(env, "TEAM_KEY")
	restarted, g := service()
	if !g.IsModelGroup("other") || g.IsModelGroup("team") {
		t.Errorf("groups after the restart without TEAM_KEY: %v, want other and not team", g.ModelGroups())
	}
	un := restarted.Unserved()
	if len(un) != 1 || un[0].ID != team.ID || !strings.Contains(un[0].Error, "TEAM_KEY") {
		t.Errorf("Unserved: %+v, want team naming TEAM_KEY", un)
	}
	env["TEAM_KEY"] = "sk-team"
	restarted, g = service()
	if !g.IsModelGroup("team") || len(restarted.Unserved()) != 0 {
		t.Errorf("with TEAM_KEY set again: groups %v, unserved %+v", g.ModelGroups(), restarted.Unserved())
	}
}

// TestEnvVariableGoneSaysWhyAndComesBack: a deployment left out because its os.environ/NAME
// variable is unset is listed (Unserved, /model/info's model_info.error) saying it is left
// out, which variable, and that serve's environment is as it was started (restart, or give
// the key with /model/update); a poll with nothing changed in the store keeps it out, and
// once Options.LookupEnv finds the variable (a library user's own lookup) the next poll
// serves it, without a restart or a change of the stored deployments.
func TestEnvVariableGoneSaysWhyAndComesBack(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	env := map[string]string{"TEAM_KEY": "sk-team"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Options{Store: st, Gateway: g, Registry: reg, SecretKey: []byte("salt"), LookupEnv: lookup})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Add(ctx, Input{ModelName: "team", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "os.environ/TEAM_KEY"}}); err != nil {
		t.Fatal(err)
	}
	delete(env, "TEAM_KEY")
	svc.mu.Lock()
	svc.applied = "" // as a restart: the stored deployments applied anew
	svc.mu.Unlock()
	if err := svc.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	un := svc.Unserved()
	if len(un) != 1 || !strings.Contains(un[0].Error, "left out") || !strings.Contains(un[0].Error, "TEAM_KEY") || !strings.Contains(un[0].Error, "restart") {
		t.Fatalf("Unserved without TEAM_KEY: %+v, want it left out naming TEAM_KEY and the restart", un)
	}
	if err := svc.Sync(ctx); err != nil || g.IsModelGroup("team") || len(svc.Unserved()) != 1 {
		t.Fatalf("a poll with TEAM_KEY still unset: err %v, groups %v, unserved %+v", err, g.ModelGroups(), svc.Unserved())
	}
	env["TEAM_KEY"] = "sk-team"
	if err := svc.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if !g.IsModelGroup("team") || len(svc.Unserved()) != 0 {
		t.Errorf("the poll after TEAM_KEY was set: groups %v, unserved %+v, want team served", g.ModelGroups(), svc.Unserved())
	}
}
