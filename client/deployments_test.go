package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

// deploymentUpstream is a scripted OpenAI upstream answering "from NAME"; auth has the
// Authorization headers it was sent.
func deploymentUpstream(t *testing.T, name string) (url string, auth func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"from %s"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`, name)
	}))
	t.Cleanup(hs.Close)
	return hs.URL, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

// deploymentOptions serve a gateway with a config file's deployment "from-file" and the
// stored deployments (server.StoredDeployments).
func deploymentOptions(t *testing.T, fileUpstream string) func(st *store.Store, _ string) []server.Option {
	return func(st *store.Store, _ string) []server.Option {
		reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
		g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st})
		if err != nil {
			t.Fatal(err)
		}
		config := []byte("model_list:\n  - model_name: from-file\n    litellm_params:\n      model: openai/gpt-4o-mini\n      api_base: " + fileUpstream + "/v1\n      api_key: sk-file\n")
		svc, err := deployments.New(deployments.Options{Store: st, Gateway: g, Registry: reg, Config: config,
			SecretKey: []byte("salt-for-tests"), LookupEnv: func(string) (string, bool) { return "", false }})
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Completions(g), server.StoredDeployments(svc)}
	}
}

// TestDeploymentsAgainstServer: a deployment added through the client answers chat with its
// api_key (which no answer holds), is listed as stored, follows an update of its api_base
// keeping its key, and is gone after its delete; bad input names the field, a deployment of
// the config file cannot be changed, and a virtual key may not manage deployments.
func TestDeploymentsAgainstServer(t *testing.T) {
	const secret = "sk-client-deployment-secret-41"
	fileURL, _ := deploymentUpstream(t, "file")
	firstURL, firstAuth := deploymentUpstream(t, "first")
	secondURL, secondAuth := deploymentUpstream(t, "second")
	c, _ := realServer(t, deploymentOptions(t, fileURL))
	ctx := context.Background()
	var apiErr *client.Error

	req := &client.DeploymentRequest{ID: "team-1", ModelName: "gpt-4o-team", Model: "openai/gpt-4o", APIBase: firstURL + "/v1", APIKey: secret,
		RequestsPerMinute: 100, Params: map[string]any{"input_cost_per_token": 0.000002}, Info: map[string]any{"mode": "chat"}}
	if s := fmt.Sprintf("%v %+v %#v", req, req, req); strings.Contains(s, secret) {
		t.Fatalf("a printed request shows its api_key: %s", s)
	}
	d, err := c.AddDeployment(ctx, req)
	if err != nil || d.ID != "team-1" || d.ModelName != "gpt-4o-team" || d.Model() != "openai/gpt-4o" || d.Params["rpm"] != float64(100) || d.Info["db_model"] != true {
		t.Fatalf("add %+v %v", d, err)
	}
	if _, ok := d.Params["api_key"]; ok {
		t.Fatalf("the answer holds the api_key: %+v", d.Params)
	}
	chat := func() (string, error) {
		res, err := c.ChatCompletion(ctx, &client.ChatCompletionRequest{Model: "gpt-4o-team", Messages: []client.ChatCompletionMessage{{Role: "user", Content: "hi"}}})
		if err != nil {
			return "", err
		}
		return res.Text(), nil
	}
	if text, err := chat(); err != nil || text != "from first" {
		t.Fatalf("chat through the added deployment: %q %v", text, err)
	}
	if got := firstAuth(); len(got) != 1 || got[0] != "Bearer "+secret {
		t.Fatalf("the upstream was sent %q", got)
	}

	infos, err := c.DeploymentInfos(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	fileID := ""
	for _, in := range infos {
		stored[in.Info.ID] = in.Info.Stored
		if in.ModelName == "from-file" {
			fileID = in.Info.ID
		}
	}
	if s, ok := stored["team-1"]; !ok || !s {
		t.Fatalf("team-1 not listed as stored: %+v", infos)
	}
	if s, ok := stored[fileID]; !ok || s {
		t.Fatalf("from-file not listed as the config's: %+v", infos)
	}

	// Update: a new api_base; the api_key is kept.
	d, err = c.UpdateDeployment(ctx, "team-1", &client.DeploymentRequest{APIBase: secondURL + "/v1"})
	if err != nil || d.Params["api_base"] != secondURL+"/v1" || d.Params["rpm"] != float64(100) {
		t.Fatalf("update %+v %v", d, err)
	}
	if text, err := chat(); err != nil || text != "from second" {
		t.Fatalf("chat after the update: %q %v", text, err)
	}
	if got := secondAuth(); len(got) != 1 || got[0] != "Bearer "+secret {
		t.Fatalf("the updated deployment's upstream was sent %q", got)
	}

	// Bad input, each naming the field.
	if _, err := c.AddDeployment(ctx, &client.DeploymentRequest{ModelName: "x", Model: "nosuch/m"}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadRequest || apiErr.Param != "litellm_params.model" {
		t.Fatalf("an unknown provider: %v", err)
	}
	if _, err := c.AddDeployment(ctx, &client.DeploymentRequest{ID: "team-1", ModelName: "x", Model: "openai/gpt-4o", APIKey: "k"}); !errors.As(err, &apiErr) || apiErr.Param != "model_info.id" {
		t.Fatalf("an id taken: %v", err)
	}
	if _, err := c.UpdateDeployment(ctx, fileID, &client.DeploymentRequest{APIBase: secondURL + "/v1"}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("a config deployment changed: %v", err)
	}
	if _, err := c.UpdateDeployment(ctx, "team-1", &client.DeploymentRequest{ID: "other"}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("an update naming another id: %v", err)
	}
	if err := c.DeleteDeployment(ctx, fileID); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("a config deployment deleted: %v", err)
	}

	// A virtual key may not manage deployments.
	vk, err := c.IssueKey(ctx, &client.KeyRequest{Name: "app"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := client.New(client.WithBaseURL(c.BaseURL()), client.WithAPIKey(vk.Key), client.WithoutRetry())
	if err != nil {
		t.Fatal(err)
	}
	if err := app.DeleteDeployment(ctx, "team-1"); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("a virtual key's delete: %v", err)
	}

	if err := c.DeleteDeployment(ctx, "team-1"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteDeployment(ctx, "team-1"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a deleted deployment deleted again: %v", err)
	}
	if _, err := chat(); err == nil {
		t.Fatal("the deleted deployment still answers")
	}
	if err := c.DeleteDeployment(ctx, ""); !errors.Is(err, client.ErrMissingID) {
		t.Fatalf("no id: %v", err)
	}
}
