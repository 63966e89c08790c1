package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// TeamRequest asks the server to create a team (POST /api/v1/teams): one budget, rate and
// model list shared by every virtual key given its TeamID. Zero fields mean no limit.
type TeamRequest struct {
	// TeamID is the team's id (letters, digits and . _ - :); empty: the server makes one.
	TeamID string `json:"team_id,omitempty"`
	// Name labels the team (LiteLLM's team_alias).
	Name string `json:"name,omitempty"`
	// Models the team's keys may call; empty allows every model.
	Models []string `json:"models,omitempty"`
	// MaxBudgetUSD is what all the team's keys together may spend, per BudgetDuration.
	MaxBudgetUSD float64 `json:"max_budget_usd,omitempty"`
	// BudgetDuration restarts the team's spend from zero every period: "30d".
	BudgetDuration string `json:"budget_duration,omitempty"`
	// RequestsPerMinute and TokensPerMinute bound all the team's keys together.
	RequestsPerMinute int   `json:"requests_per_minute,omitempty"`
	TokensPerMinute   int64 `json:"tokens_per_minute,omitempty"`
	// MaxParallelRequests bounds all the team's keys' requests in flight together
	// (LiteLLM's team max_parallel_requests); 0 for no bound.
	MaxParallelRequests int `json:"max_parallel_requests,omitempty"`
	// Metadata are labels kept with the team.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Blocked creates the team with every key refused until unblocked.
	Blocked bool `json:"blocked,omitempty"`
	// OrganizationID puts the team in an organization (CreateOrganization): its models
	// must be within the organization's, and its keys spend from the organization's
	// account too.
	OrganizationID string `json:"organization_id,omitempty"`
	// Tags are the team's tags (LiteLLM's team-level tags): every request of the team's
	// keys carries them after the key's own, for tag routing, tag budgets (CreateTag) and
	// spend per tag. The server keeps them as Metadata's tags; given both, Tags win.
	Tags []string `json:"tags,omitempty"`
	// RouterSettings are the retries, timeout and fallbacks of the team's keys that have
	// none of their own (LiteLLM's team router_settings); nil for none.
	RouterSettings *RouterSettings `json:"router_settings,omitempty"`
}

