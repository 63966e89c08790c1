package server

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// TestOrgMemberUpdateCheckInTransaction: /organization/member_update checks an org_admin
// key's role again inside the transaction that changes the member (as member_add and
// member_delete do): with its user's role taken away after the check before the member was
// read (here: before organizationMembership.update runs, which the handler's own check no
// longer sees), the update is refused with a 403 naming organization_id and the member is
// left as it was; with the role kept the same update is stored; an operator key has no check.
func TestOrgMemberUpdateCheckInTransaction(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme"}`)
	if r := do(t, s, "POST", "/organization/member_add", testKey, `{"organization_id":"acme","member":[{"user_id":"ann","role":"org_admin"},{"user_id":"bob","role":"internal_user"}]}`); r.status != http.StatusOK {
		t.Fatalf("member_add: %d %s", r.status, r.raw)
	}
	ctx, st, owner := context.Background(), s.cfg.Store, "key_"+hashPrefix(testKey)
	ann := orgCaller{virtual: true, keyID: "k-ann", userID: "ann"}
	promote := func(m *organizationMember) { m.Role = "org_admin" }
	bobRole := func() string {
		m, ok, err := organizationMemberOf(ctx, st, owner, "acme", "bob")
		if err != nil || !ok {
			t.Fatalf("bob's membership: %v %v", ok, err)
		}
		return m.Role
	}
	if orgMemberUpdateCheck(ctx, owner, orgCaller{}, "acme", true) != nil {
		t.Fatal("an operator key's member_update has a check")
	}

	// ann's role taken away, as a concurrent member_update by the operator would.
	err := st.Update(ctx, func(tx store.Tx) error {
		m, _, err := organizationMemberOf(ctx, tx, owner, "acme", "ann")
		if err != nil {
			return err
		}
		m.Role = "internal_user"
		return putOrganizationMember(ctx, tx, owner, m)
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = organizationMembership.update(ctx, st, owner, "acme", "bob", "", orgMemberUpdateCheck(ctx, owner, ann, "acme", false), promote)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusForbidden || ae.Param != "organization_id" {
		t.Fatalf("update by a demoted org_admin: %v, want a 403 naming organization_id", err)
	}
	if got := bobRole(); got != "internal_user" {
		t.Fatalf("bob's role after the refused update: %s, want internal_user", got)
	}

	// The role given back: the same update goes through.
	if _, _, err := organizationMembership.update(ctx, st, owner, "acme", "ann", "", nil, promote); err != nil {
		t.Fatal(err)
	}
	if _, _, err := organizationMembership.update(ctx, st, owner, "acme", "bob", "", orgMemberUpdateCheck(ctx, owner, ann, "acme", false), promote); err != nil {
		t.Fatalf("update by an org_admin: %v", err)
	}
	if got := bobRole(); got != "org_admin" {
		t.Fatalf("bob's role after the update: %s, want org_admin", got)
	}
	// Its own bound stays refused, now in the same transaction.
	_, _, err = organizationMembership.update(ctx, st, owner, "acme", "ann", "", orgMemberUpdateCheck(ctx, owner, ann, "acme", true), func(*organizationMember) {})
	if !errors.As(err, &ae) || ae.Status != http.StatusForbidden || ae.Param != "max_budget_in_organization" {
		t.Fatalf("an org_admin's own bound: %v, want a 403 naming max_budget_in_organization", err)
	}
}
