package completions_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// TestAllFailedTransient: a failure is transient when every model was out of service for
// the while (rate limited, overloaded, timed out, connection or stream broken, breaker open,
// at its rpm) — a lost hedge aside — and not when any attempt failed otherwise, answered,
// or was made up by mock_testing_fallbacks.
func TestAllFailedTransient(t *testing.T) {
	err := func(kind string) completions.Attempt {
		return completions.Attempt{Model: "p/m", Outcome: completions.OutcomeError, Kind: kind}
	}
	skipped := func(kind string) completions.Attempt {
		return completions.Attempt{Model: "p/m", Outcome: completions.OutcomeSkipped, Kind: kind}
	}
	for _, c := range []struct {
		name     string
		attempts []completions.Attempt
		want     bool
	}{
		{"none", nil, false},
		{"overloaded and rate limited", []completions.Attempt{err("overloaded"), err("rate_limited"), err("timeout"), err("connection"), err("stream_broken")}, true},
		{"breaker open, at its rpm, out of time", []completions.Attempt{skipped("circuit_open"), skipped("limit_reached"), skipped("timeout")}, true},
		{"a lost hedge beside an overload", []completions.Attempt{{Model: "p/m", Outcome: completions.OutcomeCancelled, Kind: "hedged"}, err("overloaded")}, true},
		{"only a lost hedge", []completions.Attempt{{Model: "p/m", Outcome: completions.OutcomeCancelled, Kind: "hedged"}}, false},
		{"an overload and a refused request", []completions.Attempt{err("overloaded"), err("bad_request")}, false},
		{"quota spent", []completions.Attempt{err("quota_exceeded")}, false},
		{"auth", []completions.Attempt{err("overloaded"), err("auth")}, false},
		{"bad response", []completions.Attempt{err("bad_response")}, false},
		{"unclassified", []completions.Attempt{err("unknown")}, false},
		{"client gone", []completions.Attempt{{Model: "p/m", Outcome: completions.OutcomeCancelled, Kind: "client_gone"}}, false},
		{"mocked", []completions.Attempt{{Model: "p/m", Outcome: completions.OutcomeError, Kind: "rate_limited", Mock: true}}, false},
	} {
		if got := (&completions.AllFailedError{Attempts: c.attempts}).Transient(); got != c.want {
			t.Errorf("%s: Transient() = %v, want %v", c.name, got, c.want)
		}
	}
}

// fakeObserver is a test fake of the gateway's Observer that keeps nothing.
type fakeObserver struct{}

func (fakeObserver) ObserveRequest(context.Context, completions.RequestRecord) {}

// TestTransientFlag: the gateway sets WithTransientFlag's flag for a request every model of
// which was overloaded, and not for one an upstream refused.
func TestTransientFlag(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusServiceUnavailable
		if r.Header.Get("X-Refuse") != "" {
			status = http.StatusBadRequest
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(`{"error":{"message":"no","type":"server_error"}}`))
	}))
	defer up.Close()
	for _, refuse := range []bool{false, true} {
		h := map[string]string{}
		if refuse {
			h["X-Refuse"] = "1"
		}
		g, err := completions.New(completions.Options{Observer: fakeObserver{}, Backoff: completions.Backoff{Initial: 1, Max: 1},
			Providers: providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.URL + "/v1", APIKey: "k", Headers: h}))})
		if err != nil {
			t.Fatal(err)
		}
		var transient atomic.Bool
		ctx := completions.WithTransientFlag(context.Background(), &transient)
		_, err = g.Complete(ctx, completions.Scope{Owner: "me"}, &completions.Request{Models: []string{"up/a", "up/b"},
			Messages: []completions.Message{completions.TextMessage("user", "hi")}})
		if !errors.Is(err, completions.ErrAllFailed) || transient.Load() == refuse {
			t.Errorf("refused %v: err %v, transient flag %v", refuse, err, transient.Load())
		}
	}
}
