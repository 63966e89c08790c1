package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// Users are LiteLLM's internal users: people (or services) of an operator's organisation
// that virtual keys are made for. A user's max_budget (per budget_duration), models and
// tpm_limit are one account every key made with its user_id draws on, beside the key's own
// and its team's (completions.Budget.AddParent), so a spent user is refused on all its
// keys. A user belongs to teams through memberships (role admin or user), each with its
// own account inside the team (max_budget_in_team) that the user's keys of that team draw
// on too.
//
// Records: the user's description in store.Users under "<owner>/<user_id>" and its account
// in store.Budgets under userBudgetID; a membership in store.TeamMembers under
// "<owner>/<team_id>/<user_id>", the same one in store.UserTeams under
// "<owner>/<user_id>/<team_id>" (written and deleted together, in one transaction, so that
// a user's teams and a team's members are each one listing), and its account under
// memberBudgetID. A key names its user in its metadata's user_id (as LiteLLM's
// /key/generate user_id sets it) and in its shared-key scope document; a key naming a
// user_id no user has keeps it as a label, as before users existed. Users are the calling
// key's, as its virtual keys and teams are.

// Bounds of users.
const (
	// MaxUsersPerOwner bounds the users one key may have.
	MaxUsersPerOwner = 10000
	// maxUserIDLength bounds a user's id.
	maxUserIDLength = 128
	// maxUserLabelLength bounds a user's user_email and user_alias.
	maxUserLabelLength = 256
)

// The kinds of the accounts a key's budget sits inside beside its team's, as refusals
// name them (completions.BudgetExceededError.Kind).
const (
	userKind       = "user"
	teamMemberKind = "team_member"
)

// userRoles are LiteLLM's user roles: labels here (the operator key manages everything;
// a user's keys call the gateway only).
var userRoles = []string{"proxy_admin", "proxy_admin_viewer", "internal_user", "internal_user_viewer"}

// memberRoles are the roles of a team member.
var memberRoles = []string{"admin", "user"}

// user describes a user.
type user struct {
	UserID          string         `json:"user_id"`
	UserEmail       string         `json:"user_email,omitempty"`
	UserAlias       string         `json:"user_alias,omitempty"`
	UserRole        string         `json:"user_role"`
	Models          []string       `json:"models,omitempty"`
	MaxBudgetUSD    float64        `json:"max_budget_usd,omitempty"`
	BudgetBlock     bool           `json:"budget_block,omitempty"` // max_budget 0: a budget of nothing
	BudgetDuration  string         `json:"budget_duration,omitempty"`
	TokensPerMinute int64          `json:"tokens_per_minute,omitempty"`
	Metadata        map[string]any `json:"metadata,omitempty"`
	CreatedAt       time.Time      `json:"created_at"`
	UpdatedAt       time.Time      `json:"updated_at"`
	// BlockedOutright marks a BudgetBlock set by the native API's blocked true (an
	// operator's block), not by LiteLLM's max_budget 0: a native max_budget_usd given alone
	// lifts only the latter. Absent in records written before it: a budget block.
	BlockedOutright bool `json:"blocked_outright,omitempty"`
}

// storedUser is a user's record in store.Users.
type storedUser struct {
	user
	Owner string `json:"owner"`
}

