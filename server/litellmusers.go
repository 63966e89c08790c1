package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// LiteLLM's proxy manages its internal users through /user/new, /user/info, /user/update,
// /user/delete and /user/list; the routes here answer those requests for onboarding
// scripts and admin tools moved from it, onto the users of users.go. Failures name
// LiteLLM's fields in its error envelope; a LiteLLM field with no equivalent here is
// refused with a 400 naming it unless it asks for nothing.

// litellmUser is a user as LiteLLM's LiteLLM_UserTable describes one.
type litellmUser struct {
	UserID         string         `json:"user_id"`
	UserEmail      *string        `json:"user_email"`
	UserAlias      *string        `json:"user_alias"`
	UserRole       string         `json:"user_role" jsonschema:"description=proxy_admin or proxy_admin_viewer or internal_user or internal_user_viewer: a label here (only operator keys manage; a user's keys call the gateway)"`
	Teams          []string       `json:"teams" jsonschema:"description=The teams the user is a member of (POST /team/member_add)"`
	MaxBudget      *float64       `json:"max_budget" jsonschema:"description=USD all the user's keys together may spend (per budget_duration); null for no bound; 0 blocks them"`
	BudgetDuration *string        `json:"budget_duration"`
	BudgetResetAt  *time.Time     `json:"budget_reset_at"`
	Spend          float64        `json:"spend" jsonschema:"description=USD the user's keys spent (in the current period with budget_duration)"`
	Models         []string       `json:"models" jsonschema:"description=The models the user's keys may call; empty for every model"`
	TPMLimit       *int64         `json:"tpm_limit"`
	RPMLimit       *int           `json:"rpm_limit" jsonschema:"description=Always null (Switchyard has no per-user request rate: set rpm_limit on the keys)"`
	Metadata       map[string]any `json:"metadata"`
	CreatedAt      time.Time      `json:"created_at"`
	UpdatedAt      time.Time      `json:"updated_at"`
}

// litellmNewUser is the answer of POST /user/new: the user and, unless auto_create_key was
// false, the key made for it (shown once).
type litellmNewUser struct {
	litellmUser
	Key      *string    `json:"key" jsonschema:"description=A virtual key made for the user (its user_id set)\\, shown once; null with auto_create_key false"`
	Token    *string    `json:"token" jsonschema:"description=That key's id (vk_…)"`
	KeyAlias *string    `json:"key_alias"`
	Expires  *time.Time `json:"expires"`
}

// litellmUserInfo is the answer of GET /user/info.
// Without user_id (an operator key asking, as LiteLLM's proxy admin does) user_id and
// user_info are null and keys and teams are all the key's.
type litellmUserInfo struct {
	UserID   *string          `json:"user_id" jsonschema:"description=The user asked about; null without user_id"`
	UserInfo *litellmUser     `json:"user_info" jsonschema:"description=The user; null without user_id"`
	Keys     []litellmKeyInfo `json:"keys" jsonschema:"description=The virtual keys made for the user (without user_id: all this key's virtual keys)"`
	Teams    []litellmTeam    `json:"teams" jsonschema:"description=The teams the user is a member of (without user_id: all this key's teams)\\, with their members_with_roles"`
}

// litellmUserUpdated is the answer of POST /user/update.
type litellmUserUpdated struct {
	UserID string      `json:"user_id"`
	Data   litellmUser `json:"data"`
}

// litellmUserDeleteRequest is the body of POST /user/delete.
type litellmUserDeleteRequest struct {
	UserIDs []string `json:"user_ids" jsonschema:"description=The users to delete: all or none are found"`
}

// litellmUserDeletion is the answer of POST /user/delete.
type litellmUserDeletion struct {
	DeletedUsers []string `json:"deleted_users" jsonschema:"description=The user_ids given"`
	DeletedKeys  []string `json:"deleted_keys" jsonschema:"description=The tokens of the users' virtual keys: deleted with them as LiteLLM deletes a user's keys"`
}

// litellmUserList is the answer of GET /user/list.
type litellmUserList struct {
	Users      []litellmUser `json:"users" jsonschema:"description=The page's users\\, oldest first"`
	Total      int           `json:"total"`
	Page       int           `json:"page"`
	PageSize   int           `json:"page_size"`
	TotalPages int           `json:"total_pages"`
}

