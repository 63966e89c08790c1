package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// TestRouterSummaryRowsWithoutACorrectModel: rows with no correct model are trained on
// (as prompts no model answers), so the summary must not call them skipped.
func TestRouterSummaryRowsWithoutACorrectModel(t *testing.T) {
	var out bytes.Buffer
	st := &client.TrainingStatus{TrainingConfig: &client.TrainingConfig{Rows: 60, SkippedRows: 36}}
	writeRouterSummary(&out, st, &client.RouterModel{ModelID: "rm_x", Status: "active"})
	if s := out.String(); strings.Contains(s, "skipped") || !strings.Contains(s, "60 (36 with no correct model, learned as prompts no model answers)") {
		t.Fatalf("summary:\n%s", s)
	}
}
