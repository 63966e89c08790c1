package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// postWith sends body to url with key and the extra headers, returning status and body.
func postWith(t *testing.T, url, key, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// customerInfo reads /customer/info of id.
func customerInfo(t *testing.T, s *Server, id string) litellmCustomer {
	t.Helper()
	r := do(t, s, "GET", "/customer/info?end_user_id="+id, testKey, "")
	var c litellmCustomer
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &c) != nil {
		t.Fatalf("/customer/info %s: %d %s", id, r.status, r.raw)
	}
	return c
}

// TestEndUserSpendOnEverySurface: an end user named by OpenAI's user, LiteLLM's headers,
// Anthropic's metadata.user_id and the Responses API's user is made on first sight and
// charged each request's cost, across the key's requests, next to the key's own charge.
func TestEndUserSpendOnEverySurface(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	k := litellmGenerate(t, s, `{"max_budget":10}`)
	chat := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]`
	for _, c := range []struct {
		path, body string
		headers    map[string]string
	}{
		{"/v1/chat/completions", chat + `,"user":"alice"}`, nil},
		{"/v1/chat/completions", chat + `}`, map[string]string{"x-litellm-end-user-id": "alice"}},
		{"/v1/chat/completions", chat + `,"user":"bob"}`, map[string]string{"x-litellm-customer-id": "alice"}},
		{"/v1/messages", `{"model":"openai/ok","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"metadata":{"user_id":"alice"}}`, nil},
		{"/v1/responses", `{"model":"openai/ok","input":"hi","user":"alice","store":false}`, nil},
	} {
		if st, b := postWith(t, hs.URL+c.path, k.Key, c.body, c.headers); st != http.StatusOK {
			t.Fatalf("%s %s: %d %s", c.path, c.body, st, b)
		}
	}
	c := customerInfo(t, s, "alice")
	if c.Spend < 0.0649 || c.Spend > 0.0651 || c.Blocked || c.Budget != nil {
		t.Fatalf("alice after five requests of $0.013: %+v", c)
	}
	r := do(t, s, "GET", "/api/v1/customers/alice", testKey, "")
	var e endUser
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &e) != nil || e.Spend.Requests != 5 || !e.FirstSeen {
		t.Fatalf("GET /api/v1/customers/alice: %d %s", r.status, r.raw)
	}
	if vk := keyInfoOf(t, s, testKey, "/api/v1/keys/"+k.Token); vk.Spend.Requests != 5 {
		t.Fatalf("the key's own account: %+v", vk.Spend)
	}
	// A request naming no end user makes none.
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
		t.Fatal(st, b)
	}
	r = do(t, s, "GET", "/customer/list", testKey, "")
	var list []litellmCustomer
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &list) != nil || len(list) != 1 {
		t.Fatalf("/customer/list: %d %s", r.status, r.raw)
	}
}

