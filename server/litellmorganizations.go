package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// LiteLLM's proxy manages organizations through /organization/new, PATCH
// /organization/update, DELETE /organization/delete, /organization/info (GET, and its
// deprecated POST form), /organization/list and the member routes POST
// /organization/member_add, PATCH /organization/member_update and DELETE
// /organization/member_delete; the routes here answer those requests on the organizations
// of organizations.go, in LiteLLM's shapes (LiteLLM_OrganizationTableWithMembers) and error
// envelope.

// litellmOrganizationRequest documents the body of POST /organization/new and PATCH
// /organization/update; other LiteLLM fields are refused when they ask for something.
type litellmOrganizationRequest struct {
	OrganizationID    string         `json:"organization_id,omitempty" jsonschema:"description=The organization's id: on /organization/new optional (a UUID is made); on /organization/update the organization to change (required)"`
	OrganizationAlias string         `json:"organization_alias,omitempty" jsonschema:"description=The organization's name (required on /organization/new)"`
	Models            []string       `json:"models,omitempty" jsonschema:"description=The models the organization's teams may name and its keys (its own and its teams') call; empty for every model"`
	BudgetID          *string        `json:"budget_id,omitempty" jsonschema:"description=A budget of POST /budget/new whose max_budget\\, soft_budget\\, budget_duration and tpm_limit become the organization's (a /budget/update reaches it); null leaves it keeping its values"`
	MaxBudget         *float64       `json:"max_budget,omitempty" jsonschema:"description=USD all the keys of the organization (its own and its teams') together may spend (per budget_duration); 0 blocks the organization; null for no bound"`
	SoftBudget        *float64       `json:"soft_budget,omitempty" jsonschema:"description=USD mark that sends a budget alert and never blocks; null for none"`
	BudgetDuration    *string        `json:"budget_duration,omitempty" jsonschema:"description=Period after which the organization's spend starts again from zero (30d); null for all time"`
	TPMLimit          *int64         `json:"tpm_limit,omitempty" jsonschema:"description=Tokens per minute of all the keys of the organization (its own and its teams'); null for no bound"`
	RPMLimit          *int           `json:"rpm_limit,omitempty" jsonschema:"description=Requests per minute of all the keys of the organization (its own and its teams'); null for no bound"`
	Metadata          map[string]any `json:"metadata,omitempty" jsonschema:"description=Labels kept with the organization (at most 16 KiB of JSON)"`
	Blocked           *bool          `json:"blocked,omitempty" jsonschema:"description=true: every key of the organization (its own and its teams') refuses every request"`
}

// litellmOrganization is an organization as LiteLLM's LiteLLM_OrganizationTableWithMembers
// describes one.
type litellmOrganization struct {
	OrganizationID    string                          `json:"organization_id"`
	OrganizationAlias string                          `json:"organization_alias"`
	BudgetID          *string                         `json:"budget_id" jsonschema:"description=The budget (POST /budget/new) the organization takes its limits from; null when it holds its own"`
	Metadata          map[string]any                  `json:"metadata"`
	Models            []string                        `json:"models" jsonschema:"description=Empty: every model"`
	Spend             float64                         `json:"spend" jsonschema:"description=USD the keys of the organization (its own and its teams') spent (in the current period with budget_duration)"`
	Blocked           bool                            `json:"blocked"`
	CreatedAt         time.Time                       `json:"created_at"`
	CreatedBy         string                          `json:"created_by" jsonschema:"description=The owner (calling key's id) that made it"`
	UpdatedAt         time.Time                       `json:"updated_at"`
	UpdatedBy         string                          `json:"updated_by"`
	BudgetTable       litellmOrganizationBudget       `json:"litellm_budget_table" jsonschema:"description=The organization's limits"`
	Teams             []litellmTeam                   `json:"teams" jsonschema:"description=The organization's teams"`
	Members           []litellmOrganizationMembership `json:"members" jsonschema:"description=The organization's members (POST /organization/member_add)"`
	// Keys is Switchyard's: LiteLLM's organization shows no keys, so its team-less keys
	// (which no team lists) would be seen nowhere but /key/list?organization_id=.
	Keys []string `json:"keys" jsonschema:"description=The tokens (vk_…) of the organization's own virtual keys: those without a team (a team's keys are in its teams' keys)"`
}

