package server

import (
	"encoding/json"
	"net/http"
	"testing"
)

// LiteLLM's special model names — "all-team-models" (its admin UI's "All Team Models" on
// a team's key) and "all-proxy-models" ("All Proxy Models") — are Switchyard's empty
// list: the key may call every model its team allows, the team every model; they were
// refused as unknown models.
func TestLiteLLMAllModelsSentinels(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	r := do(t, s, "POST", "/team/new", testKey, `{"team_id":"t-all","models":["all-proxy-models"]}`)
	if r.status != http.StatusOK {
		t.Fatalf("/team/new all-proxy-models: %d %s", r.status, r.raw)
	}
	var team struct {
		Models []string `json:"models"`
	}
	if err := json.Unmarshal([]byte(r.raw), &team); err != nil || len(team.Models) != 0 {
		t.Fatalf("team models %v (%v): want every model", team.Models, err)
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"t-all","models":["openai/ok"]}`); r.status != http.StatusOK {
		t.Fatalf("/team/update: %d %s", r.status, r.raw)
	}
	g := litellmGenerate(t, s, `{"team_id":"t-all","models":["all-team-models"]}`)
	if len(g.Models) != 0 {
		t.Fatalf("key models %v: want the team's (empty list)", g.Models)
	}
	if resp, b := chatWith(t, hs, g.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("the team's model: %d %s", resp.StatusCode, b)
	}
	if resp, b := chatWith(t, hs, g.Key, "openai/other"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a model outside the team's: %d %s", resp.StatusCode, b)
	}
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","models":["all-proxy-models"]}`); r.status != http.StatusOK {
		t.Fatalf("/key/update all-proxy-models: %d %s", r.status, r.raw)
	}
}

// A user's models of all-proxy-models are every model, as a key's and a team's.
func TestLiteLLMUserAllProxyModels(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	r := do(t, s, "POST", "/user/new", testKey, `{"user_id":"u-all","models":["all-proxy-models"]}`)
	if r.status != http.StatusOK {
		t.Fatalf("/user/new all-proxy-models: %d %s", r.status, r.raw)
	}
	var u struct {
		Models []string `json:"models"`
	}
	if err := json.Unmarshal([]byte(r.raw), &u); err != nil || len(u.Models) != 0 {
		t.Fatalf("user models %v (%v): want every model", u.Models, err)
	}
}

// LiteLLM's admin UI sends all-proxy-models for an organization's "All Proxy Models" too.
func TestLiteLLMOrganizationAllProxyModels(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	for _, sentinel := range []string{"all-proxy-models", "all-team-models"} {
		r := do(t, s, "POST", "/organization/new", testKey, `{"organization_alias":"o-`+sentinel+`","models":["`+sentinel+`"]}`)
		if r.status != http.StatusOK {
			t.Fatalf("/organization/new %s: %d %s", sentinel, r.status, r.raw)
		}
		var o struct {
			OrganizationID string   `json:"organization_id"`
			Models         []string `json:"models"`
		}
		if err := json.Unmarshal([]byte(r.raw), &o); err != nil || len(o.Models) != 0 {
			t.Fatalf("organization models %v (%v): want every model", o.Models, err)
		}
		r = do(t, s, "PATCH", "/organization/update", testKey, `{"organization_id":"`+o.OrganizationID+`","models":["`+sentinel+`"]}`)
		if r.status != http.StatusOK {
			t.Fatalf("/organization/update %s: %d %s", sentinel, r.status, r.raw)
		}
	}
}
