package optimizer

import (
	"context"
	"strings"
	"testing"
)

// TestProposerToldTheMetric: the proposer model wrote prompts without knowing what the
// answers are scored by. Its request (proposer.v3) now names eval.py's METRIC and carries
// the first paragraph of eval.py's docstring; the results name proposer.v3.
func TestProposerToldTheMetric(t *testing.T) {
	e := newEnv(t, &fakeRunner{}, nil)
	files := bundleFiles(t)
	files["eval.py"] = []byte(`#!/usr/bin/env python3
# Scorer of the ticket bundle.
"""Exact match of the queue name,
ignoring case and surrounding blanks.

Second paragraph, not shown."""
METRIC = "queue_exact_match"

` + string(files["eval.py"]))
	e.start(t)
	sub, err := e.svc.Submit(context.Background(), "alice", request(serveBytes(t, zipFiles(t, files)), 1))
	if err != nil {
		t.Fatal(err)
	}
	if st := waitFor(t, e.svc, sub.JobID); st.Status != StatusCompleted {
		t.Fatalf("status %s (%q)", st.Status, st.ErrorMessage)
	}
	e.up.mu.Lock()
	bodies := append([]string(nil), e.up.proposerBodies...)
	e.up.mu.Unlock()
	if len(bodies) == 0 {
		t.Fatal("the proposer was never asked")
	}
	for _, want := range []string{
		"Metric: queue_exact_match (",
		"<metric_description>Exact match of the queue name, ignoring case and surrounding blanks.</metric_description>",
	} {
		if !strings.Contains(bodies[0], want) {
			t.Errorf("the proposer's request lacks %q:\n%s", want, bodies[0])
		}
	}
	if strings.Contains(bodies[0], "Second paragraph") {
		t.Error("the docstring's second paragraph was shown")
	}
	res, err := e.svc.Results(context.Background(), "alice", sub.JobID)
	if err != nil || len(res.Results) != 1 || res.Results[0].ProposerPrompt != "proposer.v3" || res.Results[0].Metric != "queue_exact_match" {
		t.Fatalf("results %+v %v", res, err)
	}
}

func TestMetricDescription(t *testing.T) {
	for src, want := range map[string]string{
		`"""One line."""` + "\ndef score(a, b): return 1\n":    "One line.",
		"\n\n# c\n'single'\n":                                  "single",
		"r'''raw \\d'''\n":                                     `raw \d`,
		"import re\n\"\"\"not a module docstring\"\"\"\n":      "",
		"def score(expected, predicted):\n    \"\"\"x\"\"\"\n": "",
		"": "",
		"\"\"\"" + strings.Repeat("a", MaxMetricDescription+10) + "\"\"\"": strings.Repeat("a", MaxMetricDescription) + "...",
	} {
		if got := metricDescription([]byte(src)); got != want {
			t.Errorf("metricDescription(%q) = %q, want %q", src, got, want)
		}
	}
	// Without METRIC the proposer is told the scorer's default name.
	_, user, err := renderProposerPrompt(ProposalRequest{Metric: DefaultMetric, CurrentPrompt: "P"}, 0)
	if err != nil || !strings.Contains(user, "Metric: eval.py:score (") || strings.Contains(user, "<metric_description>") {
		t.Errorf("user message without a description (%v):\n%s", err, user)
	}
}
