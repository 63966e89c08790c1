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

// stdlibFamilies are small agents, one per standard-library family a pure-Python agent
// commonly imports; each predicts its input upper-cased only when the family behaved.
var stdlibFamilies = []struct{ name, imports, body string }{
	{"threading", "import threading", `
    lock, local, event = threading.Lock(), threading.local(), threading.Event()
    with lock:
        local.value = [s.upper() for s in inputs]
    event.set()
    assert event.is_set() and threading.current_thread() is threading.main_thread()
    out = local.value`},
	{"concurrent.futures", "import concurrent.futures", `
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        futures = [pool.submit(str.upper, s) for s in inputs]
        concurrent.futures.wait(futures)
        out = [f.result() for f in futures]
        assert list(pool.map(str.upper, inputs)) == out`},
	{"json", "import json", `
    out = json.loads(json.dumps({"o": [s.upper() for s in inputs]}, indent=2, sort_keys=True))["o"]`},
	{"re", "import re", `
    out = [re.sub(r"[a-z]", lambda m: m.group(0).upper(), s) for s in inputs]
    assert re.fullmatch(r"QUESTION \d+", out[0])`},
	{"urllib", "import urllib.parse, urllib.request", `
    req = urllib.request.Request("http://gateway.invalid/v1?" + urllib.parse.urlencode({"q": inputs[0]}), data=b"{}")
    assert req.get_method() == "POST" and urllib.parse.urlsplit(req.full_url).hostname == "gateway.invalid"
    out = [urllib.parse.unquote_plus(urllib.parse.quote_plus(s)).upper() for s in inputs]`},
	{"collections, itertools, functools", "import collections, functools, itertools", `
    counts = collections.Counter(itertools.chain.from_iterable(inputs))
    assert counts["q"] == len(inputs)
    upper = functools.lru_cache(maxsize=None)(str.upper)
    out = [upper(s) for s in inputs]`},
	{"datetime, hashlib, base64, random", "import base64, datetime, hashlib, random", `
    assert datetime.datetime(2024, 1, 2).isoformat() == "2024-01-02T00:00:00"
    assert len(hashlib.sha256(b"x").hexdigest()) == 64
    random.seed(1)
    out = [base64.b64decode(base64.b64encode(s.upper().encode())).decode() for s in inputs]`},
	{"dataclasses, typing, enum", "import dataclasses, enum, typing", `
    Mode = enum.Enum("Mode", "UP")
    @dataclasses.dataclass
    class Item:
        text: str
        mode: Mode = Mode.UP
        tags: typing.Optional[typing.List[str]] = None
    out = [dataclasses.replace(Item(s), text=s.upper()).text for s in inputs]`},
}

func testStdlib(t *testing.T, runner sandbox.Runner) {
	t.Run("together", func(t *testing.T) { runStdlibAgent(t, runner, StdlibAgent) })
	for _, f := range stdlibFamilies {
		t.Run(f.name, func(t *testing.T) {
			agent := f.imports + "\n\n# === EDITABLE START ===\nSYSTEM_PROMPT = \"x\"\n# === EDITABLE END ===\n\n" +
				"def run_batch(inputs, api_key):" + f.body + "\n    return out, {\"tokens\": 0, \"cost\": 0}\n"
			runStdlibAgent(t, runner, agent)
		})
	}
}

func runStdlibAgent(t *testing.T, runner sandbox.Runner, agent string) {
	res, err := run(t, runner, sandbox.Job{Files: Bundle(agent, ExactEval), Rows: Rows(3)})
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
