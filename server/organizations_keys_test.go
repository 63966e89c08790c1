package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestOrganizationMoveTeamChecksKeys: moving a team into an organization (/team/update
// organization_id, PATCH /api/v1/teams) is refused while one of its keys names a model
// outside the organization's, naming the key and the model (400 on LiteLLM's route, 422
// on the native one), and nothing changes; with the key's models within, the move goes
// through. Narrowing an organization's models under a key of one of its teams' models is
// refused the same way, naming models.
func TestOrganizationMoveTeamChecksKeys(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	org := litellmOrganizationNew(t, s, `{"organization_alias":"Acme","models":["openai/ok"]}`)
	id := org.OrganizationID
	litellmTeamNew(t, s, `{"team_id":"eng"}`)
	k := litellmGenerate(t, s, `{"team_id":"eng","models":["openai/ok","openai/ok2"]}`)
	if k.Token == "" {
		t.Fatalf("/key/generate: no token: %+v", k)
	}

	wantParam(t, do(t, s, "POST", "/team/update", testKey, `{"team_id":"eng","organization_id":"`+id+`"}`),
		http.StatusBadRequest, "organization_id", `key `+k.Token+` of team eng names "openai/ok2" (its models[1])`)
	wantError(t, do(t, s, "PATCH", "/api/v1/teams/eng", testKey, `{"organization_id":"`+id+`","max_budget_usd":3}`),
		http.StatusUnprocessableEntity, KindValidation, `organization_id: key `+k.Token+` of team eng names "openai/ok2"`)
	// Nothing changed: the team is outside the organization, its budget as it was.
	if r := do(t, s, "GET", "/api/v1/teams/eng", testKey, ""); r.status != http.StatusOK || strings.Contains(r.raw, "organization_id") || strings.Contains(r.raw, "max_budget_usd") {
		t.Fatalf("the team after a refused move: %d %s", r.status, r.raw)
	}
	if info := litellmOrganizationInfo(t, s, id); len(info.Teams) != 0 {
		t.Fatalf("a refused move listed the team: %+v", info.Teams)
	}

	// The key's models within the organization's: the move goes through.
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Key+`","models":["openai/ok"]}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"eng","organization_id":"`+id+`"}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"organization_id":"`+id+`"`) {
		t.Fatalf("moving a team whose keys are within the organization: %d %s", r.status, r.raw)
	}

	// Narrowing an organization under a key of its team (a team without models of its own).
	wide := litellmOrganizationNew(t, s, `{"organization_alias":"Wide","models":["openai/ok","openai/ok2"]}`)
	litellmTeamNew(t, s, `{"team_id":"ops","organization_id":"`+wide.OrganizationID+`"}`)
	k2 := litellmGenerate(t, s, `{"team_id":"ops","models":["openai/ok2"]}`)
	wantParam(t, do(t, s, "PATCH", "/organization/update", testKey, `{"organization_id":"`+wide.OrganizationID+`","models":["openai/ok"]}`),
		http.StatusBadRequest, "models", `key `+k2.Token+` of team ops names "openai/ok2"`)
	if info := litellmOrganizationInfo(t, s, wide.OrganizationID); len(info.Models) != 2 {
		t.Fatalf("the organization after a refused narrowing: %+v", info.Models)
	}
}
