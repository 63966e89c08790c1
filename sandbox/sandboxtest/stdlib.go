package sandboxtest

import (
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// StdlibAgent uses the standard-library modules a pure-Python agent commonly imports, one
// module family per step: a thread pool (map, submit, as_completed, a lock), json, re,
// urllib.parse, and dataclasses/typing. Each input's prediction is its upper-cased text
// once every step agreed, so a backend that lacks a module fails the run or the scores.
const StdlibAgent = `
import concurrent.futures
import dataclasses
import json
import re
import threading
import typing
import urllib.parse

# === EDITABLE START ===
SYSTEM_PROMPT = "Repeat the question in upper case."
# === EDITABLE END ===

@dataclasses.dataclass
class Item:
    text: str
    tags: typing.List[str]

lock = threading.Lock()
seen = []

def upper(text):
    with lock:
        seen.append(text)
    return text.upper()

def run_batch(inputs, api_key):
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        mapped = list(pool.map(upper, inputs))
        futures = {pool.submit(upper, s): i for i, s in enumerate(inputs)}
        done = [None] * len(inputs)
        for f in concurrent.futures.as_completed(futures):
            done[futures[f]] = f.result()
    assert mapped == done and len(seen) == 2 * len(inputs)
    items = [Item(text=s, tags=re.findall(r"\d+", s)) for s in done]
    round_trip = json.loads(json.dumps([dataclasses.asdict(i) for i in items]))
    out = []
    for r in round_trip:
        q = urllib.parse.urlencode({"q": r["text"]})
        out.append(urllib.parse.parse_qs(q)["q"][0])
    return out, {"tokens": 0, "cost": 0}
`

func testStdlib(t *testing.T, runner sandbox.Runner) {
	res, err := run(t, runner, sandbox.Job{Files: Bundle(StdlibAgent, ExactEval), Rows: Rows(3)})
	if err != nil {
		t.Fatalf("Run: %v (stderr: %s)", err, stderrOf(res))
	}
	if want := []string{"QUESTION 0", "QUESTION 1", "QUESTION 2"}; !slices.Equal(res.Predictions, want) {
		t.Fatalf("predictions = %q, want %q", res.Predictions, want)
	}
	if !slices.Equal(res.Scores, []float64{1, 1, 1}) {
		t.Fatalf("scores = %v", res.Scores)
	}
}