// litellmOrganizationBudget is an organization's limits as LiteLLM's LiteLLM_BudgetTable.
type litellmOrganizationBudget struct {
	BudgetID       *string    `json:"budget_id" jsonschema:"description=The budget named by budget_id; null when the organization holds its own limits"`
	MaxBudget      *float64   `json:"max_budget" jsonschema:"description=null for no bound; 0: blocked (a budget of nothing)"`
	SoftBudget     *float64   `json:"soft_budget"`
	TPMLimit       *int64     `json:"tpm_limit"`
	RPMLimit       *int       `json:"rpm_limit"`
	BudgetDuration *string    `json:"budget_duration"`
	BudgetResetAt  *time.Time `json:"budget_reset_at" jsonschema:"description=When the current period ends (with budget_duration\\, once spending began)"`
}

// litellmOrganizationMembership is a membership as LiteLLM's
// LiteLLM_OrganizationMembershipTable describes one.
type litellmOrganizationMembership struct {
	UserID         string                   `json:"user_id"`
	OrganizationID string                   `json:"organization_id"`
	UserRole       string                   `json:"user_role" jsonschema:"enum=org_admin,enum=internal_user,enum=internal_user_viewer"`
	UserEmail      *string                  `json:"user_email" jsonschema:"description=The user's address; null for none"`
	Spend          float64                  `json:"spend" jsonschema:"description=USD the member's keys of the organization (its own and its teams') spent since the user joined (0 for a membership an earlier build made until its max_budget_in_organization is set)"`
	BudgetID       *string                  `json:"budget_id" jsonschema:"description=The membership's account when it has a max_budget_in_organization; null for none"`
	BudgetTable    *litellmMembershipBudget `json:"litellm_budget_table" jsonschema:"description={max_budget: max_budget_in_organization} when the membership has one; null for none"`
	CreatedAt      time.Time                `json:"created_at"`
	UpdatedAt      time.Time                `json:"updated_at"`
}

// litellmOrganizationIDs is the body of DELETE /organization/delete.
type litellmOrganizationIDs struct {
	OrganizationIDs []string `json:"organization_ids" jsonschema:"description=The organizations to delete: all or none are found"`
}

// litellmOrganizationInfoRequest is the body of the deprecated POST /organization/info.
type litellmOrganizationInfoRequest struct {
	Organizations []string `json:"organizations" jsonschema:"description=The organizations' ids"`
}

// litellmOrgMember is a member of /organization/member_add.
type litellmOrgMember struct {
	UserID    string `json:"user_id,omitempty" jsonschema:"description=The user's id (a user is made when none has it)"`
	UserEmail string `json:"user_email,omitempty" jsonschema:"description=The user's address\\, in place of user_id (a user is made when none has it)"`
	Role      string `json:"role" jsonschema:"enum=org_admin,enum=internal_user,enum=internal_user_viewer,description=The member's role in the organization"`
}

// litellmOrgMemberAddRequest documents the body of POST /organization/member_add.
type litellmOrgMemberAddRequest struct {
	OrganizationID          string          `json:"organization_id" jsonschema:"description=The organization (required)"`
	Member                  json.RawMessage `json:"member" jsonschema:"description=A member {user_id or user_email\\, role}\\, or a list of them"`
	MaxBudgetInOrganization *float64        `json:"max_budget_in_organization,omitempty" jsonschema:"description=USD each member's keys of the organization (its own and its teams') may spend together; 0 blocks them; absent or null for no bound"`
}

// litellmOrgMemberRequest documents the body of PATCH /organization/member_update and
// DELETE /organization/member_delete.
type litellmOrgMemberRequest struct {
	OrganizationID          string   `json:"organization_id" jsonschema:"description=The organization (required)"`
	UserID                  string   `json:"user_id,omitempty" jsonschema:"description=The member's user id (or user_email)"`
	UserEmail               string   `json:"user_email,omitempty" jsonschema:"description=The member's address\\, in place of user_id"`
	Role                    *string  `json:"role,omitempty" jsonschema:"enum=org_admin,enum=internal_user,enum=internal_user_viewer,description=/organization/member_update: the new role"`
	MaxBudgetInOrganization *float64 `json:"max_budget_in_organization,omitempty" jsonschema:"description=/organization/member_update: USD the member's keys of the organization (its own and its teams') may spend together (its spend kept); 0 blocks them; absent or null leaves the bound as it is"`
}