// litellmUserRequest documents LiteLLM's user request body (POST /user/new, and with
// user_id POST /user/update); other LiteLLM fields are refused when they ask for something.
type litellmUserRequest struct {
	UserID         string         `json:"user_id,omitempty" jsonschema:"description=The user's id (letters digits and . _ - : @ +\\, at most 128): on /user/new optional (a UUID is made); on /user/update the user to change (or user_email)"`
	UserEmail      *string        `json:"user_email,omitempty" jsonschema:"description=The user's e-mail address (one user each)"`
	UserAlias      *string        `json:"user_alias,omitempty" jsonschema:"description=A label for the user"`
	UserRole       *string        `json:"user_role,omitempty" jsonschema:"enum=proxy_admin,enum=proxy_admin_viewer,enum=internal_user,enum=internal_user_viewer,description=A label (default internal_user)"`
	MaxBudget      *float64       `json:"max_budget,omitempty" jsonschema:"description=USD all the user's keys together may spend (per budget_duration); 0 blocks them; null for no bound"`
	BudgetDuration *string        `json:"budget_duration,omitempty" jsonschema:"description=Period after which the user's spend starts again from zero (30d)"`
	Models         []string       `json:"models,omitempty" jsonschema:"description=The models the user's keys may call; empty for every model"`
	TPMLimit       *int64         `json:"tpm_limit,omitempty" jsonschema:"description=Tokens per minute of all the user's keys"`
	Metadata       map[string]any `json:"metadata,omitempty" jsonschema:"description=Labels kept with the user (at most 16 KiB of JSON)"`
	Teams          []string       `json:"teams,omitempty" jsonschema:"description=/user/new only: teams (POST /team/new) the user joins with role user"`
	AutoCreateKey  *bool          `json:"auto_create_key,omitempty" jsonschema:"description=/user/new only: false makes no key (default true: a key is made for the user and returned once)"`
	KeyAlias       *string        `json:"key_alias,omitempty" jsonschema:"description=/user/new only: the alias of the key made"`
	Duration       *string        `json:"duration,omitempty" jsonschema:"description=/user/new only: how long the key made works (30d)"`
}

// litellmUserPath reports the user paths answered in LiteLLM's error envelope.
func litellmUserPath(path string) bool { return strings.HasPrefix(path, "/user/") }

