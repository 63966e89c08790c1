package completions

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// A stream whose upstream breaks mid-answer is continued on the next model (mid-stream
// failover: the plan drops the broken call's slot in flight and holds the new one's) by
// the goroutine reading it, while another goroutine closes it: run with -race, the two
// share neither the plan's held slots nor the stream's upstream unsynchronised, and every
// slot in flight is given back once both are done. Repeated, as the two meet at a
// different point each time.
func TestContinuationRacesClose(t *testing.T) {
	for round := range 30 {
		h := newHarness(t, func(o *Options) {
			o.ModelGroups = map[string]ModelGroup{"g": {Models: []string{"a/m1", "b/m2"}, Limits: []MemberLimits{{MaxParallel: 1}, {MaxParallel: 1}}}}
			o.AttemptTimeout, o.FirstTokenTimeout, o.StreamIdleTimeout = time.Minute, time.Minute, time.Minute
		})
		gb := newSlotGated(h.b)
		h.g.opts.Providers = fakeRegistry{"a": h.a, "b": s8Prefill{fakeProvider: gb.fakeProvider}}
		h.g.opts.Providers = fakeRegistry{"a": h.a, "b": gatedPrefill{gb}}
		h.a.on("m1", step{text: "one two three four", breakAt: 2, breakErr: &providers.Error{Kind: providers.KindStreamBroken, Message: "cut"}})
		h.b.on("m2", step{text: "five six"})
		req := groupReq("g")
		req.Stream = true
		st, err := h.g.Stream(context.Background(), Scope{}, req)
		if err != nil {
			t.Fatal(err)
		}
		read := make(chan struct{})
		go func() {
			defer close(read)
			for {
				if _, err := st.Recv(); err != nil {
					return
				}
			}
		}()
		c := <-gb.started // the continuation is opening on b/m2, its slot held
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			st.Close()
		}()
		if round%2 == 0 {
			close(c.release) // the continuation may take over as the stream closes
		} else {
			<-closed // closed first: the continuation's call ends with the stream
			close(c.release)
		}
		<-read
		<-closed
		st.Close()
		for _, m := range []string{"a/m1", "b/m2"} {
			if n := inFlightOf(h.g, m); n != 0 {
				t.Fatalf("round %d: %s has %d calls in flight after the stream closed; want 0", round, m, n)
			}
		}
	}
}

// gatedPrefill is a slotGatedProvider that continues partial answers.
type gatedPrefill struct{ *slotGatedProvider }

func (gatedPrefill) SupportsPrefill() bool { return true }
