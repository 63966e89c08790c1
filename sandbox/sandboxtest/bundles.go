package sandboxtest

import (
	"fmt"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// Bundle returns job files holding agent.py and eval.py.
func Bundle(agent, eval string) map[string][]byte {
	return map[string][]byte{"agent.py": []byte(agent), "eval.py": []byte(eval)}
}

// Rows returns n rows whose answer is the upper-cased input, so GatewayAgent (through a
// FakeGateway) and EchoAgent score 1 on each.
func Rows(n int) []sandbox.Row {
	rows := make([]sandbox.Row, n)
	for i := range rows {
		rows[i] = sandbox.Row{Input: fmt.Sprintf("question %d", i), Answer: fmt.Sprintf("QUESTION %d", i)}
	}
	return rows
}

// ExactEval scores 1 when the prediction equals the answer, ignoring case and spaces.
const ExactEval = `
def score(expected, predicted):
    return 1.0 if expected.strip().lower() == str(predicted).strip().lower() else 0.0
`

// EmptyAgent does nothing: each prediction is "". Used to measure per-run overhead.
const EmptyAgent = `
def run_batch(inputs, api_key):
    return [""] * len(inputs), {"tokens": 0, "cost": 0}
`

// EchoAgent upper-cases each input without any network, and prints to stdout and stderr.
const EchoAgent = `
import sys

# === EDITABLE START ===
SYSTEM_PROMPT = "Repeat the question in upper case."
# === EDITABLE END ===

def run_batch(inputs, api_key):
    print("echo agent: %d inputs" % len(inputs))
    print("echo agent warning", file=sys.stderr)
    return [s.upper() for s in inputs], {"tokens": 5 * len(inputs), "cost": 0.5}
`

// GatewayAgent calls the gateway's chat completions with plain urllib, one request per input,
// using OPENAI_BASE_URL, the api_key argument and SWITCHYARD_MODEL.
const GatewayAgent = `
import json
import os
import urllib.request

# === EDITABLE START ===
SYSTEM_PROMPT = "Answer in upper case."
# === EDITABLE END ===

def run_batch(inputs, api_key):
    base = os.environ["OPENAI_BASE_URL"]
    model = os.environ["SWITCHYARD_MODEL"]
    predictions, tokens = [], 0
    for text in inputs:
        body = json.dumps({"model": model, "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": text}]}).encode()
        request = urllib.request.Request(base + "/chat/completions", data=body, headers={
            "Authorization": "Bearer " + api_key, "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            out = json.load(response)
        predictions.append(out["choices"][0]["message"]["content"])
        tokens += out["usage"]["total_tokens"]
    return predictions, {"tokens": tokens, "cost": 0.25}
`

// attemptPrelude is prepended to the escape agents: attempt runs each action, returns the
// successes as predictions (an escape: the suite fails) and raises when all were contained.
const attemptPrelude = `
import os, sys, time, socket

def attempt(inputs, actions):
    escaped, contained = [], []
    for name, action in actions:
        try:
            escaped.append("%s: %.200r" % (name, action()))
        except Exception as exc:
            contained.append("%s: %s" % (name, exc))
    if escaped:
        return ["ESCAPED " + "; ".join(escaped)] * len(inputs), {}
    raise PermissionError("contained: " + "; ".join(contained))
`

// FeedbackEval scores like ExactEval and explains each miss: it returns (score, feedback)
// pairs, with None as the feedback of a right answer.
const FeedbackEval = `
def score(expected, predicted):
    if expected.strip().lower() == str(predicted).strip().lower():
        return (1.0, None)
    return (0.0, "expected %r, got %r" % (expected, predicted))
`