// litellmOrgMemberAdded is the answer of POST /organization/member_add.
type litellmOrgMemberAdded struct {
	OrganizationID                 string                          `json:"organization_id"`
	UpdatedUsers                   []litellmUser                   `json:"updated_users" jsonschema:"description=The users added (made when the id or address named none)"`
	UpdatedOrganizationMemberships []litellmOrganizationMembership `json:"updated_organization_memberships"`
}

// litellmOrganizationRoutes registers LiteLLM's organization routes; g checks the models
// an organization names.
func (s *Server) litellmOrganizationRoutes(g *completions.Gateway) {
	tags := []string{"LiteLLM compatibility"}
	scoped := "the calling key is itself limited in scope (a virtual or job key)"
	notFound := "no organization of this key has the organization_id given"
	memberOnly := "a job key, or a virtual key whose user_id is not a member of the organization (organizationadmins.go)"
	s.Handle(Route{Method: "POST", Path: "/organization/new", Summary: "LiteLLM's organization creation: a model list and an account (max_budget per budget_duration, tpm_limit, rpm_limit) over every team put in it",
		Tags: tags, Request: litellmOrganizationRequest{}, Response: litellmOrganization{},
		Errors: map[int]string{400: "organization_alias missing or a bad or unsupported field: the message names it", 403: scoped,
			404: "no budget of this key has the budget_id given", 409: "organization_id is another organization's"}},
		func(w http.ResponseWriter, r *http.Request) error {
			fields, err := litellmBody(r)
			if err != nil {
				return err
			}
			if raw, ok := fields["organization_alias"]; !ok || isJSONNull(raw) {
				return paramError("organization_alias", "organization_alias: required: the organization's name")
			}
			o, err := s.createOrganization(r.Context(), g, owner(r), fields)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, s.litellmOrganizationOf(r.Context(), owner(r), *o))
			return nil
		})
	s.Handle(Route{Method: "PATCH", Path: "/organization/update", Summary: "LiteLLM's organization update: changes the fields given (null removes a limit); new models are refused while a team of the organization names a model outside them",
		Tags: tags, Request: litellmOrganizationRequest{}, Response: litellmOrganization{},
		Errors: map[int]string{400: "organization_id missing or a bad or unsupported field: the message names it", 403: scoped, 404: notFound + " (or no budget the budget_id)"}},
		func(w http.ResponseWriter, r *http.Request) error {
			fields, err := litellmBody(r)
			if err != nil {
				return err
			}
			var id string
			if raw, ok := fields["organization_id"]; !ok || json.Unmarshal(raw, &id) != nil || id == "" {
				return paramError("organization_id", "organization_id: required, a string: the organization to change")
			}
			o, err := s.updateOrganization(r.Context(), g, owner(r), id, fields)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, s.litellmOrganizationOf(r.Context(), owner(r), *o))
			return nil
		})
	s.Handle(Route{Method: "DELETE", Path: "/organization/delete", Summary: "LiteLLM's organization deletion: deletes the organizations with their teams, their teams' virtual keys (revoked at once on every replica) and their memberships; all or none",
		Tags: tags, Request: litellmOrganizationIDs{}, Response: []litellmOrganization{},
		Errors: map[int]string{400: "organization_ids missing or empty", 403: scoped, 404: notFound}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req litellmOrganizationIDs
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
				return err
			}
			if len(req.OrganizationIDs) == 0 {
				return paramError("organization_ids", "organization_ids: give the ids of the organizations to delete")
			}
			ctx, who := r.Context(), owner(r)
			ids := slices.Compact(slices.Sorted(slices.Values(req.OrganizationIDs)))
			// Described as they were: read before the delete, which then checks each is there.
			out, err := s.describeOrganizations(ctx, who, ids, "organization_ids")
			if err != nil {
				return err
			}
			if _, _, err := s.deleteOrganizations(ctx, who, ids); err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/organization/info", Summary: "LiteLLM's organization info: an organization with its spend, limits, teams and members (a virtual key: one its user_id is a member of)",
		Tags: tags, Response: litellmOrganization{}, Query: []QueryParam{{Name: "organization_id", Required: true, Description: "The organization's id"}}, VirtualKeys: true,
		Errors: map[int]string{400: "organization_id missing", 403: memberOnly, 404: notFound}},
		func(w http.ResponseWriter, r *http.Request) error {
			id := r.URL.Query().Get("organization_id")
			if id == "" {
				return paramError("organization_id", "organization_id: required: GET /organization/info?organization_id=…")
			}
			c, err := orgCallerOf(r)
			if err != nil {
				return err
			}
			if err := checkOrgCaller(r.Context(), s.cfg.Store, owner(r), c, id, "organization_id", false); err != nil {
				return err
			}
			rec, err := storedOrganizationOf(r.Context(), s.cfg.Store, owner(r), id, "organization_id")
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, s.litellmOrganizationOf(r.Context(), owner(r), rec.organization))
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/organization/info", Summary: "LiteLLM's deprecated organization info: the organizations named (GET /organization/info answers one)",
		Tags: tags, Request: litellmOrganizationInfoRequest{}, VirtualKeys: true, Response: []litellmOrganization{},
		Errors: map[int]string{400: "organizations missing or empty", 403: memberOnly, 404: "no organization of this key has one of the ids given"}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req litellmOrganizationInfoRequest
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
				return err
			}
			if len(req.Organizations) == 0 {
				return paramError("organizations", "organizations: give the ids of the organizations to describe")
			}
			c, err := orgCallerOf(r)
			if err != nil {
				return err
			}
			for _, id := range req.Organizations {
				if err := checkOrgCaller(r.Context(), s.cfg.Store, owner(r), c, id, "organizations", false); err != nil {
					return err
				}
			}
			out, err := s.describeOrganizations(r.Context(), owner(r), req.Organizations, "organizations")
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/organization/list", Summary: "LiteLLM's organization list: the organizations of this key (a virtual key: those its user_id is a member of), oldest first, with their spend, teams and members",
		Tags: tags, Response: []litellmOrganization{}, VirtualKeys: true,
		Query: []QueryParam{{Name: "org_id", Description: "Only the organization of this exact organization_id"},
			{Name: "org_alias", Description: "Only the organizations whose organization_alias holds this text (case-insensitive)"}},
		Errors: map[int]string{400: "an unknown query parameter: the message names it", 403: "a job key"}},
		func(w http.ResponseWriter, r *http.Request) error {
			q := r.URL.Query()
			for name, vs := range q {
				if name != "org_id" && name != "org_alias" && slices.ContainsFunc(vs, func(v string) bool { return v != "" }) {
					return paramError(name, "unknown query parameter %s: /organization/list takes org_id and org_alias", name)
				}
			}
			c, err := orgCallerOf(r)
			if err != nil {
				return err
			}
			ctx, who := r.Context(), owner(r)
			var in map[string]string // a virtual key's user's organizations (nil: an operator key's, all)
			if c.virtual {
				in = map[string]string{}
				if c.userID != "" {
					if in, err = userOrganizations(ctx, s.cfg.Store, who, c.userID); err != nil {
						return err
					}
				}
			}
			es, err := s.cfg.Store.List(ctx, store.Organizations, store.ListOptions{Prefix: who + "/"})
			if err != nil {
				return fmt.Errorf("server: listing organizations: %w", err)
			}
			out := make([]litellmOrganization, 0, len(es))
			keys := s.ownerKeysOnce(ctx, who)
			for _, e := range es {
				var rec storedOrganization
				if err := json.Unmarshal(e.Value, &rec); err != nil {
					return fmt.Errorf("server: organization record %s: %w", e.Key, err)
				}
				if !organizationListed(rec.organization, q.Get("org_id"), q.Get("org_alias"), in) {
					continue
				}
				out = append(out, s.litellmOrganizationWith(ctx, who, rec.organization, keys))
			}
			slices.SortStableFunc(out, func(a, b litellmOrganization) int { return a.CreatedAt.Compare(b.CreatedAt) })
			writeJSON(w, http.StatusOK, out)
			return nil
		})
	s.litellmOrganizationMemberRoutes()
}

