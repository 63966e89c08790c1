package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/switchyard-ai/switchyard/store"
)

// LiteLLM's organization roles mean something on the organization routes: a virtual key
// made for a user (its user_id) who is a member of an organization of the key's owner may
// read that organization (GET and POST /organization/info, and /organization/list, which
// lists the organizations its user is a member of, as LiteLLM's lists an internal user's),
// and, when the member's role is org_admin, add, change and remove the organization's
// members (/organization/member_add, member_update, member_delete: LiteLLM's "proxy_admin
// or org_admin of the organization") and make its teams and keys (orgadmincreate.go).
// Everything else about an organization — making, changing or deleting it, changing its
// teams and keys — stays with the operator keys (LiteLLM's proxy admins). internal_user and internal_user_viewer read only. An org_admin's key may
// not set its own user's max_budget_in_organization: that bound is set over it.

// orgCaller is the key calling an organization route.
type orgCaller struct {
	// virtual: a virtual key, acting through its user's memberships; otherwise an
	// operator key, whose organizations are all its own.
	virtual bool
	// keyID and userID are the virtual key's id and user_id ("" for none).
	keyID, userID string
}

// orgCallerOf reads who calls r. A blocked virtual key (its own block: /key/block or
// blocked, or its team's, organization's or user's) is refused here with a 403, as its
// model calls are refused: a block stops the key managing an organization too.
func orgCallerOf(r *http.Request) (orgCaller, error) {
	p, _ := PrincipalFrom(r.Context())
	vk, ok := p.Scope.(virtualKeyScope)
	if !ok {
		return orgCaller{}, nil
	}
	if vk.Budget != nil {
		if kind, name, blocked := vk.Budget.BlockedBy(); blocked && kind == "" {
			return orgCaller{}, Errorf(http.StatusForbidden, KindForbidden, "this virtual key is blocked: it may not call %s %s", r.Method, r.URL.Path)
		} else if blocked {
			return orgCaller{}, Errorf(http.StatusForbidden, KindForbidden, "this virtual key's %s %s is blocked: its keys may not call %s %s", kind, name, r.Method, r.URL.Path)
		}
	}
	return orgCaller{virtual: true, keyID: vk.KeyID, userID: vk.UserID}, nil
}

// orgAdminOnly words the refusal of a member whose role does not manage members.
const orgAdminOnly = "only an org_admin's key (or an operator key) may add, change or remove its members"

// checkOrgCaller answers nil when c may act on owner's organization org (admin: manage
// its members; otherwise read it), read through rd, and a 403 naming field otherwise:
// an operator key may act on every one of its organizations; a virtual key only on one
// its user is a member of, with the role org_admin to manage members. Membership is
// checked before the organization is looked up, so a virtual key learns nothing of
// organizations its user is not in.
func checkOrgCaller(ctx context.Context, rd store.Reader, owner string, c orgCaller, org, field string, admin bool) error {
	if !c.virtual {
		return nil
	}
	if c.userID == "" {
		return forbiddenParam(field, "%s: this virtual key has no user_id: only a key made for a member of organization %q (/organization/member_add) may call it", field, org)
	}
	m, ok, err := organizationMemberOf(ctx, rd, owner, org, c.userID)
	if err != nil {
		return err
	}
	if !ok {
		return forbiddenParam(field, "%s: user %s (this key's user_id) is not a member of organization %q", field, c.userID, org)
	}
	if admin && m.Role != "org_admin" {
		return forbiddenParam(field, "%s: user %s (this key's user_id) is %s in organization %q: %s", field, c.userID, m.Role, org, orgAdminOnly)
	}
	return nil
}

// userOrganizations returns the organizations of owner that user is a member of, read
// through rd, with the user's role in each.
func userOrganizations(ctx context.Context, rd store.Reader, owner, user string) (map[string]string, error) {
	es, err := rd.List(ctx, store.OrganizationMembers, store.ListOptions{Prefix: owner + "/"})
	if err != nil {
		return nil, fmt.Errorf("server: listing organization memberships: %w", err)
	}
	out := map[string]string{}
	for _, e := range es {
		// "<owner>/<organization_id>/<user_id>": organization ids hold no '/'.
		org, u, ok := strings.Cut(strings.TrimPrefix(e.Key, owner+"/"), "/")
		if !ok || u != user {
			continue
		}
		var m organizationMember
		if err := json.Unmarshal(e.Value, &m); err != nil {
			return nil, fmt.Errorf("server: organization membership %s: %w", e.Key, err)
		}
		out[org] = m.Role
	}
	return out, nil
}
