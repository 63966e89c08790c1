package server

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/sandbox"
)

// serveBundle serves a ZIP of examples/agent-bundle's agent.py and eval.py with dataset as
// its dataset.json (and extra's files) and returns its URL.
func serveBundle(t *testing.T, dataset string, extra ...map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range []string{"agent.py", "eval.py"} {
		b, err := os.ReadFile(filepath.Join("..", "examples", "agent-bundle", n))
		if err != nil {
			t.Fatal(err)
		}
		w, _ := zw.Create(n)
		w.Write(b)
	}
	w, _ := zw.Create("dataset.json")
	w.Write([]byte(dataset))
	for _, files := range extra {
		for n, content := range files {
			w, _ := zw.Create(n)
			w.Write([]byte(content))
		}
	}
	zw.Close()
	data := buf.Bytes()
	bs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(data) }))
	t.Cleanup(bs.Close)
	return bs.URL + "/bundle.zip"
}

// TestOptimizeSubmitRefusesBadDataset: a bundle whose dataset.json the job could not use is
// a 400 at submit naming input_url, the file and the row; no job is made. A good one queues.
func TestOptimizeSubmitRefusesBadDataset(t *testing.T) {
	e := optimizeServer(t, fakeAgentRunner{block: func(sandbox.Job) bool { return true }})
	rows := `{"input":"a","answer":"b"},{"input":"a","answer":"b"},{"input":"a","answer":"b"},{"input":"a","answer":"b"},{"input":"a","answer":"b"},` +
		`{"input":"a","answer":"b"},{"input":"a","answer":"b"},{"input":"a","answer":"b"},{"input":"a","answer":"b"},{"input":"a","answer":"b"}`
	for name, c := range map[string]struct{ dataset, want string }{
		"not JSON":   {"[{input: a}]", "input_url: invalid bundle: dataset.json: is not valid JSON"},
		"wrong type": {`{"rows": [` + rows + `]}`, `input_url: invalid bundle: dataset.json: is a JSON object (the rows look to be under "rows"`},
		"empty":      {"[]", "input_url: invalid bundle: dataset.json: has 0 rows; at least 10 are required"},
		"no answer":  {"[" + rows + `,{"input":"x","label":"y"}]`, `input_url: invalid bundle: dataset.json: row 10 (counting from 0) has no "answer" (its keys: "input", "label"; rename "label" to "answer")`},
	} {
		r := e.call(t, "POST", "/api/v1/optimize", testKey, `{"optimizer":"agentopt","input_url":"`+serveBundle(t, c.dataset)+`","target_models":["scripted/task"]}`)
		if r.status != http.StatusBadRequest || !strings.HasPrefix(r.body["message"].(string), c.want) {
			t.Errorf("%s: %d %s, want 400 %q", name, r.status, r.raw, c.want)
		}
	}
	r := e.call(t, "POST", "/api/v1/optimize", testKey, `{"optimizer":"agentopt","input_url":"http://127.0.0.1:1/gone.zip","target_models":["scripted/task"]}`)
	if r.status != http.StatusBadRequest || !strings.Contains(r.raw, "input_url: the bundle could not be fetched") {
		t.Errorf("unreachable bundle: %d %s", r.status, r.raw)
	}
	if r := e.call(t, "GET", "/api/v1/optimize/jobs", testKey, ""); r.status != 200 || len(r.body["data"].([]any)) != 0 {
		t.Fatalf("jobs after refusals: %d %s", r.status, r.raw)
	}
	r = e.call(t, "POST", "/api/v1/optimize", testKey, `{"optimizer":"agentopt","input_url":"`+e.url+`","target_models":["scripted/task"]}`)
	if r.status != http.StatusAccepted || r.body["status"] != "queued" {
		t.Fatalf("good bundle: %d %s", r.status, r.raw)
	}
}

// TestOptimizeSeedAndMetric: the submit body's seed (extension) draws the job's split and
// is reported in its results with the metric eval.py names; a seed that is not a
// non-negative integer is a 422 naming it.
func TestOptimizeSeedAndMetric(t *testing.T) {
	e := optimizeServer(t, fakeAgentRunner{})
	for _, bad := range []string{`-1`, `1.5`, `"7"`} {
		r := e.call(t, "POST", "/api/v1/optimize", testKey, `{"optimizer":"agentopt","input_url":"`+e.url+`","target_models":["scripted/task"],"seed":`+bad+`}`)
		if r.status != 422 || !strings.Contains(r.raw, "seed") {
			t.Errorf("seed %s: %d %s", bad, r.status, r.raw)
		}
	}
	for _, seed := range []uint64{7, math.MaxUint64} { // the largest is kept exact, not rounded as a float
		r := e.call(t, "POST", "/api/v1/optimize", testKey, `{"optimizer":"agentopt","input_url":"`+e.url+`","target_models":["scripted/task"],"n_iterations":1,"seed":`+strconv.FormatUint(seed, 10)+`}`)
		if r.status != 202 {
			t.Fatalf("submit: %d %s", r.status, r.raw)
		}
		id := r.body["job_id"].(string)
		e.wait(t, id)
		r = e.call(t, "GET", "/api/v1/optimize/results?job_id="+id, testKey, "")
		var res optimizer.Results
		if err := json.Unmarshal([]byte(r.raw), &res); err != nil || len(res.Results) != 1 {
			t.Fatalf("results: %s %v", r.raw, err)
		}
		m := res.Results[0]
		if m.Seed == nil || *m.Seed != seed || m.Metric != "exact_match" {
			t.Errorf("seed %v metric %q, want %d and exact_match (examples/agent-bundle/eval.py)", m.Seed, m.Metric, seed)
		}
	}
}

