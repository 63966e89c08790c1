package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/deployments"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
)

// deploymentUpstream is a scripted OpenAI upstream answering with its own name; it records
// the Authorization headers it was sent.
func deploymentUpstream(t *testing.T, name string) (*httptest.Server, *sync.Map) {
	t.Helper()
	seen := &sync.Map{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.Header.Get("Authorization"), true)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"from %s"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`, name)
	}))
	t.Cleanup(hs.Close)
	return hs, seen
}

// deploymentServer serves st with a gateway of the config file config (nil: none) and the
// stored deployments applied.
func deploymentServer(t *testing.T, st *store.Store, config []byte) *httptest.Server {
	t.Helper()
	return deploymentServerSalted(t, st, config, "salt-for-tests")
}

// deploymentServerSalted is deploymentServer with LITELLM_SALT_KEY salt.
func deploymentServerSalted(t *testing.T, st *store.Store, config []byte, salt string) *httptest.Server {
	t.Helper()
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := deployments.New(deployments.Options{Store: st, Gateway: g, Registry: reg, Config: config,
		SecretKey: []byte(salt), LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	return serveDeployments(t, st, g, svc)
}

// TestStoredDeploymentsLifecycle: a deployment added by POST /model/new answers
// /v1/chat/completions with its api_key, is listed with db_model true, survives a restart
// on the same bbolt file, follows an update of its api_base, and after its delete is a 400;
// its api_key is in no answer; bad input names the field; a config model cannot be deleted.
func TestStoredDeploymentsLifecycle(t *testing.T) {
	const secret = "sk-deployment-secret-9f2"
	first, firstSeen := deploymentUpstream(t, "first")
	second, secondSeen := deploymentUpstream(t, "second")
	path := filepath.Join(t.TempDir(), "switchyard.db")
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	config := []byte("model_list:\n  - model_name: from-file\n    litellm_params:\n      model: openai/gpt-4o-mini\n      api_base: " + first.URL + "/v1\n      api_key: sk-file\n")
	hs := deploymentServer(t, st, config)
	var answers []string
	call := func(hs *httptest.Server, method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answers = append(answers, string(b))
		return resp.StatusCode, string(b)
	}
	chat := `{"model":"gpt-4o-team","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`

	code, out := call(hs, "POST", "/model/new", `{"model_name":"gpt-4o-team","litellm_params":{"model":"openai/gpt-4o","api_key":"`+secret+`","api_base":"`+first.URL+`/v1","rpm":100,"input_cost_per_token":0.000002},"model_info":{"id":"team-1"}}`)
	if code != http.StatusOK || !strings.Contains(out, `"model_id":"team-1"`) || !strings.Contains(out, `"db_model":true`) {
		t.Fatalf("/model/new: %d %s", code, out)
	}
	if code, out := call(hs, "POST", "/v1/chat/completions", chat); code != http.StatusOK || !strings.Contains(out, "from first") {
		t.Fatalf("chat through the added deployment: %d %s", code, out)
	}
	if _, ok := firstSeen.Load("Bearer " + secret); !ok {
		t.Errorf("the upstream was not sent the deployment's api_key")
	}
	if code, out := call(hs, "GET", "/model/info?litellm_model_id=team-1", ""); code != http.StatusOK || !strings.Contains(out, `"db_model":true`) || !strings.Contains(out, `"model_name":"gpt-4o-team"`) {
		t.Errorf("/model/info of the stored deployment: %d %s", code, out)
	}
	if code, out := call(hs, "GET", "/v1/models", ""); code != http.StatusOK || !strings.Contains(out, `"gpt-4o-team"`) {
		t.Errorf("/v1/models: %d %s", code, out)
	}

	// Bad input: each a 400 naming the field.
	for body, field := range map[string]string{
		`{"model_name":"x","litellm_params":{"model":"nosuch/m"}}`:                                                 "litellm_params.model",
		`{"model_name":"x","litellm_params":{"model":"openai/gpt-4o","api_base":"ftp://h"}}`:                       "litellm_params.api_base",
		`{"model_name":"x","litellm_params":{"model":"openai/gpt-4o","api_key":"k"},"model_info":{"id":"team-1"}}`: "model_info.id",
		`{"litellm_params":{"model":"openai/gpt-4o"}}`:                                                             "model_name",
	} {
		if code, out := call(hs, "POST", "/model/new", body); code != http.StatusBadRequest || !strings.Contains(out, field) {
			t.Errorf("/model/new %s: %d %s, want a 400 naming %s", body, code, out, field)
		}
	}
	var fileID string
	for _, d := range []string{completions.DeploymentID("from-file", "openai-from-file/gpt-4o-mini")} {
		fileID = d
	}
	if code, out := call(hs, "POST", "/model/delete", `{"id":"`+fileID+`"}`); code != http.StatusBadRequest || !strings.Contains(out, "Model in config") {
		t.Errorf("deleting a config model: %d %s, want a 400", code, out)
	}
	if code, out := call(hs, "POST", "/model/delete", `{"id":"nosuch"}`); code != http.StatusNotFound || !strings.Contains(out, "not found in db") {
		t.Errorf("deleting an unknown id: %d %s, want a 404", code, out)
	}
	if code, _ := call(hs, "PATCH", "/model/nosuch/update", `{"litellm_params":{"rpm":5}}`); code != http.StatusNotFound {
		t.Errorf("updating an unknown id: %d, want a 404", code)
	}

	// Restart on the same file: the deployment is served again.
	hs.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err = boltstore.Open(path, boltstore.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	hs = deploymentServer(t, st, config)
	if code, out := call(hs, "POST", "/v1/chat/completions", chat); code != http.StatusOK || !strings.Contains(out, "from first") {
		t.Fatalf("chat after a restart: %d %s", code, out)
	}

	// Update its api_base: the next call goes to the second upstream with the same key.
	if code, out := call(hs, "PATCH", "/model/team-1/update", `{"litellm_params":{"api_base":"`+second.URL+`/v1"}}`); code != http.StatusOK || !strings.Contains(out, second.URL) {
		t.Fatalf("PATCH update: %d %s", code, out)
	}
	if code, out := call(hs, "POST", "/v1/chat/completions", chat); code != http.StatusOK || !strings.Contains(out, "from second") {
		t.Fatalf("chat after the update: %d %s", code, out)
	}
	if _, ok := secondSeen.Load("Bearer " + secret); !ok {
		t.Errorf("the updated deployment lost its api_key")
	}
	if code, out := call(hs, "POST", "/model/update", `{"model_info":{"id":"team-1"},"litellm_params":{"api_base":"not a url"}}`); code != http.StatusBadRequest || !strings.Contains(out, "litellm_params.api_base") {
		t.Errorf("update to a bad api_base: %d %s", code, out)
	}

	// Delete: the model name is gone.
	if code, out := call(hs, "POST", "/model/delete", `{"id":"team-1"}`); code != http.StatusOK || !strings.Contains(out, "deleted") {
		t.Fatalf("delete: %d %s", code, out)
	}
	if code, out := call(hs, "POST", "/v1/chat/completions", chat); code != http.StatusBadRequest && code != http.StatusNotFound {
		t.Errorf("chat after the delete: %d %s, want a 400 or 404", code, out)
	}
	for _, a := range answers {
		if strings.Contains(a, secret) {
			t.Fatalf("an answer holds the api_key: %s", a)
		}
	}
	// In the store the key is sealed.
	b, _ := st.List(context.Background(), store.Deployments, store.ListOptions{})
	for _, e := range b {
		if strings.Contains(string(e.Value), secret) {
			t.Errorf("the store holds the api_key in clear: %s", e.Value)
		}
	}
}

// TestStoredDeploymentsConcurrentSwaps: chat requests run while deployments are added and
// deleted (run with -race); each request to the config file's group answers.
func TestStoredDeploymentsConcurrentSwaps(t *testing.T) {
	up, _ := deploymentUpstream(t, "up")
	config := []byte("model_list:\n  - model_name: steady\n    litellm_params:\n      model: openai/gpt-4o-mini\n      api_base: " + up.URL + "/v1\n      api_key: sk-file\n")
	hs := deploymentServer(t, newTestStore(t), config)
	var failed atomic.Int32
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 15; i++ {
				resp, out := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"steady","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`)
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), "from up") {
					failed.Add(1)
				}
			}
		}()
	}
	for i := 0; i < 10; i++ {
		id := fmt.Sprintf("d%d", i)
		if resp, out := post(t, hs.URL+"/model/new", testKey, `{"model_name":"extra","litellm_params":{"model":"openai/gpt-4o","api_base":"`+up.URL+`/v1","api_key":"sk-x"},"model_info":{"id":"`+id+`"}}`); resp.StatusCode != http.StatusOK {
			t.Fatalf("/model/new: %d %s", resp.StatusCode, out)
		}
		if resp, out := post(t, hs.URL+"/model/delete", testKey, `{"id":"`+id+`"}`); resp.StatusCode != http.StatusOK {
			t.Fatalf("/model/delete: %d %s", resp.StatusCode, out)
		}
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d requests failed during the swaps", n)
	}
}

// serveDeployments applies svc's stored deployments to g and serves them, with g, through a
// test server on st whose operator key is testKey.
func serveDeployments(t *testing.T, st *store.Store, g *completions.Gateway, svc *deployments.Service) *httptest.Server {
	t.Helper()
	if err := svc.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	for _, opt := range []Option{Completions(g), StoredDeployments(svc)} {
		if err := opt(s); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs
}
