package routing_test

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/trainer"
)

// An unknown preference_id is the request's own error, a 404 naming the field, however
// short its timeout: the default must not answer because the timeout passed before the
// preference was looked up.
func TestUnknownPreferenceBeatsTimeoutDefault(t *testing.T) {
	sel, _ := newSelector(t, routing.Options{})
	tiny := 1e-9
	for _, id := range []string{"pref_000000000000000000000000", "pref_nothing"} {
		req := &routing.Request{Messages: userMsg("hi"), LLMProviders: names("acme/x", "acme/y"), PreferenceID: id,
			Timeout: &tiny, Default: &routing.DefaultChoice{Index: new(int)}}
		_, err := sel.Select(t.Context(), "o", req)
		var nf *routing.NotFoundError
		if !errors.As(err, &nf) || nf.Field != "preference_id" {
			t.Fatalf("%s: err = %v, want a *NotFoundError naming preference_id", id, err)
		}
	}
	// another owner's preference is unknown too
	pref, err := sel.CreatePreference(t.Context(), "other", routing.PreferenceRequest{})
	if err != nil {
		t.Fatal(err)
	}
	req := &routing.Request{Messages: userMsg("hi"), LLMProviders: names("acme/x", "acme/y"), PreferenceID: pref.ID,
		Timeout: &tiny, Default: &routing.DefaultChoice{Index: new(int)}}
	if _, err := sel.Select(t.Context(), "o", req); !errors.Is(err, routing.ErrNotFound) {
		t.Fatalf("another owner's preference: err = %v, want not found", err)
	}
	// the owner's own still answers with the default past the timeout
	if resp := mustSelect(t, sel, "other", req); resp.Providers[0].ScoreSource != routing.SourceDefault {
		t.Fatalf("own preference past the timeout: %+v", resp.Providers)
	}
}

// preferenceReadFails is a memstore driver whose reads of preferences fail (a store
// outage), for what a default answers.
type preferenceReadFails struct{ *memstore.Driver }

func (d preferenceReadFails) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	if c == store.Preferences {
		return nil, errors.New("preferences unreadable")
	}
	return d.Driver.Get(ctx, c, key)
}

// A store that cannot read the preference is not the request's error: with a timeout and
// a default, the default answers it, as it answers any other failure of the ranking.
func TestPreferenceStoreFailureLeftToTheDefault(t *testing.T) {
	st := store.New(preferenceReadFails{memstore.NewDriver()})
	t.Cleanup(func() { st.Close() })
	sel := routing.NewSelector(routing.Options{Store: st})
	long := 30.0
	req := &routing.Request{Messages: userMsg("hi"), LLMProviders: names("acme/x", "acme/y"), PreferenceID: "pref_000000000000000000000000",
		Timeout: &long, Default: &routing.DefaultChoice{Index: new(int)}}
	resp, err := sel.Select(t.Context(), "o", req)
	if err != nil {
		t.Fatalf("a store failure with a default: %v, want the default's answer", err)
	}
	if resp.Providers[0].ScoreSource != routing.SourceDefault {
		t.Fatalf("a store failure with a default: %+v, want the default alone", resp.Providers)
	}
}

// An unknown router model id as preference_id is a 404 naming the field however short the
// timeout: TrainerModels tells it apart without running a router (ModelChecker).
func TestUnknownRouterModelBeatsTimeoutDefault(t *testing.T) {
	st := memstore.New()
	t.Cleanup(func() { st.Close() })
	svc, err := trainer.New(st, trainer.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	sel := routing.NewSelector(routing.Options{Store: st, CustomModels: routing.TrainerModels(svc)})
	tiny := 1e-9
	req := &routing.Request{Messages: userMsg("hi"), LLMProviders: names("acme/x", "acme/y"), PreferenceID: "0123456789abcdef01234567",
		Timeout: &tiny, Default: &routing.DefaultChoice{Index: new(int)}}
	_, err = sel.Select(t.Context(), "o", req)
	var nf *routing.NotFoundError
	if !errors.As(err, &nf) || nf.Field != "preference_id" {
		t.Fatalf("an unknown router model under a tiny timeout: err = %v, want a *NotFoundError naming preference_id", err)
	}
}

// preferenceGets counts a memstore driver's reads of preferences.
type preferenceGets struct {
	*memstore.Driver
	n atomic.Int64
}

func (d *preferenceGets) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	if c == store.Preferences {
		d.n.Add(1)
	}
	return d.Driver.Get(ctx, c, key)
}

// A bounded selection under a preference reads the preference once: the early lookup
// that makes an unknown one a 404 hands what it read to the ranking.
func TestBoundedSelectionReadsItsPreferenceOnce(t *testing.T) {
	drv := &preferenceGets{Driver: memstore.NewDriver()}
	st := store.New(drv)
	t.Cleanup(func() { st.Close() })
	sel := routing.NewSelector(routing.Options{Store: st})
	pref, err := sel.CreatePreference(t.Context(), "o", routing.PreferenceRequest{})
	if err != nil {
		t.Fatal(err)
	}
	long := 30.0
	req := &routing.Request{Messages: userMsg("hi"), LLMProviders: names("acme/x", "acme/y"), PreferenceID: pref.ID, Timeout: &long}
	drv.n.Store(0)
	if _, err := sel.Select(t.Context(), "o", req); err != nil {
		t.Fatal(err)
	}
	if got := drv.n.Load(); got != 1 {
		t.Fatalf("a bounded selection read its preference %d times, want 1", got)
	}
}
