package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// The native user routes (/api/v1/users and a team's /api/v1/teams/{team_id}/members)
// manage the users of users.go, the same records LiteLLM's /user and /team/member routes
// manage: a user made on one surface is read, changed and deleted on the other. They keep
// the conventions of the native teams and customers routes: 201 on create, PATCH with the
// fields to change, 422 naming the field, 409 for an id or address taken, listings paged
// with limit and cursor, and operator keys only (a virtual or job key is refused).

// userCursorKind marks the cursors of user listings (createdCursor).
const userCursorKind = "user"

// userRequest is the body of POST /api/v1/users (and, fields given, of PATCH).
type userRequest struct {
	UserID          string         `json:"user_id,omitempty" jsonschema:"description=The user's id (at most 128 letters or digits or . _ - : @ +); absent: one is made (a UUID); cannot be changed"`
	Email           string         `json:"email,omitempty" jsonschema:"description=The user's e-mail address (at most 256 characters; one user each): LiteLLM's user_email"`
	Alias           string         `json:"alias,omitempty" jsonschema:"description=A label for the user (at most 256 characters): LiteLLM's user_alias"`
	Role            string         `json:"role,omitempty" jsonschema:"enum=proxy_admin,enum=proxy_admin_viewer,enum=internal_user,enum=internal_user_viewer,description=LiteLLM's user_role: a label here (default internal_user; only operator keys manage\\, a user's keys call the gateway)"`
	Models          []string       `json:"models,omitempty" jsonschema:"description=The models the user's keys may call (as models of POST /api/v1/keys); empty allows every model"`
	MaxBudgetUSD    float64        `json:"max_budget_usd,omitempty" jsonschema:"description=USD all the user's keys together may spend (per budget_duration when set); 0 for no bound"`
	BudgetDuration  string         `json:"budget_duration,omitempty" jsonschema:"description=Period after which the user's spend starts again from zero (30d); empty for all time"`
	TokensPerMinute int64          `json:"tokens_per_minute,omitempty" jsonschema:"description=Tokens per minute all the user's keys' answers together may use; 0 for no bound"`
	Metadata        map[string]any `json:"metadata,omitempty" jsonschema:"description=Labels kept with the user (a JSON object of at most 16 KiB)"`
	Blocked         bool           `json:"blocked,omitempty" jsonschema:"description=true: every key of the user refuses every request until set false (LiteLLM's max_budget 0 blocks too: a PATCH giving max_budget_usd without blocked lifts that block as a max_budget on /user/update does\\, not one set with blocked true)"`
	Teams           []string       `json:"teams,omitempty" jsonschema:"description=On create only: teams of this key (POST /api/v1/teams) the user joins with role user; afterwards POST and DELETE /api/v1/teams/{team_id}/members"`
}

// nativeUser describes a user on the native routes.
type nativeUser struct {
	UserID          string         `json:"user_id"`
	Object          string         `json:"object" jsonschema:"description=Always user"`
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
	Spend           keySpend       `json:"spend" jsonschema:"description=What the user's keys together used (in the current period with budget_duration)"`
	Teams           []string       `json:"teams" jsonschema:"description=The ids of the teams the user is a member of"`
	KeyIDs          []string       `json:"key_ids" jsonschema:"description=The ids of the virtual keys made for the user (metadata user_id)"`
}

