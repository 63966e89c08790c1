package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// TestOrganizationKeyAgainstServer: a key without a team is issued into an organization
// (KeyRequest.OrganizationID), keeps to its models, is revoked with it, and is moved out
// of it with KeyUpdate.OrganizationID "".
func TestOrganizationKeyAgainstServer(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	if _, err := c.CreateOrganization(ctx, &client.OrganizationRequest{OrganizationID: "acme", Alias: "Acme", Models: []string{"openai/gpt-4o-mini"}}); err != nil {
		t.Fatal(err)
	}
	vk, err := c.IssueKey(ctx, &client.KeyRequest{Name: "org-app", OrganizationID: "acme"})
	if err != nil || vk.OrganizationID != "acme" || vk.TeamID != "" {
		t.Fatalf("a key of the organization: %+v %v", vk, err)
	}
	if _, err := c.IssueKey(ctx, &client.KeyRequest{Name: "wide", OrganizationID: "acme", Models: []string{"openai/gpt-4o"}}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("a key outside the organization's models: %v", err)
	}
	if _, err := c.IssueKey(ctx, &client.KeyRequest{Name: "lost", OrganizationID: "nope"}); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a key of no organization: %v", err)
	}
	out, err := c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{OrganizationID: new(string)})
	if err != nil || out.OrganizationID != "" {
		t.Fatalf("out of the organization: %+v %v", out, err)
	}
	in := "acme"
	if out, err = c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{OrganizationID: &in}); err != nil || out.OrganizationID != "acme" {
		t.Fatalf("back into the organization: %+v %v", out, err)
	}
	if _, err := c.DeleteOrganizations(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Key(ctx, vk.ID); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a key of a deleted organization: %v", err)
	}
}
