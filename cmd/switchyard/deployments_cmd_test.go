package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/deployments"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

// deploymentsCLIServer serves a gateway with the stored deployments (no config file) and
// points the CLI at it; the upstream it returns answers chat and records the keys sent.
func deploymentsCLIServer(t *testing.T) (upstream string, keys func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		fakeOpenAIChat(w, r)
	}))
	t.Cleanup(up.Close)
	url := cliServer(t, func(st *store.Store) []server.Option {
		reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
		g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st})
		if err != nil {
			t.Fatal(err)
		}
		svc, err := deployments.New(deployments.Options{Store: st, Gateway: g, Registry: reg, SecretKey: []byte("salt-for-tests"),
			LookupEnv: func(string) (string, bool) { return "", false }})
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Completions(g), server.StoredDeployments(svc)}
	})
	t.Setenv("SWITCHYARD_BASE_URL", url)
	t.Setenv("SERVICE_API_KEY", cliKey)
	return up.URL, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

// TestDeploymentsCommand: deployments add takes the api_key from the environment (never
// printing it), the deployment answers chat with it and is listed as stored; update
// changes a setting and keeps the key; delete removes it; bad input is refused naming
// the field or flag.
func TestDeploymentsCommand(t *testing.T) {
	const secret = "sk-cli-deployment-secret-77"
	up, keys := deploymentsCLIServer(t)
	t.Setenv("TEAM_OPENAI_KEY", secret)
	var outs []string
	run := func(args ...string) (int, string, string) {
		t.Helper()
		code, out, errOut := cli(t, args...)
		outs = append(outs, out, errOut)
		return code, out, errOut
	}

	if code, out, errOut := run("deployments"); code != 0 || !strings.Contains(out, "ID") {
		t.Fatalf("list: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := run("deployments", "add", "--id", "team-1", "--name", "gpt-4o-team", "--model", "openai/gpt-4o", "--api-base", up+"/v1",
		"--api-key-env", "TEAM_OPENAI_KEY", "--rpm", "100", "--param", "timeout=30", "--info", "base_model=gpt-4o"); code != 0 ||
		!strings.Contains(out, "id:        team-1") || !strings.Contains(out, "name:      gpt-4o-team") || !strings.Contains(out, "rpm:       100") || !strings.Contains(out, "timeout:   30") {
		t.Fatalf("add: %d %s %s", code, out, errOut)
	}
	// switchyard chat uses the native completions API, which names provider/model models:
	// a model group's deployment is called on the OpenAI-compatible surface.
	c, err := client.New(client.WithoutRetry())
	if err != nil {
		t.Fatal(err)
	}
	chat := func() string {
		t.Helper()
		res, err := c.ChatCompletion(context.Background(), &client.ChatCompletionRequest{Model: "gpt-4o-team", Messages: []client.ChatCompletionMessage{{Role: "user", Content: "hi"}}})
		if err != nil {
			t.Fatalf("chat through the stored deployment: %v", err)
		}
		return res.Text()
	}
	if got := chat(); got != "Hello from the fake upstream" {
		t.Fatalf("chat through the added deployment: %q", got)
	}
	if got := keys(); len(got) != 1 || got[0] != "Bearer "+secret {
		t.Fatalf("the upstream was sent %q", got)
	}
	if code, out, errOut := run("deployments"); code != 0 || !regexp.MustCompile(`team-1\s+gpt-4o-team\s+\S+gpt-4o\s+`+regexp.QuoteMeta(up)+`/v1\s+true`).MatchString(out) {
		t.Fatalf("list: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := run("deployments", "update", "team-1", "--rpm", "200", "--json"); code != 0 || !strings.Contains(out, `"rpm": 200`) || !strings.Contains(out, `"timeout": 30`) {
		t.Fatalf("update: %d %s %s", code, out, errOut)
	}
	if got := chat(); got != "Hello from the fake upstream" {
		t.Fatalf("chat after the update: %q", got)
	}
	if got := keys(); len(got) != 2 || got[1] != "Bearer "+secret {
		t.Fatalf("the updated deployment's key: %q", got)
	}

	// Refusals.
	if code, _, errOut := run("deployments", "add", "--name", "x", "--model", "nosuch/m", "--api-key", "k"); code == 0 || !strings.Contains(errOut, "400") || !strings.Contains(errOut, "litellm_params.model") {
		t.Fatalf("an unknown provider: %d %s", code, errOut)
	}
	if code, _, errOut := run("deployments", "add", "--name", "x"); code == 0 || !strings.Contains(errOut, "--model") {
		t.Fatalf("add without --model: %d %s", code, errOut)
	}
	if code, _, errOut := run("deployments", "add", "--name", "x", "--model", "openai/gpt-4o", "--api-key-env", "NO_SUCH_VARIABLE_SET"); code == 0 || !strings.Contains(errOut, "NO_SUCH_VARIABLE_SET") {
		t.Fatalf("an unset --api-key-env: %d %s", code, errOut)
	}
	if code, _, errOut := run("deployments", "delete", "team-1", "--rpm", "5"); code == 0 || !strings.Contains(errOut, "--rpm is for deployments add and deployments update") {
		t.Fatalf("a setting on delete: %d %s", code, errOut)
	}
	if code, out, errOut := run("deployments", "delete", "team-1"); code != 0 || !strings.Contains(out, "deleted deployment team-1") {
		t.Fatalf("delete: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := run("deployments", "delete", "team-1"); code == 0 || !strings.Contains(errOut, "404") {
		t.Fatalf("delete twice: %d %s", code, errOut)
	}
	if code, out, errOut := run("deployments"); code != 0 || strings.Contains(out, "team-1") {
		t.Fatalf("list after delete: %d %s %s", code, out, errOut)
	}
	for i, o := range outs {
		if strings.Contains(o, secret) {
			t.Fatalf("output %d shows the api_key: %s", i, o)
		}
	}
}
