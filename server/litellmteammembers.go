package server

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// LiteLLM's /team/member_add, /team/member_delete and /team/member_update manage who is
// in a team (users.go's memberships): a member is a user (made when the user_id or
// user_email names none, as LiteLLM makes one) with a role, admin or user, and a
// max_budget_in_team that the user's keys of the team spend from together.

// litellmMember is a member of LiteLLM's member_add: a user by id or address, and a role.
type litellmMember struct {
	UserID    string `json:"user_id,omitempty" jsonschema:"description=The user's id (a user is made when none has it)"`
	UserEmail string `json:"user_email,omitempty" jsonschema:"description=The user's address\\, in place of user_id (a user is made when none has it)"`
	Role      string `json:"role" jsonschema:"enum=admin,enum=user,description=The member's role in the team"`
}

// litellmMemberAddRequest documents the body of POST /team/member_add.
type litellmMemberAddRequest struct {
	TeamID          string          `json:"team_id" jsonschema:"description=The team (required)"`
	Member          json.RawMessage `json:"member" jsonschema:"description=A member {user_id or user_email\\, role: admin or user}\\, or a list of them"`
	MaxBudgetInTeam *float64        `json:"max_budget_in_team,omitempty" jsonschema:"description=USD each member's keys of the team may spend together; 0 blocks them"`
}

// litellmMemberRequest documents the body of POST /team/member_delete and
// /team/member_update.
type litellmMemberRequest struct {
	TeamID          string   `json:"team_id" jsonschema:"description=The team (required)"`
	UserID          string   `json:"user_id,omitempty" jsonschema:"description=The member's user id (or user_email)"`
	UserEmail       string   `json:"user_email,omitempty" jsonschema:"description=The member's address\\, in place of user_id"`
	Role            *string  `json:"role,omitempty" jsonschema:"enum=admin,enum=user,description=/team/member_update: the new role"`
	MaxBudgetInTeam *float64 `json:"max_budget_in_team,omitempty" jsonschema:"description=/team/member_update: USD the member's keys of the team may spend together; 0 blocks them; absent or null leaves the bound as it is (PATCH /api/v1/teams/{team_id}/members/{user_id} max_budget_usd 0 removes it)"`
}

// litellmMemberWithRole is an entry of a team's members_with_roles.
type litellmMemberWithRole struct {
	UserID    string  `json:"user_id"`
	UserEmail *string `json:"user_email"`
	Role      string  `json:"role" jsonschema:"enum=admin,enum=user"`
}

// litellmTeamMembership is an entry of a team's team_memberships (LiteLLM's
// LiteLLM_TeamMembership).
type litellmTeamMembership struct {
	TeamID   string                  `json:"team_id"`
	UserID   string                  `json:"user_id"`
	BudgetID string                  `json:"budget_id" jsonschema:"description=The membership's account"`
	Spend    float64                 `json:"spend" jsonschema:"description=USD the member's keys of the team spent"`
	Budget   litellmMembershipBudget `json:"litellm_budget_table"`
}

// litellmMembershipBudget is a membership's LiteLLM_BudgetTable.
type litellmMembershipBudget struct {
	MaxBudget *float64 `json:"max_budget" jsonschema:"description=max_budget_in_team (of a team membership) or max_budget_in_organization (of an organization membership); null for no bound; 0 blocks"`
}

// litellmMemberAdded is the answer of POST /team/member_add: the team, and the users and
// memberships the request made or changed.
type litellmMemberAdded struct {
	litellmTeam
	UpdatedUsers           []litellmUser           `json:"updated_users"`
	UpdatedTeamMemberships []litellmTeamMembership `json:"updated_team_memberships"`
}

// litellmMemberUpdated is the answer of POST /team/member_update.
type litellmMemberUpdated struct {
	TeamID          string   `json:"team_id"`
	UserID          string   `json:"user_id"`
	UserEmail       *string  `json:"user_email"`
	Role            string   `json:"role"`
	MaxBudgetInTeam *float64 `json:"max_budget_in_team"`
}

