package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Organizations are LiteLLM's level above teams (POST /organization/new and the routes
// beside it): an organization's models bound what its teams may name, and its account
// (max_budget per budget_duration, tpm_limit, rpm_limit) holds the spend of every key of
// its teams as well as the key's and the team's. A team joins one through its
// OrganizationID (TeamRequest, TeamUpdate). The calls here use LiteLLM's routes and field
// names, as the server offers organizations on those only.

// OrganizationRequest asks the server to create an organization (POST /organization/new).
// Zero fields mean no limit.
type OrganizationRequest struct {
	// OrganizationID is the organization's id (letters, digits and . _ - :); empty: the
	// server makes a UUID.
	OrganizationID string `json:"organization_id,omitempty"`
	// Alias is the organization's name (LiteLLM's organization_alias); required.
	Alias string `json:"organization_alias"`
	// Models are the models the organization's teams may name and their keys call; empty
	// allows every model.
	Models []string `json:"models,omitempty"`
	// BudgetID takes the limits of a LiteLLM budget (POST /budget/new: its max_budget,
	// soft_budget, budget_duration, tpm_limit and rpm_limit) in place of the fields below;
	// a /budget/update reaches the organization.
	BudgetID string `json:"budget_id,omitempty"`
	// MaxBudgetUSD is what all the keys of the organization's teams together may spend, per
	// BudgetDuration (LiteLLM's max_budget).
	MaxBudgetUSD float64 `json:"max_budget,omitempty"`
	// SoftBudgetUSD is a mark that sends a budget alert and never blocks (soft_budget).
	SoftBudgetUSD float64 `json:"soft_budget,omitempty"`
	// BudgetDuration restarts the organization's spend from zero every period: "30d".
	BudgetDuration string `json:"budget_duration,omitempty"`
	// TokensPerMinute and RequestsPerMinute bound all the keys of the organization's teams
	// together (LiteLLM's tpm_limit and rpm_limit).
	TokensPerMinute   int64 `json:"tpm_limit,omitempty"`
	RequestsPerMinute int   `json:"rpm_limit,omitempty"`
	// Metadata are labels kept with the organization.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Blocked creates the organization with every key of its teams refused until unblocked.
	Blocked bool `json:"blocked,omitempty"`
}

// Organization describes an organization as LiteLLM's LiteLLM_OrganizationTableWithMembers
// does: its limits are in Budget.
type Organization struct {
	// OrganizationID names the organization.
	OrganizationID string `json:"organization_id"`
	// Alias is its name (organization_alias).
	Alias string `json:"organization_alias"`
	// BudgetID is the LiteLLM budget it takes its limits from; empty when it holds its own.
	BudgetID string `json:"budget_id"`
	// Models its teams may name; empty allows every model.
	Models []string `json:"models"`
	// Metadata are its labels.
	Metadata map[string]any `json:"metadata"`
	// SpendUSD is what the keys of its teams spent (in the current period with a
	// budget_duration).
	SpendUSD float64 `json:"spend"`
	// Blocked is true while every key of its teams is refused.
	Blocked bool `json:"blocked"`
	// CreatedAt, CreatedBy, UpdatedAt and UpdatedBy say when and by which key it was made
	// and last changed.
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by"`
	UpdatedAt time.Time `json:"updated_at"`
	UpdatedBy string    `json:"updated_by"`
	// Budget holds its limits (LiteLLM's litellm_budget_table).
	Budget OrganizationBudget `json:"litellm_budget_table"`
	// Teams are the teams in it, in LiteLLM's shape.
	Teams []OrganizationTeam `json:"teams"`
	// Members are its users with their roles.
	Members []OrganizationMember `json:"members"`
}

// OrganizationBudget is an organization's limits; nil means no bound.
type OrganizationBudget struct {
	// MaxBudgetUSD bounds the spend of every key of its teams together; 0 (not nil) is
	// LiteLLM's budget of nothing, which blocks the organization.
	MaxBudgetUSD *float64 `json:"max_budget"`
	// SoftBudgetUSD sends a budget alert when reached.
	SoftBudgetUSD *float64 `json:"soft_budget"`
	// TokensPerMinute and RequestsPerMinute bound its teams' keys together.
	TokensPerMinute   *int64 `json:"tpm_limit"`
	RequestsPerMinute *int   `json:"rpm_limit"`
	// BudgetDuration is the period after which its spend starts again from zero.
	BudgetDuration *string `json:"budget_duration"`
	// BudgetResetAt is when the current period ends (with a BudgetDuration, once spending
	// began).
	BudgetResetAt *time.Time `json:"budget_reset_at"`
}

