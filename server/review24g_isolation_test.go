package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/trainer"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// review24gWorld is one server with two operator keys (op, op2), two virtual keys A and B
// outside any team, a team T of op with keys T1 and T2, and a key R limited to openai/ok2;
// A (and T2) own one of each resource a virtual key can own.
type review24gWorld struct {
	hs                *httptest.Server
	s                 *Server
	op, op2           string
	A, B, T1, T2, R   review24gKey
	res               map[string]review24gResources // the resources of "A" and "T2"
	opPref, opConv    string                        // the operator's own preference and native conversation
	opCustomer        string
	secretA, secretT2 string
	secretOp          string
}

// review24gKey is a virtual key: its value and its token.
type review24gKey struct{ key, id string }

// review24gResources are the ids of what one virtual key made.
type review24gResources struct {
	response, background, conversation, item, file, batch, pref, session, endUser string
	native                                                                        string // a conversation of /api/v1/completions
	output                                                                        string // the batch's output file
}

func review24gCall(t *testing.T, w *review24gWorld, method, path, key, body string) (int, string) {
	t.Helper()
	code, _, raw := call(t, method, w.hs.URL+path, key, body)
	return code, string(raw)
}

func review24gWant(t *testing.T, code int, raw string, want int, what string) map[string]any {
	t.Helper()
	if code != want {
		t.Fatalf("%s: %d %s, want %d", what, code, raw, want)
	}
	var m map[string]any
	json.Unmarshal([]byte(raw), &m)
	return m
}

