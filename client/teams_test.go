package client_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// TestTeamsAgainstServer: a team bounds its keys' models, is blocked and unblocked, lists
// its keys, and its deletion revokes them.
func TestTeamsAgainstServer(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	tm, err := c.CreateTeam(ctx, &client.TeamRequest{TeamID: "eng", Name: "Engineering", Models: []string{"openai/gpt-4o-mini"}, MaxBudgetUSD: 5})
	if err != nil || tm.TeamID != "eng" || tm.MaxBudgetUSD != 5 {
		t.Fatalf("create %+v %v", tm, err)
	}
	vk, err := c.IssueKey(ctx, &client.KeyRequest{Name: "app", TeamID: "eng"})
	if err != nil || vk.TeamID != "eng" {
		t.Fatalf("issue %+v %v", vk, err)
	}
	var apiErr *client.Error
	if _, err := c.IssueKey(ctx, &client.KeyRequest{TeamID: "nope"}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Fatalf("a key of a missing team: %v", err)
	}
	app, err := client.New(client.WithBaseURL(c.BaseURL()), client.WithAPIKey(vk.Key), client.WithoutRetry())
	if err != nil {
		t.Fatal(err)
	}
	req := func(model string) error {
		_, err := app.Complete(ctx, &client.CompletionRequest{Messages: []client.ChatMessage{client.TextMessage("user", "hi")}, Models: []string{model}})
		return err
	}
	if err := req("openai/gpt-4o-mini"); err != nil {
		t.Fatal(err)
	}
	if err := req("openai/gpt-4o"); !errors.As(err, &apiErr) || apiErr.Status != http.StatusForbidden {
		t.Fatalf("a model outside the team's: %v", err)
	}
	blocked := true
	if tm, err = c.UpdateTeam(ctx, "eng", &client.TeamUpdate{Blocked: &blocked}); err != nil || !tm.Blocked {
		t.Fatalf("block %+v %v", tm, err)
	}
	if err := req("openai/gpt-4o-mini"); !errors.As(err, &apiErr) || apiErr.Status != http.StatusTooManyRequests {
		t.Fatalf("a key of a blocked team: %v", err)
	}
	blocked = false
	if _, err = c.UpdateTeam(ctx, "eng", &client.TeamUpdate{Blocked: &blocked}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Team(ctx, "eng")
	if err != nil || len(got.KeyIDs) != 1 || got.KeyIDs[0] != vk.ID || got.Spend.Requests != 1 {
		t.Fatalf("team %+v %v", got, err)
	}
	if ts, err := c.Teams(ctx); err != nil || len(ts) != 1 {
		t.Fatalf("teams %+v %v", ts, err)
	}
	del, err := c.DeleteTeam(ctx, "eng")
	if err != nil || !del.Deleted || len(del.DeletedKeys) != 1 {
		t.Fatalf("delete %+v %v", del, err)
	}
	if err := req("openai/gpt-4o-mini"); !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized {
		t.Fatalf("a key of a deleted team: %v", err)
	}
}

// TestTeamMaxParallelRequestsField: the Go client sets, reads and removes (0) a team's
// max_parallel_requests.
func TestTeamMaxParallelRequestsField(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	tm, err := c.CreateTeam(ctx, &client.TeamRequest{TeamID: "crew", MaxParallelRequests: 4})
	if err != nil || tm.MaxParallelRequests != 4 {
		t.Fatalf("create %+v %v", tm, err)
	}
	zero := 0
	if tm, err = c.UpdateTeam(ctx, "crew", &client.TeamUpdate{MaxParallelRequests: &zero}); err != nil || tm.MaxParallelRequests != 0 {
		t.Fatalf("update %+v %v", tm, err)
	}
}
