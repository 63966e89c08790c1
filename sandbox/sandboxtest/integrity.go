package sandboxtest

import (
	"fmt"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// integrityRows have answers that cannot be derived from the inputs: only reading them
// could score.
func integrityRows(n int) []sandbox.Row {
	rows := make([]sandbox.Row, n)
	for i := range rows {
		rows[i] = sandbox.Row{Input: fmt.Sprintf("question %d", i), Answer: fmt.Sprintf("hidden-answer-%d-7f3a", i)}
	}
	return rows
}

// integrityAttack is a bundle that tries to score without calling a model; each must end
// with the honest score, 0.
type integrityAttack struct {
	name, agent, eval string
}

var integrityAttacks = []integrityAttack{
	// The answers were in /sandbox/input.json: look there and everywhere else readable.
	{name: "ReadAnswers", eval: ExactEval, agent: `
import json, os

def find(path, found):
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 24)
    except Exception:
        return
    for key in ("answers", "expected"):
        try:
            value = json.loads(data).get(key)
        except Exception:
            value = None
        if value:
            found.extend(value)
    if b"hidden-answer-" in data:
        found.append("seen in " + path)

def run_batch(inputs, api_key):
    found = []
    for top in ("/sandbox", "/job", "/tmp", "/"):
        for root, dirs, files in os.walk(top):
            if root.startswith(("/proc", "/sys", "/usr", "/dev")):
                dirs[:] = []
                continue
            for name in files:
                find(os.path.join(root, name), found)
    answers = [a for a in found if isinstance(a, str) and a.startswith("hidden-answer-")]
    if len(answers) >= len(inputs):
        return answers[:len(inputs)], {}
    return ["nothing found: %r" % found[:3]] * len(inputs), {}
`},
	// A result frame with perfect scores on stdout, then an exit before the harness writes
	// its own.
	{name: "ForgedResultFrame", eval: ExactEval, agent: `
import os, sys

def run_batch(inputs, api_key):
    n = len(inputs)
    forged = ('{"predictions": %s, "scores": %s, "nonce": "guess", "usage": {}, "errors": []}'
              % (str(["forged"] * n).replace("'", '"'), str([1.0] * n))).encode()
    sys.stdout.flush()
    os.write(1, b"\x1eSWITCHYARD\x1fR" + str(len(forged)).encode() + b"\n" + forged)
    os._exit(0)
`},
	// eval replaced in sys.modules (and score patched in any module already loaded).
	{name: "ReplaceEvalModule", eval: ExactEval, agent: `
import sys, types

fake = types.ModuleType("eval")
fake.score = lambda expected, predicted: 1.0
sys.modules["eval"] = fake
for module in list(sys.modules.values()):
    if hasattr(module, "score"):
        try:
            module.score = fake.score
        except Exception:
            pass

def run_batch(inputs, api_key):
    sys.modules["eval"] = fake
    return ["guess"] * len(inputs), {}
`},
	// A prediction that is itself a result frame, printed by a chatty eval.py.
	{name: "FrameInPrediction", eval: "def score(expected, predicted):\n    print(predicted)\n    return 1.0 if expected == predicted else 0.0\n", agent: `
def run_batch(inputs, api_key):
    payload = '{"scores": %s, "errors": []}' % str([1.0] * len(inputs))
    frame = "\x1eSWITCHYARD\x1fR" + str(len(payload)) + "\n" + payload
    return [frame] * len(inputs), {}
`},
}

// testIntegrity: the agent can neither read the answers nor set its scores.
func testIntegrity(t *testing.T, runner sandbox.Runner) {
	for _, tc := range integrityAttacks {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rows := integrityRows(3)
			res, err := run(t, runner, sandbox.Job{Files: Bundle(tc.agent, tc.eval), Rows: rows})
			if err != nil {
				t.Fatalf("Run: %v (stdout %q, stderr %q)", err, stdoutOf(res), stderrOf(res))
			}
			t.Logf("predictions: %.200q", res.Predictions)
			if len(res.Scores) != len(rows) || res.Mean() != 0 {
				t.Errorf("scores = %v, want the honest %d zeros", res.Scores, len(rows))
			}
		})
	}
}

func stdoutOf(res *sandbox.Result) string {
	if res == nil {
		return ""
	}
	return res.Stdout
}
