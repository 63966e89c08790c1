package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
)

// TestTagModelsNotMadeOwnByRoundTrip: a stored deployment's /model/info entry shows the tags
// /tag/new's models add among its litellm_params.tags; sending that entry back whole through
// /model/update keeps them out of the deployment's own tags (a tag it names itself, and one
// the edit adds, stay), so deleting the tag takes it off the deployment again.
func TestTagModelsNotMadeOwnByRoundTrip(t *testing.T) {
	a, _ := deploymentUpstream(t, "a")
	st := newTestStore(t)
	config := []byte("router_settings:\n  enable_tag_filtering: true\n")
	s := tagModelsServer(t, st, config)
	if r := do(t, s, "POST", "/model/new", testKey, `{"model_name":"gpt","litellm_params":{"model":"openai/gpt-4o","api_key":"sk-a","api_base":"`+a.URL+`/v1","tags":["own"]},"model_info":{"id":"dep-a"}}`); r.status != http.StatusOK {
		t.Fatalf("/model/new: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/tag/new", testKey, `{"name":"added","models":["dep-a"]}`); r.status != http.StatusOK {
		t.Fatalf("/tag/new: %d %s", r.status, r.raw)
	}
	entry := func() map[string]any {
		t.Helper()
		r := do(t, s, "GET", "/model/info", testKey, "")
		var out struct {
			Data []map[string]any `json:"data"`
		}
		if err := json.Unmarshal([]byte(r.raw), &out); err != nil || r.status != http.StatusOK {
			t.Fatalf("/model/info: %d %s", r.status, r.raw)
		}
		for _, d := range out.Data {
			if info, _ := d["model_info"].(map[string]any); info["id"] == "dep-a" {
				return d
			}
		}
		t.Fatalf("/model/info lacks dep-a: %s", r.raw)
		return nil
	}
	tags := func(d map[string]any) []string {
		var out []string
		for _, x := range d["litellm_params"].(map[string]any)["tags"].([]any) {
			out = append(out, x.(string))
		}
		slices.Sort(out)
		return out
	}
	d := entry()
	if got := tags(d); !slices.Equal(got, []string{"added", "own"}) {
		t.Fatalf("/model/info tags %v, want the own and the added one", got)
	}
	// The UI's edit: the entry sent back whole, one tag added by hand.
	params := d["litellm_params"].(map[string]any)
	params["tags"] = append(params["tags"].([]any), "edited")
	body, _ := json.Marshal(d)
	if r := do(t, s, "POST", "/model/update", testKey, string(body)); r.status != http.StatusOK {
		t.Fatalf("/model/update: %d %s", r.status, r.raw)
	}
	if got := tags(entry()); !slices.Equal(got, []string{"added", "edited", "own"}) {
		t.Fatalf("after the round trip: tags %v", got)
	}
	if r := do(t, s, "POST", "/tag/delete", testKey, `{"name":"added"}`); r.status != http.StatusOK {
		t.Fatalf("/tag/delete: %d %s", r.status, r.raw)
	}
	if got := tags(entry()); !slices.Equal(got, []string{"edited", "own"}) {
		t.Fatalf("after /tag/delete: tags %v, want the deployment's own only (the added tag was made its own)", got)
	}
}
