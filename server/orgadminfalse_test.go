package server

import (
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestOrgAdminFieldsEmptyValues: an org_admin's virtual key may send a field outside its
// lists only with an empty value (LiteLLM's clients' defaults), which asks for nothing: a
// key's blocked false makes an unblocked key and send_invite_email false is passed over,
// while blocked true and send_invite_email true are 403s naming the field, and a 0
// max_parallel_requests is still the 400 it is for an operator key. Every bool field of
// /key/generate's and /team/new's bodies outside the lists is one whose false is the
// default of a new key or team, so a false never changes what is made.
func TestOrgAdminFieldsEmptyValues(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme"}`)
	if r := do(t, s, "POST", "/organization/member_add", testKey, `{"organization_id":"acme","member":{"user_id":"ann","role":"org_admin"}}`); r.status != http.StatusOK {
		t.Fatalf("member_add: %d %s", r.status, r.raw)
	}
	ann := litellmGenerate(t, s, `{"user_id":"ann"}`).Key
	generate := func(body string) reply { return do(t, s, "POST", "/key/generate", ann, body) }
	if r := generate(`{"organization_id":"acme","blocked":false,"send_invite_email":false,"spend":0,"permissions":{}}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"blocked":false`) {
		t.Fatalf("org_admin's key, empty values outside the list: %d %s", r.status, r.raw)
	}
	wantOrgRefusal(t, "blocked true", generate(`{"organization_id":"acme","blocked":true}`), http.StatusForbidden, "blocked", "may not set blocked")
	wantOrgRefusal(t, "send_invite_email true", generate(`{"organization_id":"acme","send_invite_email":true}`), http.StatusForbidden, "send_invite_email", "may not set send_invite_email")
	wantOrgRefusal(t, "max_parallel_requests 0", generate(`{"organization_id":"acme","max_parallel_requests":0}`), http.StatusBadRequest, "max_parallel_requests", "0 blocks")

	// false is the default of a new key's and team's blocked (the only bool fields outside the
	// lists): a new bool field must be checked for its false before it is added here.
	falseIsDefault := []string{"blocked"}
	for _, c := range []struct {
		what    string
		body    any
		allowed []string
	}{{"/key/generate", litellmKeyRequest{}, orgAdminKeyFields}, {"/team/new", litellmTeamRequest{}, orgAdminTeamFields}} {
		rt := reflect.TypeOf(c.body)
		for i := range rt.NumField() {
			f := rt.Field(i)
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if ft.Kind() == reflect.Bool && !slices.Contains(c.allowed, name) && !slices.Contains(falseIsDefault, name) {
				t.Errorf("%s: bool field %s passes an org_admin's false: check its false is a new record's default", c.what, name)
			}
		}
	}
}
