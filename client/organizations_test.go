package client_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// TestOrganizationsAgainstServer: an organization bounds its teams' models, blocks their
// keys when blocked, lists its teams and members, changes the fields given (null removing
// a bound), and its deletion takes its teams and their keys with it.
func TestOrganizationsAgainstServer(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	var apiErr *client.Error

	org, err := c.CreateOrganization(ctx, &client.OrganizationRequest{OrganizationID: "acme", Alias: "Acme",
		Models: []string{"openai/gpt-4o-mini"}, MaxBudgetUSD: 50, BudgetDuration: "30d", RequestsPerMinute: 100})
	if err != nil || org.OrganizationID != "acme" || org.Alias != "Acme" || org.Budget.MaxBudgetUSD == nil || *org.Budget.MaxBudgetUSD != 50 ||
		org.Budget.RequestsPerMinute == nil || *org.Budget.RequestsPerMinute != 100 || org.Budget.BudgetDuration == nil || *org.Budget.BudgetDuration != "30d" {
		t.Fatalf("create %+v %v", org, err)
	}
	if _, err := c.CreateOrganization(ctx, &client.OrganizationRequest{OrganizationID: "acme", Alias: "again"}); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("an id taken: %v", err)
	}
	if _, err := c.CreateOrganization(ctx, &client.OrganizationRequest{OrganizationID: "x"}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadRequest || apiErr.Param != "organization_alias" {
		t.Fatalf("no alias: %v", err)
	}

	// A team's models must be within the organization's.
	if _, err := c.CreateTeam(ctx, &client.TeamRequest{TeamID: "wide", Models: []string{"openai/gpt-4o"}, OrganizationID: "acme"}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("a team outside the organization's models: %v", err)
	}
	if _, err := c.CreateTeam(ctx, &client.TeamRequest{TeamID: "lost", OrganizationID: "nope"}); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a team of no organization: %v", err)
	}
	tm, err := c.CreateTeam(ctx, &client.TeamRequest{TeamID: "eng", Models: []string{"openai/gpt-4o-mini"}, OrganizationID: "acme"})
	if err != nil || tm.OrganizationID != "acme" {
		t.Fatalf("team in the organization %+v %v", tm, err)
	}
	vk, err := c.IssueKey(ctx, &client.KeyRequest{Name: "app", TeamID: "eng"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := client.New(client.WithBaseURL(c.BaseURL()), client.WithAPIKey(vk.Key), client.WithoutRetry())
	if err != nil {
		t.Fatal(err)
	}
	chat := func() error {
		_, err := app.Complete(ctx, &client.CompletionRequest{Messages: []client.ChatMessage{client.TextMessage("user", "hi")}, Models: []string{"openai/gpt-4o-mini"}})
		return err
	}
	if err := chat(); err != nil {
		t.Fatal(err)
	}

	// Members: added by id (a user is made), role changed, listed, removed.
	ms, err := c.AddOrganizationMembers(ctx, "acme", client.OrganizationMemberRequest{UserID: "ann", Role: client.OrgAdmin},
		client.OrganizationMemberRequest{Email: "bob@example.com", Role: client.OrgInternalUser})
	if err != nil || len(ms) != 2 || ms[0].UserID != "ann" || ms[0].Role != client.OrgAdmin || ms[1].Email != "bob@example.com" {
		t.Fatalf("member add %+v %v", ms, err)
	}
	if _, err := c.AddOrganizationMembers(ctx, "acme", client.OrganizationMemberRequest{UserID: "ann", Role: client.OrgAdmin}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("a member twice: %v", err)
	}
	if _, err := c.AddOrganizationMembers(ctx, "acme", client.OrganizationMemberRequest{UserID: "cy", Role: "owner"}); !errors.As(err, &apiErr) || apiErr.Param != "member.role" {
		t.Fatalf("a bad role: %v", err)
	}
	m, err := c.UpdateOrganizationMember(ctx, "acme", "bob@example.com", client.OrgInternalUserViewer)
	if err != nil || m.Role != client.OrgInternalUserViewer || m.Email != "bob@example.com" {
		t.Fatalf("member update %+v %v", m, err)
	}
	if m, err := c.RemoveOrganizationMember(ctx, "acme", "ann"); err != nil || m.UserID != "ann" {
		t.Fatalf("member delete %+v %v", m, err)
	}
	if _, err := c.RemoveOrganizationMember(ctx, "acme", "ann"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a member removed twice: %v", err)
	}
	got, err := c.Organization(ctx, "acme")
	if err != nil || len(got.Teams) != 1 || got.Teams[0].TeamID != "eng" || !slices.Equal(got.Teams[0].Keys, []string{vk.ID}) ||
		len(got.Members) != 1 || got.Members[0].UserID == "ann" || got.SpendUSD <= 0 {
		t.Fatalf("info %+v %v", got, err)
	}

	// Update: blocked refuses the team's key; a bound removed by null; models narrowed
	// below a team's are refused and change nothing.
	blocked := true
	if got, err = c.UpdateOrganization(ctx, "acme", &client.OrganizationUpdate{Blocked: &blocked}); err != nil || !got.Blocked {
		t.Fatalf("block %+v %v", got, err)
	}
	if err := chat(); !errors.Is(err, client.ErrRateLimited) && !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("a key of a blocked organization: %v", err)
	}
	blocked, zero := false, 0
	alias := "Acme Inc"
	got, err = c.UpdateOrganization(ctx, "acme", &client.OrganizationUpdate{Blocked: &blocked, RemoveMaxBudget: true, RequestsPerMinute: &zero, Alias: &alias})
	if err != nil || got.Blocked || got.Budget.MaxBudgetUSD != nil || got.Budget.RequestsPerMinute != nil || got.Alias != "Acme Inc" || got.Budget.BudgetDuration == nil {
		t.Fatalf("unblock and remove bounds %+v %v", got, err)
	}
	if err := chat(); err != nil {
		t.Fatalf("a key of an unblocked organization: %v", err)
	}
	if _, err := c.UpdateOrganization(ctx, "acme", &client.OrganizationUpdate{Models: []string{"openai/gpt-4o"}}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("models narrowed below a team's: %v", err)
	}
	if _, err := c.UpdateOrganization(ctx, "nope", &client.OrganizationUpdate{Alias: &alias}); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("update of no organization: %v", err)
	}
	if orgs, err := c.Organizations(ctx); err != nil || len(orgs) != 1 || orgs[0].OrganizationID != "acme" || !slices.Equal(orgs[0].Models, []string{"openai/gpt-4o-mini"}) {
		t.Fatalf("list %+v %v", orgs, err)
	}
	for _, f := range []client.OrganizationFilter{{ID: "acme"}, {Alias: strings.ToUpper(alias[:2])}, {ID: "acme", Alias: alias}} {
		if orgs, err := c.OrganizationsWhere(ctx, f); err != nil || len(orgs) != 1 || orgs[0].OrganizationID != "acme" {
			t.Fatalf("OrganizationsWhere %+v: %+v %v", f, orgs, err)
		}
	}
	if orgs, err := c.OrganizationsWhere(ctx, client.OrganizationFilter{ID: "nope"}); err != nil || len(orgs) != 0 {
		t.Fatalf("OrganizationsWhere of no organization: %+v %v", orgs, err)
	}

	// A team taken out of the organization through the native API, and put back.
	none := ""
	if tm, err = c.UpdateTeam(ctx, "eng", &client.TeamUpdate{OrganizationID: &none}); err != nil || tm.OrganizationID != "" {
		t.Fatalf("team out %+v %v", tm, err)
	}
	acme := "acme"
	if tm, err = c.UpdateTeam(ctx, "eng", &client.TeamUpdate{OrganizationID: &acme}); err != nil || tm.OrganizationID != "acme" {
		t.Fatalf("team back %+v %v", tm, err)
	}

	// Deletion: all or none, and it takes the teams and their keys.
	if _, err := c.DeleteOrganizations(ctx, "acme", "nope"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("delete with an unknown id: %v", err)
	}
	if _, err := c.Organization(ctx, "acme"); err != nil {
		t.Fatalf("the organization after a refused delete: %v", err)
	}
	del, err := c.DeleteOrganizations(ctx, "acme")
	if err != nil || len(del) != 1 || del[0].OrganizationID != "acme" {
		t.Fatalf("delete %+v %v", del, err)
	}
	if _, err := c.Team(ctx, "eng"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("the deleted organization's team: %v", err)
	}
	if err := chat(); !errors.Is(err, client.ErrUnauthorized) {
		t.Fatalf("a key of the deleted organization's team: %v", err)
	}
	if _, err := c.Organization(ctx, ""); !errors.Is(err, client.ErrMissingID) {
		t.Fatalf("no id: %v", err)
	}
	if _, err := c.DeleteOrganizations(ctx); !errors.Is(err, client.ErrMissingID) {
		t.Fatalf("no ids: %v", err)
	}
}

