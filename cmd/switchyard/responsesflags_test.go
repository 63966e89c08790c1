package main

import (
	"context"
	"encoding/json"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// parseResponsesFlags parses args as serve's responses flags.
func parseResponsesFlags(t *testing.T, args ...string) *responsesFlags {
	t.Helper()
	var f responsesFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &f
}

// TestResponsesTTLZeroKeepsUntilDeleted: --responses-ttl 0 is accepted and keeps a stored
// /v1/responses answer through a sweep a century later; a negative TTL is refused naming
// the flag.
func TestResponsesTTLZeroKeepsUntilDeleted(t *testing.T) {
	f := parseResponsesFlags(t, "--responses-ttl=0")
	if err := f.check(); err != nil {
		t.Fatalf("--responses-ttl=0: %v", err)
	}
	st := memstore.New()
	g, err := completions.New(completions.Options{Providers: providers.NewRegistry(), Store: st, StoredResponses: f.options(1 << 20)})
	if err != nil {
		t.Fatal(err)
	}
	var r completions.ResponsesRequest
	if err := json.Unmarshal([]byte(`{"model":"up/m","input":"Keep me."}`), &r); err != nil {
		t.Fatal(err)
	}
	o := completions.NewResponseObject(&r, completions.NewResponseID("ttl0"), time.Now())
	o.Status = "completed"
	ctx := context.Background()
	if err := g.StoreResponse(ctx, "alice", &r, o); err != nil {
		t.Fatal(err)
	}
	if n, err := g.SweepResponses(ctx, time.Now().Add(100*365*24*time.Hour)); err != nil || n != 0 {
		t.Fatalf("sweep a century later: %d deleted, %v; want none", n, err)
	}
	if _, err := g.StoredResponse(ctx, "alice", o.ID); err != nil {
		t.Fatalf("the answer after the sweep: %v", err)
	}
	if err := parseResponsesFlags(t, "--responses-ttl=-1h").check(); err == nil || !strings.Contains(err.Error(), "--responses-ttl") {
		t.Fatalf("--responses-ttl=-1h: %v, want an error naming the flag", err)
	}
	if o := parseResponsesFlags(t, "--responses-ttl=2h").options(1 << 20); o.NoExpiry || o.TTL != 2*time.Hour {
		t.Fatalf("--responses-ttl=2h: %+v", o)
	}
}

// TestResponsesFlagsBackgroundStream: --responses-background-stream-events and -bytes
// reach StoredResponsesOptions (the defaults: completions'), and values that cannot bound
// a stream are refused naming the flag.
func TestResponsesFlagsBackgroundStream(t *testing.T) {
	parse := func(args ...string) *responsesFlags { return parseResponsesFlags(t, args...) }
	def := parse().options(1 << 20)
	if def.BackgroundStreamMaxEvents != completions.DefaultBackgroundStreamMaxEvents || def.BackgroundStreamMaxBytes != completions.DefaultBackgroundStreamMaxBytes {
		t.Fatalf("defaults: %+v", def)
	}
	f := parse("--responses-background-stream-events=50", "--responses-background-stream-bytes=4096")
	if err := f.check(); err != nil {
		t.Fatal(err)
	}
	if o := f.options(1 << 20); o.BackgroundStreamMaxEvents != 50 || o.BackgroundStreamMaxBytes != 4096 {
		t.Fatalf("options: %+v", o)
	}
	for _, arg := range []string{"--responses-background-stream-events=1", "--responses-background-stream-bytes=0"} {
		name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if err := parse(arg).check(); err == nil || !strings.Contains(err.Error(), name) {
			t.Fatalf("%s: %v", arg, err)
		}
	}
}
