package client_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
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

// TestKeyBudgetID: a key issued with a LiteLLM budget's id takes the budget's limits and
// names it; a budget field beside it is a 422 and a budget_id of no budget a 404, each
// naming the field; BudgetID "" on update leaves the budget keeping its values.
func TestKeyBudgetID(t *testing.T) {
	c, base := realServerURL(t, completionsOptions(t))
	ctx := context.Background()
	newBudget(t, base, testKey, `{"budget_id":"gold","max_budget":7,"budget_duration":"30d","tpm_limit":1000}`)
	vk, err := c.IssueKey(ctx, &client.KeyRequest{Name: "tier", BudgetID: "gold"})
	if err != nil || vk.BudgetID != "gold" || vk.MaxBudgetUSD != 7 || vk.BudgetDuration != "30d" || vk.TokensPerMinute != 1000 {
		t.Fatalf("issue with budget_id: %+v %v", vk, err)
	}
	var apiErr *client.Error
	if _, err := c.IssueKey(ctx, &client.KeyRequest{BudgetID: "nope"}); !errors.As(err, &apiErr) ||
		apiErr.Status != http.StatusNotFound || !strings.Contains(apiErr.Message, "budget_id") {
		t.Fatalf("a budget_id of no budget: %v", err)
	}
	if _, err := c.IssueKey(ctx, &client.KeyRequest{BudgetID: "gold", MaxBudgetUSD: 5}); !errors.As(err, &apiErr) ||
		apiErr.Status != http.StatusUnprocessableEntity || !strings.Contains(apiErr.Message, "max_budget_usd") {
		t.Fatalf("max_budget_usd beside budget_id: %v", err)
	}
	none := ""
	if vk, err = c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{BudgetID: &none}); err != nil || vk.BudgetID != "" || vk.MaxBudgetUSD != 7 || vk.TokensPerMinute != 1000 {
		t.Fatalf("leave the budget: %+v %v", vk, err)
	}
}

// TestKeyMaxParallelRequestsAndAliases: the Go client sets, reads and changes (0 and an
// empty map remove) a virtual key's max_parallel_requests and aliases, and the server's
// refusal of an alias of a model it does not route to reaches it as a 422 naming aliases.
func TestKeyMaxParallelRequestsAndAliases(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	vk, err := c.IssueKey(ctx, &client.KeyRequest{Models: []string{"openai/gpt-4o-mini"}, MaxParallelRequests: 3, Aliases: map[string]string{"mini": "openai/gpt-4o-mini"}})
	if err != nil || vk.MaxParallelRequests != 3 || vk.Aliases["mini"] != "openai/gpt-4o-mini" {
		t.Fatalf("issue: %+v %v", vk, err)
	}
	zero := 0
	got, err := c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{MaxParallelRequests: &zero, Aliases: map[string]string{}})
	if err != nil || got.MaxParallelRequests != 0 || got.Aliases != nil {
		t.Fatalf("update: %+v %v", got, err)
	}
	var apiErr *client.Error
	if _, err := c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{Aliases: map[string]string{"x": "nope/none"}}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity || !strings.Contains(apiErr.Message, "aliases") {
		t.Fatalf("an alias of an unrouted model: %v", err)
	}
}

// TestKeyAndTeamRouterSettings: the Go client sets, reads and replaces a virtual key's and
// a team's router settings (a zero RouterSettings removes them), and the server's refusal
// of a bad setting reaches it as a 422 naming it.
func TestKeyAndTeamRouterSettings(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	two, timeout := 2, 30.0
	tm, err := c.CreateTeam(ctx, &client.TeamRequest{RouterSettings: &client.RouterSettings{NumRetries: &two}})
	if err != nil || tm.RouterSettings == nil || *tm.RouterSettings.NumRetries != 2 {
		t.Fatalf("team: %+v %v", tm, err)
	}
	vk, err := c.IssueKey(ctx, &client.KeyRequest{TeamID: tm.TeamID, RouterSettings: &client.RouterSettings{TimeoutSeconds: &timeout,
		Fallbacks: []map[string][]string{{"openai/gpt-4o": {"openai/gpt-4o-mini"}}}}})
	if err != nil || vk.RouterSettings == nil || *vk.RouterSettings.TimeoutSeconds != 30 || vk.RouterSettings.Fallbacks[0]["openai/gpt-4o"][0] != "openai/gpt-4o-mini" {
		t.Fatalf("issue: %+v %v", vk, err)
	}
	got, err := c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{RouterSettings: &client.RouterSettings{}})
	if err != nil || got.RouterSettings != nil {
		t.Fatalf("removed: %+v %v", got, err)
	}
	if tm, err = c.UpdateTeam(ctx, tm.TeamID, &client.TeamUpdate{RouterSettings: &client.RouterSettings{}}); err != nil || tm.RouterSettings != nil {
		t.Fatalf("team's removed: %+v %v", tm, err)
	}
	eleven := 11
	var apiErr *client.Error
	if _, err := c.UpdateKey(ctx, vk.ID, &client.KeyUpdate{RouterSettings: &client.RouterSettings{NumRetries: &eleven}}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity || !strings.Contains(apiErr.Message, "router_settings.num_retries") {
		t.Fatalf("num_retries 11: %v", err)
	}
}
