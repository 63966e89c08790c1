package optimizer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// TestDatasetRowsTakeJSONValues: a row's input and answer had to be strings; a DSPy
// Example's fields may be numbers, booleans, lists or dicts. Any JSON value but null is now
// accepted and given to the agent and to score as its JSON text (compacted, otherwise as
// written); a string stays as it is.
func TestDatasetRowsTakeJSONValues(t *testing.T) {
	files := bundleFiles(t)
	var ds strings.Builder
	ds.WriteString(`[{"input": {"question": "q", "context": [1, 2.50]}, "answer": 42},` +
		`{"input": "plain", "answer": ["a", {"b": true}]},` +
		`{"input": 7, "answer": false},` +
		`{"input": "{\"looks\": \"like JSON\"}", "answer": "4.20"}`)
	for i := range 6 {
		fmt.Fprintf(&ds, `,{"input": "row %d", "answer": 1e3}`, i)
	}
	ds.WriteString("]")
	files["dataset.json"] = []byte(ds.String())
	b, err := ReadBundle(zipFiles(t, files))
	if err != nil {
		t.Fatal(err)
	}
	want := []sandbox.Row{
		{Input: `{"question":"q","context":[1,2.50]}`, Answer: "42"},
		{Input: "plain", Answer: `["a",{"b":true}]`},
		{Input: "7", Answer: "false"},
		{Input: `{"looks": "like JSON"}`, Answer: "4.20"},
		{Input: "row 0", Answer: "1e3"},
	}
	for i, w := range want {
		if b.Rows[i] != w {
			t.Errorf("row %d = %+v, want %+v", i, b.Rows[i], w)
		}
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(b.Rows[0].Input), &back); err != nil || back["question"] != "q" {
		t.Errorf("the object input does not read back as JSON: %v %v", back, err)
	}
}

// TestNumericAnswersScoreAsStrings: a dataset whose "count" answers are JSON numbers (3)
// gives the same job, scores and all, as the one whose answers are the strings ("3"): the
// metric compares the prediction "3" with the expected "3" either way. An object input
// reaches the agent as its JSON text.
func TestNumericAnswersScoreAsStrings(t *testing.T) {
	run := func(dataset []byte) (ModelResult, []sandbox.Row) {
		var mu sync.Mutex
		var seen []sandbox.Row
		runner := &fakeRunner{fail: func(j sandbox.Job) error {
			mu.Lock()
			seen = append(seen, j.Rows...)
			mu.Unlock()
			return nil
		}}
		e := newEnv(t, runner, nil, WithSandboxConcurrency(1))
		files := bundleFiles(t)
		files["dataset.json"] = dataset
		e.start(t)
		sub, err := e.svc.Submit(context.Background(), "alice", request(serveBytes(t, zipFiles(t, files)), 3))
		if err != nil {
			t.Fatal(err)
		}
		if st := waitFor(t, e.svc, sub.JobID); st.Status != StatusCompleted {
			t.Fatalf("status %s (%q)", st.Status, st.ErrorMessage)
		}
		res, err := e.svc.Results(context.Background(), "alice", sub.JobID)
		if err != nil {
			t.Fatal(err)
		}
		r := res.Results[0]
		r.AgentCodeURL = ""
		for i := range r.History {
			r.History[i].DurationMS = 0
		}
		return r, seen
	}
	var strs, nums []map[string]any
	for _, row := range scriptedDataset() {
		strs = append(strs, map[string]any{"input": row.Input, "answer": row.Answer})
		var answer any = row.Answer
		if strings.HasPrefix(row.Input, "count: ") {
			answer = json.Number(row.Answer)
		}
		nums = append(nums, map[string]any{"input": row.Input, "answer": answer})
	}
	a, _ := json.Marshal(strs)
	b, _ := json.Marshal(nums)
	if !strings.Contains(string(b), `"answer":3`) {
		t.Fatalf("the numeric dataset has no numeric answer: %s", b)
	}
	withStrings, _ := run(a)
	withNumbers, _ := run(b)
	ja, _ := json.Marshal(withStrings)
	jb, _ := json.Marshal(withNumbers)
	if string(ja) != string(jb) {
		t.Fatalf("numeric answers gave another job:\n%s\n%s", ja, jb)
	}
	if withNumbers.IterationsKept == 0 || *withNumbers.TrainScore <= *withNumbers.BaselineScore {
		t.Fatalf("the scripted job learned nothing, the comparison is vacuous: %s", jb)
	}

	objects := append([]map[string]any{{"input": map[string]any{"question": "q"}, "answer": 1}}, strs...)
	c, _ := json.Marshal(objects)
	_, seen := run(c)
	found := false
	for _, row := range seen {
		if row.Input == `{"question":"q"}` && row.Answer == "1" {
			found = true
		}
	}
	if !found {
		t.Errorf("the object input did not reach the agent as JSON text")
	}
}

// TestSeveralInputFieldsHint: a DSPy Example of several input fields (question and context)
// without "input" is told it may put them in one object under "input".
func TestSeveralInputFieldsHint(t *testing.T) {
	var ds strings.Builder
	ds.WriteString(`[{"question":"q","context":"c","answer":"a"}`)
	for range 9 {
		ds.WriteString(`,{"input":"i","answer":"a"}`)
	}
	ds.WriteString("]")
	_, err := parseRows("dataset.json", []byte(ds.String()), MinDatasetRows)
	want := `dataset.json: row 0 (counting from 0) has no "input" (its keys: "answer", "context", "question"; rename "question" to "input", or put the input fields in one object: {"input": {…}, "answer": …})`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

// TestDatasetWithByteOrderMark: a dataset.json (or valset.json) saved by a Windows editor or
// PowerShell's Out-File starts with a UTF-8 byte order mark, and was refused as "not valid
// JSON: invalid character 'ï'"; the mark is now skipped and the rows read as without it.
func TestDatasetWithByteOrderMark(t *testing.T) {
	files := bundleFiles(t)
	plain, err := ReadBundle(zipFiles(t, files))
	if err != nil {
		t.Fatal(err)
	}
	files["dataset.json"] = append([]byte("\ufeff"), files["dataset.json"]...)
	files[ValsetFile] = []byte("\ufeff" + `[{"input": "held out", "answer": "x"}]`)
	b, err := ReadBundle(zipFiles(t, files))
	if err != nil {
		t.Fatalf("a dataset.json with a byte order mark: %v", err)
	}
	if len(b.Rows) != len(plain.Rows) || b.Rows[0] != plain.Rows[0] {
		t.Errorf("rows %+v…, want %+v…", b.Rows[0], plain.Rows[0])
	}
	if len(b.Valset) != 1 || b.Valset[0] != (sandbox.Row{Input: "held out", Answer: "x"}) {
		t.Errorf("valset %+v", b.Valset)
	}
}