func newReview24gWorld(t *testing.T) *review24gWorld {
	t.Helper()
	hs, s := keysServerWith(t, nil, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey, completionsOtherKey}})
	web := mcpgatewaytest.StartFakeHTTP(t, "fake-web")
	g, err := mcpgateway.New([]mcpgateway.ServerConfig{{Name: "web", URL: web.URL}}, mcpgateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := MCP(g)(s); err != nil {
		t.Fatal(err)
	}
	files, err := batch.NewFiles(s.Store(), batch.FilesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := batch.New(s.Store(), files, batch.Options{Concurrency: 1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := Batches(svc)(s); err != nil {
		t.Fatal(err)
	}
	// Training, optimization, lasting spend, the console and /metrics: registered for
	// their routes (no job of theirs is needed to check who may call them).
	quiet := slog.New(slog.DiscardHandler)
	tr, err := trainer.New(s.Store(), trainer.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: hs.URL + "/v1", APIKey: testKey}))
	proposer, err := optimizer.NewLLMProposer(reg, "openai/ok", nil)
	if err != nil {
		t.Fatal(err)
	}
	opt, err := optimizer.New(s.Store(), fakeAgentRunner{}, proposer, optimizer.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	roll := usagelog.NewRollup(s.Store(), usagelog.RollupOptions{FlushEvery: time.Hour})
	for _, o := range []Option{CustomRouters(tr), Optimizer(opt), Spend(roll), Console(), MetricsEndpoint(http.NotFoundHandler())} {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	w := &review24gWorld{hs: hs, s: s, op: testKey, op2: completionsOtherKey, res: map[string]review24gResources{},
		secretA: "secret-of-A-24g", secretT2: "secret-of-T2-24g", secretOp: "secret-of-op-24g"}

	w.A = w.issue(t, "/api/v1/keys", `{"name":"a"}`)
	w.B = w.issue(t, "/api/v1/keys", `{"name":"b"}`)
	w.R = w.issue(t, "/api/v1/keys", `{"name":"r","models":["openai/ok2"]}`)
	code, raw := review24gCall(t, w, "POST", "/team/new", w.op, `{"team_id":"t24g","team_alias":"T"}`)
	review24gWant(t, code, raw, 200, "team/new")
	w.T1 = w.issue(t, "/key/generate", `{"team_id":"t24g","key_alias":"t1"}`)
	w.T2 = w.issue(t, "/key/generate", `{"team_id":"t24g","key_alias":"t2"}`)

	w.res["A"] = w.makeResources(t, w.A, w.secretA, "enduser-a-24g")
	w.res["T2"] = w.makeResources(t, w.T2, w.secretT2, "enduser-t2-24g")
	w.res["op"] = w.makeResources(t, review24gKey{key: w.op}, w.secretOp, "enduser-op-24g")

	// The operator's own things, which no virtual key may reach.
	code, raw = review24gCall(t, w, "POST", "/api/v1/preferences", w.op, `{"name":"operator pref"}`)
	w.opPref = review24gWant(t, code, raw, 200, "operator preference")["preference_id"].(string)
	code, raw = review24gCall(t, w, "POST", "/api/v1/customers", w.op, `{"end_user_id":"op-customer-24g"}`)
	review24gWant(t, code, raw, 201, "operator customer")
	w.opCustomer = "op-customer-24g"
	return w
}

func (w *review24gWorld) issue(t *testing.T, path, body string) review24gKey {
	t.Helper()
	code, raw := review24gCall(t, w, "POST", path, w.op, body)
	if code != 200 && code != 201 {
		t.Fatalf("POST %s %s: %d %s", path, body, code, raw)
	}
	var m map[string]any
	json.Unmarshal([]byte(raw), &m)
	id, _ := m["id"].(string)
	if id == "" {
		id, _ = m["token"].(string)
	}
	return review24gKey{key: m["key"].(string), id: id}
}

// makeResources makes, with k, one of each resource a virtual key owns; secret is in each.
func (w *review24gWorld) makeResources(t *testing.T, k review24gKey, secret, endUser string) review24gResources {
	t.Helper()
	var r review24gResources
	code, raw := review24gCall(t, w, "POST", "/v1/responses", k.key, `{"model":"openai/ok","input":"`+secret+` response","store":true,"user":"`+endUser+`"}`)
	r.response = review24gWant(t, code, raw, 200, "stored response")["id"].(string)
	code, raw = review24gCall(t, w, "POST", "/v1/responses", k.key, `{"model":"openai/ok","input":"`+secret+` background","background":true}`)
	r.background = review24gWant(t, code, raw, 200, "background response")["id"].(string)
	code, raw = review24gCall(t, w, "POST", "/v1/conversations", k.key, `{"items":[{"type":"message","role":"user","content":"`+secret+` conversation"}],"metadata":{"who":"`+secret+`"}}`)
	r.conversation = review24gWant(t, code, raw, 200, "conversation")["id"].(string)
	code, raw = review24gCall(t, w, "GET", "/v1/conversations/"+r.conversation+"/items", k.key, "")
	r.item = review24gWant(t, code, raw, 200, "conversation items")["data"].([]any)[0].(map[string]any)["id"].(string)
	code2, m := uploadBatchFile(t, w.hs, k.key, "batch", chatLines("openai/ok"))
	if code2 != 200 {
		t.Fatalf("upload: %d %v", code2, m)
	}
	r.file = m["id"].(string)
	code, raw = review24gCall(t, w, "POST", "/v1/batches", k.key, `{"input_file_id":"`+r.file+`","endpoint":"/v1/chat/completions","completion_window":"24h","metadata":{"who":"`+secret+`"}}`)
	r.batch = review24gWant(t, code, raw, 200, "batch")["id"].(string)
	r.output = waitBatch(t, w.hs, k.key, r.batch)["output_file_id"].(string)
	code, raw = review24gCall(t, w, "POST", "/api/v1/preferences", k.key, `{"name":"`+secret+` pref"}`)
	if code == 200 {
		var m map[string]any
		json.Unmarshal([]byte(raw), &m)
		r.pref, _ = m["preference_id"].(string)
	}
	code, raw = review24gCall(t, w, "POST", "/api/v1/model-select", k.key, `{"messages":[{"role":"user","content":"`+secret+`"}],"llm_providers":[{"provider":"openai","model":"gpt-4o"},{"provider":"openai","model":"gpt-4o-mini"}]}`)
	r.session = review24gWant(t, code, raw, 200, "model select")["session_id"].(string)
	code, raw = review24gCall(t, w, "POST", "/v1/chat/completions", k.key, `{"model":"openai/ok","messages":[{"role":"user","content":"`+secret+` chat"}],"user":"`+endUser+`"}`)
	review24gWant(t, code, raw, 200, "chat")
	code, raw = review24gCall(t, w, "POST", "/api/v1/completions", k.key, `{"models":["openai/ok"],"messages":[{"role":"user","content":[{"type":"text","text":"`+secret+` native"}]}]}`)
	r.native = review24gWant(t, code, raw, 200, "native conversation")["conversationId"].(string)
	code, raw = review24gCall(t, w, "POST", "/mcp-rest/tools/call", k.key, `{"name":"web-echo","arguments":{"text":"`+secret+`"}}`)
	if code != 200 {
		t.Logf("mcp call: %d %s", code, raw)
	}
	r.endUser = endUser
	return r
}

// review24gIDs finds the ids of a string ("resp_…", "file-…") so that an answer for an
// existing id and for a missing one compare equal once ids are masked.
var review24gIDs = regexp.MustCompile(`(resp|conv|msg|file|batch|pref|sess|item|vk)[_-][A-Za-z0-9-]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func review24gMask(s string) string { return review24gIDs.ReplaceAllString(s, "<id>") }

// review24gMissing is an id of the same shape as id that names nothing.
func review24gMissing(id string) string {
	i := strings.IndexAny(id, "_-")
	if len(id) == 36 && i == 8 { // a UUID: version 7 as the gateway's, random bits zero
		return id[:14] + "7000-8000-000000000000"
	}
	if i < 0 {
		return id + "x"
	}
	return id[:i+1] + regexp.MustCompile(`[A-Za-z0-9]`).ReplaceAllString(id[i+1:], "0")
}

// TestReview24gNothingOfAnotherKeyIsReachableByID: for every route that reads, changes,
// cancels or deletes one of a virtual key's resources by id, another virtual key (one
// outside any team, a member of a team with the owner or not, one limited to other models)
// gets exactly the answer it gets for an id that does not exist: a 404 (or the route's
// refusal for every id), never the resource and never an existence oracle; and the resource
// is still there afterwards.
func TestReview24gNothingOfAnotherKeyIsReachableByID(t *testing.T) {
	w := newReview24gWorld(t)
	type probe struct {
		name, method, path, body string
		id                       func(review24gResources) string
		// ok is the owner's status, to check the id names something.
		ok int
		// issuers is set where a virtual key acts for its issuer by design (README,
		// Virtual keys): the issuer's resource is its keys' to use.
		issuers bool
	}
	probes := []probe{
		{"read response", "GET", "/v1/responses/{id}", "", func(r review24gResources) string { return r.response }, 200, false},
		{"response input items", "GET", "/v1/responses/{id}/input_items", "", func(r review24gResources) string { return r.response }, 200, false},
		{"read background response", "GET", "/v1/responses/{id}", "", func(r review24gResources) string { return r.background }, 200, false},
		{"stream background response", "GET", "/v1/responses/{id}?stream=true", "", func(r review24gResources) string { return r.background }, 400, false},
		{"cancel background response", "POST", "/v1/responses/{id}/cancel", "", func(r review24gResources) string { return r.background }, 0, false},
		{"continue response", "POST", "/v1/responses", `{"model":"openai/ok","input":"more","previous_response_id":"{id}"}`, func(r review24gResources) string { return r.response }, 200, false},
		{"read conversation", "GET", "/v1/conversations/{id}", "", func(r review24gResources) string { return r.conversation }, 200, false},
		{"update conversation", "POST", "/v1/conversations/{id}", `{"metadata":{"x":"y"}}`, func(r review24gResources) string { return r.conversation }, 200, false},
		{"conversation items", "GET", "/v1/conversations/{id}/items", "", func(r review24gResources) string { return r.conversation }, 200, false},
		{"add conversation items", "POST", "/v1/conversations/{id}/items", `{"items":[{"type":"message","role":"user","content":"x"}]}`, func(r review24gResources) string { return r.conversation }, 200, false},
		{"read conversation item", "GET", "/v1/conversations/{conv}/items/{id}", "", func(r review24gResources) string { return r.item }, 200, false},
		{"respond in conversation", "POST", "/v1/responses", `{"model":"openai/ok","input":"more","conversation":"{id}"}`, func(r review24gResources) string { return r.conversation }, 200, false},
		{"continue native conversation", "POST", "/api/v1/completions", `{"models":["openai/ok"],"conversationId":"{id}","messages":[{"role":"user","content":[{"type":"text","text":"again"}]}]}`, func(r review24gResources) string { return r.native }, 200, true},
		{"read file", "GET", "/v1/files/{id}", "", func(r review24gResources) string { return r.file }, 200, false},
		{"file content", "GET", "/v1/files/{id}/content", "", func(r review24gResources) string { return r.file }, 200, false},
		{"read batch output file", "GET", "/v1/files/{id}/content", "", func(r review24gResources) string { return r.output }, 200, false},
		{"batch from file", "POST", "/v1/batches", `{"input_file_id":"{id}","endpoint":"/v1/chat/completions","completion_window":"24h"}`, func(r review24gResources) string { return r.file }, 200, false},
		{"read batch", "GET", "/v1/batches/{id}", "", func(r review24gResources) string { return r.batch }, 200, false},
		{"cancel batch", "POST", "/v1/batches/{id}/cancel", "", func(r review24gResources) string { return r.batch }, 0, false},
		{"read preference", "GET", "/api/v1/preferences/{id}", "", func(r review24gResources) string { return r.pref }, 200, false},
		{"select with preference", "POST", "/api/v1/model-select", `{"messages":[{"role":"user","content":"x"}],"llm_providers":[{"provider":"openai","model":"gpt-4o"},{"provider":"openai","model":"gpt-4o-mini"}],"preference_id":"{id}"}`, func(r review24gResources) string { return r.pref }, 200, true},
		{"feedback on session", "POST", "/api/v1/feedback", `{"session_id":"{id}","provider":{"provider":"openai","model":"gpt-4o"},"feedback":{"accuracy":1}}`, func(r review24gResources) string { return r.session }, 200, false},
		{"latency on session", "POST", "/api/v1/feedback/latency", `{"session_id":"{id}","provider":{"provider":"openai","model":"gpt-4o"},"feedback":{"tokens_per_second":10}}`, func(r review24gResources) string { return r.session }, 200, false},
		// Deletions last: they would take the resource away from the later probes.
		{"delete conversation item", "DELETE", "/v1/conversations/" + "{conv}" + "/items/{id}", "", func(r review24gResources) string { return r.item }, 200, false},
		{"delete conversation", "DELETE", "/v1/conversations/{id}", "", func(r review24gResources) string { return r.conversation }, 200, false},
		{"delete response", "DELETE", "/v1/responses/{id}", "", func(r review24gResources) string { return r.response }, 200, false},
		{"delete file", "DELETE", "/v1/files/{id}", "", func(r review24gResources) string { return r.file }, 200, false},
		{"delete preference", "DELETE", "/api/v1/preferences/{id}", "", func(r review24gResources) string { return r.pref }, 200, false},
	}
	type pair struct{ victim, attacker string }
	keys := map[string]review24gKey{"B": w.B, "T1": w.T1, "R": w.R, "op2": {key: w.op2}}
	owners := map[string]review24gKey{"A": w.A, "T2": w.T2}
	pairs := []pair{{"A", "B"}, {"A", "T1"}, {"A", "R"}, {"A", "op2"}, {"T2", "T1"}, {"T2", "B"}, {"op", "B"}, {"op", "T1"}, {"op", "op2"}}
	fill := func(s, id, conv string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, "{conv}", conv), "{id}", id)
	}
	for _, pr := range probes {
		for _, p := range pairs {
			res := w.res[p.victim]
			id := pr.id(res)
			if id == "" || pr.issuers && p.victim == "op" && p.attacker != "op2" {
				continue // TestReview24gVirtualKeySelectsWithItsIssuersPreference, …ContinuesItsIssuersConversation
			}
			attacker := keys[p.attacker]
			if pr.method == "GET" && pr.ok != 0 { // the id names something its owner reaches
				owner := map[string]string{"A": w.A.key, "T2": w.T2.key, "op": w.op}[p.victim]
				if code, raw := review24gCall(t, w, "GET", fill(pr.path, id, res.conversation), owner, ""); code != pr.ok {
					t.Fatalf("%s GET %s as its owner: %d %s, want %d", p.victim, fill(pr.path, id, res.conversation), code, raw, pr.ok)
				}
			}
			t.Run(pr.name+"/"+p.attacker+"_on_"+p.victim, func(t *testing.T) {
				missing := review24gMissing(id)
				mc, mraw := review24gCall(t, w, pr.method, fill(pr.path, missing, review24gMissing(res.conversation)), attacker.key, fill(pr.body, missing, ""))
				ac, araw := review24gCall(t, w, pr.method, fill(pr.path, id, res.conversation), attacker.key, fill(pr.body, id, ""))
				if ac != mc || review24gMask(araw) != review24gMask(mraw) {
					t.Errorf("%s %s as %s on %s's %s: %d %s\n  an id that does not exist: %d %s", pr.method, pr.path, p.attacker, p.victim, id, ac, araw, mc, mraw)
				}
				if ac/100 == 2 {
					t.Errorf("%s %s as %s on %s's %s succeeded: %d %s", pr.method, pr.path, p.attacker, p.victim, id, ac, araw)
				}
				for _, secret := range []string{w.secretA, w.secretT2, w.secretOp} {
					if strings.Contains(araw, secret) {
						t.Errorf("%s %s as %s shows %q: %s", pr.method, pr.path, p.attacker, secret, araw)
					}
				}
			})
		}
	}
	// Each resource is still its owner's, unchanged by what the others tried.
	for name, k := range owners {
		res := w.res[name]
		for _, path := range []string{"/v1/responses/" + res.response, "/v1/conversations/" + res.conversation, "/v1/files/" + res.file, "/v1/batches/" + res.batch} {
			code, raw := review24gCall(t, w, "GET", path, k.key, "")
			if code != 200 {
				t.Errorf("%s's GET %s after the others' attempts: %d %s", name, path, code, raw)
			}
		}
		if res.pref != "" {
			if code, raw := review24gCall(t, w, "GET", "/api/v1/preferences/"+res.pref, k.key, ""); code != 200 {
				t.Errorf("%s's preference after the others' attempts: %d %s", name, code, raw)
			}
		}
	}
	_ = time.Second
}

// TestReview24gVirtualKeySelectsWithItsIssuersPreference: a virtual key acts for its
// issuer with a preference_id (README, Virtual keys), so it selects with, and its feedback
// teaches, the issuer's preference; the issuer reaches its keys' preferences by id; but
// the key lists only its own and cannot read or delete the issuer's.
func TestReview24gVirtualKeySelectsWithItsIssuersPreference(t *testing.T) {
	w := newReview24gWorld(t)
	sel := `{"messages":[{"role":"user","content":"x"}],"llm_providers":[{"provider":"openai","model":"gpt-4o"},{"provider":"openai","model":"gpt-4o-mini"}],"preference_id":"` + w.opPref + `"}`
	code, raw := review24gCall(t, w, "POST", "/api/v1/model-select", w.B.key, sel)
	sess := review24gWant(t, code, raw, 200, "B selects with the operator's preference")["session_id"].(string)
	code, raw = review24gCall(t, w, "POST", "/api/v1/feedback", w.B.key, `{"session_id":"`+sess+`","provider":{"provider":"openai","model":"gpt-4o"},"feedback":{"accuracy":1}}`)
	if m := review24gWant(t, code, raw, 200, "B's feedback"); m["personalized"] != true {
		t.Errorf("B's feedback under the operator's preference: %s", raw)
	}
	code, raw = review24gCall(t, w, "GET", "/api/v1/preferences/"+w.opPref, w.op, "")
	if m := review24gWant(t, code, raw, 200, "operator's preference"); m["feedback_count"] != float64(1) {
		t.Errorf("the operator's preference after B's feedback: %s", raw)
	}
	code, raw = review24gCall(t, w, "GET", "/api/v1/preferences/"+w.res["A"].pref, w.op, "")
	review24gWant(t, code, raw, 200, "the operator reads A's preference by id")
	for _, k := range []review24gKey{w.A, w.B} {
		code, raw = review24gCall(t, w, "GET", "/api/v1/preferences/"+w.opPref, k.key, "")
		review24gWant(t, code, raw, 404, "a virtual key reads the operator's preference")
		code, raw = review24gCall(t, w, "DELETE", "/api/v1/preferences/"+w.opPref, k.key, "")
		review24gWant(t, code, raw, 404, "a virtual key deletes the operator's preference")
	}
	code, raw = review24gCall(t, w, "GET", "/api/v1/preferences", w.A.key, "")
	if review24gWant(t, code, raw, 200, "A's preferences"); !strings.Contains(raw, w.res["A"].pref) || strings.Contains(raw, w.opPref) || strings.Contains(raw, w.res["T2"].pref) {
		t.Errorf("A lists %s; want its own %s only", raw, w.res["A"].pref)
	}
}

// TestReview24gVirtualKeysReachOnlyTheirRoutes: every registered route that is not public
// and not opened to scoped or virtual keys refuses a virtual key (in a team, outside one,
// limited to some models) with a 403 before anything else: management (keys, teams, end
// users), training, optimization, native conversations, the cache, /health,
// /global/spend/logs, the usage series and spend totals.
func TestReview24gVirtualKeysReachOnlyTheirRoutes(t *testing.T) {
	w := newReview24gWorld(t)
	params := regexp.MustCompile(`\{[^}]*\}`)
	n := 0
	for _, rt := range w.s.routes {
		pattern := rt.muxPattern()
		if rt.Public || w.s.scoped[pattern] || w.s.virtual[pattern] || strings.HasPrefix(rt.Path, "/api/v1/test/") {
			continue
		}
		path := params.ReplaceAllStringFunc(rt.Path, func(p string) string {
			if strings.Contains(p, "key") {
				return w.A.id
			}
			return "x24g"
		})
		path = strings.TrimSuffix(path, "/")
		for name, k := range map[string]review24gKey{"B": w.B, "T1": w.T1, "R": w.R} {
			code, raw := review24gCall(t, w, rt.Method, path, k.key, `{}`)
			if code != http.StatusForbidden {
				t.Errorf("%s %s as virtual key %s: %d %s, want 403", rt.Method, path, name, code, raw)
			}
		}
		n++
	}
	if n < 60 {
		t.Fatalf("only %d operator routes checked", n)
	}
	// What the checks above would have changed is unchanged.
	code, raw := review24gCall(t, w, "GET", "/api/v1/keys/"+w.A.id, w.op, "")
	if m := review24gWant(t, code, raw, 200, "A after the others' attempts"); m["name"] != "a" {
		t.Errorf("A after the others' attempts: %s", raw)
	}
}

// TestReview24gVirtualKeysCannotEscalate: on the routes a virtual key may call, it cannot
// widen what it may do: /key/info about another key (or one that does not exist: the same
// 403), spend logs or usage of another key, models it may not call.
func TestReview24gVirtualKeysCannotEscalate(t *testing.T) {
	w := newReview24gWorld(t)
	for name, k := range map[string]review24gKey{"B": w.B, "T1": w.T1, "R": w.R} {
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/key/info?key=" + w.A.id, ""},
			{"GET", "/key/info?key=" + w.A.key, ""},
			{"GET", "/spend/logs?api_key=" + w.A.id, ""},
			{"GET", "/spend/logs?api_key=" + w.A.key, ""},
			{"GET", "/api/v1/usage/requests?tag=key:" + w.A.id, ""},
		} {
			ac, araw := review24gCall(t, w, c.method, c.path, k.key, c.body)
			missing := strings.ReplaceAll(strings.ReplaceAll(c.path, w.A.id, review24gMissing(w.A.id)), w.A.key, "sy-vk-doesnotexist24g")
			mc, mraw := review24gCall(t, w, c.method, missing, k.key, c.body)
			if ac/100 == 2 || ac != mc || review24gMask(araw) != review24gMask(mraw) {
				t.Errorf("%s %s as %s: %d %s\n  for a key that does not exist: %d %s", c.method, c.path, name, ac, araw, mc, mraw)
			}
		}
	}
	code, raw := review24gCall(t, w, "POST", "/v1/chat/completions", w.R.key, `{"model":"openai/ok","messages":[{"role":"user","content":"x"}]}`)
	review24gWant(t, code, raw, 401, "R calls a model outside its list")
	// Nor through a batch, whose lines run as the key that created it.
	code2, m := uploadBatchFile(t, w.hs, w.R.key, "batch", chatLines("openai/ok"))
	if code2 != 200 {
		t.Fatalf("R's upload: %d %v", code2, m)
	}
	code, raw = review24gCall(t, w, "POST", "/v1/batches", w.R.key, `{"input_file_id":"`+m["id"].(string)+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
	b := waitBatch(t, w.hs, w.R.key, review24gWant(t, code, raw, 200, "R's batch")["id"].(string))
	if counts, _ := b["request_counts"].(map[string]any); counts["completed"] != float64(0) || counts["failed"] != float64(1) {
		t.Errorf("R's batch of a model outside its list: %v", b)
	}
	code, raw = review24gCall(t, w, "GET", "/v1/models", w.R.key, "")
	if review24gWant(t, code, raw, 200, "R's models"); strings.Contains(raw, `"openai/ok"`) || !strings.Contains(raw, "openai/ok2") {
		t.Errorf("R's /v1/models: %s", raw)
	}
	code, raw = review24gCall(t, w, "GET", "/model_group/info", w.R.key, "")
	if review24gWant(t, code, raw, 200, "R's model groups"); strings.Contains(raw, `"openai/ok"`) || strings.Contains(raw, `"pair"`) {
		t.Errorf("R's /model_group/info: %s", raw)
	}
}

// TestReview24gListingsShowNothingOfAnotherKey: every listing, count and total a virtual
// key can ask for (files, batches, preferences, usage, spend logs and their per-day sums,
// its own /key/info and /api/v1/keys/self, models and MCP tools) shows nothing of another
// key's: no id, no content, no end user, no spend.
func TestReview24gListingsShowNothingOfAnotherKey(t *testing.T) {
	w := newReview24gWorld(t)
	today := time.Now().UTC().Format(time.DateOnly)
	tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	paths := []string{
		"/v1/files", "/v1/files?purpose=batch", "/v1/files?purpose=batch_output", "/v1/batches", "/api/v1/preferences",
		"/api/v1/usage/requests", "/spend/logs", "/spend/logs?team_id=t24g", "/spend/logs?user_id=" + w.res["A"].endUser,
		"/spend/logs?start_date=" + today + "&end_date=" + tomorrow, "/spend/logs?start_date=" + today + "&end_date=" + tomorrow + "&summarize=false",
		"/key/info", "/api/v1/keys/self", "/v1/models", "/model_group/info", "/model/info", "/mcp-rest/tools/list", "/v1/mcp/server",
		"/guardrails/list",
	}
	// Every batch done: their output files and spend are there to leak.
	for _, name := range []string{"A", "T2"} {
		k := map[string]review24gKey{"A": w.A, "T2": w.T2}[name]
		waitBatch(t, w.hs, k.key, w.res[name].batch)
	}
	for _, victim := range []struct {
		name string
		k    review24gKey
	}{{"A", w.A}, {"T2", w.T2}} {
		res := w.res[victim.name]
		secret := map[string]string{"A": w.secretA, "T2": w.secretT2}[victim.name]
		leaks := []string{secret, res.response, res.background, res.conversation, res.file, res.batch, res.session, res.endUser, victim.k.id}
		if res.pref != "" {
			leaks = append(leaks, res.pref)
		}
		for name, k := range map[string]review24gKey{"B": w.B, "T1": w.T1, "R": w.R} {
			if name == victim.name {
				continue
			}
			for _, p := range paths {
				code, raw := review24gCall(t, w, "GET", p, k.key, "")
				if code/100 != 2 {
					if code != http.StatusForbidden {
						t.Errorf("GET %s as %s: %d %s", p, name, code, raw)
					}
					continue
				}
				for _, l := range leaks {
					if strings.Contains(raw, l) {
						t.Errorf("GET %s as %s shows %s's %q: %s", p, name, victim.name, l, raw)
					}
				}
				if strings.Contains(raw, `"spend":0.0`) || regexp.MustCompile(`"spend":[1-9]|"spend":0\.0*[1-9]`).MatchString(raw) && (p == "/key/info" || p == "/api/v1/keys/self") && name == "B" {
					t.Errorf("GET %s as %s, which spent nothing, shows spend: %s", p, name, raw)
				}
			}
		}
	}
}

// TestReview24gVirtualKeyContinuesItsIssuersConversation: a virtual key acts for its issuer
// with a conversationId (README, Virtual keys): it continues the issuer's conversations
// and its own, and the issuer reaches its keys' conversations by id.
func TestReview24gVirtualKeyContinuesItsIssuersConversation(t *testing.T) {
	w := newReview24gWorld(t)
	code, raw := review24gCall(t, w, "POST", "/api/v1/completions", w.op, `{"models":["openai/ok"],"messages":[{"role":"user","content":[{"type":"text","text":"operator's"}]}]}`)
	opConv := review24gWant(t, code, raw, 200, "operator's conversation")["conversationId"].(string)
	for name, c := range map[string]struct {
		key, conv string
	}{"B on the operator's": {w.B.key, opConv}, "A on its own": {w.A.key, w.res["A"].native}} {
		code, raw = review24gCall(t, w, "POST", "/api/v1/completions", c.key, `{"models":["openai/ok"],"conversationId":"`+c.conv+`","messages":[{"role":"user","content":[{"type":"text","text":"more"}]}]}`)
		if m := review24gWant(t, code, raw, 200, name); m["conversationId"] != c.conv {
			t.Errorf("%s: %s", name, raw)
		}
	}
	code, raw = review24gCall(t, w, "GET", "/api/v1/conversations/"+w.res["A"].native+"/messages", w.op, "")
	if review24gWant(t, code, raw, 200, "the operator reads A's conversation by id"); !strings.Contains(raw, "more") {
		t.Errorf("A's conversation as the operator reads it: %s", raw)
	}
	code, raw = review24gCall(t, w, "GET", "/api/v1/conversations/"+w.res["A"].native, w.op2, "")
	review24gWant(t, code, raw, 404, "another operator reads A's conversation")
}

// TestReview24gOperatorsDoNotReachEachOther: another operator key gets, for the first
// one's virtual keys, team and end users, on every management route (native and LiteLLM's),
// exactly the answer for ones that do not exist, lists none of them, and cannot put its
// own key into the other's team.
func TestReview24gOperatorsDoNotReachEachOther(t *testing.T) {
	w := newReview24gWorld(t)
	code, raw := review24gCall(t, w, "POST", "/api/v1/keys", w.op2, `{"name":"op2 key"}`)
	own := review24gWant(t, code, raw, 201, "op2's key")["id"].(string)
	real := []string{w.A.id, "t24g", w.opCustomer}
	missing := []string{review24gMissing(w.A.id), "t24g-missing", "customer-missing-24g"}
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/api/v1/keys/{key}", ""},
		{"PATCH", "/api/v1/keys/{key}", `{"name":"x"}`},
		{"POST", "/api/v1/keys/{key}/rotate", ""},
		{"GET", "/key/info?key={key}", ""},
		{"POST", "/key/update", `{"key":"{key}","max_budget":5}`},
		{"POST", "/key/block", `{"key":"{key}"}`},
		{"POST", "/key/unblock", `{"key":"{key}"}`},
		{"POST", "/key/regenerate", `{"key":"{key}"}`},
		{"POST", "/key/{key}/regenerate", ""},
		{"GET", "/key/list?team_id={team}", ""},
		{"POST", "/key/generate", `{"team_id":"{team}"}`},
		{"POST", "/api/v1/keys", `{"team_id":"{team}"}`},
		{"POST", "/key/update", `{"key":"` + own + `","team_id":"{team}"}`},
		{"PATCH", "/api/v1/keys/" + own, `{"team_id":"{team}"}`},
		{"GET", "/team/info?team_id={team}", ""},
		{"POST", "/team/update", `{"team_id":"{team}","max_budget":1}`},
		{"POST", "/team/block", `{"team_id":"{team}"}`},
		{"POST", "/team/unblock", `{"team_id":"{team}"}`},
		{"GET", "/api/v1/teams/{team}", ""},
		{"PATCH", "/api/v1/teams/{team}", `{"max_budget_usd":1}`},
		{"GET", "/api/v1/customers/{customer}", ""},
		{"PATCH", "/api/v1/customers/{customer}", `{"max_budget_usd":1}`},
		{"GET", "/customer/info?end_user_id={customer}", ""},
		{"POST", "/customer/update", `{"user_id":"{customer}","max_budget":1}`},
		// Deletions last.
		{"POST", "/key/delete", `{"keys":["{key}"]}`},
		{"DELETE", "/api/v1/keys/{key}", ""},
		{"POST", "/team/delete", `{"team_ids":["{team}"]}`},
		{"DELETE", "/api/v1/teams/{team}", ""},
		{"POST", "/customer/delete", `{"user_ids":["{customer}"]}`},
		{"DELETE", "/api/v1/customers/{customer}", ""},
	} {
		if c.path == "/customer/delete" {
			continue // below: as LiteLLM's, it answers for ids of the caller's own it does not have
		}
		fill := func(s string, ids []string) string {
			return strings.NewReplacer("{key}", ids[0], "{team}", ids[1], "{customer}", ids[2]).Replace(s)
		}
		mask := func(s string, ids []string) string {
			return strings.NewReplacer(ids[0], "<key>", ids[1], "<team>", ids[2], "<customer>").Replace(review24gIDs.ReplaceAllString(s, "<id>"))
		}
		mc, mraw := review24gCall(t, w, c.method, fill(c.path, missing), w.op2, fill(c.body, missing))
		ac, araw := review24gCall(t, w, c.method, fill(c.path, real), w.op2, fill(c.body, real))
		if ac != mc || mask(araw, real) != mask(mraw, missing) || ac/100 == 2 && c.path != "/key/list?team_id={team}" {
			t.Errorf("%s %s %s as another operator: %d %s\n  for ones that do not exist: %d %s", c.method, c.path, c.body, ac, araw, mc, mraw)
		}
	}
	for _, p := range []string{"/api/v1/keys", "/key/list", "/key/list?return_full_object=true", "/team/list", "/api/v1/teams", "/api/v1/customers", "/customer/list",
		"/api/v1/usage/requests", "/api/v1/usage/series", "/api/v1/usage/series?by=tag", "/spend/logs", "/global/spend/logs", "/api/v1/conversations", "/api/v1/preferences", "/v1/files", "/v1/batches"} {
		code, raw := review24gCall(t, w, "GET", p, w.op2, "")
		if code != 200 {
			t.Errorf("GET %s as another operator: %d %s", p, code, raw)
			continue
		}
		for _, l := range []string{w.A.id, w.B.id, w.T1.id, "t24g", w.opCustomer, "enduser-a-24g", w.secretA, w.secretOp, w.res["A"].file, w.res["op"].file, w.res["op"].native, w.res["op"].pref} {
			if strings.Contains(raw, l) {
				t.Errorf("GET %s as another operator shows %q: %s", p, l, raw)
			}
		}
	}
	// LiteLLM's /customer/block makes the end users it names (of the caller's own), and
	// /customer/delete answers ids it does not have: neither reaches the other operator's.
	for _, p := range []string{"/customer/block", "/customer/unblock", "/customer/delete"} {
		code, raw := review24gCall(t, w, "POST", p, w.op2, `{"user_ids":["`+w.opCustomer+`"]}`)
		if code/100 != 2 && code != 404 {
			t.Errorf("POST %s as another operator: %d %s", p, code, raw)
		}
	}
	// Nothing changed: A, the team and the end user are as the first operator made them.
	for _, p := range []string{"/api/v1/keys/" + w.A.id, "/team/info?team_id=t24g", "/api/v1/customers/" + w.opCustomer} {
		if code, raw := review24gCall(t, w, "GET", p, w.op, ""); code != 200 || strings.Contains(raw, `"blocked":true`) {
			t.Errorf("GET %s as its operator after the other's attempts: %d %s", p, code, raw)
		}
	}
}