// teamMembersView is what a team's answers show of its members.
type teamMembersView struct {
	withRoles   []litellmMemberWithRole
	memberships []litellmTeamMembership
}

// teamMembers reads owner's team's members for its answers: their roles and addresses,
// and their memberships' spend and limits.
func (s *Server) teamMembers(ctx context.Context, owner, team string) (teamMembersView, error) {
	v := teamMembersView{withRoles: []litellmMemberWithRole{}, memberships: []litellmTeamMembership{}}
	ms, err := membersOf(ctx, s.cfg.Store, owner, team)
	if err != nil {
		return v, err
	}
	for _, m := range ms {
		wr := litellmMemberWithRole{UserID: m.UserID, Role: m.Role}
		if rec, err := store.GetJSON[storedUser](ctx, s.cfg.Store, store.Users, owner+"/"+m.UserID); err == nil && rec.UserEmail != "" {
			wr.UserEmail = &rec.UserEmail
		}
		v.withRoles = append(v.withRoles, wr)
		v.memberships = append(v.memberships, s.litellmMembershipOf(ctx, owner, m))
	}
	return v, nil
}

// litellmMembershipOf describes owner's membership m with its spend.
func (s *Server) litellmMembershipOf(ctx context.Context, owner string, m teamMember) litellmTeamMembership {
	id := memberBudgetID(owner, m.TeamID, m.UserID)
	out := litellmTeamMembership{TeamID: m.TeamID, UserID: m.UserID, BudgetID: id, Budget: litellmMembershipBudget{MaxBudget: m.maxBudget()}}
	if b, err := completions.LoadSharedBudget(ctx, s.cfg.Store, id); err == nil {
		out.Spend = b.Used(ctx).CostUSD
	}
	return out
}

// maxBudget is m's max_budget_in_team in LiteLLM's terms: null for none, 0 for a block.
func (m teamMember) maxBudget() *float64 {
	switch {
	case m.BudgetBlock:
		return new(float64)
	case m.MaxBudgetInTeam > 0:
		v := m.MaxBudgetInTeam
		return &v
	}
	return nil
}

// checkMaxBudgetInTeam reads max_budget_in_team: the membership's bound and block.
func checkMaxBudgetInTeam(v *float64) (bound float64, block bool, err error) {
	if v == nil {
		return 0, false, nil
	}
	if math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0 {
		return 0, false, paramError("max_budget_in_team", "max_budget_in_team: must be a number of at least 0 (0 blocks the member's keys of the team), got %v", *v)
	}
	return *v, *v == 0, nil
}

// memberUser finds owner's user a member names (user_id, else user_email) through tx;
// with create, one that none is is made (role internal_user, no limits), as LiteLLM makes
// one. field names the member in failures.
func memberUser(ctx context.Context, tx store.Tx, owner, field, id, email string, create bool) (user, bool, error) {
	email = strings.TrimSpace(email) // as /user/new keeps it
	switch {
	case id == "" && email == "":
		return user{}, false, paramError(field, "%s: give user_id or user_email", field)
	case id != "":
		if err := checkUserID(field+".user_id", id, http.StatusBadRequest); err != nil {
			return user{}, false, err
		}
		rec, err := store.GetJSON[storedUser](ctx, tx, store.Users, owner+"/"+id)
		if err == nil {
			return rec.user, false, nil
		}
		if !create {
			_, err := storedUserOf(ctx, tx, owner, id)
			return user{}, false, err
		}
	default:
		u, ok, err := userByEmail(ctx, tx, owner, email)
		if err != nil || ok {
			return u, false, err
		}
		if !create {
			return user{}, false, paramNotFound("user_email", "User with user_email %s not found: no user of this key has this address", email)
		}
		if id, err = newUserID(); err != nil {
			return user{}, false, err
		}
	}
	if err := checkNewUserID(field+".user_id", id, http.StatusBadRequest); err != nil {
		return user{}, false, err
	}
	if len(email) > maxUserLabelLength {
		return user{}, false, paramError(field+".user_email", "%s.user_email: at most %d characters, got %d", field, maxUserLabelLength, len(email))
	}
	if email != "" { // named here, not as /user/new's user_email
		if other, ok, err := userByEmail(ctx, tx, owner, email); err != nil {
			return user{}, false, err
		} else if ok {
			return user{}, false, paramError(field+".user_email", "%s.user_email: %s is the address of user %s already", field, email, other.UserID)
		}
	}
	now := time.Now().UTC()
	u := user{UserID: id, UserEmail: email, UserRole: "internal_user", CreatedAt: now, UpdatedAt: now}
	return u, true, litellmUserTaken(putNewUser(ctx, tx, owner, u))
}