// teamMember is a membership's record in store.TeamMembers.
type teamMember struct {
	TeamID string `json:"team_id"`
	UserID string `json:"user_id"`
	Role   string `json:"role"`
	// MaxBudgetInTeam bounds what the user's keys of the team spend together (0: no bound
	// unless BudgetBlock).
	MaxBudgetInTeam float64 `json:"max_budget_in_team,omitempty"`
	// BudgetBlock is max_budget_in_team 0: the user's keys of the team are refused.
	BudgetBlock bool      `json:"budget_block,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

// limits is the membership account's limits.
func (m teamMember) limits() completions.BudgetLimits {
	return completions.BudgetLimits{MaxCostUSD: m.MaxBudgetInTeam, Blocked: m.BudgetBlock}
}

// userBudgetID is the store.Budgets id of owner's user id.
func userBudgetID(owner, id string) string { return "user/" + owner + "/" + id }

// memberBudgetID is the store.Budgets id of user's membership of owner's team.
func memberBudgetID(owner, team, user string) string {
	return "member/" + owner + "/" + team + "/" + user
}

// limits is the user account's limits.
func (u user) limits() completions.BudgetLimits {
	l := completions.BudgetLimits{AllowedModels: slices.Clone(u.Models), MaxCostUSD: u.MaxBudgetUSD, TokensPerMinute: u.TokensPerMinute, Blocked: u.BudgetBlock}
	if d, err := parseBudgetDuration(u.BudgetDuration); err == nil && u.BudgetDuration != "" {
		l.ResetEvery = d
	}
	return l
}

// checkUserID refuses a user id that is empty, too long or holds anything but letters,
// digits and . _ - : @ + (it is part of store keys; an e-mail address is a good id), with
// status (400 on LiteLLM's routes, 422 on the native ones) naming field.
func checkUserID(field, id string, status int) error {
	invalid := func(format string, args ...any) error {
		e := Validation(status, format, args...)
		e.Param = field
		return e
	}
	if id == "" {
		return invalid("%s: must not be empty", field)
	}
	if len(id) > maxUserIDLength {
		return invalid("%s: at most %d characters, got %d", field, maxUserIDLength, len(id))
	}
	for _, c := range id {
		if !(c < unicode.MaxASCII && (unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("._-:@+", c))) {
			return invalid("%s: letters, digits and . _ - : @ + only, got %q", field, id)
		}
	}
	return nil
}

// checkNewUserID is checkUserID for the id of a user being made, which must also not be
// "." or "..": a URL path cleans those segments away, so /api/v1/users/{user_id} and
// /api/v1/teams/{team_id}/members/{user_id} could not reach the user (as end users' ids).
func checkNewUserID(field, id string, status int) error {
	if err := checkUserID(field, id, status); err != nil {
		return err
	}
	if e := unreachableIDProblem(field, id, "a user's", status); e != nil {
		return e
	}
	return nil
}

// newUserID makes a user id: LiteLLM makes a UUID; this is one (version 4).
func newUserID() (string, error) {
	id, err := uuid.NewRandom()
	if err != nil {
		return "", fmt.Errorf("server: making a user id: %w", err)
	}
	return id.String(), nil
}

// checkUser validates u's limits (as a key's: models the gateway routes to, budget,
// duration, metadata) and names LiteLLM's fields in a refusal.
func checkUser(g *completions.Gateway, u user, checkModels bool) error {
	return litellmTeamNames(checkUserLimits(g, u, checkModels))
}

// checkUserLimits is checkUser naming the native fields (max_budget_usd,
// tokens_per_minute, …) in a 422.
func checkUserLimits(g *completions.Gateway, u user, checkModels bool) error {
	_, err := checkKeyRequest(g, keyRequest{Models: u.Models, MaxBudgetUSD: u.MaxBudgetUSD, BudgetDuration: u.BudgetDuration,
		TokensPerMinute: u.TokensPerMinute, Metadata: u.Metadata}, time.Now(), checkModels)
	return err
}

// userTakenError is putNewUser's and putChangedUser's refusal of a user id or address
// another user of the key has already; each surface answers it in its words
// (litellmUserTaken, nativeUserTaken).
type userTakenError struct {
	// Field is user_id or user_email: what is taken.
	Field string
	// Value is the id or address asked for.
	Value string
	// Other is the user that has it.
	Other string
}

// Error says what is taken and whose it is.
func (e *userTakenError) Error() string {
	return fmt.Sprintf("%s %s is user %s's already", e.Field, e.Value, e.Other)
}

// litellmUserTaken answers a userTakenError in err as LiteLLM's routes do (400 naming the
// field); other errors pass unchanged.
func litellmUserTaken(err error) error {
	var te *userTakenError
	switch {
	case !errors.As(err, &te):
		return err
	case te.Field == "user_id":
		return paramError("user_id", "User with id %s already exists: pass a new user_id, or change this one with POST /user/update", te.Value)
	}
	return paramError(te.Field, "%s: %s is the address of user %s already", te.Field, te.Value, te.Other)
}

// storedUserOf reads owner's user id through rd, or answers 404 naming user_id.
func storedUserOf(ctx context.Context, rd store.Reader, owner, id string) (storedUser, error) {
	if id == "" {
		return storedUser{}, paramError("user_id", "user_id: required: the user's id")
	}
	return ownedRecord[storedUser](ctx, rd, store.Users, owner, id, "user", func() error {
		return paramNotFound("user_id", "User %s not found: no user of this key has this user_id (POST /api/v1/users or /user/new makes one)", id)
	})
}

// usersOf lists owner's users through rd, oldest first.
func usersOf(ctx context.Context, rd store.Reader, owner string) ([]user, error) {
	es, err := rd.List(ctx, store.Users, store.ListOptions{Prefix: owner + "/"})
	if err != nil {
		return nil, fmt.Errorf("server: listing users: %w", err)
	}
	out := make([]user, 0, len(es))
	for _, e := range es {
		var rec storedUser
		if err := json.Unmarshal(e.Value, &rec); err != nil {
			return nil, fmt.Errorf("server: user record %s: %w", e.Key, err)
		}
		out = append(out, rec.user)
	}
	slices.SortStableFunc(out, func(a, b user) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.UserID, b.UserID)
	})
	return out, nil
}

// userByEmail returns owner's user whose user_email is email, read through rd; ok false
// when none has it.
func userByEmail(ctx context.Context, rd store.Reader, owner, email string) (user, bool, error) {
	email = strings.TrimSpace(email) // as /user/new keeps it
	us, err := usersOf(ctx, rd, owner)
	if err != nil {
		return user{}, false, err
	}
	for _, u := range us {
		if email != "" && strings.EqualFold(u.UserEmail, email) {
			return u, true, nil
		}
	}
	return user{}, false, nil
}

// putNewUser stores u (owner's, checked) and its account through tx: a userTakenError
// when the id is taken or another user has the address, 409 past MaxUsersPerOwner.
func putNewUser(ctx context.Context, tx store.Tx, owner string, u user) error {
	if _, err := store.GetJSON[storedUser](ctx, tx, store.Users, owner+"/"+u.UserID); err == nil {
		return &userTakenError{Field: "user_id", Value: u.UserID, Other: u.UserID}
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	have, err := tx.List(ctx, store.Users, store.ListOptions{Prefix: owner + "/", Limit: MaxUsersPerOwner})
	if err != nil {
		return err
	}
	if len(have) >= MaxUsersPerOwner {
		return Errorf(http.StatusConflict, KindConflict, "this key has %d users, the most it may have: delete some first (DELETE /api/v1/users/{user_id} or POST /user/delete)", len(have))
	}
	if err := checkEmailFree(ctx, tx, owner, u); err != nil {
		return err
	}
	if err := completions.PutSharedBudget(ctx, tx, userBudgetID(owner, u.UserID), u.limits()); err != nil {
		return err
	}
	if err := nameUserInKeys(ctx, tx, owner, u.UserID); err != nil {
		return err
	}
	return store.PutJSON(ctx, tx, store.Users, owner+"/"+u.UserID, storedUser{user: u, Owner: owner})
}

// checkEmailFree answers a userTakenError when another user of owner than u has u's
// address, read through rd.
func checkEmailFree(ctx context.Context, rd store.Reader, owner string, u user) error {
	if u.UserEmail == "" {
		return nil
	}
	other, ok, err := userByEmail(ctx, rd, owner, u.UserEmail)
	if err != nil {
		return err
	}
	if ok && other.UserID != u.UserID {
		return &userTakenError{Field: "user_email", Value: u.UserEmail, Other: other.UserID}
	}
	return nil
}

// createUser stores owner's new user u (checked) with its account and, in the same
// transaction, its memberships of teams (role user): all or nothing. A team owner does not
// have is a 404 naming teams; a failure reading one is the store's error.
func (s *Server) createUser(ctx context.Context, owner string, u user, teams []string) error {
	err := s.cfg.Store.UpdateLocked(ctx, accountLocks(userBudgetID(owner, u.UserID)), func(tx store.Tx) error {
		if err := putNewUser(ctx, tx, owner, u); err != nil {
			return err
		}
		for _, team := range teams {
			// Only a team not found is the caller's 404; a store failure stays one (500).
			if _, err := ownedRecord[storedTeam](ctx, tx, store.Teams, owner, team, "team", func() error {
				return paramNotFound("teams", "teams: no team %q of this key (POST /api/v1/teams or /team/new makes one)", team)
			}); err != nil {
				return err
			}
			if err := putMember(ctx, tx, owner, teamMember{TeamID: team, UserID: u.UserID, Role: "user", CreatedAt: u.CreatedAt}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("server: creating user %s: %w", u.UserID, err)
	}
	s.log.InfoContext(ctx, "user created", "owner", owner, "user_id", u.UserID)
	return nil
}

// putChangedUser checks u (owner's user, changed; its limits as checkUserLimits with
// checkModels, its address free) and writes it and its account's limits through tx, its
// spend kept.
func putChangedUser(ctx context.Context, tx store.Tx, g *completions.Gateway, owner string, u *user, checkModels bool) error {
	if err := checkUserLimits(g, *u, checkModels); err != nil {
		return err
	}
	if err := checkEmailFree(ctx, tx, owner, *u); err != nil {
		return err
	}
	u.UpdatedAt = time.Now().UTC()
	if err := completions.SetSharedBudgetLimits(ctx, tx, userBudgetID(owner, u.UserID), u.limits()); err != nil {
		return err
	}
	return store.PutJSON(ctx, tx, store.Users, owner+"/"+u.UserID, storedUser{user: *u, Owner: owner})
}

// nameUserInKeys makes the shared-key records of owner's virtual keys whose metadata
// user_id is id name the user, through tx: a key made by a build before users has a scope
// document without it, and would not draw on the user's account that /user/info lists it
// under.
func nameUserInKeys(ctx context.Context, tx store.Tx, owner, id string) error {
	es, err := tx.List(ctx, store.VirtualKeys, store.ListOptions{Prefix: owner + "/"})
	if err != nil {
		return err
	}
	for _, e := range es {
		var rec storedVirtualKey
		if err := json.Unmarshal(e.Value, &rec); err != nil {
			return fmt.Errorf("key record %s: %w", e.Key, err)
		}
		if keyUserID(rec.virtualKey) != id {
			continue
		}
		sk, err := store.GetJSON[storedScopedKey](ctx, tx, store.ScopedKeys, rec.Hash)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		var doc keyScopeDoc
		if err := json.Unmarshal(sk.Scope, &doc); err != nil {
			return fmt.Errorf("scope of key %s: %w", rec.ID, err)
		}
		if doc.UserID == id {
			continue
		}
		doc.UserID = id
		if sk.Scope, err = json.Marshal(doc); err != nil {
			return err
		}
		if err := store.PutJSON(ctx, tx, store.ScopedKeys, rec.Hash, sk); err != nil {
			return err
		}
	}
	return nil
}

// memberOf reads user's membership of owner's team through rd; ok false when it has none.
func memberOf(ctx context.Context, rd store.Reader, owner, team, user string) (teamMember, bool, error) {
	m, err := store.GetJSON[teamMember](ctx, rd, store.TeamMembers, owner+"/"+team+"/"+user)
	if errors.Is(err, store.ErrNotFound) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("server: membership of %s in team %s: %w", user, team, err)
	}
	return m, true, nil
}

// putMember stores owner's membership m, its index record and its account (its limits
// replaced when it has one, its spend kept) through tx.
func putMember(ctx context.Context, tx store.Tx, owner string, m teamMember) error {
	if err := store.PutJSON(ctx, tx, store.TeamMembers, owner+"/"+m.TeamID+"/"+m.UserID, m); err != nil {
		return err
	}
	if err := tx.Put(ctx, store.UserTeams, owner+"/"+m.UserID+"/"+m.TeamID, []byte{}); err != nil {
		return err
	}
	id := memberBudgetID(owner, m.TeamID, m.UserID)
	if _, err := tx.Get(ctx, store.Budgets, id); errors.Is(err, store.ErrNotFound) {
		return completions.PutSharedBudget(ctx, tx, id, m.limits())
	} else if err != nil {
		return err
	}
	return completions.SetSharedBudgetLimits(ctx, tx, id, m.limits())
}

// deleteMember removes user's membership of owner's team, its index record and its
// account through tx; a missing one is not an error.
func deleteMember(ctx context.Context, tx store.Tx, owner, team, user string) error {
	if err := tx.Delete(ctx, store.TeamMembers, owner+"/"+team+"/"+user); err != nil {
		return err
	}
	if err := tx.Delete(ctx, store.UserTeams, owner+"/"+user+"/"+team); err != nil {
		return err
	}
	return tx.Delete(ctx, store.Budgets, memberBudgetID(owner, team, user))
}

// membersOf lists the memberships of owner's team through rd, by user id.
func membersOf(ctx context.Context, rd store.Reader, owner, team string) ([]teamMember, error) {
	es, err := rd.List(ctx, store.TeamMembers, store.ListOptions{Prefix: owner + "/" + team + "/"})
	if err != nil {
		return nil, fmt.Errorf("server: listing members of team %s: %w", team, err)
	}
	out := make([]teamMember, 0, len(es))
	for _, e := range es {
		var m teamMember
		if err := json.Unmarshal(e.Value, &m); err != nil {
			return nil, fmt.Errorf("server: membership record %s: %w", e.Key, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// teamsOfUser lists the ids of the teams owner's user is a member of, through rd.
func teamsOfUser(ctx context.Context, rd store.Reader, owner, user string) ([]string, error) {
	prefix := owner + "/" + user + "/"
	es, err := rd.List(ctx, store.UserTeams, store.ListOptions{Prefix: prefix})
	if err != nil {
		return nil, fmt.Errorf("server: listing teams of user %s: %w", user, err)
	}
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, strings.TrimPrefix(e.Key, prefix))
	}
	return out, nil
}

// deleteTeamMembers removes every membership of owner's team through tx (the team is
// being deleted; its users stay).
func deleteTeamMembers(ctx context.Context, tx store.Tx, owner, team string) error {
	ms, err := membersOf(ctx, tx, owner, team)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if err := deleteMember(ctx, tx, owner, team, m.UserID); err != nil {
			return err
		}
	}
	return nil
}

// deleteUsers deletes owner's users ids with their accounts, their memberships and the
// virtual keys made for them (metadata user_id: revoked at once on every replica, as
// LiteLLM's /user/delete deletes a user's keys) in one transaction: all or, when one is
// not found, none (404 naming it). It returns the ids of the keys revoked.
func (s *Server) deleteUsers(ctx context.Context, owner string, ids []string) ([]string, error) {
	return s.deleteUsersWith(ctx, owner, ids, true)
}

// deleteUsersWith is deleteUsers; with keys false the virtual keys naming the users are
// kept (taking back a user /user/new just made: keys made with its id before it existed
// are not its to revoke).
func (s *Server) deleteUsersWith(ctx context.Context, owner string, ids []string, keys bool) ([]string, error) {
	revoked := []string{}
	err := s.cfg.Store.UpdateLocked(ctx, accountLocks(eachAccount(ids, func(id string) string { return userBudgetID(owner, id) })...), func(tx store.Tx) error {
		revoked = revoked[:0]
		for _, id := range ids {
			if _, err := storedUserOf(ctx, tx, owner, id); err != nil {
				return err
			}
		}
		if keys {
			var err error
			if revoked, err = revokeKeysOf(ctx, tx, owner, func(vk virtualKey) bool {
				u := keyUserID(vk)
				return u != "" && slices.Contains(ids, u)
			}); err != nil {
				return err
			}
		}
		for _, id := range ids {
			teams, err := teamsOfUser(ctx, tx, owner, id)
			if err != nil {
				return err
			}
			for _, team := range teams {
				if err := deleteMember(ctx, tx, owner, team, id); err != nil {
					return err
				}
			}
			if err := deleteUserOrganizationMemberships(ctx, tx, owner, id); err != nil {
				return err
			}
			if err := tx.Delete(ctx, store.Budgets, userBudgetID(owner, id)); err != nil {
				return err
			}
			if err := tx.Delete(ctx, store.Users, owner+"/"+id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("server: deleting users %s: %w", strings.Join(ids, ", "), err)
	}
	s.log.InfoContext(ctx, "users deleted", "owner", owner, "user_ids", ids, "revoked_keys", revoked)
	return revoked, nil
}

// keyUserID is the user a virtual key was made for: its metadata's user_id ("" for none).
func keyUserID(vk virtualKey) string {
	u, _ := vk.Metadata["user_id"].(string)
	return u
}

// withKeyUser returns a copy of a key's metadata md with its user_id label set to userID
// ("" removes it). A key's user is kept there only, whichever route names it (LiteLLM's
// /key/generate and /key/update user_id, the native keys' user_id). With given (md and
// userID sent in one request) a userID other than the user md labels is refused: ok
// false, with md's label in other.
func withKeyUser(md map[string]any, userID string, given bool) (out map[string]any, other any, ok bool) {
	if prev, had := md["user_id"]; given && userID != "" && had && prev != userID {
		return md, prev, false
	}
	out = maps.Clone(md)
	if userID == "" {
		delete(out, "user_id")
		return out, nil, true
	}
	if out == nil {
		out = map[string]any{}
	}
	out["user_id"] = userID
	return out, nil, true
}

// keepKeyUser is the metadata md that replaces a key's labels, with the key kept its user
// prev's when md names no user_id: LiteLLM keeps a key's user_id apart from its metadata,
// and the native keys' user_id is a field of its own too.
func keepKeyUser(md map[string]any, prev string) map[string]any {
	if _, ok := md["user_id"]; ok || prev == "" {
		return md
	}
	out, _, _ := withKeyUser(md, prev, false)
	return out
}

// joinUser puts a virtual key's budget b inside the account of owner's user id and, when
// the key is of team (""), inside the user's membership of it, each when it exists: a
// key whose user_id names no user (a label, as before users existed) or whose user is not
// a member of its team draws on nothing more.
func joinUser(ctx context.Context, st *store.Store, owner, id, team string, b *completions.Budget) error {
	ub, err := completions.LoadSharedBudget(ctx, st, userBudgetID(owner, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	b.AddParent(ub, userKind, id)
	if team == "" {
		return nil
	}
	mb, err := completions.LoadSharedBudget(ctx, st, memberBudgetID(owner, team, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	b.AddParent(mb, teamMemberKind, id+" in Team="+team)
	return nil
}

// userRefusal is a user's or a membership's account's refusal in LiteLLM's words (which
// name the user).
func userRefusal(e *completions.BudgetExceededError) string {
	if e.Limits.Blocked {
		return "User=" + e.Name + " is blocked (its max_budget is 0). Update via `/user/update` (`/team/member_update` for a team member's max_budget_in_team, `/organization/member_update` for an organization member's max_budget_in_organization) if you're an admin."
	}
	msg := "Budget has been exceeded! User=" + e.Name + " Current cost: " + pythonFloat(e.Used.CostUSD) + ", Max budget: " + pythonFloat(e.Limits.MaxCostUSD)
	if !(e.Limits.MaxCostUSD > 0 && e.Used.CostUSD >= e.Limits.MaxCostUSD) {
		msg += " (" + strings.TrimPrefix(e.Reason.Error(), completions.ErrBudgetExceeded.Error()+": ") + ")"
	}
	return msg
}
