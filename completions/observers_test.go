package completions

import (
	"context"
	"testing"
)

func TestObserversFanOut(t *testing.T) {
	a, b := &recordingObserver{}, &recordingObserver{}
	if JoinObservers(nil, nil) != nil {
		t.Fatal("no observers is not nil")
	}
	if o := JoinObservers(nil, a); o != Observer(a) {
		t.Fatalf("one observer wrapped: %T", o)
	}
	o := JoinObservers(a, nil, b)
	o.ObserveRequest(context.Background(), RequestRecord{Owner: "x", Outcome: RequestOK})
	if a.take(t).Owner != "x" || b.take(t).Owner != "x" {
		t.Fatal("not fanned out")
	}
}
