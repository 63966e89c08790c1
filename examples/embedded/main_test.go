package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

func TestEmbeddedExampleRuns(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), "../data", &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	s := out.String()
	if !regexp.MustCompile(`router rm_\S+: 9 models`).MatchString(s) {
		t.Fatalf("no trained router in output:\n%s", s)
	}
	// Three predictions and a selection among the candidates the router knows first.
	if strings.Count(s, "nvidia/")+strings.Count(s, "qwen/")+strings.Count(s, "meta/")+strings.Count(s, "google/") < 3 {
		t.Fatalf("predictions missing:\n%s", s)
	}
	m := regexp.MustCompile(`→ (\S+)\n  1\. (\S+)  score [0-9.]+ \(router\)`).FindStringSubmatch(s)
	if m == nil || m[1] != m[2] {
		t.Fatalf("selection not driven by the router:\n%s", s)
	}
}
