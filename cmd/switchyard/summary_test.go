package main

import (
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// TestScoreChartShowsUnconfirmedIterations: an iteration stopped at its minibatch has no
// train score and is drawn as such, not as a bar of 0.
func TestScoreChartShowsUnconfirmedIterations(t *testing.T) {
	half, one := 0.5, 1.0
	var b strings.Builder
	writeScoreChart(&b, []client.IterationRecord{
		{Iteration: 0, TrainScore: &half, Kept: true},
		{Iteration: 1, Note: "no candidate beat the best agent on the minibatch"},
		{Iteration: 2, TrainScore: &one, Kept: true},
	}, 10)
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "█████      0.500 baseline") ||
		!strings.Contains(lines[1], "—") || strings.Contains(lines[1], "0.000") || !strings.Contains(lines[1], "discarded: no candidate") ||
		!strings.Contains(lines[2], "██████████ 1.000 kept") {
		t.Errorf("chart:\n%s", b.String())
	}
}

// TestSummarySaysWhyTheTestScoreIsMissing: a cancelled job's summary printed "test score
// -  (not scored)" with no reason, which read as a failure of the held-out runs; it now
// says the job stopped before them.
func TestSummarySaysWhyTheTestScoreIsMissing(t *testing.T) {
	zero, one := 0.0, 1.0
	var b strings.Builder
	writeOptimizationSummary(&b, nil, &client.OptimizationResults{JobID: "opt_x", Status: "interrupted",
		ErrorMessage: "cancelled by the caller (stopped at iteration 1 of 10 for a/b); the best result so far is kept",
		Results: []client.OptimizationResult{{Model: "a/b", Optimizer: "agentopt", BaselineScore: &zero, TrainScore: &one,
			IterationsRun: 1, IterationsKept: 1, TrainRows: 21, TestRows: 9}}})
	if !strings.Contains(b.String(), "not scored: the job stopped before the held-out split was run") {
		t.Errorf("summary:\n%s", b.String())
	}
}

// TestSummaryNamesTheValset: a job whose bundle has a valset.json says its test score was
// measured on valset.json's rows, without a seed (which drew no split); a split names the
// seed.
func TestSummaryNamesTheValset(t *testing.T) {
	half, one, seed := 0.5, 1.0, uint64(42)
	for heldOut, want := range map[string]string{
		"valset": "held-out 6 rows of valset.json)",
		"split":  "held-out 6 rows, seed 42)",
	} {
		var b strings.Builder
		writeOptimizationSummary(&b, nil, &client.OptimizationResults{JobID: "opt_x", Status: "completed",
			Results: []client.OptimizationResult{{Model: "a/b", Optimizer: "agentopt", BaselineScore: &half, TrainScore: &one,
				TestScore: &one, OriginalTestScore: &half, Complete: true, TrainRows: 26, TestRows: 6, HeldOut: heldOut, Seed: &seed}}})
		if !strings.Contains(b.String(), want) {
			t.Errorf("%s: summary lacks %q:\n%s", heldOut, want, b.String())
		}
	}
}