// userList is the answer of GET /api/v1/users.
type userList struct {
	Object string       `json:"object" jsonschema:"description=Always list"`
	Data   []nativeUser `json:"data" jsonschema:"description=The users of this key oldest first"`
	// NextCursor fetches the next page; absent on the last.
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"description=Pass as cursor for the next page; absent on the last page"`
}

// userDeletion is the answer of DELETE /api/v1/users/{user_id}.
type userDeletion struct {
	UserID      string   `json:"user_id"`
	Object      string   `json:"object" jsonschema:"description=Always user"`
	Deleted     bool     `json:"deleted" jsonschema:"description=Always true (a failed delete is an error)"`
	DeletedKeys []string `json:"deleted_keys" jsonschema:"description=The user's virtual keys: revoked with it (as LiteLLM's /user/delete deletes a user's keys)"`
}

// teamMemberRequest is the body of POST /api/v1/teams/{team_id}/members: user_id is
// required (the OpenAPI document says so; addTeamMember refuses it missing).
type teamMemberRequest struct {
	UserID       string  `json:"user_id" jsonschema:"required,description=The user (POST /api/v1/users) joining the team"`
	Role         string  `json:"role,omitempty" jsonschema:"enum=admin,enum=user,description=The member's role in the team (default user)"`
	MaxBudgetUSD float64 `json:"max_budget_usd,omitempty" jsonschema:"description=USD the user's keys of the team may spend together: LiteLLM's max_budget_in_team; 0 for no bound"`
	Blocked      bool    `json:"blocked,omitempty" jsonschema:"description=true: the user's keys of the team are refused (LiteLLM's max_budget_in_team 0)"`
}

// teamMemberUpdate is the body of PATCH /api/v1/teams/{team_id}/members/{user_id}: the
// fields of teamMemberRequest to change, none required (user_id, when given, must be the
// membership's). It converts to a teamMemberRequest (the same fields).
type teamMemberUpdate struct {
	UserID       string  `json:"user_id,omitempty" jsonschema:"description=The membership's user (the path's user_id): it cannot be changed"`
	Role         string  `json:"role,omitempty" jsonschema:"enum=admin,enum=user,description=The member's role in the team (empty or null: the default user)"`
	MaxBudgetUSD float64 `json:"max_budget_usd,omitempty" jsonschema:"description=USD the user's keys of the team may spend together: LiteLLM's max_budget_in_team; 0 for no bound"`
	Blocked      bool    `json:"blocked,omitempty" jsonschema:"description=true: the user's keys of the team are refused (LiteLLM's max_budget_in_team 0)"`
}

// nativeTeamMember describes a membership on the native routes.
type nativeTeamMember struct {
	TeamID       string    `json:"team_id"`
	UserID       string    `json:"user_id"`
	Object       string    `json:"object" jsonschema:"description=Always team_member"`
	Role         string    `json:"role" jsonschema:"enum=admin,enum=user"`
	MaxBudgetUSD float64   `json:"max_budget_usd,omitempty"`
	Blocked      bool      `json:"blocked,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	Spend        keySpend  `json:"spend" jsonschema:"description=What the user's keys of the team used"`
}

// teamMemberList is the answer of GET /api/v1/teams/{team_id}/members.
type teamMemberList struct {
	Object string             `json:"object" jsonschema:"description=Always list"`
	Data   []nativeTeamMember `json:"data" jsonschema:"description=The team's members by user_id"`
}

// teamMemberDeletion is the answer of DELETE /api/v1/teams/{team_id}/members/{user_id}.
type teamMemberDeletion struct {
	TeamID  string `json:"team_id"`
	UserID  string `json:"user_id"`
	Object  string `json:"object" jsonschema:"description=Always team_member"`
	Deleted bool   `json:"deleted" jsonschema:"description=Always true: the user left the team (the user and its keys stay)"`
}

