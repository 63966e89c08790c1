//go:build linux

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
// directory, with an empty agent, and returns the commands that run its two stages (the
// agent's, then the scorer's) with plain python3 (no bubblewrap, no workspace, no output
// parsing).
func plainHarness(b *testing.B) (agentStage, scoreStage []string) {
	dir := b.TempDir()
	files := map[string]string{
		"agent.py":         sandboxtest.EmptyAgent,
		"eval.py":          sandboxtest.ExactEval,
		"input-agent.json": `{"mode": "plain", "stage": "agent", "inputs": ["q"], "limits": {}}`,
		"input-score.json": `{"mode": "plain", "stage": "score", "expected": [""], "predicted": [""], "nonce": "n", "limits": {}}`,
		"harness-agent.py": "",
		"harness-score.py": "",
	}
	for _, stage := range []string{"agent", "score"} {
		script := bytes.ReplaceAll(harness.Script(), []byte(`"/sandbox/input.json"`), []byte(strconv.Quote(filepath.Join(dir, "input-"+stage+".json"))))
		script = bytes.ReplaceAll(script, []byte(`JOB_DIR = "/job"`), []byte("JOB_DIR = "+strconv.Quote(dir)))
		files["harness-"+stage+".py"] = string(script)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	cmd := func(stage string) []string {
		return []string{"/usr/bin/python3", "-I", "-B", "-u", filepath.Join(dir, "harness-"+stage+".py")}
	}
	return cmd("agent"), cmd("score")
}

// BenchmarkOverhead alternates plain python3 runs of the harness's two stages with an empty
// agent and a sandboxed Run of the same agent (two sandboxes), so that both see the same machine load, and reports the
// medians and their difference (the sandbox's per-run overhead).
func BenchmarkOverhead(b *testing.B) {
	benchmarkOverhead(b, process.Options{WorkDir: workDir(b)})
}

// BenchmarkOverheadOneProcess is BenchmarkOverhead without cgroups (a run is one process).
func BenchmarkOverheadOneProcess(b *testing.B) {
	benchmarkOverhead(b, process.Options{WorkDir: workDir(b), Cgroups: process.CgroupsOff})
}

func benchmarkOverhead(b *testing.B, opts process.Options) {
	r := newRunner(b, opts)
	b.Logf("run limits: %s", r.Limiting())
	plainAgent, plainScore := plainHarness(b)
	job := sandbox.Job{Files: sandboxtest.Bundle(sandboxtest.EmptyAgent, sandboxtest.ExactEval),
		Rows: []sandbox.Row{{Input: "q", Answer: ""}}}
	var plainMs, sandboxMs []float64
	for b.Loop() {
		start := time.Now()
		out, err := exec.Command(plainAgent[0], plainAgent[1:]...).Output()
		if err != nil || !bytes.Contains(out, []byte(`"predictions": [""]`)) {
			b.Fatalf("plain python3, agent stage: %v: %s", err, out)
		}
		out, err = exec.Command(plainScore[0], plainScore[1:]...).Output()
		if err != nil || !bytes.Contains(out, []byte(`"scores": [1.0]`)) {
			b.Fatalf("plain python3, score stage: %v: %s", err, out)
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
