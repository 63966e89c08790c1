package sandboxtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// RunExampleBundle runs the shipped examples/agent-bundle (dir is its path from the calling
// test) on its first rows through a FakeGateway, which answers each ticket upper-cased: the
// run must succeed with one prediction per row, each a gateway answer, and the example's
// eval.py must give a (0, feedback) pair for each, since no ticket text is a queue name.
func RunExampleBundle(t *testing.T, runner sandbox.Runner, dir string) {
	files := map[string][]byte{}
	for _, n := range []string{"agent.py", "eval.py"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
	}
	raw, err := os.ReadFile(filepath.Join(dir, "dataset.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []sandbox.Row
	if err := json.Unmarshal(raw, &rows); err != nil {
		t.Fatal(err)
	}
	rows = rows[:4]
	gw := NewFakeGateway(t)
	res, err := run(t, runner, sandbox.Job{Files: files, Rows: rows, Gateway: gw.Gateway})
	if err != nil {
		t.Fatalf("Run: %v (stderr: %s)", err, stderrOf(res))
	}
	if len(res.Predictions) != len(rows) || gw.Calls() != len(rows) {
		t.Fatalf("%d predictions, %d gateway calls for %d rows", len(res.Predictions), gw.Calls(), len(rows))
	}
	for i, row := range rows {
		if res.Predictions[i] != strings.ToUpper(row.Input) || res.Scores[i] != 0 || !strings.Contains(res.Feedback[i], row.Answer) {
			t.Errorf("row %d: prediction %q score %v feedback %q", i, res.Predictions[i], res.Scores[i], res.Feedback[i])
		}
	}
}