// userRoutes registers the native user endpoints and a team's members; g checks the
// models a user names.
func (s *Server) userRoutes(g *completions.Gateway) {
	tags := []string{"Users"}
	scoped := "the calling key is itself limited in scope (a virtual or job key)"
	invalid := "validation error: the message names the field"
	notFound := "no user of this key has this id"
	s.Handle(Route{Method: "POST", Path: "/api/v1/users", Summary: "Create a user (LiteLLM's internal user): one budget and model list every virtual key made for it (metadata user_id) draws on",
		Tags: tags, Request: userRequest{}, Response: nativeUser{}, Status: http.StatusCreated,
		Errors: map[int]string{
			403: scoped,
			404: "a team in teams is not one of this key's",
			409: "a user of this key has this user_id or email already, or this key has " + fmt.Sprint(MaxUsersPerOwner) + " users",
			422: invalid,
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req userRequest
			if err := decodeJSON(r, &req, decodeOptions{}); err != nil {
				return err
			}
			u, err := s.createNativeUser(r.Context(), g, owner(r), req)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusCreated, u)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/api/v1/users", Summary: "The users of this key with their spend, teams and keys, oldest first, a page at a time",
		Tags: tags, Response: userList{}, Query: userListParams(),
		Errors: map[int]string{403: scoped, 422: "a bad listing parameter: the message names it"}},
		listing(s.userPage))
	s.Handle(Route{Method: "GET", Path: "/api/v1/users/{user_id}", Summary: "One user of this key with its spend, teams and keys",
		Tags: tags, Response: nativeUser{}, Errors: map[int]string{403: scoped, 404: notFound}},
		getOwned("user_id", func(ctx context.Context, owner, id string) (*nativeUser, error) {
			rec, err := storedUserOf(ctx, s.cfg.Store, owner, id)
			if err != nil {
				return nil, err
			}
			return s.nativeUserOf(ctx, owner, rec.user, nil)
		}))
	s.Handle(Route{Method: "PATCH", Path: "/api/v1/users/{user_id}", Summary: "Change a user's address, alias, role, limits or block (the fields given); its spend, teams and keys are kept",
		Tags: tags, Request: userRequest{}, Response: nativeUser{}, Errors: map[int]string{
			403: scoped,
			404: notFound,
			409: "another user of this key has this email",
			422: invalid,
		}},
		patchOwned("user_id", func(ctx context.Context, owner, id string) error {
			_, err := storedUserOf(ctx, s.cfg.Store, owner, id)
			return err
		}, func(ctx context.Context, owner, id string, body json.RawMessage) (*nativeUser, error) {
			return s.updateNativeUser(ctx, g, owner, id, body)
		}))
	s.Handle(Route{Method: "DELETE", Path: "/api/v1/users/{user_id}", Summary: "Delete a user, its team memberships and its virtual keys (revoked at once on every replica, as LiteLLM's /user/delete)",
		Tags: tags, Response: userDeletion{}, Errors: map[int]string{403: scoped, 404: notFound}},
		func(w http.ResponseWriter, r *http.Request) error {
			id := r.PathValue("user_id")
			keys, err := s.deleteUsers(r.Context(), owner(r), []string{id})
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, userDeletion{UserID: id, Object: "user", Deleted: true, DeletedKeys: keys})
			return nil
		})

	teamTags := []string{"Teams"}
	memberNotFound := "no team of this key has this team_id, or no user this user_id, or the user is not a member"
	s.Handle(Route{Method: "POST", Path: "/api/v1/teams/{team_id}/members", Summary: "Add a user to a team with a role (LiteLLM's /team/member_add); max_budget_usd bounds the user's keys of the team together",
		Tags: teamTags, Request: teamMemberRequest{}, Response: nativeTeamMember{}, Status: http.StatusCreated,
		Errors: map[int]string{
			403: scoped,
			404: "no team of this key has this team_id, or no user this user_id (POST /api/v1/users makes one)",
			409: "the user is a member of the team already (PATCH the membership)",
			422: invalid,
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req teamMemberRequest
			if err := decodeJSON(r, &req, decodeOptions{}); err != nil {
				return err
			}
			m, err := s.addTeamMember(r.Context(), owner(r), r.PathValue("team_id"), req)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusCreated, s.nativeMemberOf(r.Context(), owner(r), m))
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/api/v1/teams/{team_id}/members", Summary: "The members of a team with their roles and spend in it, by user_id",
		Tags: teamTags, Response: teamMemberList{}, Errors: map[int]string{403: scoped, 404: "no team of this key has this team_id"}},
		getOwned("team_id", func(ctx context.Context, owner, id string) (*teamMemberList, error) {
			if _, err := storedTeamOf(ctx, s.cfg.Store, owner, id); err != nil {
				return nil, err
			}
			ms, err := membersOf(ctx, s.cfg.Store, owner, id)
			if err != nil {
				return nil, err
			}
			out := &teamMemberList{Object: "list", Data: make([]nativeTeamMember, 0, len(ms))}
			for _, m := range ms {
				out.Data = append(out.Data, s.nativeMemberOf(ctx, owner, m))
			}
			return out, nil
		}))
	s.Handle(Route{Method: "PATCH", Path: "/api/v1/teams/{team_id}/members/{user_id}", Summary: "Change a member's role, max_budget_usd or block in the team (the fields given); its spend in the team is kept",
		Tags: teamTags, Request: teamMemberUpdate{}, Response: nativeTeamMember{}, Errors: map[int]string{400: "malformed JSON body", 403: scoped, 404: memberNotFound, 422: invalid}},
		func(w http.ResponseWriter, r *http.Request) error {
			var body json.RawMessage
			if err := decodeJSON(r, &body, decodeOptions{AllowUnknownFields: true}); err != nil {
				return err
			}
			m, err := s.updateTeamMember(r.Context(), owner(r), r.PathValue("team_id"), r.PathValue("user_id"), body)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, s.nativeMemberOf(r.Context(), owner(r), m))
			return nil
		})
	s.Handle(Route{Method: "DELETE", Path: "/api/v1/teams/{team_id}/members/{user_id}", Summary: "Take a user out of a team (LiteLLM's /team/member_delete): the user and its keys stay; its keys of the team no longer draw on the membership",
		Tags: teamTags, Response: teamMemberDeletion{}, Errors: map[int]string{403: scoped, 404: memberNotFound}},
		func(w http.ResponseWriter, r *http.Request) error {
			ctx, who, team, id := r.Context(), owner(r), r.PathValue("team_id"), r.PathValue("user_id")
			err := s.cfg.Store.Update(ctx, func(tx store.Tx) error {
				if _, err := storedMemberOf(ctx, tx, who, team, id); err != nil {
					return err
				}
				return deleteMember(ctx, tx, who, team, id)
			})
			if err != nil {
				return fmt.Errorf("server: taking user %s out of team %s: %w", id, team, err)
			}
			s.log.InfoContext(ctx, "team member deleted", "owner", who, "team_id", team, "user_id", id)
			writeJSON(w, http.StatusOK, teamMemberDeletion{TeamID: team, UserID: id, Object: "team_member", Deleted: true})
			return nil
		})
}

