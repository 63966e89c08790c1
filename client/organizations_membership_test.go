package client_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// TestUpdateOrganizationMembershipAgainstServer: UpdateOrganizationMembership sets a
// member's max_budget_in_organization (a bound where there was none; a lower one refuses
// the member's keys at once, what they spent kept; a higher one lets them spend again),
// changes the role and the budget together or the role alone (the budget staying), and an
// update that sets nothing is refused before any request.
func TestUpdateOrganizationMembershipAgainstServer(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	if _, err := c.CreateOrganization(ctx, &client.OrganizationRequest{OrganizationID: "acme", Alias: "Acme", Models: []string{"openai/gpt-4o-mini"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTeam(ctx, &client.TeamRequest{TeamID: "eng", Models: []string{"openai/gpt-4o-mini"}, OrganizationID: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddOrganizationMembers(ctx, "acme", client.OrganizationMemberRequest{UserID: "dee", Role: client.OrgInternalUser},
		client.OrganizationMemberRequest{UserID: "eve", Email: "eve@example.com", Role: client.OrgInternalUser}); err != nil {
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
	ask := func() error {
		_, err := app.Complete(ctx, &client.CompletionRequest{Messages: []client.ChatMessage{client.TextMessage("user", "hi")}, Models: []string{"openai/gpt-4o-mini"}})
		return err
	}
	if err := ask(); err != nil {
		t.Fatal(err)
	}
	member := func(user string) client.OrganizationMember {
		t.Helper()
		o, err := c.Organization(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range o.Members {
			if m.UserID == user {
				return m
			}
		}
		t.Fatalf("no member %s in %+v", user, o.Members)
		return client.OrganizationMember{}
	}
	spent := member("dee").SpendUSD
	if spent <= 0 {
		t.Fatalf("dee spent %v", spent)
	}

	// A bound below what dee spent: kept spend, next request refused.
	low := spent / 2
	m, err := c.UpdateOrganizationMembership(ctx, "acme", "dee", &client.OrganizationMembershipUpdate{MaxBudgetUSD: &low})
	if err != nil || m.UserID != "dee" || m.Budget == nil || m.Budget.MaxBudgetUSD != low || m.Role != client.OrgInternalUser {
		t.Fatalf("lower bound: %+v %v", m, err)
	}
	if got := member("dee"); got.SpendUSD != spent || got.Budget == nil || got.Budget.MaxBudgetUSD != low {
		t.Fatalf("after the lower bound: %+v (spent %v)", got, spent)
	}
	var apiErr *client.Error
	if err := ask(); !errors.As(err, &apiErr) || apiErr.Status != http.StatusTooManyRequests || !strings.Contains(apiErr.Message, "User=dee in Organization=acme") {
		t.Fatalf("a member over its new bound: %v", err)
	}
	// A higher one lets the key spend again.
	high := spent * 100
	if _, err := c.UpdateOrganizationMembership(ctx, "acme", "dee", &client.OrganizationMembershipUpdate{MaxBudgetUSD: &high}); err != nil {
		t.Fatal(err)
	}
	if err := ask(); err != nil {
		t.Fatalf("after raising the bound: %v", err)
	}

	// Role and budget together, by address; then the role alone keeps the budget.
	admin, ten := client.OrgAdmin, 10.0
	m, err = c.UpdateOrganizationMembership(ctx, "acme", "eve@example.com", &client.OrganizationMembershipUpdate{Role: &admin, MaxBudgetUSD: &ten})
	if err != nil || m.UserID != "eve" || m.Role != client.OrgAdmin || m.Budget == nil || m.Budget.MaxBudgetUSD != 10 {
		t.Fatalf("role and budget: %+v %v", m, err)
	}
	m, err = c.UpdateOrganizationMember(ctx, "acme", "eve", client.OrgInternalUserViewer)
	if err != nil || m.Role != client.OrgInternalUserViewer {
		t.Fatalf("role alone: %+v %v", m, err)
	}
	if got := member("eve"); got.Role != client.OrgInternalUserViewer || got.Budget == nil || got.Budget.MaxBudgetUSD != 10 {
		t.Fatalf("the role alone changed the budget: %+v", got)
	}

	// Refusals: nothing to change (before any request), a missing id, a negative budget, a
	// user not a member.
	if _, err := c.UpdateOrganizationMembership(ctx, "acme", "eve", &client.OrganizationMembershipUpdate{}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("empty update: %v", err)
	}
	if _, err := c.UpdateOrganizationMembership(ctx, "", "eve", &client.OrganizationMembershipUpdate{Role: &admin}); !errors.Is(err, client.ErrMissingID) {
		t.Fatalf("no organization: %v", err)
	}
	negative := -1.0
	if _, err := c.UpdateOrganizationMembership(ctx, "acme", "eve", &client.OrganizationMembershipUpdate{MaxBudgetUSD: &negative}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadRequest || apiErr.Param != "max_budget_in_organization" {
		t.Fatalf("negative budget: %v", err)
	}
	if _, err := c.UpdateOrganizationMembership(ctx, "acme", "zed", &client.OrganizationMembershipUpdate{Role: &admin}); err == nil {
		t.Fatal("a user not in the organization was updated")
	}
}
