package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// litellmOrganizationNew makes an organization through POST /organization/new.
func litellmOrganizationNew(t *testing.T, s *Server, body string) litellmOrganization {
	t.Helper()
	r := do(t, s, "POST", "/organization/new", testKey, body)
	var out litellmOrganization
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &out) != nil {
		t.Fatalf("POST /organization/new %s: %d %s", body, r.status, r.raw)
	}
	return out
}

// litellmOrganizationInfo reads GET /organization/info of id.
func litellmOrganizationInfo(t *testing.T, s *Server, id string) litellmOrganization {
	t.Helper()
	r := do(t, s, "GET", "/organization/info?organization_id="+id, testKey, "")
	var out litellmOrganization
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &out) != nil {
		t.Fatalf("GET /organization/info %s: %d %s", id, r.status, r.raw)
	}
	return out
}

// TestOrganizationAccountOverTeamKeys: on every store driver, an organization's models
// bound its teams' (a team naming another model is refused naming models), the spend of a
// key of a team in it, through the gateway, shows on /organization/info and counts against
// the organization's max_budget, which once spent refuses the key naming the organization;
// a raised max_budget lets it through again, a blocked organization refuses it, and
// narrowing the organization's models under what a team names is refused naming the team.
func TestOrganizationAccountOverTeamKeys(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		hs, s := keysServer(t, store.New(d), 0)
		org := litellmOrganizationNew(t, s, `{"organization_alias":"Acme","models":["openai/ok"],"max_budget":0.02,"budget_duration":"30d","tags":[],"max_parallel_requests":null}`)
		if org.OrganizationID == "" || org.OrganizationAlias != "Acme" || org.BudgetTable.MaxBudget == nil || *org.BudgetTable.MaxBudget != 0.02 ||
			org.BudgetID != nil || len(org.Models) != 1 || org.CreatedBy == "" {
			t.Fatalf("/organization/new: %+v", org)
		}
		id := org.OrganizationID

		wantParam(t, do(t, s, "POST", "/team/new", testKey, `{"team_id":"eng","organization_id":"`+id+`","models":["openai/ok2"]}`),
			http.StatusBadRequest, "models", `"openai/ok2" is not among the models of organization `+id)
		wantParam(t, do(t, s, "POST", "/team/new", testKey, `{"team_id":"eng","organization_id":"nope"}`),
			http.StatusNotFound, "organization_id", `no organization "nope"`)
		tm := litellmTeamNew(t, s, `{"team_id":"eng","organization_id":"`+id+`","models":["openai/ok"],"max_budget":5}`)
		if tm.OrganizationID == nil || *tm.OrganizationID != id {
			t.Fatalf("/team/new in an organization: %+v", tm)
		}
		k := litellmGenerate(t, s, `{"team_id":"eng"}`)
		// The native routes take organization_id too, with their 422.
		wantError(t, do(t, s, "POST", "/api/v1/teams", testKey, `{"team_id":"ops","organization_id":"`+id+`","models":["openai/ok2"]}`),
			http.StatusUnprocessableEntity, KindValidation, "not among the models of organization")
		if r := do(t, s, "PATCH", "/api/v1/teams/eng", testKey, `{"max_budget_usd":6}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"organization_id":"`+id+`"`) {
			t.Fatalf("PATCH /api/v1/teams of a team in an organization: %d %s", r.status, r.raw)
		}

		for i := range 2 { // $0.013 each: the second starts at 0.013 < 0.02
			if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
				t.Fatalf("call %d: %d %s", i+1, st, b)
			}
		}
		info := litellmOrganizationInfo(t, s, id)
		if info.Spend < 0.026 || len(info.Teams) != 1 || info.Teams[0].TeamID != "eng" || info.Teams[0].Spend < 0.026 ||
			info.BudgetTable.BudgetDuration == nil || info.BudgetTable.BudgetResetAt == nil {
			t.Fatalf("/organization/info after two calls: %+v", info)
		}
		if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusTooManyRequests ||
			!strings.Contains(b, "Budget has been exceeded! Organization="+id+" Current cost: 0.026") || !strings.Contains(b, "Max budget: 0.02") {
			t.Fatalf("a key of a team in a spent organization: %d %s", st, b)
		}

		// Raised: through again, its spend kept.
		if r := do(t, s, "PATCH", "/organization/update", testKey, `{"organization_id":"`+id+`","max_budget":1}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("after the organization's budget was raised: %d %s", st, b)
		}
		// Blocked: refused naming it; unblocked: through.
		if r := do(t, s, "PATCH", "/organization/update", testKey, `{"organization_id":"`+id+`","blocked":true}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"blocked":true`) {
			t.Fatal(r.status, r.raw)
		}
		if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st == http.StatusOK || !strings.Contains(b, "Organization="+id+" is blocked") {
			t.Fatalf("a key of a team in a blocked organization: %d %s", st, b)
		}
		if r := do(t, s, "PATCH", "/organization/update", testKey, `{"organization_id":"`+id+`","blocked":false}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("after the organization was unblocked: %d %s", st, b)
		}

		// Narrowed under its team's models: refused naming the team; nothing changed.
		wantParam(t, do(t, s, "PATCH", "/organization/update", testKey, `{"organization_id":"`+id+`","models":["openai/ok2"]}`),
			http.StatusBadRequest, "models", "team eng")
		if info := litellmOrganizationInfo(t, s, id); len(info.Models) != 1 || info.Models[0] != "openai/ok" || *info.BudgetTable.MaxBudget != 1 {
			t.Fatalf("the organization after a refused update: %+v", info)
		}
		// A team moved out of the organization is no longer bounded by it.
		if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"eng","organization_id":null}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"organization_id":null`) {
			t.Fatal(r.status, r.raw)
		}
		if info := litellmOrganizationInfo(t, s, id); len(info.Teams) != 0 {
			t.Fatalf("a team taken out still listed: %+v", info.Teams)
		}
	})
}

// TestOrganizationRPMLimit: an organization's rpm_limit is shared by the keys of its
// teams, refusing with the organization's bound named.
func TestOrganizationRPMLimit(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	org := litellmOrganizationNew(t, s, `{"organization_alias":"Acme","rpm_limit":1}`)
	litellmTeamNew(t, s, `{"team_id":"a","organization_id":"`+org.OrganizationID+`"}`)
	litellmTeamNew(t, s, `{"team_id":"b","organization_id":"`+org.OrganizationID+`"}`)
	ka, kb := litellmGenerate(t, s, `{"team_id":"a"}`), litellmGenerate(t, s, `{"team_id":"b"}`)
	if st, b := chatStatus(t, hs.URL, ka.Key, "openai/ok"); st != http.StatusOK {
		t.Fatal(st, b)
	}
	if st, b := chatStatus(t, hs.URL, kb.Key, "openai/ok"); st != http.StatusTooManyRequests || !strings.Contains(b, "the organization's rpm_limit") {
		t.Fatalf("a second key of the organization within its minute: %d %s", st, b)
	}
}

// TestOrganizationDeleteCascades: on every store driver, deleting an organization
// deletes its teams, revokes their keys and drops its memberships, as LiteLLM's
// /organization/delete does, answering the organizations as they were; an unknown id
// among those given deletes none (404 naming organization_ids).
func TestOrganizationDeleteCascades(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		hs, s := keysServer(t, store.New(d), 0)
		org := litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme"}`)
		litellmTeamNew(t, s, `{"team_id":"eng","organization_id":"acme"}`)
		litellmTeamNew(t, s, `{"team_id":"solo"}`)
		k := litellmGenerate(t, s, `{"team_id":"eng"}`)
		other := litellmGenerate(t, s, `{"team_id":"solo"}`)
		if r := do(t, s, "POST", "/organization/member_add", testKey, `{"organization_id":"acme","member":[{"user_email":"ann@example.com","role":"org_admin"},{"user_id":"bob","role":"internal_user"}]}`); r.status != http.StatusOK ||
			!strings.Contains(r.raw, `"user_role":"org_admin"`) {
			t.Fatal(r.status, r.raw)
		}

		wantParam(t, do(t, s, "DELETE", "/organization/delete", testKey, `{"organization_ids":["acme","nope"]}`), http.StatusNotFound, "organization_ids", `"nope"`)
		if info := litellmOrganizationInfo(t, s, "acme"); len(info.Teams) != 1 || len(info.Members) != 2 {
			t.Fatalf("a refused delete changed the organization: %+v", info)
		}
		if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
			t.Fatal(st, b)
		}

		r := do(t, s, "DELETE", "/organization/delete", testKey, `{"organization_ids":["acme"]}`)
		var deleted []litellmOrganization
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &deleted) != nil || len(deleted) != 1 || deleted[0].OrganizationID != org.OrganizationID ||
			len(deleted[0].Teams) != 1 || len(deleted[0].Members) != 2 {
			t.Fatalf("/organization/delete: %d %s", r.status, r.raw)
		}
		wantParam(t, do(t, s, "GET", "/organization/info?organization_id=acme", testKey, ""), http.StatusNotFound, "organization_id", `no organization "acme"`)
		if r := do(t, s, "GET", "/team/info?team_id=eng", testKey, ""); r.status != http.StatusNotFound {
			t.Fatalf("the organization's team after its delete: %d %s", r.status, r.raw)
		}
		if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusUnauthorized {
			t.Fatalf("a key of the deleted organization's team: %d %s", st, b)
		}
		if st, b := chatStatus(t, hs.URL, other.Key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("a key of a team outside the organization: %d %s", st, b)
		}
		// Its memberships are gone: a new organization of the same id starts with none.
		litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme again"}`)
		if info := litellmOrganizationInfo(t, s, "acme"); len(info.Members) != 0 || len(info.Teams) != 0 || info.Spend != 0 {
			t.Fatalf("a new organization of a deleted one's id: %+v", info)
		}
	})
}