// userListParams documents the query parameters of GET /api/v1/users.
func userListParams() []QueryParam {
	ps := listParams("")
	ps[1].Description = "next_cursor of the previous page; absent: the oldest users"
	return ps
}

// nativeUserTaken answers a userTakenError in err as the native routes do (409 naming the
// field: email for LiteLLM's user_email); other errors pass unchanged.
func nativeUserTaken(err error) error {
	var te *userTakenError
	if !errors.As(err, &te) {
		return err
	}
	if te.Field == "user_id" {
		e := Errorf(http.StatusConflict, KindConflict, "user_id: this key has a user %q already", te.Value)
		e.Param = "user_id"
		return e
	}
	e := Errorf(http.StatusConflict, KindConflict, "email: %s is the address of user %s already", te.Value, te.Other)
	e.Param = "email"
	return e
}

// requestOf is u's fields as a request (PATCH starts from it).
func requestOf(u user) userRequest {
	return userRequest{UserID: u.UserID, Email: u.UserEmail, Alias: u.UserAlias, Role: u.UserRole, Models: u.Models,
		MaxBudgetUSD: u.MaxBudgetUSD, BudgetDuration: u.BudgetDuration, TokensPerMinute: u.TokensPerMinute,
		Metadata: u.Metadata, Blocked: u.BudgetBlock}
}

// applyTo checks req's labels (email, alias and role: its limits are putChangedUser's and
// checkUserLimits') and sets u's fields to req's.
func (req userRequest) applyTo(u *user) error {
	req.Email = strings.TrimSpace(req.Email) // as /user/new keeps it
	for _, f := range []struct{ name, v string }{{"email", req.Email}, {"alias", req.Alias}} {
		if len(f.v) > maxUserLabelLength {
			e := Validation(http.StatusUnprocessableEntity, "%s: at most %d characters, got %d", f.name, maxUserLabelLength, len(f.v))
			e.Param = f.name
			return e
		}
	}
	if req.Role == "" {
		req.Role = "internal_user"
	}
	if !slices.Contains(userRoles, req.Role) {
		e := Validation(http.StatusUnprocessableEntity, "role: one of %s, got %q", strings.Join(userRoles, ", "), req.Role)
		e.Param = "role"
		return e
	}
	u.UserEmail, u.UserAlias, u.UserRole, u.Models = req.Email, req.Alias, req.Role, req.Models
	u.MaxBudgetUSD, u.BudgetDuration, u.TokensPerMinute, u.Metadata, u.BudgetBlock = req.MaxBudgetUSD, req.BudgetDuration, req.TokensPerMinute, req.Metadata, req.Blocked
	if len(u.Models) == 0 {
		u.Models = nil
	}
	if len(u.Metadata) == 0 {
		u.Metadata = nil
	}
	return nil
}

