package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// TestVirtualKeysAgainstServer: an operator issues a key limited to one model and two
// requests; the key calls the model, is refused another, reads its own spend, and stops
// working once revoked.
func TestVirtualKeysAgainstServer(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	vk, err := c.IssueKey(ctx, &client.KeyRequest{Name: "app", Models: []string{"openai/gpt-4o-mini"}, MaxRequests: 2, BudgetDuration: "30d",
		Metadata: map[string]any{"env": "prod"}})
	if err != nil || !strings.HasPrefix(vk.Key, "sy-vk-") || vk.BudgetDuration != "30d" || vk.Metadata["env"] != "prod" {
		t.Fatalf("issue %+v %v", vk, err)
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
	var apiErr *client.Error
	if err := req("openai/gpt-4o"); !errors.As(err, &apiErr) || apiErr.Status != http.StatusForbidden {
		t.Fatalf("another model: %v", err)
	}
	self, err := app.Key(ctx, "self")
	if err != nil || self.ID != vk.ID || self.Spend.Requests != 1 || self.Spend.Tokens == 0 || self.Spend.CostUSD <= 0 || self.Spend.PeriodStart == nil {
		t.Fatalf("self %+v %v", self, err)
	}
	keys, err := c.ListKeys(ctx)
	if err != nil || len(keys) != 1 || keys[0].ID != vk.ID || keys[0].Key != "" {
		t.Fatalf("list %+v %v", keys, err)
	}
	if _, err := app.Key(ctx, vk.ID); !errors.As(err, &apiErr) || apiErr.Status != http.StatusForbidden {
		t.Fatalf("a virtual key reading another key's record: %v", err)
	}
	more := int64(5)
	if up, err := c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{MaxRequests: &more, Models: []string{}, Metadata: map[string]any{}}); err != nil || up.MaxRequests != 5 ||
		len(up.Models) != 0 || up.Spend.Requests != 1 || up.Metadata != nil {
		t.Fatalf("update %+v %v", up, err)
	}
	if err := req("openai/gpt-4o"); err != nil {
		t.Fatalf("every model allowed after the update: %v", err)
	}
	// No guardrail is configured here: a key's list is checked against the server's.
	if _, err := c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{Guardrails: []string{"pii"}}); !errors.As(err, &apiErr) ||
		apiErr.Status != http.StatusUnprocessableEntity || !strings.Contains(apiErr.Message, "guardrails[0]") {
		t.Fatalf("an unknown guardrail on a key: %v", err)
	}
	block, unblock := true, false
	if up, err := c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{Blocked: &block}); err != nil || !up.Blocked {
		t.Fatalf("block %+v %v", up, err)
	}
	if err := req("openai/gpt-4o"); !errors.As(err, &apiErr) || apiErr.Status != http.StatusTooManyRequests {
		t.Fatalf("a blocked key's request: %v", err)
	}
	if up, err := c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{Blocked: &unblock}); err != nil || up.Blocked {
		t.Fatalf("unblock %+v %v", up, err)
	}
	if err := req("openai/gpt-4o"); err != nil {
		t.Fatalf("unblocked: %v", err)
	}
	rotated, err := c.RotateKey(ctx, vk.ID)
	if err != nil || rotated.ID != vk.ID || rotated.Key == "" || rotated.Key == vk.Key {
		t.Fatalf("rotate %+v %v", rotated, err)
	}
	if err := req("openai/gpt-4o"); !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized {
		t.Fatalf("the key rotated away: %v", err)
	}
	if app, err = client.New(client.WithBaseURL(c.BaseURL()), client.WithAPIKey(rotated.Key), client.WithoutRetry()); err != nil {
		t.Fatal(err)
	}
	if err := req("openai/gpt-4o"); err != nil {
		t.Fatalf("the new key: %v", err)
	}
	if d, err := c.RevokeKey(ctx, vk.ID); err != nil || !d.Deleted || d.ID != vk.ID {
		t.Fatalf("revoke %+v %v", d, err)
	}
	if err := req("openai/gpt-4o-mini"); !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized {
		t.Fatalf("revoked: %v", err)
	}
}