// TestOrganizationMembersAndList: members join by id or address with LiteLLM's roles (a
// user is made), a second add of one is refused, member_update changes the role and
// member_delete takes the member out; a deleted user leaves its organizations;
// /organization/list and the deprecated POST /organization/info describe them; bad input
// is refused naming the field.
func TestOrganizationMembersAndList(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme"}`)
	litellmOrganizationNew(t, s, `{"organization_id":"beta","organization_alias":"Beta","metadata":{"tier":"gold"}}`)
	add := `{"organization_id":"acme","member":{"user_email":"ann@example.com","role":"internal_user"}}`
	r := do(t, s, "POST", "/organization/member_add", testKey, add)
	var added litellmOrgMemberAdded
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &added) != nil || len(added.UpdatedUsers) != 1 || len(added.UpdatedOrganizationMemberships) != 1 {
		t.Fatalf("/organization/member_add: %d %s", r.status, r.raw)
	}
	ann := added.UpdatedUsers[0].UserID
	wantParam(t, do(t, s, "POST", "/organization/member_add", testKey, add), http.StatusBadRequest, "member", "already in organization acme")
	wantParam(t, do(t, s, "POST", "/organization/member_add", testKey, `{"organization_id":"acme","member":{"user_id":"x","role":"admin"}}`), http.StatusBadRequest, "member.role", "org_admin")
	wantParam(t, do(t, s, "POST", "/organization/member_add", testKey, `{"organization_id":"nope","member":{"user_id":"x","role":"org_admin"}}`), http.StatusNotFound, "organization_id", `"nope"`)

	r = do(t, s, "PATCH", "/organization/member_update", testKey, `{"organization_id":"acme","user_email":"ann@example.com","role":"org_admin"}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"user_role":"org_admin"`) || !strings.Contains(r.raw, `"user_id":"`+ann+`"`) {
		t.Fatalf("/organization/member_update: %d %s", r.status, r.raw)
	}
	if info := litellmOrganizationInfo(t, s, "acme"); len(info.Members) != 1 || info.Members[0].UserRole != "org_admin" || info.Members[0].UserEmail == nil {
		t.Fatalf("members after the update: %+v", info.Members)
	}
	var users litellmUserList
	if r := do(t, s, "GET", "/user/list?organization_ids=beta,acme", testKey, ""); r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &users) != nil ||
		users.Total != 1 || users.Users[0].UserID != ann {
		t.Fatalf("/user/list?organization_ids=: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "DELETE", "/organization/member_delete", testKey, `{"organization_id":"acme","user_id":"`+ann+`"}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	wantParam(t, do(t, s, "DELETE", "/organization/member_delete", testKey, `{"organization_id":"acme","user_id":"`+ann+`"}`), http.StatusNotFound, "user_id", "not a member")

	// A deleted user leaves its organizations.
	if r := do(t, s, "POST", "/organization/member_add", testKey, `{"organization_id":"beta","member":{"user_id":"bob","role":"internal_user_viewer"}}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if r := do(t, s, "POST", "/user/delete", testKey, `{"user_ids":["bob"]}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if info := litellmOrganizationInfo(t, s, "beta"); len(info.Members) != 0 {
		t.Fatalf("a deleted user is still a member: %+v", info.Members)
	}

	var list []litellmOrganization
	if r := do(t, s, "GET", "/organization/list", testKey, ""); r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &list) != nil ||
		len(list) != 2 || list[0].OrganizationID != "acme" || list[1].Metadata["tier"] != "gold" {
		t.Fatalf("/organization/list: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "GET", "/organization/list", completionsOtherKey, ""); r.status != http.StatusOK || strings.TrimSpace(r.raw) != "[]" {
		t.Fatalf("another key's /organization/list: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/organization/info", testKey, `{"organizations":["beta"]}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"organization_alias":"Beta"`) {
		t.Fatalf("POST /organization/info: %d %s", r.status, r.raw)
	}

	for _, c := range []struct {
		method, path, body, param string
		status                    int
	}{
		{"POST", "/organization/new", `{"models":[]}`, "organization_alias", http.StatusBadRequest},
		{"POST", "/organization/new", `{"organization_alias":"X","models":["no/such"]}`, "models", http.StatusBadRequest},
		{"POST", "/organization/new", `{"organization_alias":"X","max_budget":-1}`, "max_budget", http.StatusBadRequest},
		{"POST", "/organization/new", `{"organization_alias":"X","budget_duration":"soon"}`, "budget_duration", http.StatusBadRequest},
		{"POST", "/organization/new", `{"organization_alias":"X","rpm_limit":0}`, "rpm_limit", http.StatusBadRequest},
		{"POST", "/organization/new", `{"organization_alias":"X","model_max_budget":{"a":1}}`, "model_max_budget", http.StatusBadRequest},
		{"POST", "/organization/new", `{"organization_alias":"X","organization_id":"a/b"}`, "organization_id", http.StatusBadRequest},
		{"POST", "/organization/new", `{"organization_alias":"X","organization_id":"acme"}`, "organization_id", http.StatusConflict},
		{"PATCH", "/organization/update", `{"organization_alias":"X"}`, "organization_id", http.StatusBadRequest},
		{"PATCH", "/organization/update", `{"organization_id":"nope","organization_alias":"X"}`, "organization_id", http.StatusNotFound},
		{"PATCH", "/organization/update", `{"organization_id":"acme","models":null}`, "models", http.StatusBadRequest},
		{"GET", "/organization/info", ``, "organization_id", http.StatusBadRequest},
		{"GET", "/organization/info?organization_id=nope", ``, "organization_id", http.StatusNotFound},
		{"POST", "/organization/info", `{"organizations":["beta","nope"]}`, "organizations", http.StatusNotFound},
		{"DELETE", "/organization/delete", `{"organization_ids":[]}`, "organization_ids", http.StatusBadRequest},
	} {
		r := do(t, s, c.method, c.path, testKey, c.body)
		wantParam(t, r, c.status, c.param, "")
	}
	if r := do(t, s, "GET", "/organization/list", testKey, ""); r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &list) != nil || len(list) != 2 {
		t.Fatalf("refused requests changed the organizations: %d %s", r.status, r.raw)
	}
}

// TestOrganizationBudgetID: on every store driver, an organization named a LiteLLM budget
// takes its limits, which a /budget/update reaches and which hold on requests; a budget
// field beside it with another value and an unknown budget_id are refused naming the
// field, a /budget/update marks the organization updated (updated_at moves on), and the
// budget cannot be deleted while the organization names it.
func TestOrganizationBudgetID(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		hs, s := keysServer(t, store.New(d), 0)
		if r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"small","max_budget":0.01,"budget_duration":"30d"}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		wantParam(t, do(t, s, "POST", "/organization/new", testKey, `{"organization_alias":"X","budget_id":"none"}`), http.StatusNotFound, "budget_id", `"none"`)
		wantParam(t, do(t, s, "POST", "/organization/new", testKey, `{"organization_alias":"X","budget_id":"small","max_budget":3}`), http.StatusBadRequest, "max_budget", "sets it to 0.01")
		org := litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme","budget_id":"small","max_budget":0.01}`)
		if org.BudgetID == nil || *org.BudgetID != "small" || org.BudgetTable.MaxBudget == nil || *org.BudgetTable.MaxBudget != 0.01 || *org.BudgetTable.BudgetDuration != "30d" {
			t.Fatalf("an organization with budget_id: %+v", org)
		}
		litellmTeamNew(t, s, `{"team_id":"eng","organization_id":"acme"}`)
		k := litellmGenerate(t, s, `{"team_id":"eng"}`)
		if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
			t.Fatal(st, b)
		}
		if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusTooManyRequests || !strings.Contains(b, "Organization=acme") {
			t.Fatalf("past the budget's max_budget: %d %s", st, b)
		}
		if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"small","max_budget":1}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if info := litellmOrganizationInfo(t, s, "acme"); *info.BudgetTable.MaxBudget != 1 || !info.UpdatedAt.After(org.UpdatedAt) || info.CreatedAt != org.CreatedAt {
			t.Fatalf("the organization after /budget/update (updated_at %v, was %v): %+v", info.UpdatedAt, org.UpdatedAt, info.BudgetTable)
		}
		if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("after the budget was raised: %d %s", st, b)
		}
		wantParam(t, do(t, s, "POST", "/budget/delete", testKey, `{"id":"small"}`), http.StatusBadRequest, "id", "organizations ['acme']")
		// budget_id null leaves the budget, keeping its values; the budget may then go.
		r := do(t, s, "PATCH", "/organization/update", testKey, `{"organization_id":"acme","budget_id":null}`)
		if r.status != http.StatusOK || !strings.Contains(r.raw, `"budget_id":null`) || !strings.Contains(r.raw, `"max_budget":1`) {
			t.Fatalf("budget_id null: %d %s", r.status, r.raw)
		}
		if r := do(t, s, "POST", "/budget/delete", testKey, `{"id":"small"}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
	})
}
