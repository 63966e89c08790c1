package optimizer

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// TestValsetIsTheHeldOutSplit: a bundle's valset.json (DSPy's valset) is the held-out
// split: dataset.json is then all train rows, the test scores are measured on valset.json's
// rows only, the results say held_out "valset", and the agent is given neither file.
func TestValsetIsTheHeldOutSplit(t *testing.T) {
	var mu sync.Mutex
	var leaked []string
	runner := &fakeRunner{fail: func(j sandbox.Job) error {
		for _, f := range []string{"dataset.json", ValsetFile} {
			if _, ok := j.Files[f]; ok {
				mu.Lock()
				leaked = append(leaked, f)
				mu.Unlock()
			}
		}
		return nil
	}}
	e := newEnv(t, runner, nil, WithSandboxConcurrency(1))
	all := scriptedDataset()
	train, val := all[:len(all)-6], all[len(all)-6:]
	files := bundleFiles(t)
	files["dataset.json"], _ = json.Marshal(train)
	files[ValsetFile], _ = json.Marshal(val)
	e.start(t)
	sub, err := e.svc.Submit(context.Background(), "alice", request(serveBytes(t, zipFiles(t, files)), 2))
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
	if r.TrainRows != len(train) || r.TestRows != len(val) || r.HeldOut != HeldOutValset || r.TestScore == nil {
		t.Fatalf("train_rows %d test_rows %d held_out %q test_score %v; want %d, %d, valset, a score", r.TrainRows, r.TestRows, r.HeldOut, r.TestScore, len(train), len(val))
	}
	var valInputs, trainInputs []string
	for _, row := range val {
		valInputs = append(valInputs, row.Input)
	}
	for _, row := range train {
		trainInputs = append(trainInputs, row.Input)
	}
	runs := runner.allRuns()
	// The last two runs are the held-out ones (the original and the best agent).
	for _, run := range runs[len(runs)-2:] {
		got := slices.Sorted(slices.Values(run))
		if !slices.Equal(got, slices.Sorted(slices.Values(valInputs))) {
			t.Errorf("a held-out run ran %q, want valset.json's rows", run)
		}
	}
	for _, run := range runs[:len(runs)-2] {
		for _, in := range run {
			if !slices.Contains(trainInputs, in) {
				t.Errorf("a train run ran %q, which is not a dataset.json row", in)
			}
		}
	}
	if len(leaked) > 0 {
		t.Errorf("the agent was given %v", leaked)
	}

	// Without valset.json: the 70/30 split, reported as such.
	sub, err = e.svc.Submit(context.Background(), "alice", request(e.url, 1))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, e.svc, sub.JobID)
	res, _ = e.svc.Results(context.Background(), "alice", sub.JobID)
	if h := res.Results[0].HeldOut; h != HeldOutSplit {
		t.Errorf("held_out without a valset: %q, want split", h)
	}
}

// TestSubmitChecksValset: an unusable valset.json is a 400 at submit naming the file and
// the row, as dataset.json's problems are.
func TestSubmitChecksValset(t *testing.T) {
	e := newEnv(t, &fakeRunner{}, nil) // not started
	for name, c := range map[string]struct{ data, want string }{
		"empty array": {"[]", "valset.json: has 0 rows; at least 1 are required"},
		"not JSON":    {"[{", "valset.json: is not valid JSON"},
		"no answer":   {`[{"input":"a","answer":"b"},{"input":"x","output":"y"}]`, `valset.json: row 1 (counting from 0) has no "answer" (its keys: "input", "output"; rename "output" to "answer")`},
		"JSON Lines":  {"{\"input\":\"a\",\"answer\":\"b\"}\n{\"input\":\"c\",\"answer\":\"d\"}\n", "valset.json: holds one JSON object per line"},
	} {
		files := bundleFiles(t)
		files[ValsetFile] = []byte(c.data)
		_, err := e.svc.Submit(context.Background(), "alice", request(serveBytes(t, zipFiles(t, files)), 1))
		var se *SubmitError
		if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), "input_url: invalid bundle: "+c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}
