package completions

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// The choices of one StreamN are opened together and handed to the caller only once
// every one has started or failed; a started choice holds its slot in flight until the
// caller reads it to its end. A choice that queued for a slot its sibling holds would
// wait for a stream nobody can read before StreamN returns: it must be refused at once
// (at its limit, as before queueing), not held until the request's deadline.
func TestReview26aStreamNChoiceDoesNotWaitForItsSibling(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"g": {Models: []string{"a/m1"}, Limits: []MemberLimits{{MaxParallel: 1}}}}
	})
	h.a.on("m1", step{text: "one"}, step{text: "two"})
	req := groupReq("g")
	req.Stream = true
	req.FaultPolicy.Timeout = ptr(0.3) // the bug's wait ends here rather than at 5 minutes
	m, failed, err := h.g.StreamN(context.Background(), Scope{}, req, 2)
	if err != nil {
		t.Fatalf("StreamN: %v", err)
	}
	defer m.Close()
	if len(m.Choices()) != 1 || len(failed) != 1 {
		t.Fatalf("%d choices started, %d failed; want 1 and 1 (one slot)", len(m.Choices()), len(failed))
	}
	var le *LimitedError
	if !errors.As(failed[0], &le) {
		t.Fatalf("the second choice: %v; want a *LimitedError", failed[0])
	}
	if strings.Contains(le.Error(), "until the request deadline") {
		t.Fatalf("the second choice queued behind its own sibling's slot until the deadline: %v", le)
	}
	if q := queuedOn(h.g, "a/m1"); q != 0 {
		t.Fatalf("%d queued on a/m1", q)
	}
}
