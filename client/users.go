package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// UserRequest asks the server to create a user (POST /api/v1/users, LiteLLM's internal
// user): one budget, token rate and model list every virtual key made for it (its
// metadata's user_id) draws on, beside the key's own and its team's. Zero fields mean no
// limit.
type UserRequest struct {
	// UserID is the user's id (letters, digits and . _ - : @ +); empty: the server makes
	// one (a UUID).
	UserID string `json:"user_id,omitempty"`
	// Email is the user's address (one user each); Alias labels the user.
	Email string `json:"email,omitempty"`
	Alias string `json:"alias,omitempty"`
	// Role is a label: proxy_admin, proxy_admin_viewer, internal_user (the default) or
	// internal_user_viewer.
	Role string `json:"role,omitempty"`
	// Models the user's keys may call; empty allows every model.
	Models []string `json:"models,omitempty"`
	// MaxBudgetUSD is what all the user's keys together may spend, per BudgetDuration.
	MaxBudgetUSD float64 `json:"max_budget_usd,omitempty"`
	// BudgetDuration restarts the user's spend from zero every period: "30d".
	BudgetDuration string `json:"budget_duration,omitempty"`
	// TokensPerMinute bounds all the user's keys together.
	TokensPerMinute int64 `json:"tokens_per_minute,omitempty"`
	// Metadata are labels kept with the user.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Blocked creates the user with every key refused until unblocked.
	Blocked bool `json:"blocked,omitempty"`
	// Teams the user joins with role user (afterwards: AddTeamMember, RemoveTeamMember).
	Teams []string `json:"teams,omitempty"`
}

// User describes a user.
type User struct {
	// UserID names the user.
	UserID string `json:"user_id"`
	// Email, Alias, Role, Models, MaxBudgetUSD, BudgetDuration, TokensPerMinute, Metadata
	// and Blocked are as UserRequest describes them.
	Email           string         `json:"email,omitempty"`
	Alias           string         `json:"alias,omitempty"`
	Role            string         `json:"role"`
	Models          []string       `json:"models,omitempty"`
	MaxBudgetUSD    float64        `json:"max_budget_usd,omitempty"`
	BudgetDuration  string         `json:"budget_duration,omitempty"`
	TokensPerMinute int64          `json:"tokens_per_minute,omitempty"`
	Metadata        map[string]any `json:"metadata,omitempty"`
	Blocked         bool           `json:"blocked,omitempty"`
	CreatedAt       time.Time      `json:"created_at"`
	UpdatedAt       time.Time      `json:"updated_at"`
	// Spend is what the user's keys together used (in the current period).
	Spend KeySpend `json:"spend"`
	// Teams are the ids of the teams the user is a member of.
	Teams []string `json:"teams"`
	// KeyIDs are the ids of the virtual keys made for the user.
	KeyIDs []string `json:"key_ids"`
}

// UserUpdate changes a user (PATCH /api/v1/users/{id}): the fields set replace the
// user's; the others stay.
type UserUpdate struct {
	// Email, Alias, Role, MaxBudgetUSD, BudgetDuration, TokensPerMinute and Blocked
	// replace the user's when not nil. MaxBudgetUSD set with Blocked nil lifts a block
	// LiteLLM's max_budget 0 set (as a max_budget on its /user/update does), not one set
	// with Blocked true.
	Email           *string
	Alias           *string
	Role            *string
	MaxBudgetUSD    *float64
	BudgetDuration  *string
	TokensPerMinute *int64
	Blocked         *bool
	// Models replaces the user's list when not nil; empty (non-nil) allows every model.
	Models []string
	// Metadata replaces the user's labels whole when not nil.
	Metadata map[string]any
}

// UserDeletion is DeleteUser's answer: the user's virtual keys are revoked with it.
type UserDeletion struct {
	UserID      string   `json:"user_id"`
	Deleted     bool     `json:"deleted"`
	DeletedKeys []string `json:"deleted_keys"`
}

// TeamMemberRequest adds a user to a team (POST /api/v1/teams/{id}/members).
type TeamMemberRequest struct {
	// UserID is the user joining (required).
	UserID string `json:"user_id"`
	// Role is admin or user (the default).
	Role string `json:"role,omitempty"`
	// MaxBudgetUSD is what the user's keys of the team may spend together; 0: no bound.
	MaxBudgetUSD float64 `json:"max_budget_usd,omitempty"`
	// Blocked refuses the user's keys of the team.
	Blocked bool `json:"blocked,omitempty"`
}

