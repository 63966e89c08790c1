package completions

import (
	"context"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// panickingProvider is a provider adapter with a bug: its calls panic.
type panickingProvider struct{ *fakeProvider }

func (panickingProvider) Complete(context.Context, *providers.Request) (*providers.Response, error) {
	panic("adapter bug")
}

func (panickingProvider) Stream(context.Context, *providers.Request) (providers.Stream, error) {
	panic("adapter bug")
}

// A call that panics (an adapter's bug; the server recovers and serves on) gives its
// max_parallel slot back: else the member would be at its limit for good.
func TestReview25iPanickingCallGivesItsSlotBack(t *testing.T) {
	for _, stream := range []bool{false, true} {
		h, _ := limitsHarness(t, map[string]ModelGroup{"g": {Models: []string{"a/m1"}, Limits: []MemberLimits{{MaxParallel: 1}}}})
		h.g.opts.Providers = fakeRegistry{"a": panickingProvider{h.a}, "b": h.b}
		func() {
			defer func() {
				if v := recover(); v != "adapter bug" {
					t.Fatalf("stream=%v: recovered %v, want the adapter's panic", stream, v)
				}
			}()
			req := groupReq("g")
			if stream {
				req.Stream = true
				h.g.Stream(context.Background(), Scope{}, req)
			} else {
				h.g.Complete(context.Background(), Scope{}, req)
			}
		}()
		if n := inFlightOf(h.g, "a/m1"); n != 0 {
			t.Fatalf("stream=%v: %d calls of a/m1 in flight after the panicking request; want 0", stream, n)
		}
	}
}
