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

// TestKeyUserIDAgainstServer: IssueKey with UserID makes the key the user's (answered as
// UserID and as Metadata's user_id, listed under the user); a UserID naming no user is a
// 404 naming user_id; UpdateKey's UserID moves the key to another user and "" takes it
// from its user.
func TestKeyUserIDAgainstServer(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	for _, id := range []string{"ann", "bob"} {
		if _, err := c.CreateUser(ctx, &client.UserRequest{UserID: id}); err != nil {
			t.Fatal(err)
		}
	}
	keysOf := func(id string) []string {
		t.Helper()
		u, err := c.User(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return u.KeyIDs
	}
	vk, err := c.IssueKey(ctx, &client.KeyRequest{Name: "a", UserID: "ann"})
	if err != nil || vk.UserID != "ann" || vk.Metadata["user_id"] != "ann" {
		t.Fatalf("issue %+v %v", vk, err)
	}
	if got := keysOf("ann"); !slices.Equal(got, []string{vk.ID}) {
		t.Fatalf("ann's keys %v", got)
	}
	if got, err := c.Key(ctx, vk.ID); err != nil || got.UserID != "ann" {
		t.Fatalf("read back %+v %v", got, err)
	}
	var apiErr *client.Error
	if _, err := c.IssueKey(ctx, &client.KeyRequest{UserID: "nobody"}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound || !strings.Contains(apiErr.Message, "user_id") {
		t.Fatalf("a user of no such id: %v", err)
	}
	bob := "bob"
	if vk, err = c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{UserID: &bob}); err != nil || vk.UserID != "bob" {
		t.Fatalf("move to bob %+v %v", vk, err)
	}
	if a, b := keysOf("ann"), keysOf("bob"); len(a) != 0 || !slices.Equal(b, []string{vk.ID}) {
		t.Fatalf("after the move: ann %v, bob %v", a, b)
	}
	none := ""
	if vk, err = c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{UserID: &none}); err != nil || vk.UserID != "" || vk.Metadata["user_id"] != nil {
		t.Fatalf("taken from its user %+v %v", vk, err)
	}
	if got := keysOf("bob"); len(got) != 0 {
		t.Fatalf("bob's keys after the key left %v", got)
	}
}

// TestKeyTagsAgainstServer: IssueKey's Tags are kept as Metadata's tags and answered as
// Tags; UpdateKey's Tags replace them alone (the other labels kept), empty removes them;
// bad tags are refused naming tags.
func TestKeyTagsAgainstServer(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	vk, err := c.IssueKey(ctx, &client.KeyRequest{Name: "tagged", Tags: []string{"team:search"}, Metadata: map[string]any{"owner": "ann"}})
	if err != nil || !slices.Equal(vk.Tags, []string{"team:search"}) || vk.Metadata["owner"] != "ann" {
		t.Fatalf("issue %+v %v", vk, err)
	}
	if vk, err = c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{Tags: []string{"env:prod", "team:ads"}}); err != nil || !slices.Equal(vk.Tags, []string{"env:prod", "team:ads"}) || vk.Metadata["owner"] != "ann" {
		t.Fatalf("update the tags %+v %v", vk, err)
	}
	if got, err := c.Key(ctx, vk.ID); err != nil || !slices.Equal(got.Tags, []string{"env:prod", "team:ads"}) {
		t.Fatalf("read back %+v %v", got, err)
	}
	if vk, err = c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{Tags: []string{}}); err != nil || vk.Tags != nil || vk.Metadata["tags"] != nil || vk.Metadata["owner"] != "ann" {
		t.Fatalf("tags removed %+v %v", vk, err)
	}
	var apiErr *client.Error
	if _, err := c.IssueKey(ctx, &client.KeyRequest{Tags: []string{"has space"}}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity || !strings.HasPrefix(apiErr.Message, "tags") {
		t.Fatalf("a bad tag: %v", err)
	}
}

// TestTeamTagsAgainstServer: CreateTeam's Tags are kept as Metadata's tags and answered as
// Tags; UpdateTeam's Tags replace them alone (the other labels kept), empty removes them;
// bad tags are refused naming tags.
func TestTeamTagsAgainstServer(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	tm, err := c.CreateTeam(ctx, &client.TeamRequest{TeamID: "search", Tags: []string{"team:search"}, Metadata: map[string]any{"owner": "ann"}})
	if err != nil || !slices.Equal(tm.Tags, []string{"team:search"}) || tm.Metadata["owner"] != "ann" {
		t.Fatalf("CreateTeam: %+v %v", tm, err)
	}
	if tm, err = c.UpdateTeam(ctx, "search", &client.TeamUpdate{Tags: []string{"env:prod", "team:ads"}}); err != nil || !slices.Equal(tm.Tags, []string{"env:prod", "team:ads"}) || tm.Metadata["owner"] != "ann" {
		t.Fatalf("UpdateTeam Tags: %+v %v", tm, err)
	}
	if tm, err = c.UpdateTeam(ctx, "search", &client.TeamUpdate{Tags: []string{}}); err != nil || tm.Tags != nil || tm.Metadata["tags"] != nil || tm.Metadata["owner"] != "ann" {
		t.Fatalf("UpdateTeam Tags empty: %+v %v", tm, err)
	}
	var apiErr *client.Error
	if _, err := c.CreateTeam(ctx, &client.TeamRequest{Tags: []string{"has space"}}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity || !strings.HasPrefix(apiErr.Message, "tags") {
		t.Fatalf("a bad tag: %v", err)
	}
}
