package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestReview27dKeyListOrganizationFilter: now that organizations exist, LiteLLM's GET
// /key/list?organization_id= lists the keys of the organization's teams (not a 400 saying
// Switchyard has no organizations), and /key/generate's organization_id names one of the
// organizations (an unknown one is a 404 naming it).
func TestReview27dKeyListOrganizationFilter(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme"}`)
	litellmTeamNew(t, s, `{"team_id":"eng","organization_id":"acme"}`)
	litellmTeamNew(t, s, `{"team_id":"ops"}`)
	in := litellmGenerate(t, s, `{"team_id":"eng"}`)
	litellmGenerate(t, s, `{"team_id":"ops"}`)
	litellmGenerate(t, s, `{}`)

	r := do(t, s, "GET", "/key/list?organization_id=acme", testKey, "")
	var out struct {
		Keys []string `json:"keys"`
	}
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &out) != nil {
		t.Fatalf("GET /key/list?organization_id=acme: %d %s", r.status, r.raw)
	}
	if !slices.Equal(out.Keys, []string{in.Token}) {
		t.Fatalf("the keys of organization acme: %v, want [%s]", out.Keys, in.Token)
	}
	r = do(t, s, "GET", "/key/list?organization_id=nope", testKey, "")
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"keys":[]`) {
		t.Fatalf("GET /key/list?organization_id=nope: %d %s", r.status, r.raw)
	}

	// /key/generate's organization_id names an organization (a key without a team is the
	// organization's own: organizations_teamless_keys_test.go); an unknown one is a 404.
	wantParam(t, do(t, s, "POST", "/key/generate", testKey, `{"organization_id":"nope"}`), http.StatusNotFound, "organization_id", "nope")
}
