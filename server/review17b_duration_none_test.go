package server

import (
	"net/http"
	"testing"
)

// WRONG: LiteLLM's duration_in_seconds treats the strings "", "None" and "null" as no
// duration (its UI sends budget_duration/duration "None" for "unlimited"); here they are a
// 400 naming the field. Fix: read "", "none", "null" (any case) as absent in
// litellmToNative for duration and budget_duration.
func TestReview17bDurationNoneString(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	for _, body := range []string{`{"duration":"None"}`, `{"budget_duration":"None"}`, `{"duration":""}`} {
		if r := do(t, s, "POST", "/key/generate", testKey, body); r.status != http.StatusOK {
			t.Errorf("POST /key/generate %s: %d %s", body, r.status, r.raw)
		}
	}
}
