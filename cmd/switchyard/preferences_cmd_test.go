package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

// TestPreferencesAndFeedbackCommands walks Not Diamond's personalization journey from the
// command line: create a preference, select with it, rate the pick, see what it learned,
// rename and delete it; bad input exits non-zero naming what was wrong.
func TestPreferencesAndFeedbackCommands(t *testing.T) {
	url := cliServer(t, func(st *store.Store) []server.Option {
		return []server.Option{server.ModelSelection(routing.NewSelector(routing.Options{Store: st}))}
	})
	t.Setenv("SWITCHYARD_BASE_URL", url)
	t.Setenv("SERVICE_API_KEY", cliKey)

	if code, out, errOut := cli(t, "preferences"); code != 0 || !strings.Contains(out, "(no preferences)") {
		t.Fatalf("empty list: %d %s %s", code, out, errOut)
	}
	code, out, errOut := cli(t, "preferences", "create", "--name", "support bot")
	m := regexp.MustCompile(`preference_id: (pref_\S+)`).FindStringSubmatch(out)
	if code != 0 || m == nil || !strings.Contains(out, "support bot") || !strings.Contains(out, "router:        default") {
		t.Fatalf("create: %d\n%s\n%s", code, out, errOut)
	}
	pref := m[1]

	req := `{"messages":[{"role":"user","content":"How do I reset my password?"}],
		"llm_providers":["openai/gpt-4o","openai/gpt-4o-mini"],"preference_id":"` + pref + `"}`
	file := filepath.Join(t.TempDir(), "req.json")
	if err := os.WriteFile(file, []byte(req), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cli(t, "select", "--file", file)
	s := regexp.MustCompile(`session:\s+(sess_\S+)`).FindStringSubmatch(out)
	if code != 0 || s == nil || !strings.Contains(out, "switchyard feedback "+s[1]+" ") {
		t.Fatalf("select: %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = cli(t, "feedback", s[1], "openai/gpt-4o-mini", "up")
	if code != 0 || !strings.Contains(out, "feedback up on openai/gpt-4o-mini") || !strings.Contains(out, "learned from 1 feedback") {
		t.Fatalf("feedback: %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = cli(t, "feedback", "--json", s[1], "openai/gpt-4o-mini", "0")
	if code != 0 || !strings.Contains(out, `"replaced": true`) || !strings.Contains(out, `"accuracy": 0`) {
		t.Fatalf("feedback again: %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "feedback", s[1], "openai/gpt-4o-mini", "maybe"); code != 2 || !strings.Contains(errOut, "up or down") {
		t.Fatalf("bad verdict: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "feedback", s[1], "acme/other", "up"); code != 1 || !strings.Contains(errOut, "provider:") {
		t.Fatalf("not a candidate: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "feedback", "sess_nope", "openai/gpt-4o", "up"); code != 1 || !strings.Contains(errOut, "session_id") {
		t.Fatalf("unknown session: %d %s", code, errOut)
	}

	code, out, errOut = cli(t, "preferences", "show", pref)
	if code != 0 || !regexp.MustCompile(`openai/gpt-4o-mini\s+1\s+0\s`).MatchString(out) {
		t.Fatalf("show: %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "preferences", "rename", pref, "helpdesk"); code != 0 || !strings.Contains(out, "helpdesk") {
		t.Fatalf("rename: %d %s %s", code, out, errOut)
	}
	if code, out, _ := cli(t, "preferences", "list"); code != 0 || !regexp.MustCompile(pref+`\s+helpdesk\s+default\s+1\s`).MatchString(out) {
		t.Fatalf("list: %d\n%s", code, out)
	}
	if code, _, errOut := cli(t, "preferences", "create", "--router-model", "rm_nope"); code != 1 || !strings.Contains(errOut, "router_model_id") {
		t.Fatalf("unknown router: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "preferences", "show", pref, "--name", "x"); code != 1 || !strings.Contains(errOut, "--name") {
		t.Fatalf("--name on show: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "preferences", "delete", pref); code != 0 || !strings.Contains(out, "deleted preference "+pref) {
		t.Fatalf("delete: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "preferences", "show", pref); code != 1 || !strings.Contains(errOut, "404") {
		t.Fatalf("show deleted: %d %s", code, errOut)
	}
}

// preferences show and list say when a preference's router is gone and what ranks instead,
// from the answer's router_fallback; a live router is named as before.
func TestPreferenceRouterSaysItIsGone(t *testing.T) {
	for _, tc := range []struct {
		p    client.Preference
		want string
	}{
		{client.Preference{RouterModelID: "rm_a"}, "rm_a"},
		{client.Preference{RouterTrainingJobID: "tj_a"}, "tj_a (training)"},
		{client.Preference{}, "default"},
		{client.Preference{RouterModelID: "rm_a", RouterFallback: "router_deleted"}, "rm_a (deleted; the default router ranks)"},
		{client.Preference{RouterTrainingJobID: "tj_a", RouterFallback: "router_deleted"}, "the router of tj_a (deleted; the default router ranks)"},
		{client.Preference{RouterTrainingJobID: "tj_a", RouterFallback: "training_job_deleted"}, "tj_a (deleted before it trained; the default router ranks)"},
		{client.Preference{RouterTrainingJobID: "tj_b", PreviousRouterModelID: "rm_a", RouterFallback: "training_job_deleted"}, "tj_b (deleted before it trained; rm_a ranks)"},
	} {
		if got := preferenceRouter(&tc.p); got != tc.want {
			t.Errorf("preferenceRouter(%+v) = %q, want %q", tc.p, got, tc.want)
		}
		var out bytes.Buffer
		printPreference(&out, &tc.p)
		if !strings.Contains(out.String(), "router:        "+tc.want+"\n") {
			t.Errorf("show prints %q, want the router line %q", out.String(), tc.want)
		}
	}
}
