package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// waitLog waits until the log holds want past what it held at from (10 s at most: a bound
// on a hang, not a timing) and returns the log after from.
func waitLog(t *testing.T, log *syncBuffer, from int, want string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if s := log.String()[from:]; strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the log:\n%s", want, log.String()[from:])
		}
	}
}

// TestServeReloadsLiteLLMConfigOnSIGHUP: a change to --litellm-config's model_list took a
// restart (the streams under way cut, the replica out of rotation meanwhile); SIGHUP now
// reads the file again and swaps the routing table: a group's deployment moved to another
// api_base, a group added, one removed, each named in the log, /v1/models listing the new
// file's names (a model_name with '/' too: those were read at start only), and a setting
// read only at start (num_retries) named as waiting for the next restart. A file that cannot be served
// is refused with the reason and the routing in force kept.
func TestServeReloadsLiteLLMConfigOnSIGHUP(t *testing.T) {
	a, aURL := newScripted(t, "a", false)
	b, bURL := newScripted(t, "b", false)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	write := func(body string) { writeTestFile(t, cfg, body) }
	write(fmt.Sprintf(`
model_list:
  - model_name: chat
    litellm_params: {model: openai/chat-model, api_base: %[1]q, api_key: key-a}
  - model_name: gone
    litellm_params: {model: openai/gone-model, api_base: %[1]q, api_key: key-a}
router_settings:
  num_retries: 0
general_settings:
  master_key: os.environ/SY_TEST_MASTER
`, aURL))
	const master = "sk-litellm-master-key-for-the-reload-test-0123"
	t.Setenv("SY_TEST_MASTER", master)
	t.Setenv("SWITCHYARD_API_KEYS", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _, stderr, done := startServeWith(t, ctx, filepath.Join(dir, "data"), "--litellm-config", cfg)
	base := "http://" + addr
	if code, text := chatAs(t, base, master, "chat"); code != 200 || text != "from a" {
		t.Fatalf("chat before the reload: %d %s", code, text)
	}

	write(fmt.Sprintf(`
model_list:
  - model_name: chat
    litellm_params: {model: openai/chat-model, api_base: %[1]q, api_key: key-b}
  - model_name: fresh
    litellm_params: {model: openai/fresh-model, api_base: %[1]q, api_key: key-b}
  - model_name: openai/listed-model
    litellm_params: {model: openai/listed-model}
router_settings:
  num_retries: 2
general_settings:
  master_key: os.environ/SY_TEST_MASTER
`, bURL))
	logged := sighupAndWait(t, stderr, "reload: --litellm-config applied")
	for _, want := range []string{"model_groups_added=fresh", "model_groups_removed=gone", "model_groups_changed=chat", "settings=num_retries"} {
		if !strings.Contains(logged, want) {
			t.Errorf("the reload's log lacks %q:\n%s", want, logged)
		}
	}
	if code, text := chatAs(t, base, master, "chat"); code != 200 || text != "from b" {
		t.Fatalf("chat after the reload: %d %s, want the new file's deployment", code, text)
	}
	if code, text := chatAs(t, base, master, "fresh"); code != 200 || text != "from b" {
		t.Fatalf("the group added: %d %s", code, text)
	}
	if code, _ := chatAs(t, base, master, "gone"); code == http.StatusOK {
		t.Fatalf("the group removed still answers")
	}
	if listed := listedModels(t, base, master); !slices.Equal(listed, []string{"chat", "fresh", "openai/listed-model"}) {
		t.Errorf("/v1/models after the reload: %v, want the new file's names", listed)
	}
	if a.count("chat-model") != 1 || b.count("chat-model") != 1 {
		t.Fatalf("chat-model calls: a %d, b %d, want one each", a.count("chat-model"), b.count("chat-model"))
	}

	write("model_list:\n  - model_name: chat\n    litellm_params: {model: nope/chat-model}\n")
	logged = sighupAndWait(t, stderr, "the configuration in force is kept")
	if !strings.Contains(logged, "nope") {
		t.Errorf("the refusal does not say why:\n%s", logged)
	}
	if code, text := chatAs(t, base, master, "chat"); code != 200 || text != "from b" {
		t.Fatalf("chat after an invalid file: %d %s, want the routing in force", code, text)
	}
	cancel()
	<-done
}

// TestServeReloadsProvidersConfigOnSIGHUP: SIGHUP reads --providers-config again: an
// entry's base_url and key changed, one added, each named in the log; a file without an
// entry a model group in force still names, or one that does not parse, is refused with
// the reason and the entries in force kept.
func TestServeReloadsProvidersConfigOnSIGHUP(t *testing.T) {
	_, aURL := newScripted(t, "a", false)
	_, bURL := newScripted(t, "b", false)
	dir := t.TempDir()
	provs := filepath.Join(dir, "providers.json")
	groups := filepath.Join(dir, "groups.json")
	write := func(path, body string) { writeTestFile(t, path, body) }
	write(provs, fmt.Sprintf(`{"providers": [{"name": "up", "format": "openai", "base_url": %q, "api_key": "key-a"}]}`, aURL))
	write(groups, `{"chat": {"models": ["up/chat-model"]}}`)
	const key = "sk-providers-reload-test-key-0123456789"
	t.Setenv("SWITCHYARD_API_KEYS", key)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _, stderr, done := startServeWith(t, ctx, filepath.Join(dir, "data"), "--providers-config", provs, "--model-groups", groups)
	base := "http://" + addr
	if code, text := chatAs(t, base, key, "chat"); code != 200 || text != "from a" {
		t.Fatalf("chat before the reload: %d %s", code, text)
	}
	hup := func(want string) string { return sighupAndWait(t, stderr, want) }

	write(provs, fmt.Sprintf(`{"providers": [{"name": "up", "format": "openai", "base_url": %q, "api_key": "key-b"},
		{"name": "spare", "format": "openai", "base_url": %q, "api_key": "key-b"}]}`, bURL, bURL))
	logged := hup("reload: --providers-config applied")
	if !strings.Contains(logged, "providers_added=spare") || !strings.Contains(logged, "providers_changed=up") || strings.Contains(logged, "key-b") {
		t.Errorf("the reload's log (names, never keys):\n%s", logged)
	}
	if code, text := chatAs(t, base, key, "chat"); code != 200 || text != "from b" {
		t.Fatalf("chat after the reload: %d %s, want the new base_url", code, text)
	}
	if code, text := chatAs(t, base, key, "spare/other-model"); code != 200 || text != "from b" {
		t.Fatalf("the entry added: %d %s", code, text)
	}

	for _, c := range []struct{ body, why string }{
		{fmt.Sprintf(`{"providers": [{"name": "spare", "format": "openai", "base_url": %q, "api_key": "key-b"}]}`, bURL), `no longer has serves the model group`},
		{`{"providers": [`, "the configuration in force is kept"},
	} {
		write(provs, c.body)
		if logged := hup("the configuration in force is kept"); !strings.Contains(logged, c.why) {
			t.Errorf("the refusal does not say %q:\n%s", c.why, logged)
		}
		if code, text := chatAs(t, base, key, "chat"); code != 200 || text != "from b" {
			t.Fatalf("chat after a refused file: %d %s", code, text)
		}
	}
	cancel()
	<-done
}

// TestServeReloadRefusesDroppingAFallbacksProvider: a --providers-config reload that
// dropped an entry a model group named only among its fallbacks was applied, leaving a
// group the server refuses at start (its fallback's provider unknown) and the fallback
// failing when needed; such a file is now refused as one dropping a member's entry is.
func TestServeReloadRefusesDroppingAFallbacksProvider(t *testing.T) {
	_, aURL := newScripted(t, "a", false)
	dir := t.TempDir()
	provs := filepath.Join(dir, "providers.json")
	groups := filepath.Join(dir, "groups.json")
	write := func(path, body string) { writeTestFile(t, path, body) }
	write(provs, fmt.Sprintf(`{"providers": [{"name": "up", "format": "openai", "base_url": %q, "api_key": "key-a"},
		{"name": "spare", "format": "openai", "base_url": %q, "api_key": "key-a"}]}`, aURL, aURL))
	write(groups, `{"chat": {"models": ["up/chat-model"], "fallbacks": ["spare/other-model"]}}`)
	t.Setenv("SWITCHYARD_API_KEYS", "sk-providers-reload-test-key-0123456789")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, _, stderr, done := startServeWith(t, ctx, filepath.Join(dir, "data"), "--providers-config", provs, "--model-groups", groups)
	write(provs, fmt.Sprintf(`{"providers": [{"name": "up", "format": "openai", "base_url": %q, "api_key": "key-a"}]}`, aURL))
	if logged := sighupAndWait(t, stderr, "reload"); !strings.Contains(logged, `spare\" it no longer has serves the model group`) {
		t.Errorf("a file dropping a fallback's provider was not refused:\n%s", logged)
	}
	cancel()
	<-done
}

// sighupAndWait sends this process SIGHUP (the serve under test reloads) and returns the
// log written after it once it holds want.
func sighupAndWait(t *testing.T, stderr *syncBuffer, want string) string {
	t.Helper()
	from := len(stderr.String())
	sendReload(t)
	return waitLog(t, stderr, from, want)
}

// listedModels returns the ids GET /v1/models lists, in its order.
func listedModels(t *testing.T, base, key string) []string {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("/v1/models: %d %v", resp.StatusCode, err)
	}
	var ids []string
	for _, m := range out.Data {
		ids = append(ids, m.ID)
	}
	return ids
}

