package completions

import (
	"context"
	"errors"
	"net/http"
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
		{"gateway closed", ErrGatewayClosed, ErrGatewayClosed},
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

// TestRecordCutByServerWhileCalling: a request cut with the server's cause while its
// upstream call was under way, streamed or not, is recorded cancelled with CutBy that
// cause, its attempt Kind cut.
func TestRecordCutByServerWhileCalling(t *testing.T) {
	shuttingDown := errors.New("server: shutting down")
	for _, stream := range []bool{false, true} {
		obs := &recordingObserver{}
		g, up, _ := faultGatewayWith(t, func(o *Options) { untimed(o); o.Observer = obs })
		arrived := make(chan struct{}, 1)
		up.on("primary", func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
			arrived <- struct{}{}
			<-r.Context().Done()
		})
		ctx, cancel := context.WithCancelCause(context.Background())
		go func() { <-arrived; cancel(shuttingDown) }()
		req := userReq("hi", "up/primary")
		req.MaxRetries = intp(0)
		var err error
		if stream {
			var st *ResponseStream
			if st, err = g.Stream(ctx, Scope{}, req); err == nil {
				_, err = drain(t, st)
			}
		} else {
			_, err = g.Complete(ctx, Scope{}, req)
		}
		if err == nil {
			t.Fatalf("stream=%v: a cut request answered", stream)
		}
		r := obs.take(t)
		if r.Outcome != RequestCancelled || !errors.Is(r.CutBy, shuttingDown) || len(r.Attempts) != 1 || r.Attempts[0].Kind != "cut" {
			t.Errorf("stream=%v: recorded %s CutBy %v attempts %+v", stream, r.Outcome, r.CutBy, r.Attempts)
		}
	}
}