// TestEndUserBudgetAndBlock: an end user over its max budget is refused in LiteLLM's words
// (429) whatever key it comes through, taking nothing from the key; a blocked one with
// LiteLLM's 400; the operator's own key is held to end users' limits too.
func TestEndUserBudgetAndBlock(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"carol","max_budget":0.02,"budget_duration":"30d","alias":"Carol","budget_id":null,"object_permission":{}}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"max_budget":0.02`) || !strings.Contains(r.raw, `"alias":"Carol"`) {
		t.Fatalf("/customer/new: %d %s", r.status, r.raw)
	}
	r = do(t, s, "POST", "/customer/new", testKey, `{"user_id":"carol"}`)
	wantStatusMessage(t, r, http.StatusBadRequest, "Customer already exists, passed user_id=carol. Please pass a new user_id.")
	k1 := litellmGenerate(t, s, `{}`)
	k2 := litellmGenerate(t, s, `{}`)
	body := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}],"user":"carol"}`
	for _, key := range []string{k1.Key, k2.Key} {
		if st, b := postWith(t, hs.URL+"/v1/chat/completions", key, body, nil); st != http.StatusOK {
			t.Fatal(st, b)
		}
	}
	st, b := postWith(t, hs.URL+"/v1/chat/completions", k1.Key, body, nil)
	if st != http.StatusTooManyRequests || !strings.Contains(b, "ExceededBudget: End User=carol over budget. Spend=0.026") || !strings.HasSuffix(strings.SplitN(b, `"type"`, 2)[0], `Budget=0.02",`) {
		t.Fatalf("carol over budget: %d %s", st, b)
	}
	if vk := keyInfoOf(t, s, testKey, "/api/v1/keys/"+k1.Token); vk.Spend.Requests != 1 {
		t.Fatalf("the refused request took a call of the key: %+v", vk.Spend)
	}
	if st, _ := postWith(t, hs.URL+"/v1/chat/completions", testKey, body, nil); st != http.StatusTooManyRequests {
		t.Fatalf("the operator's key for carol over budget: %d", st)
	}
	// Raised, then blocked: LiteLLM's 400; /customer/update ignores blocked false.
	r = do(t, s, "POST", "/customer/update", testKey, `{"user_id":"carol","max_budget":1,"blocked":false,"alias":null}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"spend":0.026`) || !strings.Contains(r.raw, `"max_budget":1`) {
		t.Fatalf("/customer/update: %d %s", r.status, r.raw)
	}
	r = do(t, s, "POST", "/customer/block", testKey, `{"user_ids":["carol","dave"]}`)
	if r.status != http.StatusOK || strings.Count(r.raw, `"blocked":true`) != 2 {
		t.Fatalf("/customer/block: %d %s", r.status, r.raw)
	}
	st, b = postWith(t, hs.URL+"/v1/chat/completions", k2.Key, body, nil)
	if st != http.StatusBadRequest || !strings.Contains(b, "User blocked from making LLM API Calls. User=carol") {
		t.Fatalf("blocked carol: %d %s", st, b)
	}
	st, b = postWith(t, hs.URL+"/v1/messages", k2.Key, `{"model":"openai/ok","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, map[string]string{"X-Litellm-End-User-Id": "dave"})
	if st != http.StatusBadRequest || !strings.Contains(b, "User blocked from making LLM API Calls. User=dave") || !strings.Contains(b, `"type":"error"`) {
		t.Fatalf("blocked dave on Anthropic's route: %d %s", st, b)
	}
	if do(t, s, "POST", "/customer/update", testKey, `{"user_id":"carol","blocked":false}`); customerInfo(t, s, "carol").Blocked == false {
		t.Fatal("/customer/update unblocked carol: LiteLLM's ignores blocked false")
	}
	r = do(t, s, "POST", "/end_user/unblock", testKey, `{"user_ids":["carol"]}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"blocked_users":["dave"]`) {
		t.Fatalf("/end_user/unblock: %d %s", r.status, r.raw)
	}
	if st, b := postWith(t, hs.URL+"/v1/chat/completions", k2.Key, body, nil); st != http.StatusOK {
		t.Fatalf("carol unblocked with a raised budget: %d %s", st, b)
	}
}

// TestEndUserRoutesValidateAndDelete: the native and LiteLLM routes refuse bad input
// naming the field and keep what was stored; delete is all or none.
func TestEndUserRoutesValidateAndDelete(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	r := do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"erin","max_budget_usd":5,"models":["openai/ok"]}`)
	if r.status != http.StatusCreated {
		t.Fatalf("POST /api/v1/customers: %d %s", r.status, r.raw)
	}
	wantError(t, do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"erin"}`), http.StatusConflict, KindConflict, "end_user_id")
	wantError(t, do(t, s, "POST", "/api/v1/customers", testKey, `{"alias":"x"}`), http.StatusUnprocessableEntity, KindValidation, "end_user_id: required")
	wantError(t, do(t, s, "PATCH", "/api/v1/customers/erin", testKey, `{"max_budget_usd":-1}`), http.StatusUnprocessableEntity, KindValidation, "max_budget_usd")
	wantError(t, do(t, s, "PATCH", "/api/v1/customers/erin", testKey, `{"models":["nope/x"]}`), http.StatusUnprocessableEntity, KindValidation, "models[0]")
	wantStatusMessage(t, do(t, s, "POST", "/customer/new", testKey, `{"user_id":"f","default_model":"openai/ok"}`), http.StatusBadRequest, "default_model")
	wantStatusMessage(t, do(t, s, "POST", "/customer/update", testKey, `{"user_id":"erin","max_budget":-2}`), http.StatusBadRequest, "max_budget: must be")
	wantStatusMessage(t, do(t, s, "GET", "/customer/info?end_user_id=zed", testKey, ""), http.StatusNotFound, "End User Id=zed does not exist in db")
	wantStatusMessage(t, do(t, s, "POST", "/customer/update", testKey, `{"user_id":"zed","alias":"z"}`), http.StatusNotFound, "End User Id=zed does not exist in db")
	var e endUser
	r = do(t, s, "GET", "/api/v1/customers/erin", testKey, "")
	if json.Unmarshal([]byte(r.raw), &e) != nil || e.MaxBudgetUSD != 5 || len(e.Models) != 1 {
		t.Fatalf("erin after refused updates: %s", r.raw)
	}
	wantStatusMessage(t, do(t, s, "POST", "/customer/delete", testKey, `{"user_ids":["erin","zed"]}`), http.StatusNotFound, "End User Id(s)=zed do not exist in db")
	r = do(t, s, "POST", "/customer/delete", testKey, `{"user_ids":["erin"]}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"message":"Successfully deleted customers with ids: ['erin']"`) {
		t.Fatalf("/customer/delete: %d %s", r.status, r.raw)
	}
	wantError(t, do(t, s, "DELETE", "/api/v1/customers/erin", testKey, ""), http.StatusNotFound, KindNotFound, "end_user_id")
}

// TestEndUserAccountAcrossReplicas: two servers on one store meter one end user account.
func TestEndUserAccountAcrossReplicas(t *testing.T) {
	st := newTestStore(t)
	hsA, a := keysServer(t, st, 0)
	hsB, _ := keysServer(t, st, 0)
	if r := do(t, a, "POST", "/customer/new", testKey, `{"user_id":"gil","max_budget":0.01}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	k := litellmGenerate(t, a, `{}`)
	body := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}],"user":"gil"}`
	if code, b := postWith(t, hsB.URL+"/v1/chat/completions", k.Key, body, nil); code != http.StatusOK {
		t.Fatalf("through replica B: %d %s", code, b)
	}
	if code, b := postWith(t, hsA.URL+"/v1/chat/completions", k.Key, body, nil); code != http.StatusTooManyRequests || !strings.Contains(b, "End User=gil") {
		t.Fatalf("replica A after B spent gil's budget: %d %s", code, b)
	}
}

// wantStatusMessage fails unless r has status and its error message contains msg.
func wantStatusMessage(t *testing.T, r reply, status int, msg string) {
	t.Helper()
	if r.status != status || !strings.Contains(r.raw, msg) {
		t.Fatalf("got %d %s, want %d with %q", r.status, r.raw, status, msg)
	}
}

// TestEndUserRoutesInOpenAPI: the OpenAPI document lists the end user routes.
func TestEndUserRoutesInOpenAPI(t *testing.T) {
	hs, _ := keysServer(t, nil, 0)
	resp, err := http.Get(hs.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"/api/v1/customers": {"post", "get"}, "/api/v1/customers/{end_user_id}": {"get", "patch", "delete"}}
	for _, prefix := range []string{"/customer", "/end_user"} {
		for _, p := range []string{"/new", "/update", "/delete", "/block", "/unblock"} {
			want[prefix+p] = []string{"post"}
		}
		want[prefix+"/info"], want[prefix+"/list"] = []string{"get"}, []string{"get"}
	}
	for path, methods := range want {
		for _, m := range methods {
			if doc.Paths[path][m] == nil {
				t.Errorf("the OpenAPI document lacks %s %s", strings.ToUpper(m), path)
			}
		}
	}
}
