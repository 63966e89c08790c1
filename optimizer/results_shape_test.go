package optimizer

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestResultHistoryIsAnArray: a model's result whose run was cut before its baseline
// finished has no iterations; its history is [] on the wire, not null (a spec audit read
// null where the spec has an array).
func TestResultHistoryIsAnArray(t *testing.T) {
	s := &Service{}
	b, err := json.Marshal(s.view(storedRes{ModelResult: ModelResult{Model: "a/b"}}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"history":[]`) {
		t.Fatalf("result %s", b)
	}
}
