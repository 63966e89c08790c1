package trainer

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// TestReview22nNotDiamondHeaderInvalidUTF8: dbff243 read a Not Diamond CSV's prompts with
// each invalid UTF-8 byte as U+FFFD, as the JSON readers read a string, but not its header,
// whose score columns name the models: a model name kept its raw invalid byte (it still
// passed as provider/model), so the records named a model that JSON — the llm_providers of
// the request, a record saved and read back — spells with U+FFFD, and llm_providers naming
// that model as JSON gives it found no score column. The header is read as the cells are.
func TestReview22nNotDiamondHeaderInvalidUTF8(t *testing.T) {
	data := "prompt,openai/gpt-\xe9/score,openai/b/score\nhello,0.9,0.1\nbye,0.2,0.8\n"
	const want = "openai/gpt-\uFFFD"

	recs, err := ParseNotDiamondCSV("nd.csv", []byte(data), NotDiamondCSV{PromptColumn: "prompt"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		for m := range r.Scores {
			if !utf8.ValidString(m) {
				t.Errorf("%s: scores key %q is not valid UTF-8", r.Source, m)
			}
		}
		for _, m := range r.CorrectModels {
			if !utf8.ValidString(m) {
				t.Errorf("%s: correct model %q is not valid UTF-8", r.Source, m)
			}
		}
		if _, ok := r.Scores[want]; !ok {
			t.Errorf("%s: scores %v have no %q", r.Source, r.Scores, want)
		}
	}

	// The models (llm_providers) as a JSON request spells them.
	var opts NotDiamondCSV
	if err := json.Unmarshal([]byte(`{"prompt_column":"prompt","models":["openai/gpt-`+"\xe9"+`"]}`), &opts); err != nil {
		t.Fatal(err)
	}
	if opts.Models[0] != want {
		t.Fatalf("JSON read llm_providers[0] as %q, want %q", opts.Models[0], want)
	}
	recs, err = ParseNotDiamondCSV("nd.csv", []byte(data), opts)
	if err != nil {
		t.Fatalf("llm_providers naming the header's model as JSON reads it: %v", err)
	}
	if len(recs) != 2 || len(recs[0].Scores) != 1 {
		t.Fatalf("records %+v; want 2 scoring one model", recs)
	}
}
