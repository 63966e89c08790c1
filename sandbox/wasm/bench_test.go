package wasm_test

import (
	"context"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/sandbox/sandboxtest"
	"github.com/switchyard-ai/switchyard/sandbox/wasm"
)

// BenchmarkColdStart is a new Runner's first run: load and verify python.wasm, compile it
// (no cache), run an empty agent.
func BenchmarkColdStart(b *testing.B) {
	newRunner(b) // skips when python.wasm is absent
	job := emptyJob()
	for b.Loop() {
		r, err := wasm.New(wasm.Options{WorkDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		run(b, r, job)
		r.Close(context.Background())
	}
}

// BenchmarkColdStartFileCache is like BenchmarkColdStart with Options.CacheDir filled by an
// earlier process: what a restarted server pays.
func BenchmarkColdStartFileCache(b *testing.B) {
	newRunner(b)
	cache := b.TempDir()
	warm, err := wasm.New(wasm.Options{CacheDir: cache})
	if err != nil {
		b.Fatal(err)
	}
	if err := warm.Precompile(context.Background(), 0); err != nil {
		b.Fatal(err)
	}
	warm.Close(context.Background())
	job := emptyJob()
	for b.Loop() {
		r, err := wasm.New(wasm.Options{WorkDir: b.TempDir(), CacheDir: cache})
		if err != nil {
			b.Fatal(err)
		}
		run(b, r, job)
		r.Close(context.Background())
	}
}

// BenchmarkEmptyAgent is a run with the module already compiled (cached start).
func BenchmarkEmptyAgent(b *testing.B) {
	r := newRunner(b)
	job := emptyJob()
	run(b, r, job) // compile
	for b.Loop() {
		run(b, r, job)
	}
}

// BenchmarkGateway30 is one 30-row run of an agent calling a (fake) gateway once per row
// with urllib, through the stdin/stdout tunnel.
func BenchmarkGateway30(b *testing.B) {
	r := newRunner(b)
	gw := sandboxtest.NewFakeGateway(b)
	job := sandbox.Job{Files: sandboxtest.Bundle(sandboxtest.GatewayAgent, sandboxtest.ExactEval),
		Rows: sandboxtest.Rows(30), Gateway: gw.Gateway}
	run(b, r, job)
	for b.Loop() {
		run(b, r, job)
	}
}

func emptyJob() sandbox.Job {
	return sandbox.Job{Files: sandboxtest.Bundle(sandboxtest.EmptyAgent, sandboxtest.ExactEval),
		Rows: []sandbox.Row{{Input: "q", Answer: ""}}}
}

func run(b *testing.B, r *wasm.Runner, job sandbox.Job) {
	b.Helper()
	res, err := r.Run(context.Background(), job)
	if err != nil || res.Mean() != 1 {
		b.Fatalf("Run: %v", err)
	}
}