// OrganizationTeam is a team of an organization as LiteLLM describes one.
type OrganizationTeam struct {
	// TeamID names the team; Alias is its name (team_alias).
	TeamID string `json:"team_id"`
	Alias  string `json:"team_alias"`
	// Models its keys may call; empty allows every model (within the organization's).
	Models []string `json:"models"`
	// MaxBudgetUSD is the team's own bound (nil: none); SpendUSD what its keys spent.
	MaxBudgetUSD *float64 `json:"max_budget"`
	SpendUSD     float64  `json:"spend"`
	// Blocked is true while the team's keys are refused.
	Blocked bool `json:"blocked"`
	// Keys are the ids of the team's virtual keys.
	Keys []string `json:"keys"`
}

// OrganizationMember is a user's membership of an organization.
type OrganizationMember struct {
	// UserID is the user; OrganizationID the organization.
	UserID         string `json:"user_id"`
	OrganizationID string `json:"organization_id"`
	// Role is org_admin, internal_user or internal_user_viewer.
	Role string `json:"user_role"`
	// Email is the user's address; empty for none.
	Email string `json:"user_email"`
	// SpendUSD is what the member's keys of the organization (its own and its teams')
	// spent since the user joined.
	SpendUSD float64 `json:"spend"`
	// Budget holds the member's max_budget_in_organization; nil when the member has none.
	Budget    *OrganizationMemberBudget `json:"litellm_budget_table"`
	CreatedAt time.Time                 `json:"created_at"`
	UpdatedAt time.Time                 `json:"updated_at"`
}

// OrganizationMemberBudget is a membership's bound (LiteLLM's litellm_budget_table).
type OrganizationMemberBudget struct {
	// MaxBudgetUSD is the member's max_budget_in_organization: USD its keys of the
	// organization may spend together (0 blocks them).
	MaxBudgetUSD float64 `json:"max_budget"`
}

// Organization roles, as LiteLLM names them.
const (
	// OrgAdmin manages the organization.
	OrgAdmin = "org_admin"
	// OrgInternalUser is a member who may use the organization's teams.
	OrgInternalUser = "internal_user"
	// OrgInternalUserViewer is a member who may only look.
	OrgInternalUserViewer = "internal_user_viewer"
)

// OrganizationUpdate changes an organization (PATCH /organization/update): the fields set
// replace its own; the others stay.
type OrganizationUpdate struct {
	// Alias, SoftBudgetUSD and Blocked replace the organization's when not nil.
	Alias         *string
	SoftBudgetUSD *float64
	Blocked       *bool
	// MaxBudgetUSD replaces its bound when not nil; 0 is LiteLLM's budget of nothing, which
	// blocks the organization (RemoveMaxBudget takes the bound away).
	MaxBudgetUSD *float64
	// RemoveMaxBudget takes the organization's max_budget away (sent as null); not with
	// MaxBudgetUSD.
	RemoveMaxBudget bool
	// BudgetDuration replaces its period when not nil; "" for all time.
	BudgetDuration *string
	// TokensPerMinute and RequestsPerMinute replace its rates when not nil; 0 removes the
	// bound.
	TokensPerMinute   *int64
	RequestsPerMinute *int
	// BudgetID puts it on a LiteLLM budget when not nil; "" takes it off (it keeps the
	// budget's values as its own).
	BudgetID *string
	// Models replaces its list when not nil; empty (non-nil) allows every model. Refused
	// while a team of the organization names a model outside the new list.
	Models []string
	// Metadata replaces its labels whole when not nil.
	Metadata map[string]any
}

// OrganizationMemberRequest adds a user to an organization (POST
// /organization/member_add): by UserID or by Email (a user is made for an id or address no
// user has).
type OrganizationMemberRequest struct {
	// UserID or Email names the user.
	UserID string `json:"user_id,omitempty"`
	Email  string `json:"user_email,omitempty"`
	// Role is OrgAdmin, OrgInternalUser or OrgInternalUserViewer; required.
	Role string `json:"role"`
}

// nullOr is v, or JSON null when null is true.
func nullOr(v any, null bool) any {
	if null {
		return nil
	}
	return v
}