// litellmUserRoutes registers LiteLLM's user management routes.
func (s *Server) litellmUserRoutes(g *completions.Gateway) {
	tags := []string{"LiteLLM compatibility"}
	scoped := "the calling key is itself limited in scope (a virtual or job key)"
	notFound := "no user of this key has the user_id given"
	s.Handle(Route{Method: "POST", Path: "/user/new", Summary: "LiteLLM's user creation: a user whose budget and models bound every key made for it (user_id on /key/generate), with a key made for it unless auto_create_key is false",
		Tags: tags, Request: litellmUserRequest{}, Response: litellmNewUser{},
		Errors: map[int]string{400: "user_id or user_email taken, or a bad or unsupported field: the message names it", 403: scoped, 404: "a team in teams is not one of this key's",
			409: fmt.Sprintf("this key has %d users already", MaxUsersPerOwner)}},
		func(w http.ResponseWriter, r *http.Request) error {
			fields, err := litellmBody(r)
			if err != nil {
				return err
			}
			out, err := s.litellmNewUser(r.Context(), g, owner(r), fields)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/user/info", Summary: "LiteLLM's user info: a user with its spend, its keys and its teams; without user_id, as for LiteLLM's proxy admin, all this key's virtual keys and teams",
		Tags: tags, Response: litellmUserInfo{}, Query: []QueryParam{{Name: "user_id", Description: "The user's id (without it: user_id and user_info null, and all this key's keys and teams)"}},
		Errors: map[int]string{403: scoped, 404: notFound}},
		func(w http.ResponseWriter, r *http.Request) error {
			id := r.URL.Query().Get("user_id")
			ctx, who := r.Context(), owner(r)
			out := litellmUserInfo{Keys: []litellmKeyInfo{}, Teams: []litellmTeam{}}
			var teams []string
			if id != "" {
				rec, err := storedUserOf(ctx, s.cfg.Store, who, id)
				if err != nil {
					return err
				}
				lu, err := s.litellmUserOf(ctx, who, rec.user)
				if err != nil {
					return err
				}
				out.UserID, out.UserInfo, teams = &id, &lu, lu.Teams
			}
			keys, err := s.listKeys(ctx, who)
			if err != nil {
				return err
			}
			teamOrgs := s.organizationsOfTeams(ctx, who)
			for _, k := range keys {
				if id == "" || keyUserID(k) == id {
					out.Keys = append(out.Keys, litellmInfoOf(k, teamOrgs))
				}
			}
			var ts []team
			if id == "" {
				if ts, err = s.listTeams(ctx, who); err != nil {
					return err
				}
			}
			for _, tid := range teams {
				t, err := s.teamInfo(ctx, who, tid)
				if err != nil {
					continue // deleted meanwhile
				}
				ts = append(ts, *t)
			}
			for _, t := range ts {
				lt := litellmTeamOf(t)
				s.withMembers(ctx, who, &lt)
				out.Teams = append(out.Teams, lt)
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/user/update", Summary: "LiteLLM's user update: changes the fields given of a user (named by user_id or user_email); null removes a limit; its spend, keys and teams are kept",
		Tags: tags, Request: litellmUserRequest{}, Response: litellmUserUpdated{},
		Errors: map[int]string{400: "user_id and user_email missing, user_email taken, or a bad or unsupported field: the message names it", 403: scoped, 404: notFound}},
		func(w http.ResponseWriter, r *http.Request) error {
			fields, err := litellmBody(r)
			if err != nil {
				return err
			}
			u, err := s.litellmUpdateUser(r.Context(), g, owner(r), fields)
			if err != nil {
				return err
			}
			lu, err := s.litellmUserOf(r.Context(), owner(r), u)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, litellmUserUpdated{UserID: u.UserID, Data: lu})
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/user/delete", Summary: "LiteLLM's user deletion: deletes the users, their team memberships and their virtual keys (revoked at once on every replica); all or none",
		Tags: tags, Request: litellmUserDeleteRequest{}, Response: litellmUserDeletion{},
		Errors: map[int]string{400: "user_ids missing or empty", 403: scoped, 404: notFound}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req litellmUserDeleteRequest
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
				return err
			}
			if len(req.UserIDs) == 0 {
				return paramError("user_ids", "user_ids: give the ids of the users to delete")
			}
			if len(req.UserIDs) > MaxUsersPerOwner {
				return paramError("user_ids", "user_ids: at most %d users at once, got %d", MaxUsersPerOwner, len(req.UserIDs))
			}
			ids := slices.Compact(slices.Sorted(slices.Values(req.UserIDs)))
			keys, err := s.deleteUsers(r.Context(), owner(r), ids)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, litellmUserDeletion{DeletedUsers: req.UserIDs, DeletedKeys: keys})
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/user/list", Summary: "LiteLLM's user list: the users of this key, oldest first, a page at a time",
		Tags: tags, Response: litellmUserList{}, Query: []QueryParam{
			{Name: "page", Description: "Page number from 1 (default 1)", Type: "integer", Minimum: Bound(1), Maximum: Bound(1 << 30)},
			{Name: "page_size", Description: "Users per page, 1 to 100 (default 25)", Type: "integer", Minimum: Bound(1), Maximum: Bound(100)},
			{Name: "user_ids", Description: "Only these users: ids separated by commas"},
			{Name: "role", Description: "Only the users with this user_role", Enum: userRoles},
			{Name: "team", Description: "Only the members of this team"},
			{Name: "user_email", Description: "Only the users whose address contains this (any case), as LiteLLM's partial match"},
			{Name: "sort_by", Description: "Order the users by this field (default created_at)", Enum: userSortFields},
			{Name: "sort_order", Description: "asc (default) or desc", Enum: []string{"asc", "desc"}},
			{Name: "sso_user_ids", Description: "LiteLLM's filter by SSO ids: Switchyard's users have none, so a value matches no user"},
			{Name: "organization_ids", Description: "Only members of these organizations (comma-separated ids; /organization/member_add)"},
		}, Errors: map[int]string{400: "a bad parameter or an unknown one: the message names it", 403: scoped}},
		func(w http.ResponseWriter, r *http.Request) error {
			q := r.URL.Query()
			page, err := litellmQueryInt(q.Get("page"), "page", 1, 1, 1<<30)
			if err != nil {
				return err
			}
			size, err := litellmQueryInt(q.Get("page_size"), "page_size", 25, 1, 100)
			if err != nil {
				return err
			}
			for name, vs := range q {
				switch name {
				case "page", "page_size", "user_ids", "role", "team", "user_email", "sort_by", "sort_order", "sso_user_ids", "organization_ids":
					continue
				}
				if slices.ContainsFunc(vs, func(v string) bool { return v != "" }) {
					return paramError(name, "unknown query parameter %s: /user/list takes page, page_size, user_ids, role, team, user_email, sort_by, sort_order, sso_user_ids and organization_ids", name)
				}
			}
			role := q.Get("role")
			if role != "" && !slices.Contains(userRoles, role) {
				return paramError("role", "role: one of %s, got %q", strings.Join(userRoles, ", "), role)
			}
			sortBy := q.Get("sort_by")
			if sortBy != "" && !slices.Contains(userSortFields, sortBy) {
				return paramError("sort_by", "sort_by: one of %s, got %q", strings.Join(userSortFields, ", "), sortBy)
			}
			sortOrder := strings.ToLower(q.Get("sort_order"))
			if sortOrder != "" && sortOrder != "asc" && sortOrder != "desc" {
				return paramError("sort_order", "sort_order: asc or desc, got %q", q.Get("sort_order"))
			}
			ctx, who := r.Context(), owner(r)
			us, err := usersOf(ctx, s.cfg.Store, who)
			if err != nil {
				return err
			}
			var only []string
			if v := q.Get("user_ids"); v != "" {
				for _, id := range strings.Split(v, ",") {
					if id = strings.TrimSpace(id); id != "" {
						only = append(only, id)
					}
				}
			}
			// No user here has an SSO id: LiteLLM's filter by them matches none.
			nobody := strings.TrimSpace(q.Get("sso_user_ids")) != ""
			var inOrgs []string // members of the organizations named (nil: no filter)
			for _, org := range strings.Split(q.Get("organization_ids"), ",") {
				if org = strings.TrimSpace(org); org == "" {
					continue
				}
				ms, err := organizationMembersOf(ctx, s.cfg.Store, who, org)
				if err != nil {
					return err
				}
				if inOrgs == nil {
					inOrgs = []string{}
				}
				for _, m := range ms {
					inOrgs = append(inOrgs, m.UserID)
				}
			}
			var members []string
			if team := q.Get("team"); team != "" {
				ms, err := membersOf(ctx, s.cfg.Store, who, team)
				if err != nil {
					return err
				}
				members = []string{}
				for _, m := range ms {
					members = append(members, m.UserID)
				}
			}
			email := strings.ToLower(strings.TrimSpace(q.Get("user_email")))
			us = slices.DeleteFunc(us, func(u user) bool {
				return nobody || (only != nil && !slices.Contains(only, u.UserID)) || (role != "" && u.UserRole != role) ||
					(members != nil && !slices.Contains(members, u.UserID)) ||
					(inOrgs != nil && !slices.Contains(inOrgs, u.UserID)) || (email != "" && !strings.Contains(strings.ToLower(u.UserEmail), email))
			})
			var spend map[string]float64
			if sortBy == "spend" {
				spend = make(map[string]float64, len(us))
				for _, u := range us {
					spend[u.UserID] = s.userSpend(ctx, who, u.UserID).CostUSD
				}
			}
			sortUsers(us, sortBy, sortOrder == "desc", spend)
			out := litellmUserList{Users: []litellmUser{}, Total: len(us), Page: page, PageSize: size, TotalPages: (len(us) + size - 1) / size}
			for i := (page - 1) * size; i < len(us) && i < page*size; i++ {
				lu, err := s.litellmUserOf(ctx, who, us[i])
				if err != nil {
					return err
				}
				out.Users = append(out.Users, lu)
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
}

// litellmUserOf describes owner's user u in LiteLLM's fields, with its spend and teams.
func (s *Server) litellmUserOf(ctx context.Context, owner string, u user) (litellmUser, error) {
	out := litellmUser{UserID: u.UserID, UserRole: u.UserRole, Models: u.Models, Metadata: u.Metadata, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
	if out.Models == nil {
		out.Models = []string{}
	}
	if out.Metadata == nil {
		out.Metadata = map[string]any{}
	}
	if u.UserEmail != "" {
		out.UserEmail = &u.UserEmail
	}
	if u.UserAlias != "" {
		out.UserAlias = &u.UserAlias
	}
	if u.BudgetBlock {
		out.MaxBudget = new(float64)
	} else if u.MaxBudgetUSD > 0 {
		out.MaxBudget = &u.MaxBudgetUSD
	}
	if u.TokensPerMinute > 0 {
		out.TPMLimit = &u.TokensPerMinute
	}
	used := s.userSpend(ctx, owner, u.UserID)
	out.Spend = used.CostUSD
	if u.BudgetDuration != "" {
		out.BudgetDuration = &u.BudgetDuration
		if d, err := parseBudgetDuration(u.BudgetDuration); err == nil && !used.PeriodStart.IsZero() {
			reset := used.PeriodStart.Add(d)
			out.BudgetResetAt = &reset
		}
	}
	teams, err := teamsOfUser(ctx, s.cfg.Store, owner, u.UserID)
	if err != nil {
		return out, err
	}
	out.Teams = teams
	return out, nil
}

// userSpend is what owner's user id's keys spent (in the current period with a
// budget_duration): zero when its account cannot be read.
func (s *Server) userSpend(ctx context.Context, owner, id string) completions.BudgetUsage {
	if b, err := completions.LoadSharedBudget(ctx, s.cfg.Store, userBudgetID(owner, id)); err == nil {
		return b.Used(ctx)
	}
	return completions.BudgetUsage{}
}

// userSortFields are the fields /user/list sorts by (sort_by): LiteLLM's columns.
var userSortFields = []string{"user_id", "user_email", "user_alias", "user_role", "created_at", "spend"}

// sortUsers orders us by the field by names ("" for created_at), descending with desc;
// users without an address or alias come last either way, and ties go oldest first
// (then by user_id). spend holds each user's spend when by is spend.
func sortUsers(us []user, by string, desc bool, spend map[string]float64) {
	key := func(a, b user) (c int, missing bool) {
		text := func(x, y string) (int, bool) {
			switch {
			case x == "" && y == "":
				return 0, false
			case x == "" || y == "":
				return 0, true
			}
			return strings.Compare(strings.ToLower(x), strings.ToLower(y)), false
		}
		switch by {
		case "user_id":
			return strings.Compare(a.UserID, b.UserID), false
		case "user_email":
			return text(a.UserEmail, b.UserEmail)
		case "user_alias":
			return text(a.UserAlias, b.UserAlias)
		case "user_role":
			return strings.Compare(a.UserRole, b.UserRole), false
		case "spend":
			return cmp.Compare(spend[a.UserID], spend[b.UserID]), false
		}
		return a.CreatedAt.Compare(b.CreatedAt), false
	}
	slices.SortStableFunc(us, func(a, b user) int {
		c, missing := key(a, b)
		if missing { // the one with a value first
			if by == "user_email" && a.UserEmail == "" || by == "user_alias" && a.UserAlias == "" {
				return 1
			}
			return -1
		}
		if desc {
			c = -c
		}
		if c != 0 {
			return c
		}
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.UserID, b.UserID)
	})
}

// userFieldsFor are the fields /user/new and /user/update read; the others are refused
// when they ask for something.
var userFieldsFor = map[string]string{
	"user_id": "", "user_email": "", "user_alias": "", "user_role": "", "max_budget": "", "budget_duration": "",
	"models": "", "tpm_limit": "", "metadata": "", "teams": "new", "auto_create_key": "new", "key_alias": "new", "duration": "new",
}

// applyUserFields sets u's fields to LiteLLM's fields given (user_id and the /user/new
// only ones are the caller's). A null field is "not given" on /user/new; on /user/update
// it removes the limit or label. max_budget 0 is a budget of nothing (the user's keys are
// refused), as for keys and teams.
func applyUserFields(u *user, fields map[string]json.RawMessage, update bool) error {
	for name, raw := range fields {
		isNull := bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
		var text string
		isText := json.Unmarshal(raw, &text) == nil
		only, known := userFieldsFor[name]
		switch {
		case !known && emptyJSON(raw):
			// A LiteLLM field sent at its default (organization_id null, send_invite_email
			// false, …): it asks for nothing.
		case !known && name == "rpm_limit":
			return paramError(name, "rpm_limit: Switchyard has no per-user request rate: set rpm_limit on the user's keys (or a team's)")
		case !known:
			return paramError(name, "%s: Switchyard's users have no %s (a user is a budget, model list and tpm_limit shared by its keys; keep labels in metadata)", name, name)
		case only == "new" && update:
			if !emptyJSON(raw) {
				if name == "teams" {
					return paramError(name, "teams: a user's teams change through POST /team/member_add and /team/member_delete")
				}
				return paramError(name, "%s: only on /user/new", name)
			}
		case name == "user_id" || only == "new":
			// The caller's.
		case isNull && !update:
		case name == "user_email" || name == "user_alias":
			if !isNull && !isText {
				return paramError(name, "%s: must be a string, got %s", name, raw)
			}
			if len(text) > maxUserLabelLength {
				return paramError(name, "%s: at most %d characters, got %d", name, maxUserLabelLength, len(text))
			}
			if name == "user_email" {
				u.UserEmail = strings.TrimSpace(text)
			} else {
				u.UserAlias = text
			}
		case name == "user_role":
			if isNull {
				u.UserRole = "internal_user"
				continue
			}
			if !isText || !slices.Contains(userRoles, text) {
				return paramError(name, "user_role: one of %s, got %s", strings.Join(userRoles, ", "), raw)
			}
			u.UserRole = text
		case name == "max_budget":
			u.MaxBudgetUSD, u.BudgetBlock, u.BlockedOutright = 0, false, false
			if isNull {
				continue
			}
			var v float64
			if json.Unmarshal(raw, &v) != nil || math.IsNaN(v) || v < 0 {
				return paramError(name, "max_budget: must be a number of at least 0 (0 blocks the user's keys), got %s", raw)
			}
			u.MaxBudgetUSD, u.BudgetBlock, u.BlockedOutright = v, v == 0, false // LiteLLM's block is max_budget 0
		case name == "budget_duration":
			if isNull || (isText && (text == "" || strings.EqualFold(text, "none") || strings.EqualFold(text, "null"))) {
				u.BudgetDuration = ""
				continue
			}
			if !isText {
				return paramError(name, "budget_duration: must be a string such as 30d, got %s", raw)
			}
			u.BudgetDuration = text
		case name == "models":
			var v []string
			if !isNull && json.Unmarshal(raw, &v) != nil {
				return paramError(name, "models: must be a list of model names, got %s", raw)
			}
			u.Models = v
			if len(u.Models) == 0 || litellmAllModels(raw) {
				u.Models = nil
			}
		case name == "tpm_limit":
			if isNull {
				u.TokensPerMinute = 0
				continue
			}
			var v int64
			if json.Unmarshal(raw, &v) != nil || v < 1 {
				return paramError(name, "tpm_limit: must be a whole number of at least 1 (null for no bound), got %s", raw)
			}
			u.TokensPerMinute = v
		case name == "metadata":
			var v map[string]any
			if !isNull && (json.Unmarshal(raw, &v) != nil || v == nil) {
				return paramError(name, "metadata: must be a JSON object")
			}
			u.Metadata = v
			if len(u.Metadata) == 0 {
				u.Metadata = nil
			}
		}
	}
	return nil
}

// litellmNewUser creates owner's user from LiteLLM's /user/new fields, joins it to the
// teams given (role user) in the same transaction, and makes a key for it unless
// auto_create_key is false (a key that cannot be made takes the user back out).
func (s *Server) litellmNewUser(ctx context.Context, g *completions.Gateway, owner string, fields map[string]json.RawMessage) (*litellmNewUser, error) {
	now := time.Now().UTC()
	u := user{UserRole: "internal_user", CreatedAt: now, UpdatedAt: now}
	if err := applyUserFields(&u, fields, false); err != nil {
		return nil, err
	}
	if raw, ok := fields["user_id"]; ok && !emptyJSON(raw) {
		if json.Unmarshal(raw, &u.UserID) != nil {
			return nil, paramError("user_id", "user_id: must be a string, got %s", raw)
		}
		if err := checkNewUserID("user_id", u.UserID, http.StatusBadRequest); err != nil {
			return nil, err
		}
	} else {
		id, err := newUserID()
		if err != nil {
			return nil, err
		}
		u.UserID = id
	}
	var teams []string
	if raw, ok := fields["teams"]; ok && !emptyJSON(raw) {
		if json.Unmarshal(raw, &teams) != nil {
			return nil, paramError("teams", "teams: must be a list of team ids, got %s", raw)
		}
		teams = slices.Compact(slices.Sorted(slices.Values(teams)))
	}
	autoKey := true
	if raw, ok := fields["auto_create_key"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if json.Unmarshal(raw, &autoKey) != nil {
			return nil, paramError("auto_create_key", "auto_create_key: must be true or false, got %s", raw)
		}
	}
	if err := checkUser(g, u, true); err != nil {
		return nil, err
	}
	// The key's request, checked before anything is stored.
	var keyReq keyRequest
	if autoKey {
		keyFields := map[string]json.RawMessage{}
		for _, name := range []string{"key_alias", "duration"} {
			if raw, ok := fields[name]; ok {
				keyFields[name] = raw
			}
		}
		keyFields["user_id"], _ = json.Marshal(u.UserID)
		native, err := litellmToNative(keyFields, false, now)
		if err != nil {
			return nil, err
		}
		if err := decodeExact(native.Body, &keyReq, http.StatusUnprocessableEntity); err != nil {
			return nil, litellmNames(err)
		}
	}
	if err := s.createUser(ctx, owner, u, teams); err != nil {
		return nil, litellmUserTaken(err)
	}
	lu, err := s.litellmUserOf(ctx, owner, u)
	if err != nil {
		return nil, err
	}
	out := &litellmNewUser{litellmUser: lu}
	if !autoKey {
		return out, nil
	}
	vk, err := s.issueKey(ctx, g, owner, keyReq, "key_alias")
	if err != nil {
		// The user only: keys made with its id before it existed stay.
		if _, derr := s.deleteUsersWith(context.WithoutCancel(ctx), owner, []string{u.UserID}, false); derr != nil {
			err = fmt.Errorf("%w (and taking the user back out: %v)", err, derr)
		}
		return nil, litellmNames(err)
	}
	out.Key, out.Token, out.Expires = &vk.Key, &vk.ID, vk.ExpiresAt
	if vk.Name != "" {
		out.KeyAlias = &vk.Name
	}
	return out, nil
}

// litellmUpdateUser applies LiteLLM's /user/update fields to owner's user they name
// (user_id, else user_email): read, changed, checked and written with its account's limits
// in one transaction, so a failed update changes nothing and the user's spend is kept.
func (s *Server) litellmUpdateUser(ctx context.Context, g *completions.Gateway, owner string, fields map[string]json.RawMessage) (user, error) {
	var id, email string
	if raw, ok := fields["user_id"]; ok && !emptyJSON(raw) && json.Unmarshal(raw, &id) != nil {
		return user{}, paramError("user_id", "user_id: must be a string, got %s", raw)
	}
	if raw, ok := fields["user_email"]; ok && !emptyJSON(raw) && json.Unmarshal(raw, &email) != nil {
		return user{}, paramError("user_email", "user_email: must be a string, got %s", raw)
	}
	if id == "" && email == "" {
		return user{}, paramError("user_id", "user_id: required (or user_email): the user to change")
	}
	_, modelsGiven := fields["models"]
	var u user
	var locks []store.Ref // the user's account when named (one named by its email is found in the transaction)
	if id != "" {
		locks = accountLocks(userBudgetID(owner, id))
	}
	err := s.cfg.Store.UpdateLocked(ctx, locks, func(tx store.Tx) error {
		if id == "" {
			found, ok, err := userByEmail(ctx, tx, owner, email)
			if err != nil {
				return err
			}
			if !ok {
				return paramNotFound("user_email", "User with user_email %s not found: no user of this key has this address", email)
			}
			id = found.UserID
			delete(fields, "user_email") // it named the user
		}
		rec, err := storedUserOf(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		u = rec.user
		if err := applyUserFields(&u, fields, true); err != nil {
			return err
		}
		return putChangedUser(ctx, tx, g, owner, &u, modelsGiven)
	})
	err = litellmUserTaken(litellmTeamNames(err))
	if err != nil {
		return user{}, fmt.Errorf("server: updating user %s: %w", id, err)
	}
	s.log.InfoContext(ctx, "user updated", "owner", owner, "user_id", id)
	return u, nil
}
