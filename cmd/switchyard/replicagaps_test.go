package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMemberLimitsSharedByReplicasOnPostgres: a model group member's rpm was counted per
// replica, so two serve replicas on one PostgreSQL database let a deployment have twice
// its rpm; they now share the counts (--limits-sync-interval): after the member's two
// calls on A, B skips it for the group's next member.
func TestMemberLimitsSharedByReplicasOnPostgres(t *testing.T) {
	replicaEnv(t, "serve_member_limits")
	t.Setenv("SWITCHYARD_LIMITS_SYNC_INTERVAL", "50ms")
	up, upURL := newScripted(t, "up", false)
	_, spareURL := newScripted(t, "spare", false)
	dir := t.TempDir()
	provs := filepath.Join(dir, "providers.json")
	groups := filepath.Join(dir, "groups.json")
	writeTestFile(t, provs, fmt.Sprintf(`{"providers": [{"name": "up", "format": "openai", "base_url": %q, "api_key": "key-a"},
		{"name": "spare", "format": "openai", "base_url": %q, "api_key": "key-a"}]}`, upURL, spareURL))
	writeTestFile(t, groups, `{"chat": {"models": ["up/m1", "spare/m2"], "limits": [{"rpm": 2}, {}]}}`)
	ctx, cancel := context.WithCancel(context.Background())
	flags := []string{"--providers-config", provs, "--model-groups", groups}
	a, _, _, doneA := startServeWith(t, ctx, filepath.Join(dir, "a"), flags...)
	b, _, _, doneB := startServeWith(t, ctx, filepath.Join(dir, "b"), flags...)
	t.Cleanup(func() { cancel(); <-doneA; <-doneB })
	time.Sleep(500 * time.Millisecond) // both have synced: each counts the other from now
	for i := range 2 {
		if code, text := chatAs(t, "http://"+a, "k", "chat"); code != 200 || text != "from up" {
			t.Fatalf("call %d on A: %d %s", i, code, text)
		}
	}
	time.Sleep(time.Second) // twenty intervals: B has read A's count
	if code, text := chatAs(t, "http://"+b, "k", "chat"); code != 200 || text != "from spare" {
		t.Fatalf("B after A's two calls to up/m1 (rpm 2): %d %s, want the group's next member", code, text)
	}
	if n := up.count("m1"); n != 2 {
		t.Fatalf("up/m1 was called %d times across the replicas, want its rpm, 2", n)
	}
}

// TestKeyAndDeploymentChangesSeenByOtherReplicaOnPostgres: what one replica changes
// through LiteLLM's admin routes the other applies: a virtual key updated (its models) or
// deleted on one is refused accordingly by the other at its next request (keys are read
// from the store per request: no cache to invalidate), and a deployment added or deleted
// through /model/new and /model/delete is served or no longer by the other from its next
// --deployments-poll.
func TestKeyAndDeploymentChangesSeenByOtherReplicaOnPostgres(t *testing.T) {
	replicaEnv(t, "serve_admin_changes")
	t.Setenv("LITELLM_SALT_KEY", "salt-for-the-replica-test")
	_, upURL := newScripted(t, "up", false)
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	a, _, _, doneA := startServeWith(t, ctx, filepath.Join(dir, "a"), "--deployments-poll", "100ms")
	b, _, _, doneB := startServeWith(t, ctx, filepath.Join(dir, "b"), "--deployments-poll", "100ms")
	t.Cleanup(func() { cancel(); <-doneA; <-doneB })
	baseA, baseB := "http://"+a, "http://"+b

	var dep map[string]any
	if code := doJSON(t, "POST", baseA+"/model/new", "application/json", strings.NewReader(
		fmt.Sprintf(`{"model_name":"house","litellm_params":{"model":"openai/house-model","api_base":%q,"api_key":"sk-house"},"model_info":{"id":"house-1"}}`, upURL)), &dep); code != 200 {
		t.Fatalf("/model/new on A: %d %v", code, dep)
	}
	waitFor(t, "B serving the deployment A added", func() bool { code, _ := chatAs(t, baseB, "k", "house"); return code == 200 })

	var key struct {
		Key string `json:"key"`
	}
	if code := doJSON(t, "POST", baseA+"/key/generate", "application/json", strings.NewReader(`{"models":["house"]}`), &key); code != 200 || key.Key == "" {
		t.Fatalf("/key/generate on A: %d", code)
	}
	if code, text := chatAs(t, baseB, key.Key, "house"); code != 200 || text != "from up" {
		t.Fatalf("the key A issued, on B: %d %s", code, text)
	}
	var out map[string]any
	if code := doJSON(t, "POST", baseB+"/key/update", "application/json", strings.NewReader(fmt.Sprintf(`{"key":%q,"models":["openai/gpt-4o-mini"]}`, key.Key)), &out); code != 200 {
		t.Fatalf("/key/update on B: %d %v", code, out)
	}
	if code, _ := chatAs(t, baseA, key.Key, "house"); code == 200 {
		t.Fatal("A still let the key call a model B's /key/update took from it")
	}
	if code := doJSON(t, "POST", baseB+"/key/delete", "application/json", strings.NewReader(fmt.Sprintf(`{"keys":[%q]}`, key.Key)), &out); code != 200 {
		t.Fatalf("/key/delete on B: %d %v", code, out)
	}
	if code, _ := chatAs(t, baseA, key.Key, "openai/gpt-4o-mini"); code != http.StatusUnauthorized {
		t.Fatalf("the key B deleted, on A: %d, want 401 at once", code)
	}

	if code := doJSON(t, "POST", baseB+"/model/delete", "application/json", strings.NewReader(`{"id":"house-1"}`), &out); code != 200 {
		t.Fatalf("/model/delete on B: %d %v", code, out)
	}
	waitFor(t, "A no longer serving the deployment B deleted", func() bool { code, _ := chatAs(t, baseA, "k", "house"); return code != 200 })
}

// waitFor polls cond every 20 ms for 10 s at most (a bound on a hang, not a timing).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}
