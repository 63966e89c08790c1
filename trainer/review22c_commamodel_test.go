package trainer

import (
	"errors"
	"strings"
	"testing"
)

// A model name holding a comma is several models joined, never one: a JSON array element
// "a/x,b/y" (a CSV cell carried into JSON as it was) trained a class "a/x,b/y" that no
// gateway can route, which the router could then recommend as top_model. It is refused,
// naming the field and saying how to list several models.
func TestReview22cModelNameWithComma(t *testing.T) {
	for _, tc := range []struct{ data, field string }{
		{`[{"problem": "p", "correct_models": ["openai/gpt-4o,anthropic/claude-3"]}]`, "correct_models[0]"},
		{`{"problem": "p", "correct_models": ["a/x", "b/y,c/z"]}`, "correct_models[1]"},
		{`[{"problem": "p", "scores": {"a/x,b/y": 1}}]`, "scores key"},
	} {
		_, err := ParseDataset("https://x/d", "", []byte(tc.data))
		var de *DatasetError
		if !errors.As(err, &de) || !strings.Contains(de.Message, tc.field) || !strings.Contains(de.Message, "several models") {
			t.Errorf("%s: got %v; want an error naming %s and saying it lists several models", tc.data, err, tc.field)
		}
	}
	if ValidModelName("a/x,b/y") {
		t.Error(`ValidModelName("a/x,b/y") = true`)
	}
	// The string and CSV forms still split on commas.
	recs, err := ParseDataset("https://x/d", "", []byte(`[{"problem": "p", "correct_models": "a/x, b/y"}]`))
	if err != nil || len(recs) != 1 || len(recs[0].CorrectModels) != 2 {
		t.Fatalf("comma-separated string: %v %+v", err, recs)
	}
}