// writeTestFile writes body to path (a config file the test changes under serve).
func writeTestFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestServeReloadsModelGroupsOnSIGHUP: --model-groups was read at start only, and the
// deployments service judged /model/new by the groups and providers of start. SIGHUP now
// reads it again with --providers-config: a group moved to a provider the same reload
// adds while the provider it leaves is dropped (refused before: a group in force named
// it), one added, one removed, each named in the log; /model/new then refuses the name
// added and takes the one removed. A groups file that does not parse, or names an
// unknown provider, is refused with the reason, and so the providers file read with it
// is not applied either.
func TestServeReloadsModelGroupsOnSIGHUP(t *testing.T) {
	_, aURL := newScripted(t, "a", false)
	_, bURL := newScripted(t, "b", false)
	dir := t.TempDir()
	provs := filepath.Join(dir, "providers.json")
	groups := filepath.Join(dir, "groups.json")
	write := func(path, body string) { writeTestFile(t, path, body) }
	write(provs, fmt.Sprintf(`{"providers": [{"name": "up", "format": "openai", "base_url": %q, "api_key": "key-a"}]}`, aURL))
	write(groups, `{"chat": {"models": ["up/chat-model"]}, "gone": {"models": ["up/gone-model"]}}`)
	t.Setenv("SWITCHYARD_API_KEYS", "k")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _, stderr, done := startServeWith(t, ctx, filepath.Join(dir, "data"), "--providers-config", provs, "--model-groups", groups)
	base := "http://" + addr
	if code, text := chatAs(t, base, "k", "chat"); code != 200 || text != "from a" {
		t.Fatalf("chat before the reload: %d %s", code, text)
	}

	write(provs, fmt.Sprintf(`{"providers": [{"name": "spare", "format": "openai", "base_url": %q, "api_key": "key-b"}]}`, bURL))
	write(groups, `{"chat": {"models": ["spare/chat-model"]}, "fresh": {"models": ["spare/fresh-model"]}}`)
	logged := sighupAndWait(t, stderr, "reload: --providers-config applied")
	for _, want := range []string{"reload: --model-groups applied", "model_groups_added=fresh", "model_groups_removed=gone", "model_groups_changed=chat",
		"providers_added=spare", "providers_removed=up"} {
		if !strings.Contains(logged, want) {
			t.Errorf("the reload's log lacks %q:\n%s", want, logged)
		}
	}
	if strings.Contains(logged, "key-b") {
		t.Errorf("the reload's log shows a key:\n%s", logged)
	}
	for model, want := range map[string]int{"chat": 200, "fresh": 200, "gone": 0, "up/chat-model": 0} {
		if code, text := chatAs(t, base, "k", model); (code == 200) != (want == 200) || code == 200 && text != "from b" {
			t.Errorf("%s after the reload: %d %s", model, code, text)
		}
	}
	newDeployment := func(name string) int {
		var out map[string]any
		return doJSON(t, "POST", base+"/model/new", "application/json", strings.NewReader(
			fmt.Sprintf(`{"model_name":%q,"litellm_params":{"model":"openai/gpt-4o-mini"}}`, name)), &out)
	}
	if code := newDeployment("fresh"); code == 200 {
		t.Errorf("/model/new named as a group the reload added: %d, want refused", code)
	}
	if code := newDeployment("gone"); code != 200 {
		t.Errorf("/model/new named as a group the reload removed: %d, want taken", code)
	}

	for _, c := range []struct{ groups, why string }{
		{`{"chat": {"models": [`, "--model-groups"},
		{`{"chat": {"models": ["spare/chat-model"]}, "odd": {"models": ["nope/x"]}}`, `unknown provider \"nope\"`},
		{`{"gone": {"models": ["spare/chat-model"]}}`, "stored through /model/new"},
	} {
		write(provs, fmt.Sprintf(`{"providers": [{"name": "spare", "format": "openai", "base_url": %q, "api_key": "key-b"},
			{"name": "third", "format": "openai", "base_url": %q, "api_key": "key-b"}]}`, bURL, bURL))
		write(groups, c.groups)
		if logged := sighupAndWait(t, stderr, "the configuration in force is kept"); !strings.Contains(logged, c.why) {
			t.Errorf("the refusal does not say %q:\n%s", c.why, logged)
		}
		for model, want := range map[string]int{"chat": 200, "fresh": 200, "third/chat-model": 0} {
			if code, text := chatAs(t, base, "k", model); (code == 200) != (want == 200) || code == 200 && text != "from b" {
				t.Errorf("%s after a refused groups file: %d %s", model, code, text)
			}
		}
	}
	cancel()
	<-done
}