// TestOptimizeValset: a bundle's valset.json (DSPy's valset) is the held-out split: the
// results report held_out "valset" and its row count as test_rows, dataset.json's as
// train_rows; a valset.json the job could not use is a 400 naming it and the row.
func TestOptimizeValset(t *testing.T) {
	e := optimizeServer(t, fakeAgentRunner{})
	rows := optimizeDataset()
	ds, _ := json.Marshal(rows[:24])
	vs, _ := json.Marshal(rows[24:])
	r := e.call(t, "POST", "/api/v1/optimize", testKey, `{"optimizer":"agentopt","input_url":"`+
		serveBundle(t, string(ds), map[string]string{"valset.json": `[{"input":"a","answer":"b"},{"question":"c","answer":"d"}]`})+`","target_models":["scripted/task"]}`)
	want := `input_url: invalid bundle: valset.json: row 1 (counting from 0) has no "input" (its keys: "answer", "question"; rename "question" to "input")`
	if r.status != http.StatusBadRequest || r.body["message"] != want {
		t.Fatalf("bad valset: %d %s, want 400 %q", r.status, r.raw, want)
	}
	r = e.call(t, "POST", "/api/v1/optimize", testKey, `{"optimizer":"agentopt","input_url":"`+
		serveBundle(t, string(ds), map[string]string{"valset.json": string(vs)})+`","target_models":["scripted/task"],"n_iterations":1}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("submit: %d %s", r.status, r.raw)
	}
	id := r.body["job_id"].(string)
	e.wait(t, id)
	r = e.call(t, "GET", "/api/v1/optimize/results?job_id="+id, testKey, "")
	var res optimizer.Results
	if err := json.Unmarshal([]byte(r.raw), &res); err != nil || len(res.Results) != 1 {
		t.Fatalf("results: %s %v", r.raw, err)
	}
	if m := res.Results[0]; m.HeldOut != "valset" || m.TrainRows != 24 || m.TestRows != len(rows)-24 || m.TestScore == nil {
		t.Errorf("held_out %q train_rows %d test_rows %d test_score %v; want valset, 24, %d, a score", m.HeldOut, m.TrainRows, m.TestRows, m.TestScore, len(rows)-24)
	}
	// The OpenAPI document tells both: the bundle's optional file and the results' field.
	doc := openAPIDoc(t, e.s)
	in := at(doc, "paths", "/api/v1/optimize", "post", "requestBody", "content", "application/json", "schema", "properties", "input_url", "description")
	if d, _ := in.(string); !strings.Contains(d, "valset.json") {
		t.Errorf("input_url's description %q does not name valset.json", d)
	}
	held := at(doc, "paths", "/api/v1/optimize/results", "get", "responses", "200", "content", "application/json", "schema", "properties", "results", "items", "properties", "held_out", "enum")
	if got := strs(held); !slices.Equal(got, []string{"split", "valset"}) {
		t.Errorf("results' held_out enum %v, want [split valset]", got)
	}
}

// TestOptimizeAcceptsJSONValues: a dataset row's input and answer may be any JSON value but
// null (a DSPy Example's fields need not be strings); null is a 400 naming the row.
func TestOptimizeAcceptsJSONValues(t *testing.T) {
	e := optimizeServer(t, fakeAgentRunner{block: func(sandbox.Job) bool { return true }})
	var rows []string
	for i := range 10 {
		rows = append(rows, fmt.Sprintf(`{"input":{"question":"q%d","choices":["a","b"]},"answer":%d}`, i, i))
	}
	r := e.call(t, "POST", "/api/v1/optimize", testKey, `{"optimizer":"agentopt","input_url":"`+serveBundle(t, "["+strings.Join(rows, ",")+"]")+`","target_models":["scripted/task"]}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("objects and numbers: %d %s, want 202", r.status, r.raw)
	}
	rows[3] = `{"input":"x","answer":null}`
	r = e.call(t, "POST", "/api/v1/optimize", testKey, `{"optimizer":"agentopt","input_url":"`+serveBundle(t, "["+strings.Join(rows, ",")+"]")+`","target_models":["scripted/task"]}`)
	want := `input_url: invalid bundle: dataset.json: row 3 (counting from 0): "answer" must be a string, number, boolean, object or array, got null`
	if r.status != http.StatusBadRequest || r.body["message"] != want {
		t.Errorf("null answer: %d %s, want 400 %q", r.status, r.raw, want)
	}
}
