package trainer

import (
	"strings"
	"testing"
)

// TestReview22mCSVInvalidUTF8AsJSON: a records CSV was checked for UTF-8 in its first 4 KiB
// only (format detection), so an invalid byte further on passed into problem (and task,
// and Not Diamond's prompt) as it was, while the JSON and JSONL readers read the same value
// with each invalid byte as U+FFFD (encoding/json); CSV now reads it as JSON does, and the
// same row gives the same record in both formats.
func TestReview22mCSVInvalidUTF8AsJSON(t *testing.T) {
	pad := strings.Repeat("x", 5000) // past the 4 KiB format detection reads
	problem := "caf\xe9 \xff\xfe ok" // Latin-1 é, then two stray bytes
	csvData := "problem,correct_models,task\n" +
		pad + ",openai/a,t1\n" +
		problem + ",openai/b,t\xe92\n"
	jsonlData := `{"problem":"` + pad + `","correct_models":["openai/a"],"task":"t1"}` + "\n" +
		`{"problem":"` + problem + `","correct_models":["openai/b"],"task":"t` + "\xe9" + `2"}` + "\n"
	fromCSV, err := ParseDataset("d.csv", "", []byte(csvData))
	if err != nil {
		t.Fatal(err)
	}
	fromJSONL, err := ParseDataset("d.jsonl", "", []byte(jsonlData))
	if err != nil {
		t.Fatal(err)
	}
	want := "caf\uFFFD \uFFFD\uFFFD ok"
	if fromJSONL[1].Problem != want {
		t.Fatalf("the JSONL reader's reading changed: %q", fromJSONL[1].Problem)
	}
	if fromCSV[1].Problem != fromJSONL[1].Problem || fromCSV[1].Task != fromJSONL[1].Task {
		t.Errorf("CSV row read as problem %q task %q; JSONL as %q %q", fromCSV[1].Problem, fromCSV[1].Task, fromJSONL[1].Problem, fromJSONL[1].Task)
	}

	joint := "prompt,openai/a/score,openai/b/score\n" + pad + ",1,0\n" + problem + ",0,1\n"
	recs, err := ParseNotDiamondCSV("joint.csv", []byte(joint), NotDiamondCSV{PromptColumn: "prompt"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range recs {
		if strings.HasPrefix(r.Problem, "caf") {
			found = true
			if r.Problem != want {
				t.Errorf("Not Diamond prompt read as %q, want %q", r.Problem, want)
			}
		}
	}
	if !found {
		t.Errorf("Not Diamond CSV: no record of the second row: %+v", recs)
	}
}
