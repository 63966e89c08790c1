package telemetry

import (
	"strconv"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestLegacyFlatMarkerCountsEveryOmittedTurn: when gen_ai.prompt itself had to leave the
// earliest turns out (its first element says how many) and the flattened attributes then
// keep only the newest of what it kept, gen_ai.prompt.0.content says how many turns of the
// prompt are missing from the flattened ones, not how many elements of the bounded JSON.
func TestLegacyFlatMarkerCountsEveryOmittedTurn(t *testing.T) {
	r := chatRecord()
	r.Prompt.Messages = nil
	const turns = 1000
	for i := range turns {
		r.Prompt.Messages = append(r.Prompt.Messages, providers.Message{Role: "user", Content: "t" + strconv.Itoa(i)})
	}
	sp := chatSpanStub(t, observedSpans(t, TracingOptions{CaptureContent: true, LegacyContent: true, MaxContentBytes: 4096}, r))
	kept := 0
	for i := 1; ; i++ {
		if _, ok := attrOf(sp.Attributes, "gen_ai.prompt."+strconv.Itoa(i)+".role"); !ok {
			break
		}
		kept++
	}
	if v, _ := attrOf(sp.Attributes, "gen_ai.prompt."+strconv.Itoa(kept)+".content"); v.AsString() != "t"+strconv.Itoa(turns-1) {
		t.Fatalf("the last flattened turn is %q", v.AsString())
	}
	want := "…[" + strconv.Itoa(turns-kept) + " earlier messages omitted]"
	if v, _ := attrOf(sp.Attributes, "gen_ai.prompt.0.content"); v.AsString() != want {
		t.Errorf("gen_ai.prompt.0.content = %q, want %q (%d turns, %d flattened)", v.AsString(), want, turns, kept)
	}
}
