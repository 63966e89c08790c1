package deployments

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// basicAuthUpstream is a fake OpenAI-format upstream that records the user:password each
// chat call carried (Go's client sends an api_base's user info as Basic auth).
type basicAuthUpstream struct {
	*httptest.Server
	mu    sync.Mutex
	users []string
}

func newBasicAuthUpstream(t *testing.T) *basicAuthUpstream {
	t.Helper()
	up := &basicAuthUpstream{}
	up.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		up.mu.Lock()
		up.users = append(up.users, user+":"+pass)
		up.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"c","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
	}))
	t.Cleanup(up.Close)
	return up
}

// last is the user:password of the last call ("" for none).
func (up *basicAuthUpstream) last() string {
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.users) == 0 {
		return ""
	}
	return up.users[len(up.users)-1]
}

// ping calls the stored deployment of modelName once through g.
func ping(t *testing.T, g *completions.Gateway, modelName string) {
	t.Helper()
	for _, d := range g.Deployments() {
		if d.ModelName == modelName {
			if strings.Contains(d.APIBase, "SECRET") {
				t.Errorf("%s: the gateway shows api_base %q with its credential", modelName, d.APIBase)
			}
			if err := g.CheckDeployment(context.Background(), d); err != nil {
				t.Fatalf("calling %s: %v", modelName, err)
			}
			return
		}
	}
	t.Fatalf("no deployment %s in %v", modelName, g.ModelGroups())
}

// TestSealedAPIBase: a credential written into litellm_params.api_base (user:password@ or
// a query parameter such as ?code=) is sealed as api_key is, on every driver: the store
// holds the public form and the sealed URL, never the credential; the upstream still gets
// it, after a restart on the same store, after an update that leaves api_base alone and
// after one that sends back the public form (dropped by api_base null);
// answers show the public form; without LITELLM_SALT_KEY such an api_base is refused
// naming the field; a record an earlier build wrote with api_base in clear still serves
// and is sealed at its next update.
func TestSealedAPIBase(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		ctx := context.Background()
		st := store.New(d)
		up := newBasicAuthUpstream(t)
		host := strings.TrimPrefix(up.URL, "http://")
		svc, g := review27cService(t, st, providers.FromEnv(func(string) string { return "" }, providers.Options{}), nil)

		withUser := "http://svc:SECRETpw@" + host + "/v1"
		dep, err := svc.Add(ctx, Input{ModelName: "team", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_base": withUser}, ModelInfo: map[string]any{"id": "team-1"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := dep.LiteLLMParams["api_base"]; got != "http://"+host+"/v1" {
			t.Errorf("Add answered api_base %v, want the public form", got)
		}
		if _, err := svc.Add(ctx, Input{ModelName: "fn", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "sk-fn",
			"api_base": "https://fn.example/api?code=SECRETcode&api-key=SECRETak"}}); err != nil {
			t.Fatal(err)
		}
		entries, err := st.List(ctx, store.Deployments, store.ListOptions{})
		if err != nil || len(entries) != 2 {
			t.Fatalf("stored: %d %v, want 2", len(entries), err)
		}
		for _, e := range entries {
			if strings.Contains(string(e.Value), "SECRET") {
				t.Errorf("a credential of api_base is in clear in the store: %s", e.Value)
			}
			if r, err := get(ctx, st, e.Key); err != nil || r.SealedBase == "" {
				t.Errorf("%s: %+v %v, want a sealed api_base", e.Key, r, err)
			}
		}
		ping(t, g, "team")
		if got := up.last(); got != "svc:SECRETpw" {
			t.Errorf("the upstream got user info %q, want svc:SECRETpw", got)
		}

		// Another process on the same store (a restart or a replica) unseals it too.
		restarted, g2 := review27cService(t, store.New(d), providers.FromEnv(func(string) string { return "" }, providers.Options{}), nil)
		ping(t, g2, "team")
		if got := up.last(); got != "svc:SECRETpw" {
			t.Errorf("after a restart the upstream got %q, want svc:SECRETpw", got)
		}
		// An update that leaves api_base alone keeps the sealed one.
		if _, err := restarted.Update(ctx, "team-1", Input{LiteLLMParams: map[string]any{"rpm": 100}}); err != nil {
			t.Fatal(err)
		}
		ping(t, g2, "team")
		if got := up.last(); got != "svc:SECRETpw" {
			t.Errorf("after an update of rpm the upstream got %q, want svc:SECRETpw", got)
		}
		// Sending back the public form answers show (a full edit of /model/info's entry, as
		// LiteLLM's UI does) keeps the sealed credential.
		shown, err := restarted.Update(ctx, "team-1", Input{LiteLLMParams: map[string]any{"api_base": "http://" + host + "/v1", "rpm": 50}})
		if err != nil {
			t.Fatal(err)
		}
		if shown.LiteLLMParams["api_base"] != "http://"+host+"/v1" {
			t.Errorf("after sending back the public form: api_base %v", shown.LiteLLMParams["api_base"])
		}
		ping(t, g2, "team")
		if got := up.last(); got != "svc:SECRETpw" {
			t.Errorf("after sending back the public api_base the upstream got %q, want svc:SECRETpw", got)
		}
		// api_base null drops the sealed one; the public URL given afterwards stays public.
		if _, err := restarted.Update(ctx, "team-1", Input{LiteLLMParams: map[string]any{"api_base": nil}}); err != nil {
			t.Fatal(err)
		}
		if r, _ := get(ctx, st, "team-1"); r.SealedBase != "" {
			t.Errorf("after api_base null the sealed api_base is kept: %+v", r)
		}
		if _, err := restarted.Update(ctx, "team-1", Input{LiteLLMParams: map[string]any{"api_base": up.URL + "/v1"}}); err != nil {
			t.Fatal(err)
		}
		if r, _ := get(ctx, st, "team-1"); r.SealedBase != "" || r.LiteLLMParams["api_base"] != up.URL+"/v1" {
			t.Errorf("after an update to a public api_base: %+v", r)
		}
		ping(t, g2, "team")
		if got := up.last(); got != ":" {
			t.Errorf("after an update to a public api_base the upstream got %q, want no user info", got)
		}
	})
}

