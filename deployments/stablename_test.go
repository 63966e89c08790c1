package deployments

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// memberOf is the "provider/model" the gateway serves the stored deployment id as ("" when
// it serves none).
func memberOf(g *completions.Gateway, id string) string {
	for _, d := range g.Deployments() {
		if d.ID == id && d.Stored {
			return d.Model
		}
	}
	return ""
}

// TestStoredProviderNameStable: of two stored deployments of one model_name, each with its
// own api_key (so a provider entry each) and rpm 1, deleting one leaves the other's
// provider entry, member name and rate-limit counts as they were: after both were used
// once, the survivor is still at its limit after the delete (a renamed member would start
// from nothing, and its usage would be logged under another name).
func TestStoredProviderNameStable(t *testing.T) {
	ctx := context.Background()
	up := newBasicAuthUpstream(t)
	call := func(g *completions.Gateway) error {
		o := completions.OpenAIChatRequest{}
		if err := json.Unmarshal([]byte(`{"model":"team","messages":[{"role":"user","content":"hi"}]}`), &o); err != nil {
			return err
		}
		req, err := o.ToRequest()
		if err != nil {
			return err
		}
		_, err = g.Complete(ctx, completions.Scope{Owner: "k"}, req)
		return err
	}
	for _, keep := range []string{"first", "second"} {
		t.Run("keep "+keep, func(t *testing.T) {
			gone := map[string]string{"first": "second", "second": "first"}[keep]
			reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
			svc, g := review27cService(t, memstore.New(), reg, nil)
			for _, id := range []string{"first", "second"} {
				if _, err := svc.Add(ctx, Input{ModelName: "team", LiteLLMParams: map[string]any{"model": "openai/gpt-4o",
					"api_key": "sk-" + id, "api_base": up.URL + "/v1", "rpm": 1}, ModelInfo: map[string]any{"id": id}}); err != nil {
					t.Fatal(err)
				}
			}
			before := memberOf(g, keep)
			if before == "" || before == memberOf(g, gone) {
				t.Fatalf("members %q and %q: want one each", before, memberOf(g, gone))
			}
			for range 2 { // each used once: both at their rpm
				if err := call(g); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := svc.Delete(ctx, gone); err != nil {
				t.Fatal(err)
			}
			if after := memberOf(g, keep); after != before {
				t.Errorf("after deleting %s the survivor %s is served as %q, was %q", gone, keep, after, before)
			}
			if err := call(g); !errors.Is(err, completions.ErrLimited) {
				t.Errorf("a call to the survivor at its rpm after the delete: %v, want ErrLimited (its count kept)", err)
			}
		})
	}
}
