package process_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/sandbox/harness"
	"github.com/switchyard-ai/switchyard/sandbox/process"
	"github.com/switchyard-ai/switchyard/sandbox/sandboxtest"
)

// plainHarness writes the harness, rewritten to read its input and the bundle from a host
// directory, with an empty agent, and returns the command that runs it with plain python3
// (no bubblewrap, no workspace, no output parsing).
func plainHarness(b *testing.B) []string {
	dir := b.TempDir()
	script := bytes.ReplaceAll(harness.Script(), []byte(`"/sandbox/input.json"`), []byte(strconv.Quote(filepath.Join(dir, "input.json"))))
	script = bytes.ReplaceAll(script, []byte(`JOB_DIR = "/job"`), []byte("JOB_DIR = "+strconv.Quote(dir)))
	files := map[string]string{
		"harness.py": string(script),
		"input.json": `{"mode": "plain", "inputs": ["q"], "answers": [""], "limits": {}}`,
		"agent.py":   sandboxtest.EmptyAgent,
		"eval.py":    sandboxtest.ExactEval,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return []string{"/usr/bin/python3", "-I", "-B", "-u", filepath.Join(dir, "harness.py")}
}

// BenchmarkOverhead alternates a plain python3 run of the harness with an empty agent and a
// sandboxed Run of the same agent, so that both see the same machine load, and reports the
// medians and their difference (the sandbox's per-run overhead).
func BenchmarkOverhead(b *testing.B) {
	r := newRunner(b, process.Options{WorkDir: workDir(b)})
	plain := plainHarness(b)
	job := sandbox.Job{Files: sandboxtest.Bundle(sandboxtest.EmptyAgent, sandboxtest.ExactEval),
		Rows: []sandbox.Row{{Input: "q", Answer: ""}}}
	var plainMs, sandboxMs []float64
	for b.Loop() {
		start := time.Now()
		out, err := exec.Command(plain[0], plain[1:]...).Output()
		if err != nil || !bytes.Contains(out, []byte(`"scores": [1.0]`)) {
			b.Fatalf("plain python3: %v: %s", err, out)
		}
		plainMs = append(plainMs, float64(time.Since(start).Microseconds())/1000)
		start = time.Now()
		res, err := r.Run(context.Background(), job)
		if err != nil || res.Mean() != 1 {
			b.Fatalf("Run: %v", err)
		}
		sandboxMs = append(sandboxMs, float64(time.Since(start).Microseconds())/1000)
	}
	p, s := median(plainMs), median(sandboxMs)
	b.ReportMetric(p, "plain-ms")
	b.ReportMetric(s, "sandbox-ms")
	b.ReportMetric(s-p, "overhead-ms")
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// BenchmarkGateway30 is one 30-row run of an agent calling a (fake) gateway once per row
// with urllib.
func BenchmarkGateway30(b *testing.B) {
	r := newRunner(b, process.Options{WorkDir: workDir(b)})
	gw := sandboxtest.NewFakeGateway(b)
	job := sandbox.Job{Files: sandboxtest.Bundle(sandboxtest.GatewayAgent, sandboxtest.ExactEval),
		Rows: sandboxtest.Rows(30), Gateway: gw.Gateway}
	for b.Loop() {
		res, err := r.Run(context.Background(), job)
		if err != nil || res.Mean() != 1 {
			b.Fatalf("Run: %v", err)
		}
	}
}
