package completions

import (
	"context"
	"errors"
	"testing"
)

// TestRecordCutByServer: a request whose context the server cancelled with a cause of its
// own (its graceful shutdown) is recorded cancelled with that cause as CutBy, so metrics
// can count the 503 its client got; one whose caller left (a plain cancel) or a background
// response its owner cancelled has no CutBy.
func TestRecordCutByServer(t *testing.T) {
	shuttingDown := errors.New("server: shutting down")
	for _, tc := range []struct {
		name  string
		cause error
		want  error
	}{
		{"shutdown", shuttingDown, shuttingDown},
		{"caller left", nil, nil},
		{"background cancelled", errBackgroundCancelled, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := &recordingObserver{}
			g, err := New(Options{Providers: fakeRegistry{}, Prices: fakePrices{}, Observer: obs})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(tc.cause)
			g.ObserveRefusedAsking(ctx, Scope{}, "", false, "openai/gpt-4o", context.Canceled)
			r := obs.take(t)
			if r.Outcome != RequestCancelled {
				t.Fatalf("outcome %q, want %q", r.Outcome, RequestCancelled)
			}
			if !errors.Is(r.CutBy, tc.want) || (tc.want == nil) != (r.CutBy == nil) {
				t.Errorf("CutBy %v, want %v", r.CutBy, tc.want)
			}
		})
	}
}
