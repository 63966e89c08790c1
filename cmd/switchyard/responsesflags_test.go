package main

import (
	"flag"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestResponsesFlagsBackgroundStream: --responses-background-stream-events and -bytes
// reach StoredResponsesOptions (the defaults: completions'), and values that cannot bound
// a stream are refused naming the flag.
func TestResponsesFlagsBackgroundStream(t *testing.T) {
	parse := func(args ...string) *responsesFlags {
		t.Helper()
		var f responsesFlags
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return &f
	}
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