// litellmOrganizationMemberRoutes registers LiteLLM's organization member routes.
func (s *Server) litellmOrganizationMemberRoutes() {
	tags := []string{"LiteLLM compatibility"}
	scoped := "a job key, or a virtual key whose user_id is not an org_admin of the organization (organizationadmins.go)"
	s.Handle(Route{Method: "POST", Path: "/organization/member_add", Summary: "LiteLLM's organization member add: users join an organization with a role (a user is made for an id or address no user has); max_budget_in_organization bounds each one's keys of the organization (its own and its teams'); an operator key or an org_admin member's virtual key",
		Tags: tags, VirtualKeys: true, Request: litellmOrgMemberAddRequest{}, Response: litellmOrgMemberAdded{},
		Errors: map[int]string{400: "organization_id or member missing, a member already in the organization, or a bad field: the message names it", 403: scoped, 404: "no organization of this key has the organization_id given"}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req litellmOrgMemberAddRequest
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
				return err
			}
			if req.OrganizationID == "" {
				return paramError("organization_id", "organization_id: required: the organization to add members to")
			}
			bound, block, err := checkMaxBudgetInOrganization(req.MaxBudgetInOrganization)
			if err != nil {
				return err
			}
			orgMembers, err := membersOfBody[litellmOrgMember](req.Member, `member: required: {"user_id" or "user_email", "role"}, or a list of them`)
			if err != nil {
				return err
			}
			members := make([]litellmMember, len(orgMembers))
			for i, m := range orgMembers {
				members[i] = litellmMember(m)
			}
			ctx, who := r.Context(), owner(r)
			c, err := orgCallerOf(r)
			if err != nil {
				return err
			}
			var added []organizationMember
			var users []user
			err = s.cfg.Store.Update(ctx, func(tx store.Tx) error {
				// In the transaction: a role taken away meanwhile adds no one.
				if err := checkOrgCaller(ctx, tx, who, c, req.OrganizationID, "organization_id", true); err != nil {
					return err
				}
				var err error
				added, users, err = organizationMembership.add(ctx, tx, who, req.OrganizationID, members, func(u user, role string, now time.Time) organizationMember {
					return organizationMember{OrganizationID: req.OrganizationID, UserID: u.UserID, Role: role,
						MaxBudgetInOrganization: bound, BudgetBlock: block, CreatedAt: now, UpdatedAt: now}
				})
				return err
			})
			if err != nil {
				return err
			}
			s.log.InfoContext(ctx, "organization members added", "owner", who, "organization_id", req.OrganizationID, "members", len(added), "by_key", c.keyID)
			out := litellmOrgMemberAdded{OrganizationID: req.OrganizationID, UpdatedUsers: []litellmUser{}, UpdatedOrganizationMemberships: []litellmOrganizationMembership{}}
			for i, u := range users {
				lu, err := s.litellmUserOf(ctx, who, u)
				if err != nil {
					return err
				}
				out.UpdatedUsers = append(out.UpdatedUsers, lu)
				out.UpdatedOrganizationMemberships = append(out.UpdatedOrganizationMemberships, s.litellmOrganizationMembershipOf(ctx, who, added[i], u.UserEmail))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
	decodeMember := func(r *http.Request) (litellmOrgMemberRequest, error) {
		var req litellmOrgMemberRequest
		if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
			return req, err
		}
		if req.OrganizationID == "" {
			return req, paramError("organization_id", "organization_id: required: the member's organization")
		}
		return req, nil
	}
	memberErrors := map[int]string{400: "organization_id missing, neither user_id nor user_email, or a bad field: the message names it", 403: scoped,
		404: "no organization of this key has the organization_id given, no user the user_id or user_email, or the user is not a member"}
	s.Handle(Route{Method: "PATCH", Path: "/organization/member_update", Summary: "LiteLLM's organization member update: changes a member's role or max_budget_in_organization (its spend in the organization is kept); an operator key or an org_admin member's virtual key (not on its own max_budget_in_organization)",
		Tags: tags, VirtualKeys: true, Request: litellmOrgMemberRequest{}, Response: litellmOrganizationMembership{}, Errors: memberErrors},
		func(w http.ResponseWriter, r *http.Request) error {
			fields, err := litellmBody(r)
			if err != nil {
				return err
			}
			var req litellmOrgMemberRequest
			if err := decodeExact(fieldsJSON(fields), &req, http.StatusBadRequest); err != nil {
				return err
			}
			if req.OrganizationID == "" {
				return paramError("organization_id", "organization_id: required: the member's organization")
			}
			if req.Role != nil {
				if err := organizationMembership.checkRole("role", *req.Role); err != nil {
					return err
				}
			}
			// null or absent: unchanged, as LiteLLM reads both (its clients send null defaults).
			budgetGiven := req.MaxBudgetInOrganization != nil
			bound, block, err := checkMaxBudgetInOrganization(req.MaxBudgetInOrganization)
			if err != nil {
				return err
			}
			ctx, who := r.Context(), owner(r)
			c, err := orgCallerOf(r)
			if err != nil {
				return err
			}
			if err := checkOrgCaller(ctx, s.cfg.Store, who, c, req.OrganizationID, "organization_id", true); err != nil {
				return err
			}
			m, u, err := organizationMembership.update(ctx, s.cfg.Store, who, req.OrganizationID, req.UserID, req.UserEmail,
				orgMemberUpdateCheck(ctx, who, c, req.OrganizationID, budgetGiven), func(m *organizationMember) {
					if req.Role != nil {
						m.Role, m.UpdatedAt = *req.Role, time.Now().UTC()
					}
					if budgetGiven {
						m.MaxBudgetInOrganization, m.BudgetBlock, m.UpdatedAt = bound, block, time.Now().UTC()
					}
				})
			if err != nil {
				return orgMemberNotFound(c, req.OrganizationID, req.UserID, req.UserEmail, err)
			}
			s.log.InfoContext(ctx, "organization member updated", "owner", who, "organization_id", m.OrganizationID, "user_id", m.UserID, "by_key", c.keyID)
			writeJSON(w, http.StatusOK, s.litellmOrganizationMembershipOf(ctx, who, m, u.UserEmail))
			return nil
		})
	s.Handle(Route{Method: "DELETE", Path: "/organization/member_delete", Summary: "LiteLLM's organization member delete: takes a user out of an organization (the user and its keys stay); an operator key or an org_admin member's virtual key",
		Tags: tags, VirtualKeys: true, Request: litellmOrgMemberRequest{}, Response: litellmOrganizationMembership{}, Errors: memberErrors},
		func(w http.ResponseWriter, r *http.Request) error {
			req, err := decodeMember(r)
			if err != nil {
				return err
			}
			if req.Role != nil {
				return paramError("role", "role: belongs to PATCH /organization/member_update")
			}
			if req.MaxBudgetInOrganization != nil {
				return paramError("max_budget_in_organization", "max_budget_in_organization: belongs to PATCH /organization/member_update")
			}
			ctx, who := r.Context(), owner(r)
			c, err := orgCallerOf(r)
			if err != nil {
				return err
			}
			if err := checkOrgCaller(ctx, s.cfg.Store, who, c, req.OrganizationID, "organization_id", true); err != nil {
				return err
			}
			var m organizationMember
			var u user
			// Described as it was, its spend too: read before the delete, whose transaction
			// reads the membership again and takes its account with it.
			err = s.cfg.Store.Update(ctx, func(tx store.Tx) error {
				var err error
				m, u, err = organizationMembership.member(ctx, tx, who, req.OrganizationID, req.UserID, req.UserEmail)
				return err
			})
			if err != nil {
				return orgMemberNotFound(c, req.OrganizationID, req.UserID, req.UserEmail, err)
			}
			out := s.litellmOrganizationMembershipOf(ctx, who, m, u.UserEmail)
			err = s.cfg.Store.Update(ctx, func(tx store.Tx) error {
				if err := checkOrgCaller(ctx, tx, who, c, req.OrganizationID, "organization_id", true); err != nil {
					return err // a role taken away since the check above
				}
				var err error
				if m, u, err = organizationMembership.member(ctx, tx, who, req.OrganizationID, req.UserID, req.UserEmail); err != nil {
					return err
				}
				return deleteOrganizationMember(ctx, tx, who, m.OrganizationID, m.UserID)
			})
			if err != nil {
				return orgMemberNotFound(c, req.OrganizationID, req.UserID, req.UserEmail, err)
			}
			s.log.InfoContext(ctx, "organization member deleted", "owner", who, "organization_id", m.OrganizationID, "user_id", m.UserID, "by_key", c.keyID)
			writeJSON(w, http.StatusOK, out)
			return nil
		})
}

// litellmOrganizationMembershipOf describes m (of a user with address email) in LiteLLM's
// fields, without its spend.
func litellmOrganizationMembershipOf(m organizationMember, email string) litellmOrganizationMembership {
	out := litellmOrganizationMembership{UserID: m.UserID, OrganizationID: m.OrganizationID, UserRole: m.Role, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
	if email != "" {
		out.UserEmail = &email
	}
	return out
}

// litellmOrganizationMembershipOf describes owner's membership m (of a user with address
// email) in LiteLLM's fields, with its account's spend and, when it has a
// max_budget_in_organization, its budget_id and litellm_budget_table as LiteLLM's.
func (s *Server) litellmOrganizationMembershipOf(ctx context.Context, owner string, m organizationMember, email string) litellmOrganizationMembership {
	out := litellmOrganizationMembershipOf(m, email)
	id := orgMemberBudgetID(owner, m.OrganizationID, m.UserID)
	if b, err := completions.LoadSharedBudget(ctx, s.cfg.Store, id); err == nil {
		out.Spend = b.Used(ctx).CostUSD
	} else if !errors.Is(err, store.ErrNotFound) {
		s.log.WarnContext(ctx, "reading an organization member's account", "organization_id", m.OrganizationID, "user_id", m.UserID, "err", err)
	}
	if mb := m.maxBudget(); mb != nil {
		out.BudgetID, out.BudgetTable = &id, &litellmMembershipBudget{MaxBudget: mb}
	}
	return out
}

// litellmOrganizationOf describes owner's organization o in LiteLLM's fields, with its
// account's spend, its teams (with theirs) and its members. What cannot be read is logged
// and left out.
func (s *Server) litellmOrganizationOf(ctx context.Context, owner string, o organization) litellmOrganization {
	return s.litellmOrganizationWith(ctx, owner, o, nil)
}

// litellmOrganizationWith is litellmOrganizationOf with owner's keys listed once for many
// organizations (ownerKeys, which lists them the first time it is called), not once each.
func (s *Server) litellmOrganizationWith(ctx context.Context, owner string, o organization, ownerKeys func() ([]virtualKey, error)) litellmOrganization {
	if ownerKeys == nil {
		ownerKeys = func() ([]virtualKey, error) { return s.listKeys(ctx, owner) }
	}
	out := litellmOrganization{OrganizationID: o.OrganizationID, OrganizationAlias: o.Alias, Metadata: o.Metadata, Models: o.Models, Blocked: o.Blocked,
		CreatedAt: o.CreatedAt, CreatedBy: o.CreatedBy, UpdatedAt: o.UpdatedAt, UpdatedBy: o.UpdatedBy,
		Teams: []litellmTeam{}, Members: []litellmOrganizationMembership{}, Keys: []string{}}
	if out.Metadata == nil {
		out.Metadata = map[string]any{}
	}
	if out.Models == nil {
		out.Models = []string{}
	}
	bt := &out.BudgetTable
	if o.BudgetID != "" {
		out.BudgetID, bt.BudgetID = &o.BudgetID, &o.BudgetID
	}
	switch {
	case o.Blocked && o.BudgetBlock:
		bt.MaxBudget = new(float64)
	case o.MaxBudgetUSD > 0:
		bt.MaxBudget = &o.MaxBudgetUSD
	}
	if o.SoftBudgetUSD > 0 {
		bt.SoftBudget = &o.SoftBudgetUSD
	}
	if o.TokensPerMinute > 0 {
		bt.TPMLimit = &o.TokensPerMinute
	}
	if o.RequestsPerMinute > 0 {
		bt.RPMLimit = &o.RequestsPerMinute
	}
	if o.BudgetDuration != "" {
		bt.BudgetDuration = &o.BudgetDuration
	}
	if b, err := completions.LoadSharedBudget(ctx, s.cfg.Store, organizationBudgetID(owner, o.OrganizationID)); err == nil {
		u := b.Used(ctx)
		out.Spend = u.CostUSD
		if d, err := parseBudgetDuration(o.BudgetDuration); err == nil && o.BudgetDuration != "" && !u.PeriodStart.IsZero() {
			reset := u.PeriodStart.Add(d)
			bt.BudgetResetAt = &reset
		}
	} else {
		s.log.WarnContext(ctx, "reading an organization's account", "organization_id", o.OrganizationID, "err", err)
	}
	teams, err := organizationTeams(ctx, s.cfg.Store, owner, o.OrganizationID)
	var keys []virtualKey
	if err == nil {
		keys, err = ownerKeys()
	}
	if err == nil {
		slices.SortStableFunc(teams, func(a, b team) int { return a.CreatedAt.Compare(b.CreatedAt) })
		for _, t := range teams {
			lt := litellmTeamOf(s.teamWithSpend(ctx, owner, t, keys))
			s.withMembers(ctx, owner, &lt)
			out.Teams = append(out.Teams, lt)
		}
		for _, k := range keys {
			if k.TeamID == "" && k.OrganizationID == o.OrganizationID {
				out.Keys = append(out.Keys, k.ID)
			}
		}
	}
	if err != nil {
		s.log.WarnContext(ctx, "reading an organization's teams and keys", "organization_id", o.OrganizationID, "err", err)
	}
	ms, err := organizationMembersOf(ctx, s.cfg.Store, owner, o.OrganizationID)
	if err != nil {
		s.log.WarnContext(ctx, "reading an organization's members", "organization_id", o.OrganizationID, "err", err)
	}
	for _, m := range ms {
		var email string
		if rec, err := store.GetJSON[storedUser](ctx, s.cfg.Store, store.Users, owner+"/"+m.UserID); err == nil {
			email = rec.UserEmail
		}
		out.Members = append(out.Members, s.litellmOrganizationMembershipOf(ctx, owner, m, email))
	}
	return out
}

// describeOrganizations describes the organizations ids of who, at most
// maxOrganizationsPerOwner of them; an unknown one is a 404 naming field.
func (s *Server) describeOrganizations(ctx context.Context, who string, ids []string, field string) ([]litellmOrganization, error) {
	if len(ids) > maxOrganizationsPerOwner {
		return nil, paramError(field, "%s: at most %d organizations at once, got %d", field, maxOrganizationsPerOwner, len(ids))
	}
	out := make([]litellmOrganization, 0, len(ids))
	keys := s.ownerKeysOnce(ctx, who)
	for _, id := range ids {
		rec, err := storedOrganizationOf(ctx, s.cfg.Store, who, id, field)
		if err != nil {
			return nil, err
		}
		out = append(out, s.litellmOrganizationWith(ctx, who, rec.organization, keys))
	}
	return out, nil
}

// ownerKeysOnce returns a function listing owner's keys (listKeys) the first time it is
// called and answering the same afterwards: for describing many organizations at once.
func (s *Server) ownerKeysOnce(ctx context.Context, owner string) func() ([]virtualKey, error) {
	return sync.OnceValues(func() ([]virtualKey, error) { return s.listKeys(ctx, owner) })
}

// organizationListed reports whether /organization/list shows o: LiteLLM's filters, org_id
// the exact organization_id and org_alias a case-insensitive part of organization_alias
// ("": no filter), and, for a virtual key, only an organization its user is a member of
// (in; nil for an operator key).
func organizationListed(o organization, orgID, orgAlias string, in map[string]string) bool {
	if orgID != "" && o.OrganizationID != orgID {
		return false
	}
	if orgAlias != "" && !strings.Contains(strings.ToLower(o.Alias), strings.ToLower(orgAlias)) {
		return false
	}
	if in != nil {
		if _, ok := in[o.OrganizationID]; !ok {
			return false
		}
	}
	return true
}

// orgMemberUpdateCheck is member_update's check of caller c, run in the update's
// transaction (membership.update): an org_admin's key is checked again there, so a role
// taken from its user since the check before the member was looked up refuses the update
// rather than being overwritten by it; and it may not set its own user's
// max_budget_in_organization (budgetGiven), a bound set over it. nil for an operator key.
func orgMemberUpdateCheck(ctx context.Context, owner string, c orgCaller, org string, budgetGiven bool) func(tx store.Tx, m organizationMember) error {
	if !c.virtual {
		return nil
	}
	return func(tx store.Tx, m organizationMember) error {
		if err := checkOrgCaller(ctx, tx, owner, c, org, "organization_id", true); err != nil {
			return err
		}
		if budgetGiven && m.UserID == c.userID {
			return forbiddenParam("max_budget_in_organization", "max_budget_in_organization: an org_admin's key may not set its own user's bound in organization %q (an operator key sets it)", org)
		}
		return nil
	}
}

// orgMemberNotFound answers err, a member_update's or member_delete's failure to find the
// member of org named by userID (else email), the same way for an org_admin's virtual key
// (c.virtual) whether no user has that id or address or the user is not a member, so the
// key cannot learn which users the server has; an operator key's answer is err as it is.
func orgMemberNotFound(c orgCaller, org, userID, email string, err error) error {
	var e *APIError
	if !c.virtual || !errors.As(err, &e) || e.Status != http.StatusNotFound || (e.Param != "user_id" && e.Param != "user_email") {
		return err
	}
	if userID != "" {
		return paramNotFound("user_id", "Member not found in organization for user_id=%s: no member of organization %s has this user_id", userID, org)
	}
	return paramNotFound("user_email", "Member not found in organization for user_email=%s: no member of organization %s has this user_email", email, org)
}