// CreateOrganization creates an organization of the calling key.
func (c *Client) CreateOrganization(ctx context.Context, req *OrganizationRequest) (*Organization, error) {
	if req == nil {
		req = &OrganizationRequest{}
	}
	var out Organization
	if err := c.do(ctx, http.MethodPost, "/organization/new", nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Organization returns one organization of the calling key with its spend, limits, teams
// and members.
func (c *Client) Organization(ctx context.Context, id string) (*Organization, error) {
	if id == "" {
		return nil, fmt.Errorf("client: GET /organization/info: %w", ErrMissingID)
	}
	var out Organization
	if err := c.do(ctx, http.MethodGet, "/organization/info", url.Values{"organization_id": {id}}, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Organizations returns the calling key's organizations, oldest first.
func (c *Client) Organizations(ctx context.Context) ([]Organization, error) {
	var out []Organization
	if err := c.do(ctx, http.MethodGet, "/organization/list", nil, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// OrganizationFilter narrows OrganizationsWhere with LiteLLM's /organization/list filters;
// an empty field does not filter.
type OrganizationFilter struct {
	// ID keeps only the organization of this exact id (org_id).
	ID string
	// Alias keeps only organizations whose alias holds this text, case-insensitive
	// (org_alias).
	Alias string
}

// OrganizationsWhere returns the calling key's organizations that f keeps, oldest first
// (none is no error). A virtual key sees only the organizations its user is a member of.
func (c *Client) OrganizationsWhere(ctx context.Context, f OrganizationFilter) ([]Organization, error) {
	q := url.Values{}
	if f.ID != "" {
		q.Set("org_id", f.ID)
	}
	if f.Alias != "" {
		q.Set("org_alias", f.Alias)
	}
	var out []Organization
	if err := c.do(ctx, http.MethodGet, "/organization/list", q, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateOrganization changes the organization id and returns it as it is now; its spend,
// teams and members are kept. A failed update changes nothing.
func (c *Client) UpdateOrganization(ctx context.Context, id string, u *OrganizationUpdate) (*Organization, error) {
	if id == "" {
		return nil, fmt.Errorf("client: PATCH /organization/update: %w", ErrMissingID)
	}
	body := patchBody{"organization_id": id}
	if u != nil {
		if u.RemoveMaxBudget && u.MaxBudgetUSD != nil {
			return nil, fmt.Errorf("client: PATCH /organization/update: MaxBudgetUSD and RemoveMaxBudget both set: %w", ErrInvalid)
		}
		set := body.set
		set("organization_alias", u.Alias, u.Alias != nil)
		set("models", u.Models, u.Models != nil)
		set("max_budget", u.MaxBudgetUSD, u.MaxBudgetUSD != nil)
		set("max_budget", nil, u.RemoveMaxBudget)
		set("soft_budget", u.SoftBudgetUSD, u.SoftBudgetUSD != nil)
		set("budget_duration", u.BudgetDuration, u.BudgetDuration != nil)
		if u.TokensPerMinute != nil {
			body["tpm_limit"] = nullOr(*u.TokensPerMinute, *u.TokensPerMinute == 0)
		}
		if u.RequestsPerMinute != nil {
			body["rpm_limit"] = nullOr(*u.RequestsPerMinute, *u.RequestsPerMinute == 0)
		}
		if u.BudgetID != nil {
			body["budget_id"] = nullOr(*u.BudgetID, *u.BudgetID == "")
		}
		set("metadata", u.Metadata, u.Metadata != nil)
		set("blocked", u.Blocked, u.Blocked != nil)
	}
	var out Organization
	if err := c.do(ctx, http.MethodPatch, "/organization/update", nil, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteOrganizations deletes the organizations ids with their teams, their teams' virtual
// keys (revoked at once on every replica) and their memberships, all or none (an unknown id
// deletes nothing), and returns them as they were.
func (c *Client) DeleteOrganizations(ctx context.Context, ids ...string) ([]Organization, error) {
	if len(ids) == 0 || slices.Contains(ids, "") {
		return nil, fmt.Errorf("client: DELETE /organization/delete: %w", ErrMissingID)
	}
	var out []Organization
	if err := c.do(ctx, http.MethodDelete, "/organization/delete", nil, map[string]any{"organization_ids": ids}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// AddOrganizationMembers adds users to the organization id and returns their memberships.
// A user already in it is refused (400 naming member[i]) and none is added.
func (c *Client) AddOrganizationMembers(ctx context.Context, id string, members ...OrganizationMemberRequest) ([]OrganizationMember, error) {
	return c.addOrganizationMembers(ctx, id, nil, members)
}

// AddOrganizationMembersWithBudget adds users to the organization id as
// AddOrganizationMembers does, each bounded by maxBudgetUSD: USD its keys of the organization
// (its own and its teams') may spend together (LiteLLM's max_budget_in_organization; 0
// blocks them).
func (c *Client) AddOrganizationMembersWithBudget(ctx context.Context, id string, maxBudgetUSD float64, members ...OrganizationMemberRequest) ([]OrganizationMember, error) {
	return c.addOrganizationMembers(ctx, id, &maxBudgetUSD, members)
}

func (c *Client) addOrganizationMembers(ctx context.Context, id string, maxBudget *float64, members []OrganizationMemberRequest) ([]OrganizationMember, error) {
	if id == "" {
		return nil, fmt.Errorf("client: POST /organization/member_add: %w", ErrMissingID)
	}
	if len(members) == 0 {
		return nil, fmt.Errorf("client: POST /organization/member_add: no member given: %w", ErrInvalid)
	}
	var out struct {
		Memberships []OrganizationMember `json:"updated_organization_memberships"`
	}
	body := map[string]any{"organization_id": id, "member": members}
	if maxBudget != nil {
		body["max_budget_in_organization"] = *maxBudget
	}
	if err := c.do(ctx, http.MethodPost, "/organization/member_add", nil, body, &out); err != nil {
		return nil, err
	}
	return out.Memberships, nil
}

// orgMemberBody is the body naming user (an id, or an address when it holds '@') of the
// organization id.
func orgMemberBody(id, user string) map[string]any {
	body := map[string]any{"organization_id": id}
	if strings.Contains(user, "@") {
		body["user_email"] = user
	} else {
		body["user_id"] = user
	}
	return body
}

// UpdateOrganizationMember changes the role of user (a user id, or an address when it
// holds '@') in the organization id and returns the membership.
func (c *Client) UpdateOrganizationMember(ctx context.Context, id, user, role string) (*OrganizationMember, error) {
	return c.UpdateOrganizationMembership(ctx, id, user, &OrganizationMembershipUpdate{Role: &role})
}

// OrganizationMembershipUpdate changes a member of an organization (PATCH
// /organization/member_update): the fields set replace the membership's; the others stay.
type OrganizationMembershipUpdate struct {
	// Role is the member's new role: OrgAdmin, OrgInternalUser or OrgInternalUserViewer.
	Role *string
	// MaxBudgetUSD is the member's new max_budget_in_organization: USD its keys of the
	// organization (its own and its teams') may spend together, what they spent kept; 0
	// blocks them. A bound once set is changed, never removed (LiteLLM's member_update
	// has no way to either): a larger one lifts it.
	MaxBudgetUSD *float64
}

// UpdateOrganizationMembership changes the role and/or the budget of user (a user id, or
// an address when it holds '@') in the organization id and returns the membership. An
// update that sets nothing is refused with ErrInvalid before any request.
func (c *Client) UpdateOrganizationMembership(ctx context.Context, id, user string, u *OrganizationMembershipUpdate) (*OrganizationMember, error) {
	if id == "" || user == "" {
		return nil, fmt.Errorf("client: PATCH /organization/member_update: %w", ErrMissingID)
	}
	if u == nil || (u.Role == nil && u.MaxBudgetUSD == nil) {
		return nil, fmt.Errorf("client: PATCH /organization/member_update: nothing to change (set Role or MaxBudgetUSD): %w", ErrInvalid)
	}
	body := orgMemberBody(id, user)
	if u.Role != nil {
		body["role"] = *u.Role
	}
	if u.MaxBudgetUSD != nil {
		body["max_budget_in_organization"] = *u.MaxBudgetUSD
	}
	var out OrganizationMember
	if err := c.do(ctx, http.MethodPatch, "/organization/member_update", nil, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RemoveOrganizationMember takes user (a user id, or an address when it holds '@') out of
// the organization id and returns the membership it had; the user and its keys stay.
func (c *Client) RemoveOrganizationMember(ctx context.Context, id, user string) (*OrganizationMember, error) {
	if id == "" || user == "" {
		return nil, fmt.Errorf("client: DELETE /organization/member_delete: %w", ErrMissingID)
	}
	var out OrganizationMember
	if err := c.do(ctx, http.MethodDelete, "/organization/member_delete", nil, orgMemberBody(id, user), &out); err != nil {
		return nil, err
	}
	return &out, nil
}