// TestVirtualKeyBudgetBlock: a key blocked by LiteLLM's max_budget 0 reads BudgetBlock
// through the client; one blocked outright does not.
func TestVirtualKeyBudgetBlock(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	req, _ := http.NewRequest("POST", c.BaseURL()+"/key/generate", strings.NewReader(`{"max_budget":0}`))
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var gen struct {
		Token string `json:"token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&gen)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/key/generate: %d %v", resp.StatusCode, err)
	}
	vk, err := c.Key(ctx, gen.Token)
	if err != nil || !vk.Blocked || !vk.BudgetBlock {
		t.Fatalf("a max_budget 0 key: %+v %v", vk, err)
	}
	block := true
	other, err := c.IssueKey(ctx, &client.KeyRequest{Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if up, err := c.UpdateKey(ctx, other.ID, &client.KeyUpdate{Blocked: &block}); err != nil || !up.Blocked || up.BudgetBlock {
		t.Fatalf("a key blocked outright: %+v %v", up, err)
	}
}

// TestRotateKeyIfMatchAgainstServer: Key, IssueKey, RotateKey and UpdateKey carry the key's
// ETag; RotateKeyIfMatch, KeyUpdate.IfMatch and RevokeKeyIfMatch with a tag the key moved on from fail with
// ErrPreconditionFailed and change nothing, and with the current tag go ahead.
func TestRotateKeyIfMatchAgainstServer(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	vk, err := c.IssueKey(ctx, &client.KeyRequest{Name: "app"})
	if err != nil || vk.ETag == "" {
		t.Fatalf("issue %+v %v", vk, err)
	}
	got, err := c.Key(ctx, vk.ID)
	if err != nil || got.ETag != vk.ETag {
		t.Fatalf("Key's ETag %q %v, issue's %q", got.ETag, err, vk.ETag)
	}
	rotated, err := c.RotateKey(ctx, vk.ID)
	if err != nil || rotated.ETag == "" || rotated.ETag == vk.ETag {
		t.Fatalf("rotate: ETag %q (before %q) %v", rotated.ETag, vk.ETag, err)
	}
	if _, err := c.RotateKeyIfMatch(ctx, vk.ID, vk.ETag); !errors.Is(err, client.ErrPreconditionFailed) || !strings.Contains(err.Error(), "If-Match") {
		t.Fatalf("rotate with a stale ETag: %v, want ErrPreconditionFailed naming If-Match", err)
	}
	name := "renamed"
	if _, err := c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{Name: &name, IfMatch: vk.ETag}); !errors.Is(err, client.ErrPreconditionFailed) {
		t.Fatalf("update with a stale ETag: %v", err)
	}
	if now, err := c.Key(ctx, vk.ID); err != nil || now.ETag != rotated.ETag || now.Name != "app" {
		t.Fatalf("after the refusals: %+v %v", now, err)
	}
	again, err := c.RotateKeyIfMatch(ctx, vk.ID, rotated.ETag)
	if err != nil || !strings.HasPrefix(again.Key, "sy-vk-") || again.Key == rotated.Key || again.ETag == rotated.ETag {
		t.Fatalf("rotate with the current ETag: %+v %v", again, err)
	}
	up, err := c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{Name: &name, IfMatch: again.ETag})
	if err != nil || up.Name != name || up.ETag == again.ETag {
		t.Fatalf("update with the current ETag: %+v %v", up, err)
	}
	// RevokeKeyIfMatch: a stale tag keeps the key; the current one revokes it.
	if _, err := c.RevokeKeyIfMatch(ctx, vk.ID, again.ETag); !errors.Is(err, client.ErrPreconditionFailed) || !strings.Contains(err.Error(), "If-Match") {
		t.Fatalf("revoke with a stale ETag: %v, want ErrPreconditionFailed naming If-Match", err)
	}
	if now, err := c.Key(ctx, vk.ID); err != nil || now.ETag != up.ETag {
		t.Fatalf("after the refused revoke: %+v %v", now, err)
	}
	d, err := c.RevokeKeyIfMatch(ctx, vk.ID, up.ETag)
	if err != nil || !d.Deleted || d.ID != vk.ID {
		t.Fatalf("revoke with the current ETag: %+v %v", d, err)
	}
	if _, err := c.Key(ctx, vk.ID); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("the revoked key: %v", err)
	}
}
