package server

import (
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// TestSpendLogShutdownCutIsFailure: a request the server's shutdown cut (usage history
// outcome cut) is a /spend/logs row of status failure, its metadata's status too, as a
// caller that left (cancelled) is; an answered one stays success.
func TestSpendLogShutdownCutIsFailure(t *testing.T) {
	for outcome, want := range map[string]string{usagelog.OutcomeCut: "failure", completions.RequestCancelled: "failure", completions.RequestOK: "success"} {
		row := spendLogsPlan{who: "op"}.row(usagelog.Request{Outcome: outcome, Model: "openai/gpt-4o", Error: "server: shutting down"})
		if row.Status != want || row.Metadata["status"] != want {
			t.Errorf("outcome %s: status %q metadata status %v, want %s", outcome, row.Status, row.Metadata["status"], want)
		}
	}
}
