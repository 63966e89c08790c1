package server

// Review 10b: chat n>1 skips what answerOpenAI does for every other chat answer (package server).

import (
	"net/http"
	"strings"
	"testing"
)

func TestReview10bChoicesNameTheModelGroup(t *testing.T) {
	hs := steadyGroupServer(t)
	for _, n := range []string{"1", "2"} {
		resp, out := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"steady","n":`+n+`,"max_retries":0,"messages":[{"role":"user","content":"hi"}]}`)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), "Hello from ok") {
			t.Fatalf("n %s: %d %s", n, resp.StatusCode, out)
		}
		if got := resp.Header.Get("X-Switchyard-Model-Group"); got != "steady" {
			t.Errorf("n %s: X-Switchyard-Model-Group %q, want steady", n, got)
		}
	}
}
