package completions

import (
	"context"
	"errors"
	"testing"
	"time"
)

// review17d: ResponseStream.complete returns at guardAnswer before accountParts, so when a
// post_call guardrail blocks a streamed answer that was continued on another model after
// the first broke mid-answer (or had a hedged start that lost), the earlier parts —
// tokens the upstream billed — never reach the ledger: a blocked answer is cheaper than
// an allowed one and the key's spend is understated. (chargeUnfinished, the failure path,
// does bill them.) Fix: call accountParts before guardAnswer (or in the block path too).
func TestReview17dBlockedContinuedStreamBillsItsParts(t *testing.T) {
	ledger := &recordingLedger{}
	g, up, _ := faultGatewayWith(t, func(o *Options) {
		o.Ledger = ledger
		o.Guardrails = []GuardrailConfig{{Name: "paris", Kind: GuardrailRegex, Mode: GuardrailPostCall, DefaultOn: true, Patterns: []string{`capital of France`}}}
	})
	up.on("primary", cutAfter(primaryAnswer, 2))
	up.on("backup", continueFrom(primaryAnswer))
	req := userReq("What is the capital of France?", "up/primary")
	req.FallbackModels = []string{"pf/backup"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := g.Stream(ctx, Scope{Owner: "k"}, req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = drain(t, st)
	if !errors.Is(err, ErrGuardrailBlocked) {
		t.Fatalf("stream ended with %v, want the guardrail's block", err)
	}
	if n := len(ledger.all()); n != 2 {
		t.Errorf("%d ledger entries, want 2: the broken part and the continuation were both billed by the upstream", n)
	}
}