// TestSealedAPIBaseNeedsSecretKey: without LITELLM_SALT_KEY an api_base with a credential
// is refused, naming litellm_params.api_base and not echoing the credential, as api_key
// is; one without, or an os.environ/ reference, is stored.
func TestSealedAPIBaseNeedsSecretKey(t *testing.T) {
	ctx := context.Background()
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Options{Store: memstore.New(), Gateway: g, Registry: reg,
		LookupEnv: func(n string) (string, bool) { return "https://env.example/v1?key=k", n == "BASE" }})
	if err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{"https://u:SECRETpw@up.example/v1", "https://up.example/v1?key=SECRETk"} {
		_, err := svc.Add(ctx, Input{ModelName: "team", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_base": base}})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "litellm_params.api_base" || !strings.Contains(fe.Message, "LITELLM_SALT_KEY") || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("api_base %s without a secret key: %v, want a FieldError naming litellm_params.api_base and LITELLM_SALT_KEY", base, err)
		}
	}
	for i, base := range []string{"https://up.example/v1", "os.environ/BASE"} {
		if _, err := svc.Add(ctx, Input{ModelName: "ok" + string(rune('a'+i)), LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_base": base}}); err != nil {
			t.Errorf("api_base %s without a secret key: %v", base, err)
		}
	}
}

// TestSealedAPIBaseEarlierRecord: a record an earlier build stored with api_base's
// credential in clear (no sealed_api_base) still serves with it, and the next update seals it.
func TestSealedAPIBaseEarlierRecord(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	up := newBasicAuthUpstream(t)
	withUser := "http://old:SECRETold@" + strings.TrimPrefix(up.URL, "http://") + "/v1"
	old := map[string]any{"id": "old-1", "model_name": "legacy", "litellm_params": map[string]any{"model": "openai/gpt-4o", "api_base": withUser},
		"model_info": map[string]any{"id": "old-1", "db_model": true}, "created_at": "2025-01-01T00:00:00Z", "updated_at": "2025-01-01T00:00:00Z"}
	b, _ := json.Marshal(old)
	if err := st.Put(ctx, store.Deployments, "old-1", b); err != nil {
		t.Fatal(err)
	}
	svc, g := review27cService(t, st, providers.FromEnv(func(string) string { return "" }, providers.Options{}), nil)
	ping(t, g, "legacy")
	if got := up.last(); got != "old:SECRETold" {
		t.Fatalf("the earlier record's upstream got %q, want old:SECRETold", got)
	}
	if _, err := svc.Update(ctx, "old-1", Input{LiteLLMParams: map[string]any{"rpm": 10}}); err != nil {
		t.Fatal(err)
	}
	raw, err := st.Get(ctx, store.Deployments, "old-1")
	if err != nil || strings.Contains(string(raw), "SECRET") {
		t.Errorf("after its update the earlier record still holds the credential in clear (%v): %s", err, raw)
	}
	ping(t, g, "legacy")
	if got := up.last(); got != "old:SECRETold" {
		t.Errorf("after the update the upstream got %q, want old:SECRETold", got)
	}
}