// Team describes a team.
type Team struct {
	// TeamID names the team.
	TeamID string `json:"team_id"`
	// Name, Models, MaxBudgetUSD, BudgetDuration, RequestsPerMinute, TokensPerMinute,
	// Metadata and Blocked are as TeamRequest describes them.
	Name              string   `json:"name,omitempty"`
	Models            []string `json:"models,omitempty"`
	MaxBudgetUSD      float64  `json:"max_budget_usd,omitempty"`
	BudgetDuration    string   `json:"budget_duration,omitempty"`
	RequestsPerMinute int      `json:"requests_per_minute,omitempty"`
	TokensPerMinute   int64    `json:"tokens_per_minute,omitempty"`
	// MaxParallelRequests is the team's bound on its keys' requests in flight (0: none).
	MaxParallelRequests int            `json:"max_parallel_requests,omitempty"`
	Metadata            map[string]any `json:"metadata,omitempty"`
	Blocked             bool           `json:"blocked,omitempty"`
	// OrganizationID is the organization the team is in; empty for none.
	OrganizationID string    `json:"organization_id,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
	// Spend is what the team's keys together used (in the current period).
	Spend KeySpend `json:"spend"`
	// KeyIDs are the ids of the team's virtual keys.
	KeyIDs []string `json:"key_ids"`
	// Tags are the team's tags, its Metadata's tags (none: nil).
	Tags []string `json:"tags,omitempty"`
	// RouterSettings are the team's router settings (nil: none).
	RouterSettings *RouterSettings `json:"router_settings,omitempty"`
}

// TeamUpdate changes a team (PATCH /api/v1/teams/{id}): the fields set replace the team's;
// the others stay.
type TeamUpdate struct {
	// Name, MaxBudgetUSD, BudgetDuration, RequestsPerMinute, TokensPerMinute and Blocked
	// replace the team's when not nil.
	Name              *string
	MaxBudgetUSD      *float64
	BudgetDuration    *string
	RequestsPerMinute *int
	TokensPerMinute   *int64
	Blocked           *bool
	// MaxParallelRequests replaces the team's bound when not nil (0 removes it).
	MaxParallelRequests *int
	// OrganizationID moves the team into that organization when not nil; "" takes it out.
	OrganizationID *string
	// Models replaces the team's list when not nil; empty (non-nil) allows every model.
	Models []string
	// Metadata replaces the team's labels whole when not nil.
	Metadata map[string]any
	// Tags replaces the team's tags alone when not nil (its other labels kept); empty
	// (non-nil) removes them. Beside Metadata with a tags label Tags win and replace it.
	Tags []string
	// RouterSettings replaces the team's router settings whole when not nil; a zero
	// RouterSettings removes them.
	RouterSettings *RouterSettings
}

// TeamDeletion is DeleteTeam's answer: the team's virtual keys are revoked with it.
type TeamDeletion struct {
	TeamID      string   `json:"team_id"`
	Deleted     bool     `json:"deleted"`
	DeletedKeys []string `json:"deleted_keys"`
}

// CreateTeam creates a team of the calling key.
func (c *Client) CreateTeam(ctx context.Context, req *TeamRequest) (*Team, error) {
	if req == nil {
		req = &TeamRequest{}
	}
	var out Team
	if err := c.do(ctx, http.MethodPost, "/api/v1/teams", nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Team returns one team of the calling key with its spend and keys.
func (c *Client) Team(ctx context.Context, id string) (*Team, error) {
	if id == "" {
		return nil, fmt.Errorf("client: GET /api/v1/teams/: %w", ErrMissingID)
	}
	var out Team
	if err := c.do(ctx, http.MethodGet, "/api/v1/teams/"+url.PathEscape(id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Teams returns the calling key's teams, oldest first.
func (c *Client) Teams(ctx context.Context) ([]Team, error) {
	var out struct {
		Data []Team `json:"data"`
	}
	if err := c.do(ctx, http.MethodGet, "/api/v1/teams", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// UpdateTeam changes the team id and returns it as it is now; its spend and keys are kept.
func (c *Client) UpdateTeam(ctx context.Context, id string, u *TeamUpdate) (*Team, error) {
	if id == "" {
		return nil, fmt.Errorf("client: PATCH /api/v1/teams/: %w", ErrMissingID)
	}
	body := patchBody{}
	if u != nil {
		set := body.set
		set("name", u.Name, u.Name != nil)
		set("models", u.Models, u.Models != nil)
		set("max_budget_usd", u.MaxBudgetUSD, u.MaxBudgetUSD != nil)
		set("budget_duration", u.BudgetDuration, u.BudgetDuration != nil)
		set("requests_per_minute", u.RequestsPerMinute, u.RequestsPerMinute != nil)
		set("tokens_per_minute", u.TokensPerMinute, u.TokensPerMinute != nil)
		set("max_parallel_requests", u.MaxParallelRequests, u.MaxParallelRequests != nil)
		set("metadata", u.Metadata, u.Metadata != nil)
		set("blocked", u.Blocked, u.Blocked != nil)
		set("organization_id", u.OrganizationID, u.OrganizationID != nil)
		set("tags", u.Tags, u.Tags != nil)
		set("router_settings", u.RouterSettings, u.RouterSettings != nil)
	}
	var out Team
	if err := c.do(ctx, http.MethodPatch, "/api/v1/teams/"+url.PathEscape(id), nil, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteTeam deletes the team id and revokes its virtual keys, at once on every replica.
func (c *Client) DeleteTeam(ctx context.Context, id string) (*TeamDeletion, error) {
	if id == "" {
		return nil, fmt.Errorf("client: DELETE /api/v1/teams/: %w", ErrMissingID)
	}
	var out TeamDeletion
	if err := c.do(ctx, http.MethodDelete, "/api/v1/teams/"+url.PathEscape(id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