// createNativeUser validates req and stores the user, its account and its memberships of
// req.Teams in one transaction (createUser, as /user/new).
func (s *Server) createNativeUser(ctx context.Context, g *completions.Gateway, owner string, req userRequest) (*nativeUser, error) {
	if req.UserID == "" {
		id, err := newUserID()
		if err != nil {
			return nil, err
		}
		req.UserID = id
	}
	if err := checkNewUserID("user_id", req.UserID, http.StatusUnprocessableEntity); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	u := user{UserID: req.UserID, CreatedAt: now, UpdatedAt: now}
	if err := req.applyTo(&u); err != nil {
		return nil, err
	}
	u.BlockedOutright = u.BudgetBlock // blocked true on create: an operator's block
	if err := checkUserLimits(g, u, true); err != nil {
		return nil, err
	}
	teams := slices.Compact(slices.Sorted(slices.Values(req.Teams)))
	if err := s.createUser(ctx, owner, u, teams); err != nil {
		return nil, nativeUserTaken(err)
	}
	return s.nativeUserOf(ctx, owner, u, nil)
}

// updateNativeUser applies body (the fields to change) to owner's user id: read, merged,
// checked and written with its account's limits in one transaction (putChangedUser, as
// /user/update), so a failed update changes nothing and the user's spend is kept.
// max_budget_usd given without blocked lifts a budget block (LiteLLM's max_budget 0), as
// max_budget does on /user/update; a block set with blocked true stays (BlockedOutright).
func (s *Server) updateNativeUser(ctx context.Context, g *completions.Gateway, owner, id string, body json.RawMessage) (*nativeUser, error) {
	var given map[string]json.RawMessage
	if json.Unmarshal(body, &given) != nil || given == nil {
		return nil, Validation(http.StatusUnprocessableEntity, "the body must be a JSON object of the fields to change")
	}
	_, modelsGiven := given["models"]
	_, metadataGiven := given["metadata"]
	_, budgetGiven := given["max_budget_usd"]
	_, blockedGiven := given["blocked"]
	var u user
	err := s.cfg.Store.UpdateLocked(ctx, accountLocks(userBudgetID(owner, id)), func(tx store.Tx) error {
		rec, err := storedUserOf(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		req := requestOf(rec.user)
		if budgetGiven && !blockedGiven && !rec.BlockedOutright {
			// A new budget replaces a budget block, as a max_budget on /user/update does
			// (applyUserFields): a user blocked by LiteLLM's max_budget 0 is let on. A
			// block an operator set with blocked true stays until blocked false.
			req.Blocked = false
		}
		if metadataGiven {
			req.Metadata = nil // replaced whole, not merged
		}
		if err := decodeExact(body, &req, http.StatusUnprocessableEntity); err != nil {
			return err
		}
		if req.UserID != rec.UserID {
			e := Validation(http.StatusUnprocessableEntity, "user_id: a user's id cannot be changed (it is %q)", rec.UserID)
			e.Param = "user_id"
			return e
		}
		if len(req.Teams) > 0 {
			e := Validation(http.StatusUnprocessableEntity, "teams: a user's teams change through POST and DELETE /api/v1/teams/{team_id}/members")
			e.Param = "teams"
			return e
		}
		u = rec.user
		if err := req.applyTo(&u); err != nil {
			return err
		}
		if blockedGiven {
			u.BlockedOutright = u.BudgetBlock // blocked said outright
		}
		return putChangedUser(ctx, tx, g, owner, &u, modelsGiven)
	})
	if err != nil {
		return nil, fmt.Errorf("server: updating user %s: %w", id, nativeUserTaken(err))
	}
	s.log.InfoContext(ctx, "user updated", "owner", owner, "user_id", id)
	return s.nativeUserOf(ctx, owner, u, nil)
}

// nativeUserOf describes owner's user u with its spend, teams and keys (of keys, owner's
// virtual keys; nil: read here).
func (s *Server) nativeUserOf(ctx context.Context, owner string, u user, keys []virtualKey) (*nativeUser, error) {
	out := &nativeUser{UserID: u.UserID, Object: "user", Email: u.UserEmail, Alias: u.UserAlias, Role: u.UserRole, Models: u.Models,
		MaxBudgetUSD: u.MaxBudgetUSD, BudgetDuration: u.BudgetDuration, TokensPerMinute: u.TokensPerMinute, Metadata: u.Metadata,
		Blocked: u.BudgetBlock, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt, KeyIDs: []string{}}
	used := s.userSpend(ctx, owner, u.UserID)
	out.Spend = keySpend{Requests: used.Calls, Tokens: used.Tokens, CostUSD: used.CostUSD}
	if !used.PeriodStart.IsZero() {
		out.Spend.PeriodStart = &used.PeriodStart
	}
	var err error
	if out.Teams, err = teamsOfUser(ctx, s.cfg.Store, owner, u.UserID); err != nil {
		return nil, err
	}
	if keys == nil {
		if keys, err = s.listKeys(ctx, owner); err != nil {
			return nil, err
		}
	}
	for _, k := range keys {
		if keyUserID(k) == u.UserID {
			out.KeyIDs = append(out.KeyIDs, k.ID)
		}
	}
	return out, nil
}

// userPage returns one page of owner's users, oldest first, with their spend, teams and
// keys: those created in f's window after f.Cursor, at most f.Limit
// (store.DefaultPageLimit when 0), and the cursor of the next page (none on the last).
func (s *Server) userPage(ctx context.Context, owner string, f store.ListFilter) (userList, error) {
	if err := checkCreatedFilter(f, "users"); err != nil {
		return userList{}, err
	}
	all, err := usersOf(ctx, s.cfg.Store, owner)
	if err != nil {
		return userList{}, err
	}
	page, next, err := createdPage(f, userCursorKind, all, func(u user) (time.Time, string) { return u.CreatedAt, u.UserID })
	if err != nil {
		return userList{}, err
	}
	keys, err := s.listKeys(ctx, owner)
	if err != nil {
		return userList{}, err
	}
	out := userList{Object: "list", Data: make([]nativeUser, 0, len(page)), NextCursor: next}
	for _, u := range page {
		nu, err := s.nativeUserOf(ctx, owner, u, keys)
		if err != nil {
			return userList{}, err
		}
		out.Data = append(out.Data, *nu)
	}
	return out, nil
}

// storedMemberOf reads user's membership of owner's team through rd: 404 naming team_id
// for a team the key does not have, user_id for a user it does not have or one not in
// the team.
func storedMemberOf(ctx context.Context, rd store.Reader, owner, team, user string) (teamMember, error) {
	if _, err := storedTeamOf(ctx, rd, owner, team); err != nil {
		return teamMember{}, err
	}
	if _, err := storedUserOf(ctx, rd, owner, user); err != nil {
		return teamMember{}, err
	}
	m, in, err := memberOf(ctx, rd, owner, team, user)
	if err != nil {
		return m, err
	}
	if !in {
		return m, paramNotFound("user_id", "user_id: user %s is not a member of team %s (POST /api/v1/teams/%s/members adds it)", user, team, team)
	}
	return m, nil
}

// applyTo checks req's role (empty or null: user) and budget and sets m's to them.
func (req teamMemberRequest) applyTo(m *teamMember) error {
	if req.Role == "" {
		req.Role = "user"
	}
	if !slices.Contains(memberRoles, req.Role) {
		e := Validation(http.StatusUnprocessableEntity, "role: admin or user, got %q", req.Role)
		e.Param = "role"
		return e
	}
	if !(req.MaxBudgetUSD >= 0) {
		e := Validation(http.StatusUnprocessableEntity, "max_budget_usd: must be a number of at least 0 (0 for no bound), got %v", req.MaxBudgetUSD)
		e.Param = "max_budget_usd"
		return e
	}
	m.Role, m.MaxBudgetInTeam, m.BudgetBlock = req.Role, req.MaxBudgetUSD, req.Blocked
	return nil
}

// addTeamMember puts owner's user req.UserID in owner's team with req's role (default
// user) and budget in one transaction (putMember, as /team/member_add): 404 for a team or
// user the key does not have, 409 for a member already.
func (s *Server) addTeamMember(ctx context.Context, owner, team string, req teamMemberRequest) (teamMember, error) {
	if req.UserID == "" {
		e := Validation(http.StatusUnprocessableEntity, "user_id: required: the user joining the team")
		e.Param = "user_id"
		return teamMember{}, e
	}
	m := teamMember{TeamID: team, UserID: req.UserID, CreatedAt: time.Now().UTC()}
	if err := req.applyTo(&m); err != nil {
		return m, err
	}
	err := s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		if _, err := storedTeamOf(ctx, tx, owner, team); err != nil {
			return err
		}
		if _, err := storedUserOf(ctx, tx, owner, req.UserID); err != nil {
			return err
		}
		if _, in, err := memberOf(ctx, tx, owner, team, req.UserID); err != nil {
			return err
		} else if in {
			e := Errorf(http.StatusConflict, KindConflict, "user_id: user %s is a member of team %s already (PATCH /api/v1/teams/%s/members/%s changes its role or budget)", req.UserID, team, team, req.UserID)
			e.Param = "user_id"
			return e
		}
		return putMember(ctx, tx, owner, m)
	})
	if err != nil {
		return m, fmt.Errorf("server: adding user %s to team %s: %w", req.UserID, team, err)
	}
	s.log.InfoContext(ctx, "team member added", "owner", owner, "team_id", team, "user_id", req.UserID)
	return m, nil
}