// TestOrganizationMemberSpendAndBudget: a member added with a budget shows it, and what its
// key of one of the organization's teams spends shows as the member's spend.
func TestOrganizationMemberSpendAndBudget(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	if _, err := c.CreateOrganization(ctx, &client.OrganizationRequest{OrganizationID: "acme", Alias: "Acme", Models: []string{"openai/gpt-4o-mini"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTeam(ctx, &client.TeamRequest{TeamID: "eng", Models: []string{"openai/gpt-4o-mini"}, OrganizationID: "acme"}); err != nil {
		t.Fatal(err)
	}
	ms, err := c.AddOrganizationMembersWithBudget(ctx, "acme", 5, client.OrganizationMemberRequest{UserID: "dee", Role: client.OrgInternalUser})
	if err != nil || len(ms) != 1 || ms[0].Budget == nil || ms[0].Budget.MaxBudgetUSD != 5 {
		t.Fatalf("member add with a budget %+v %v", ms, err)
	}
	if _, err := c.AddOrganizationMembers(ctx, "acme", client.OrganizationMemberRequest{UserID: "eve", Role: client.OrgInternalUser}); err != nil {
		t.Fatal(err)
	}
	vk, err := c.IssueKey(ctx, &client.KeyRequest{Name: "dee's", TeamID: "eng", UserID: "dee"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := client.New(client.WithBaseURL(c.BaseURL()), client.WithAPIKey(vk.Key), client.WithoutRetry())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Complete(ctx, &client.CompletionRequest{Messages: []client.ChatMessage{client.TextMessage("user", "hi")}, Models: []string{"openai/gpt-4o-mini"}}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Organization(ctx, "acme")
	if err != nil || len(got.Members) != 2 {
		t.Fatalf("info %+v %v", got, err)
	}
	for _, m := range got.Members {
		switch m.UserID {
		case "dee":
			if m.SpendUSD <= 0 || m.Budget == nil || m.Budget.MaxBudgetUSD != 5 {
				t.Errorf("dee: spend %v budget %+v", m.SpendUSD, m.Budget)
			}
		case "eve":
			if m.SpendUSD != 0 || m.Budget != nil {
				t.Errorf("eve: spend %v budget %+v", m.SpendUSD, m.Budget)
			}
		}
	}
}
