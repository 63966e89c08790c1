package routing_test

import (
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
)

// An integral max_model_depth or context_length in any notation is the integer written
// (529826b); read through float64, a number with a fraction part too small for float64 to
// keep (2.0000000000000001, 1e-400) was taken as an integer (2, or 0 refused only as "must
// be at least 1"), and 9007199254740993.0 became 9007199254740992.
func TestReview22kIntegralNumbersAreExact(t *testing.T) {
	msg := `"messages":[{"role":"user","content":"hi"}]`
	cands := func(ctx string) string {
		return `"llm_providers":[{"name":"openai/gpt-4o","context_length":` + ctx + `},{"name":"openai/gpt-4o-mini"}]`
	}
	req, err := routing.ParseRequest([]byte(`{` + msg + `,` + cands("9007199254740993.0") + `,"max_model_depth":20e-1}`))
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := req.Candidates()
	if req.MaxModelDepth == nil || *req.MaxModelDepth != 2 || len(cs) != 2 || cs[0].ContextLength == nil || *cs[0].ContextLength != 9007199254740993 {
		t.Errorf("max_model_depth 20e-1, context_length 9007199254740993.0: %v, %+v", req.MaxModelDepth, cs)
	}
	for _, c := range []struct{ body, field string }{
		{cands("1") + `,"max_model_depth":2.0000000000000001`, "max_model_depth"},
		{cands("1") + `,"max_model_depth":1e-400`, "max_model_depth"},
		{cands("128000.00000000000001"), "llm_providers[0].context_length"},
	} {
		_, err := routing.ParseRequest([]byte(`{` + msg + `,` + c.body + `}`))
		if err == nil || !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), "must be an integer") {
			t.Errorf("%s: %v, want %s refused as not an integer", c.body, err, c.field)
		}
	}
}
