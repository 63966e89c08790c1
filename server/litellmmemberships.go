package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// LiteLLM's member routes of a team (/team/member_add, /team/member_update,
// /team/member_delete) and of an organization (/organization/member_add, …) work alike: a
// member is a user named by id or address with a role, in a container the request names;
// membership holds what they share, each route its own request and answer.

// membership is one kind of LiteLLM membership (M: a team's or an organization's) for the
// member routes.
type membership[M any] struct {
	// kind names the container in messages: team or organization.
	kind string
	// roles are the roles a member may have; rolesText lists them in messages.
	roles     []string
	rolesText string
	// updateRoute is the route that changes a member's role, named when one is added twice.
	updateRoute string
	// container answers 404 when owner has no container id, read through tx.
	container func(ctx context.Context, tx store.Tx, owner, id string) error
	// lookup reads user's membership of owner's container id (false: none).
	lookup func(ctx context.Context, rd store.Reader, owner, id, user string) (M, bool, error)
	// put stores a membership through tx.
	put func(ctx context.Context, tx store.Tx, owner string, m M) error
	// notMember is the 404 of a user who is not a member of container id.
	notMember func(user, id string) error
}

// membersOfBody reads member_add's member: one member or a list of them; missing is the
// message of a body without one.
func membersOfBody[T any](member json.RawMessage, missing string) ([]T, error) {
	var members []T
	raw := bytes.TrimSpace(member)
	switch {
	case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
		return nil, paramError("member", "%s", missing)
	case raw[0] == '[':
		if err := decodeExact(raw, &members, http.StatusBadRequest); err != nil {
			return nil, err
		}
	default:
		var m T
		if err := decodeExact(raw, &m, http.StatusBadRequest); err != nil {
			return nil, err
		}
		members = []T{m}
	}
	if len(members) == 0 {
		return nil, paramError("member", "member: give at least one member")
	}
	return members, nil
}

// checkRole answers 400 naming field when role is not one of k's.
func (k membership[M]) checkRole(field, role string) error {
	if !slices.Contains(k.roles, role) {
		return paramError(field, "%s: %s, got %q", field, k.rolesText, role)
	}
	return nil
}

// add puts members (each one's user made when none has its id or address) into owner's
// container id through tx, each made by newMember, and returns the memberships and users
// in members' order; a member already in the container is a 400 naming it.
func (k membership[M]) add(ctx context.Context, tx store.Tx, owner, id string, members []litellmMember, newMember func(u user, role string, now time.Time) M) ([]M, []user, error) {
	if err := k.container(ctx, tx, owner, id); err != nil {
		return nil, nil, err
	}
	var added []M
	var users []user
	now := time.Now().UTC()
	for i, m := range members {
		field := "member"
		if len(members) > 1 {
			field = fmt.Sprintf("member[%d]", i)
		}
		if err := k.checkRole(field+".role", m.Role); err != nil {
			return nil, nil, err
		}
		u, _, err := memberUser(ctx, tx, owner, field, m.UserID, m.UserEmail, true)
		if err != nil {
			return nil, nil, err
		}
		if _, in, err := k.lookup(ctx, tx, owner, id, u.UserID); err != nil {
			return nil, nil, err
		} else if in {
			return nil, nil, paramError(field, "%s: User=%s is already in %s %s: change its role with %s", field, u.UserID, k.kind, id, k.updateRoute)
		}
		nm := newMember(u, m.Role, now)
		if err := k.put(ctx, tx, owner, nm); err != nil {
			return nil, nil, err
		}
		added, users = append(added, nm), append(users, u)
	}
	return added, users, nil
}

// member reads the membership of owner's container id that a member_update or
// member_delete names (userID, else email), through tx: 404s for an unknown container or
// user, or a user who is not a member.
func (k membership[M]) member(ctx context.Context, tx store.Tx, owner, id, userID, email string) (M, user, error) {
	var none M
	if err := k.container(ctx, tx, owner, id); err != nil {
		return none, user{}, err
	}
	u, _, err := memberUser(ctx, tx, owner, "user_id", userID, email, false)
	if err != nil {
		return none, user{}, err
	}
	m, in, err := k.lookup(ctx, tx, owner, id, u.UserID)
	if err != nil {
		return m, u, err
	}
	if !in {
		return m, u, k.notMember(u.UserID, id)
	}
	return m, u, nil
}

// update changes the membership of owner's container id that userID (else email) names
// with change, and stores it, in one transaction of st; it returns the membership changed
// and its user. check, when not nil, is called in that transaction with the membership
// as it was, before change: an error it answers refuses the update (nothing stored), so
// what the caller's right rests on (an org_admin's role) is read with the change it allows.
func (k membership[M]) update(ctx context.Context, st *store.Store, owner, id, userID, email string, check func(tx store.Tx, m M) error, change func(m *M)) (M, user, error) {
	var m M
	var u user
	err := st.Update(ctx, func(tx store.Tx) error {
		var err error
		if m, u, err = k.member(ctx, tx, owner, id, userID, email); err != nil {
			return err
		}
		if check != nil {
			if err := check(tx, m); err != nil {
				return err
			}
		}
		change(&m)
		return k.put(ctx, tx, owner, m)
	})
	return m, u, err
}

// teamMembership is a team's membership kind (users.go's memberships).
var teamMembership = membership[teamMember]{
	kind: "team", roles: memberRoles, rolesText: "admin or user", updateRoute: "POST /team/member_update",
	container: func(ctx context.Context, tx store.Tx, owner, id string) error {
		_, err := storedTeamOf(ctx, tx, owner, id)
		return err
	},
	lookup: memberOf, put: putMember,
	notMember: func(user, id string) error {
		return paramNotFound("user_id", "User=%s is not a member of team %s", user, id)
	},
}

// organizationMembership is an organization's membership kind (organizations.go's).
var organizationMembership = membership[organizationMember]{
	kind: "organization", roles: organizationRoles, rolesText: "org_admin, internal_user or internal_user_viewer", updateRoute: "PATCH /organization/member_update",
	container: func(ctx context.Context, tx store.Tx, owner, id string) error {
		_, err := storedOrganizationOf(ctx, tx, owner, id, "organization_id")
		return err
	},
	lookup: organizationMemberOf, put: putOrganizationMember,
	notMember: func(user, id string) error {
		return paramNotFound("user_id", "Member not found in organization for user_id=%s: User=%s is not a member of organization %s", user, user, id)
	},
}
