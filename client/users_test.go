package client_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// TestUsersAgainstServer: a user is created, listed page by page, changed, given a key and
// a team, and its deletion revokes its key; bad input and unknown users are the server's
// typed errors.
func TestUsersAgainstServer(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	if _, err := c.CreateTeam(ctx, &client.TeamRequest{TeamID: "eng"}); err != nil {
		t.Fatal(err)
	}
	u, err := c.CreateUser(ctx, &client.UserRequest{UserID: "ann", Email: "ann@example.com", MaxBudgetUSD: 5, Teams: []string{"eng"}})
	if err != nil || u.UserID != "ann" || u.Email != "ann@example.com" || u.MaxBudgetUSD != 5 || u.Role != "internal_user" || !slices.Equal(u.Teams, []string{"eng"}) {
		t.Fatalf("create %+v %v", u, err)
	}
	var apiErr *client.Error
	if _, err := c.CreateUser(ctx, &client.UserRequest{Role: "wizard"}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity {
		t.Fatalf("a bad role: %v", err)
	}
	if _, err := c.CreateUser(ctx, &client.UserRequest{UserID: "ann"}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict {
		t.Fatalf("an id taken: %v", err)
	}
	for _, id := range []string{"bob", "cat"} {
		if _, err := c.CreateUser(ctx, &client.UserRequest{UserID: id}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := c.ListUsers(ctx, &client.ListOptions{Limit: 2})
	if err != nil || len(page.Data) != 2 || page.NextCursor == "" {
		t.Fatalf("first page %+v %v", page, err)
	}
	all, err := c.Users(ctx)
	if err != nil || len(all) != 3 || all[0].UserID != "ann" || all[2].UserID != "cat" {
		t.Fatalf("users %+v %v", all, err)
	}
	alias, budget := "Ann", 7.0
	if u, err = c.UpdateUser(ctx, "ann", &client.UserUpdate{Alias: &alias, MaxBudgetUSD: &budget}); err != nil || u.Alias != "Ann" || u.MaxBudgetUSD != 7 || u.Email != "ann@example.com" {
		t.Fatalf("update %+v %v", u, err)
	}
	m, err := c.AddTeamMember(ctx, "eng", &client.TeamMemberRequest{UserID: "bob", Role: "admin"})
	if err != nil || m.UserID != "bob" || m.Role != "admin" {
		t.Fatalf("add member %+v %v", m, err)
	}
	role := "user"
	if m, err = c.UpdateTeamMember(ctx, "eng", "bob", &client.TeamMemberUpdate{Role: &role}); err != nil || m.Role != "user" {
		t.Fatalf("update member %+v %v", m, err)
	}
	if ms, err := c.TeamMembers(ctx, "eng"); err != nil || len(ms) != 2 {
		t.Fatalf("members %+v %v", ms, err)
	}
	if err := c.RemoveTeamMember(ctx, "eng", "bob"); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveTeamMember(ctx, "eng", "bob"); !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Fatalf("removing a non-member: %v", err)
	}
	vk, err := c.IssueKey(ctx, &client.KeyRequest{Name: "ann's", Metadata: map[string]any{"user_id": "ann"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.User(ctx, "ann"); err != nil || !slices.Equal(got.KeyIDs, []string{vk.ID}) {
		t.Fatalf("user %+v %v", got, err)
	}
	del, err := c.DeleteUser(ctx, "ann")
	if err != nil || !del.Deleted || !slices.Equal(del.DeletedKeys, []string{vk.ID}) {
		t.Fatalf("delete %+v %v", del, err)
	}
	if _, err := c.User(ctx, "ann"); !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Fatalf("a deleted user: %v", err)
	}
	app, err := client.New(client.WithBaseURL(c.BaseURL()), client.WithAPIKey(vk.Key), client.WithoutRetry())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Complete(ctx, &client.CompletionRequest{Messages: []client.ChatMessage{client.TextMessage("user", "hi")}, Models: []string{"openai/gpt-4o-mini"}}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized {
		t.Fatalf("a key of a deleted user: %v", err)
	}
	if _, err := c.User(ctx, ""); !errors.Is(err, client.ErrMissingID) {
		t.Fatalf("no id: %v", err)
	}
}
