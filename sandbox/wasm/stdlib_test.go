package wasm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/sandbox/sandboxtest"
)

// TestWASILimitsAreExplained: what WASI cannot do (sockets, threads, subprocesses) fails
// with a message that says so, not with an AttributeError from deep inside the stdlib.
func TestWASILimitsAreExplained(t *testing.T) {
	r := newRunner(t)
	agent := `
import concurrent.futures
import socket
import subprocess
import threading

# === EDITABLE START ===
SYSTEM_PROMPT = "x"
# === EDITABLE END ===

def attempt(f):
    try:
        f()
        return "ok"
    except BaseException as exc:
        return str(exc)

def run_batch(inputs, api_key):
    return [
        attempt(lambda: socket.create_connection(("127.0.0.1", 80), timeout=1)),
        attempt(lambda: threading.Thread(target=print).start()),
        attempt(lambda: subprocess.run(["ls"])),
        attempt(lambda: concurrent.futures.ProcessPoolExecutor().submit(print).result()),
    ], {"tokens": 0, "cost": 0}
`
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := r.Run(ctx, sandbox.Job{Files: sandboxtest.Bundle(agent, sandboxtest.ExactEval), Rows: sandboxtest.Rows(4),
		Limits: sandbox.Limits{Timeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"has no network sockets", "has no threads", "does not support processes", "has no processes"} {
		if !strings.Contains(res.Predictions[i], want) {
			t.Errorf("attempt %d: %q, want it to say %q", i, res.Predictions[i], want)
		}
	}
}