// updateTeamMember applies body (the fields to change) to user's membership of owner's
// team in one transaction (putMember, as /team/member_update), its spend kept.
func (s *Server) updateTeamMember(ctx context.Context, owner, team, user string, body json.RawMessage) (teamMember, error) {
	var given map[string]json.RawMessage
	if json.Unmarshal(body, &given) != nil || given == nil {
		return teamMember{}, Validation(http.StatusUnprocessableEntity, "the body must be a JSON object of the fields to change")
	}
	var m teamMember
	err := s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		var err error
		if m, err = storedMemberOf(ctx, tx, owner, team, user); err != nil {
			return err
		}
		upd := teamMemberUpdate{UserID: user, Role: m.Role, MaxBudgetUSD: m.MaxBudgetInTeam, Blocked: m.BudgetBlock}
		if err := decodeExact(body, &upd, http.StatusUnprocessableEntity); err != nil {
			return err
		}
		req := teamMemberRequest(upd)
		if req.UserID != user {
			e := Validation(http.StatusUnprocessableEntity, "user_id: a membership's user cannot be changed (it is %q)", user)
			e.Param = "user_id"
			return e
		}
		if err := req.applyTo(&m); err != nil {
			return err
		}
		return putMember(ctx, tx, owner, m)
	})
	if err != nil {
		return m, fmt.Errorf("server: updating user %s in team %s: %w", user, team, err)
	}
	s.log.InfoContext(ctx, "team member updated", "owner", owner, "team_id", team, "user_id", user)
	return m, nil
}

// nativeMemberOf describes owner's membership m with its spend.
func (s *Server) nativeMemberOf(ctx context.Context, owner string, m teamMember) nativeTeamMember {
	out := nativeTeamMember{TeamID: m.TeamID, UserID: m.UserID, Object: "team_member", Role: m.Role, MaxBudgetUSD: m.MaxBudgetInTeam,
		Blocked: m.BudgetBlock, CreatedAt: m.CreatedAt}
	if b, err := completions.LoadSharedBudget(ctx, s.cfg.Store, memberBudgetID(owner, m.TeamID, m.UserID)); err == nil {
		u := b.Used(ctx)
		out.Spend = keySpend{Requests: u.Calls, Tokens: u.Tokens, CostUSD: u.CostUSD}
	}
	return out
}