// litellmTeamMemberRoutes registers LiteLLM's team member routes.
func (s *Server) litellmTeamMemberRoutes() {
	tags := []string{"LiteLLM compatibility"}
	scoped := "the calling key is itself limited in scope (a virtual or job key)"
	s.Handle(Route{Method: "POST", Path: "/team/member_add", Summary: "LiteLLM's team member add: users join a team with a role (a user is made for an id or address no user has); max_budget_in_team bounds each one's keys of the team",
		Tags: tags, Request: litellmMemberAddRequest{}, Response: litellmMemberAdded{},
		Errors: map[int]string{400: "team_id or member missing, a member already in the team, or a bad field: the message names it", 403: scoped, 404: "no team of this key has the team_id given"}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req litellmMemberAddRequest
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
				return err
			}
			if req.TeamID == "" {
				return paramError("team_id", "team_id: required: the team to add members to")
			}
			members, err := membersOfBody[litellmMember](req.Member, `member: required: {"user_id" or "user_email", "role": "admin" or "user"}, or a list of them`)
			if err != nil {
				return err
			}
			bound, block, err := checkMaxBudgetInTeam(req.MaxBudgetInTeam)
			if err != nil {
				return err
			}
			ctx, who := r.Context(), owner(r)
			var added []teamMember
			var users []user
			err = s.cfg.Store.Update(ctx, func(tx store.Tx) error {
				var err error
				added, users, err = teamMembership.add(ctx, tx, who, req.TeamID, members, func(u user, role string, now time.Time) teamMember {
					return teamMember{TeamID: req.TeamID, UserID: u.UserID, Role: role, MaxBudgetInTeam: bound, BudgetBlock: block, CreatedAt: now}
				})
				return err
			})
			if err != nil {
				return err
			}
			s.log.InfoContext(ctx, "team members added", "owner", who, "team_id", req.TeamID, "members", len(added))
			t, err := s.teamInfo(ctx, who, req.TeamID)
			if err != nil {
				return err
			}
			out := litellmMemberAdded{litellmTeam: litellmTeamOf(*t), UpdatedUsers: []litellmUser{}, UpdatedTeamMemberships: []litellmTeamMembership{}}
			s.withMembers(ctx, who, &out.litellmTeam)
			for i, u := range users {
				lu, err := s.litellmUserOf(ctx, who, u)
				if err != nil {
					return err
				}
				out.UpdatedUsers = append(out.UpdatedUsers, lu)
				out.UpdatedTeamMemberships = append(out.UpdatedTeamMemberships, s.litellmMembershipOf(ctx, who, added[i]))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
	memberErrors := map[int]string{400: "team_id missing, neither user_id nor user_email, or a bad field: the message names it", 403: scoped,
		404: "no team of this key has the team_id given, no user the user_id or user_email, or the user is not a member"}
	decodeMember := func(r *http.Request) (litellmMemberRequest, error) {
		var req litellmMemberRequest
		if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
			return req, err
		}
		if req.TeamID == "" {
			return req, paramError("team_id", "team_id: required: the member's team")
		}
		return req, nil
	}
	s.Handle(Route{Method: "POST", Path: "/team/member_delete", Summary: "LiteLLM's team member delete: takes a user out of a team (the user and its keys stay; its keys of the team no longer draw on the membership)",
		Tags: tags, Request: litellmMemberRequest{}, Response: litellmTeam{}, Errors: memberErrors},
		func(w http.ResponseWriter, r *http.Request) error {
			req, err := decodeMember(r)
			if err != nil {
				return err
			}
			if req.Role != nil || req.MaxBudgetInTeam != nil {
				return paramError("role", "role and max_budget_in_team belong to /team/member_update")
			}
			ctx, who := r.Context(), owner(r)
			err = s.cfg.Store.Update(ctx, func(tx store.Tx) error {
				m, _, err := teamMembership.member(ctx, tx, who, req.TeamID, req.UserID, req.UserEmail)
				if err != nil {
					return err
				}
				return deleteMember(ctx, tx, who, m.TeamID, m.UserID)
			})
			if err != nil {
				return err
			}
			s.log.InfoContext(ctx, "team member deleted", "owner", who, "team_id", req.TeamID)
			t, err := s.teamInfo(ctx, who, req.TeamID)
			if err != nil {
				return err
			}
			out := litellmTeamOf(*t)
			s.withMembers(ctx, who, &out)
			writeJSON(w, http.StatusOK, out)
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/team/member_update", Summary: "LiteLLM's team member update: changes a member's role or max_budget_in_team (its spend in the team is kept)",
		Tags: tags, Request: litellmMemberRequest{}, Response: litellmMemberUpdated{}, Errors: memberErrors},
		func(w http.ResponseWriter, r *http.Request) error {
			fields, err := litellmBody(r)
			if err != nil {
				return err
			}
			var req litellmMemberRequest
			if err := decodeExact(fieldsJSON(fields), &req, http.StatusBadRequest); err != nil {
				return err
			}
			if req.TeamID == "" {
				return paramError("team_id", "team_id: required: the member's team")
			}
			if req.Role != nil {
				if err := teamMembership.checkRole("role", *req.Role); err != nil {
					return err
				}
			}
			// null or absent: unchanged, as LiteLLM reads both (its clients send null defaults).
			budgetGiven := req.MaxBudgetInTeam != nil
			bound, block, err := checkMaxBudgetInTeam(req.MaxBudgetInTeam)
			if err != nil {
				return err
			}
			ctx, who := r.Context(), owner(r)
			m, u, err := teamMembership.update(ctx, s.cfg.Store, who, req.TeamID, req.UserID, req.UserEmail, nil, func(m *teamMember) {
				if req.Role != nil {
					m.Role = *req.Role
				}
				if budgetGiven {
					m.MaxBudgetInTeam, m.BudgetBlock = bound, block
				}
			})
			if err != nil {
				return err
			}
			s.log.InfoContext(ctx, "team member updated", "owner", who, "team_id", m.TeamID, "user_id", m.UserID)
			out := litellmMemberUpdated{TeamID: m.TeamID, UserID: m.UserID, Role: m.Role, MaxBudgetInTeam: m.maxBudget()}
			if u.UserEmail != "" {
				out.UserEmail = &u.UserEmail
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
}

// fieldsJSON encodes fields back into a body.
func fieldsJSON(fields map[string]json.RawMessage) []byte {
	b, _ := json.Marshal(fields)
	return b
}

// withMembers fills t's members_with_roles from owner's memberships of it.
func (s *Server) withMembers(ctx context.Context, owner string, t *litellmTeam) teamMembersView {
	v, err := s.teamMembers(ctx, owner, t.TeamID)
	if err != nil {
		s.log.WarnContext(ctx, "reading a team's members", "team_id", t.TeamID, "err", err)
		v = teamMembersView{withRoles: []litellmMemberWithRole{}, memberships: []litellmTeamMembership{}}
	}
	t.MembersWithRoles = v.withRoles
	return v
}
