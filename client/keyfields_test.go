package client_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

// TestKeySoftBudgetAndMCPServers: the Go client sets, reads and changes a virtual key's
// soft budget and MCP servers, and the server's refusal of an unknown MCP server reaches it
// as a 422.
func TestKeySoftBudgetAndMCPServers(t *testing.T) {
	// The MCP servers are only named: the gateway dials none until a tool is used.
	g, err := mcpgateway.New([]mcpgateway.ServerConfig{{Name: "docs", URL: "http://127.0.0.1:1/mcp"}, {Name: "github", URL: "http://127.0.0.1:1/mcp"}}, mcpgateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := realServer(t, func(st *store.Store, baseURL string) []server.Option {
		return append(completionsOptions(t)(st, baseURL), server.MCP(g))
	})
	ctx := context.Background()
	vk, err := c.IssueKey(ctx, &client.KeyRequest{Name: "agent", SoftBudgetUSD: 2.5, MCPServers: []string{"docs"}})
	if err != nil || vk.SoftBudgetUSD != 2.5 || !slices.Equal(vk.MCPServers, []string{"docs"}) {
		t.Fatalf("issue: %+v %v", vk, err)
	}
	soft := 4.0
	got, err := c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{SoftBudgetUSD: &soft, MCPServers: []string{"docs", "github"}})
	if err != nil || got.SoftBudgetUSD != 4 || !slices.Equal(got.MCPServers, []string{"docs", "github"}) {
		t.Fatalf("update: %+v %v", got, err)
	}
	if got, err = c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{MCPServers: []string{}}); err != nil || got.MCPServers != nil || got.SoftBudgetUSD != 4 {
		t.Fatalf("every server again: %+v %v", got, err)
	}
	var apiErr *client.Error
	if _, err := c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{MCPServers: []string{"nope"}}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity {
		t.Fatalf("an unknown MCP server: %v", err)
	}
	if read, err := c.Key(ctx, vk.ID); err != nil || read.SoftBudgetUSD != 4 || read.MCPServers != nil {
		t.Fatalf("read back: %+v %v", read, err)
	}
}
