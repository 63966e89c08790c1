package deployments

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestAPIBaseFragmentRefusedAtModelNew: POST /model/new (Add) and /model/update with an
// api_base holding a fragment ("https://host/v1#x") are refused naming
// litellm_params.api_base, without echoing the fragment, and nothing is stored: the
// fragment would be kept (sealed) but never sent. A record an earlier build stored with one
// (in clear, or sealed with a credential) is still served, without it (as it was called),
// and an update not giving api_base anew, or sending back its public form, goes through.
func TestAPIBaseFragmentRefusedAtModelNew(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	up := newBasicAuthUpstream(t)
	svc, g := review27cService(t, st, providers.FromEnv(func(string) string { return "" }, providers.Options{}), nil)
	var fe *FieldError
	for _, base := range []string{up.URL + "/v1#SECRETfrag", up.URL + "/v1#"} {
		_, err := svc.Add(ctx, Input{ModelName: "frag", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "sk-a", "api_base": base}})
		if !errors.As(err, &fe) || fe.Field != "litellm_params.api_base" || !strings.Contains(fe.Message, "fragment") {
			t.Errorf("Add with api_base %q: %v, want a FieldError on litellm_params.api_base naming the fragment", base, err)
		} else if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("the refusal echoes the fragment: %v", err)
		}
	}
	if recs, _ := st.List(ctx, store.Deployments, store.ListOptions{}); len(recs) != 0 {
		t.Fatalf("a refused deployment was stored: %d records", len(recs))
	}
	ok, err := svc.Add(ctx, Input{ModelName: "plain", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "sk-a", "api_base": up.URL + "/v1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Update(ctx, ok.ID, Input{LiteLLMParams: map[string]any{"api_base": up.URL + "/v1#SECRETfrag"}}); !errors.As(err, &fe) || fe.Field != "litellm_params.api_base" {
		t.Errorf("Update giving an api_base with a fragment: %v, want a FieldError on litellm_params.api_base", err)
	}

	// An earlier build's record, the fragment in its api_base.
	withFrag := "http://old:SECRETold@" + strings.TrimPrefix(up.URL, "http://") + "/v1#x"
	old := map[string]any{"id": "old-1", "model_name": "legacy", "litellm_params": map[string]any{"model": "openai/gpt-4o", "api_base": withFrag},
		"model_info": map[string]any{"id": "old-1", "db_model": true}, "created_at": "2025-01-01T00:00:00Z", "updated_at": "2025-01-01T00:00:00Z"}
	b, _ := json.Marshal(old)
	if err := st.Put(ctx, store.Deployments, "old-1", b); err != nil {
		t.Fatal(err)
	}
	if err := svc.Sync(ctx); err != nil {
		t.Fatalf("Sync with an earlier record whose api_base has a fragment: %v", err)
	}
	ping(t, g, "legacy")
	if got := up.last(); got != "old:SECRETold" {
		t.Errorf("the earlier record's upstream got %q, want old:SECRETold", got)
	}
	if _, err := svc.Update(ctx, "old-1", Input{LiteLLMParams: map[string]any{"rpm": 10}}); err != nil {
		t.Errorf("an update of the earlier record not giving api_base: %v", err)
	}
	ping(t, g, "legacy")
	if got := up.last(); got != "old:SECRETold" {
		t.Errorf("after its update the earlier record's upstream got %q, want old:SECRETold", got)
	}

	// One whose fragment was sealed with its credential (the build before this one).
	sealed, err := svc.seal("http://seal:SECRETseal@" + strings.TrimPrefix(up.URL, "http://") + "/v1#y")
	if err != nil {
		t.Fatal(err)
	}
	rec := record{Deployment: Deployment{ID: "old-2", ModelName: "legacy-sealed", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_base": up.URL + "/v1"},
		ModelInfo: map[string]any{"id": "old-2", "db_model": true}}, SealedBase: sealed}
	if err := put(ctx, st, rec); err != nil {
		t.Fatal(err)
	}
	if err := svc.Sync(ctx); err != nil {
		t.Fatalf("Sync with an earlier record whose sealed api_base has a fragment: %v", err)
	}
	ping(t, g, "legacy-sealed")
	if got := up.last(); got != "seal:SECRETseal" {
		t.Errorf("the sealed earlier record's upstream got %q, want seal:SECRETseal", got)
	}
	if _, err := svc.Update(ctx, "old-2", Input{LiteLLMParams: map[string]any{"api_base": up.URL + "/v1", "rpm": 3}}); err != nil {
		t.Errorf("an update sending back the sealed earlier record's public api_base: %v", err)
	}
	ping(t, g, "legacy-sealed")
	if got := up.last(); got != "seal:SECRETseal" {
		t.Errorf("after its update the sealed earlier record's upstream got %q, want seal:SECRETseal", got)
	}
}
