package main

import (
	"encoding/json"
	"testing"
)

// TestReview21dCustomersDeleteJSON: customers delete --json prints the deletion as JSON
// (as teams delete and keys delete do), not the text line a script cannot read.
func TestReview21dCustomersDeleteJSON(t *testing.T) {
	gatewayCLIServer(t)
	if code, out, errOut := cli(t, "customers", "create", "zoe"); code != 0 {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	code, out, errOut := cli(t, "customers", "delete", "zoe", "--json")
	var d struct {
		EndUserID string `json:"end_user_id"`
		Deleted   bool   `json:"deleted"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil || d.EndUserID != "zoe" || !d.Deleted {
		t.Fatalf("delete --json: %d %q %s, want the deletion as JSON", code, out, errOut)
	}
}
