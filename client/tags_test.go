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

// TestTagsAgainstServer: a tag made with a budget bounds the requests naming it (past it
// they are refused, naming the tag, while others go on), shows its spend, has its bound
// removed by RemoveMaxBudget, lists, and once deleted is not found; a taken name is
// ErrConflict and a bad one ErrInvalid naming the field.
func TestTagsAgainstServer(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	tag, err := c.CreateTag(ctx, &client.TagRequest{Name: "eng", Description: "Engineering", MaxBudgetUSD: 1e-9, BudgetDuration: "30d"})
	if err != nil || tag.Name != "eng" || tag.Description != "Engineering" || tag.Budget == nil || tag.Budget.MaxBudgetUSD == nil || *tag.Budget.MaxBudgetUSD != 1e-9 {
		t.Fatalf("create %+v %v", tag, err)
	}
	if _, err := c.CreateTag(ctx, &client.TagRequest{Name: "eng"}); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("a tag made twice: %v", err)
	}
	var apiErr *client.Error
	if _, err := c.CreateTag(ctx, &client.TagRequest{Name: "has space"}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadRequest || apiErr.Param != "name" {
		t.Fatalf("a bad name: %v", err)
	}
	chat := func(tags ...string) error {
		_, err := c.Complete(ctx, &client.CompletionRequest{Messages: []client.ChatMessage{client.TextMessage("user", "hi")}, Models: []string{"openai/gpt-4o-mini"}, Tags: tags})
		return err
	}
	if err := chat("eng"); err != nil {
		t.Fatal(err)
	}
	if err := chat("eng"); !errors.Is(err, client.ErrRateLimited) || !strings.Contains(err.Error(), "Tag=eng") {
		t.Fatalf("a request naming a spent tag: %v", err)
	}
	if err := chat("other"); err != nil {
		t.Fatalf("a request without the tag: %v", err)
	}
	got, err := c.Tag(ctx, "eng")
	if err != nil || got.SpendUSD <= 0 {
		t.Fatalf("info %+v %v", got, err)
	}
	if got, err = c.UpdateTag(ctx, "eng", &client.TagUpdate{RemoveMaxBudget: true}); err != nil || got.Budget == nil || got.Budget.MaxBudgetUSD != nil || got.SpendUSD <= 0 {
		t.Fatalf("update %+v %v", got, err)
	}
	if err := chat("eng"); err != nil {
		t.Fatalf("a request naming the tag once its bound is removed: %v", err)
	}
	if got, err = c.UpdateTag(ctx, "eng", &client.TagUpdate{Models: []string{"dep-1", "team-group"}}); err != nil || !slices.Equal(got.Models, []string{"dep-1", "team-group"}) {
		t.Fatalf("update the models %+v %v", got, err)
	}
	if got, err = c.UpdateTag(ctx, "eng", &client.TagUpdate{Models: []string{}}); err != nil || len(got.Models) != 0 {
		t.Fatalf("models removed %+v %v", got, err)
	}
	if made, err := c.CreateTag(ctx, &client.TagRequest{Name: "routed", Models: []string{"dep-2"}}); err != nil || !slices.Equal(made.Models, []string{"dep-2"}) {
		t.Fatalf("a tag made with models %+v %v", made, err)
	} else if err := c.DeleteTag(ctx, made.Name); err != nil {
		t.Fatal(err)
	}
	if ts, err := c.Tags(ctx); err != nil || len(ts) != 1 || ts[0].Name != "eng" {
		t.Fatalf("list %+v %v", ts, err)
	}
	if err := c.DeleteTag(ctx, "eng"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tag(ctx, "eng"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a deleted tag: %v", err)
	}
	if err := c.DeleteTag(ctx, "eng"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a tag deleted twice: %v", err)
	}
}