// TeamMember describes a user's membership of a team.
type TeamMember struct {
	TeamID string `json:"team_id"`
	UserID string `json:"user_id"`
	// Role, MaxBudgetUSD and Blocked are as TeamMemberRequest describes them.
	Role         string    `json:"role"`
	MaxBudgetUSD float64   `json:"max_budget_usd,omitempty"`
	Blocked      bool      `json:"blocked,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	// Spend is what the user's keys of the team used.
	Spend KeySpend `json:"spend"`
}

// TeamMemberUpdate changes a membership (PATCH /api/v1/teams/{id}/members/{user_id}):
// the fields set replace the membership's; the others stay.
type TeamMemberUpdate struct {
	// Role, MaxBudgetUSD and Blocked replace the membership's when not nil.
	Role         *string
	MaxBudgetUSD *float64
	Blocked      *bool
}

// CreateUser creates a user of the calling key.
func (c *Client) CreateUser(ctx context.Context, req *UserRequest) (*User, error) {
	if req == nil {
		req = &UserRequest{}
	}
	var out User
	if err := c.do(ctx, http.MethodPost, "/api/v1/users", nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// User returns one user of the calling key with its spend, teams and keys.
func (c *Client) User(ctx context.Context, id string) (*User, error) {
	if id == "" {
		return nil, fmt.Errorf("client: GET /api/v1/users/: %w", ErrMissingID)
	}
	var out User
	if err := c.do(ctx, http.MethodGet, "/api/v1/users/"+url.PathEscape(id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Users returns all the calling key's users, oldest first (every page of ListUsers).
func (c *Client) Users(ctx context.Context) ([]User, error) {
	var out []User
	for u, err := range All(ctx, &ListOptions{Limit: 100}, c.ListUsers) {
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// ListUsers returns one page of the calling key's users, oldest first (opts: Limit,
// Cursor, CreatedAfter and CreatedBefore; users have no Status).
func (c *Client) ListUsers(ctx context.Context, opts *ListOptions) (*Page[User], error) {
	return list[User](ctx, c, "/api/v1/users", opts)
}

// UpdateUser changes the user id and returns it as it is now; its spend, teams and keys
// are kept.
func (c *Client) UpdateUser(ctx context.Context, id string, u *UserUpdate) (*User, error) {
	if id == "" {
		return nil, fmt.Errorf("client: PATCH /api/v1/users/: %w", ErrMissingID)
	}
	body := patchBody{}
	if u != nil {
		set := body.set
		set("email", u.Email, u.Email != nil)
		set("alias", u.Alias, u.Alias != nil)
		set("role", u.Role, u.Role != nil)
		set("models", u.Models, u.Models != nil)
		set("max_budget_usd", u.MaxBudgetUSD, u.MaxBudgetUSD != nil)
		set("budget_duration", u.BudgetDuration, u.BudgetDuration != nil)
		set("tokens_per_minute", u.TokensPerMinute, u.TokensPerMinute != nil)
		set("metadata", u.Metadata, u.Metadata != nil)
		set("blocked", u.Blocked, u.Blocked != nil)
	}
	var out User
	if err := c.do(ctx, http.MethodPatch, "/api/v1/users/"+url.PathEscape(id), nil, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteUser deletes the user id and its team memberships and revokes its virtual keys,
// at once on every replica.
func (c *Client) DeleteUser(ctx context.Context, id string) (*UserDeletion, error) {
	if id == "" {
		return nil, fmt.Errorf("client: DELETE /api/v1/users/: %w", ErrMissingID)
	}
	var out UserDeletion
	if err := c.do(ctx, http.MethodDelete, "/api/v1/users/"+url.PathEscape(id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// teamMembersPath is the path of team's members, or of user's membership of it.
func teamMembersPath(method, team, user string, withUser bool) (string, error) {
	p := "/api/v1/teams/" + url.PathEscape(team) + "/members"
	if team == "" || (withUser && user == "") {
		return "", fmt.Errorf("client: %s %s/%s: %w", method, p, url.PathEscape(user), ErrMissingID)
	}
	if withUser {
		p += "/" + url.PathEscape(user)
	}
	return p, nil
}

// AddTeamMember adds the user req names to the team with its role and budget in it.
func (c *Client) AddTeamMember(ctx context.Context, team string, req *TeamMemberRequest) (*TeamMember, error) {
	p, err := teamMembersPath(http.MethodPost, team, "", false)
	if err != nil {
		return nil, err
	}
	if req == nil || req.UserID == "" {
		return nil, fmt.Errorf("client: POST %s: %w", p, ErrMissingID)
	}
	var out TeamMember
	if err := c.do(ctx, http.MethodPost, p, nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TeamMembers returns the members of the team, by user id.
func (c *Client) TeamMembers(ctx context.Context, team string) ([]TeamMember, error) {
	p, err := teamMembersPath(http.MethodGet, team, "", false)
	if err != nil {
		return nil, err
	}
	var out struct {
		Data []TeamMember `json:"data"`
	}
	if err := c.do(ctx, http.MethodGet, p, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// UpdateTeamMember changes the user's role, budget or block in the team; its spend in
// the team is kept.
func (c *Client) UpdateTeamMember(ctx context.Context, team, user string, u *TeamMemberUpdate) (*TeamMember, error) {
	p, err := teamMembersPath(http.MethodPatch, team, user, true)
	if err != nil {
		return nil, err
	}
	body := patchBody{}
	if u != nil {
		body.set("role", u.Role, u.Role != nil)
		body.set("max_budget_usd", u.MaxBudgetUSD, u.MaxBudgetUSD != nil)
		body.set("blocked", u.Blocked, u.Blocked != nil)
	}
	var out TeamMember
	if err := c.do(ctx, http.MethodPatch, p, nil, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RemoveTeamMember takes the user out of the team; the user and its keys stay.
func (c *Client) RemoveTeamMember(ctx context.Context, team, user string) error {
	p, err := teamMembersPath(http.MethodDelete, team, user, true)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, p, nil, nil, nil)
}
