package server

// Black-box conformance of the HTTP server with the wire contract,
// ../shared/spec/service-spec.md. Each subtest is named after the spec's section and row
// ("Model selection request/tools at most 128"), so a failure says which point broke. The
// servers are the ones the other tests build (modelSelectServer, completionsServer,
// r14Server, routersServer, optimizeServer); nothing here scripts its own.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/store"
)

// specNamesField reports whether msg names field as a whole path: at the start ("tools:
// ..."), quoted (`field "stream"`) or after a blank, and never as the tail of a longer or
// malformed path (".tools[0].type").
func specNamesField(msg, field string) bool {
	re := regexp.MustCompile(`(^|["\s])` + regexp.QuoteMeta(field) + `($|[":\s])`)
	return re.MatchString(msg)
}

var specUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// specRefusal is one request the spec says must be refused.
type specRefusal struct {
	name   string // spec section / row
	body   string
	status int
	kind   string
	field  string // the field the message must name
	exact  string // when set, the whole message
}

func (c specRefusal) check(t *testing.T, status int, body map[string]any, raw string) {
	t.Helper()
	msg, _ := body["message"].(string)
	if status != c.status || body["error"] != c.kind {
		t.Fatalf("got %d %s, want %d with error %q", status, raw, c.status, c.kind)
	}
	if c.exact != "" && msg != c.exact {
		t.Fatalf("message %q, want exactly %q", msg, c.exact)
	}
	if c.field != "" && !specNamesField(msg, c.field) {
		t.Fatalf("message %q does not name the field %q", msg, c.field)
	}
}

func specCount(t *testing.T, h http.Handler, path string) int {
	t.Helper()
	r := do(t, h, "GET", path, testKey, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, r.status, r.raw)
	}
	data, _ := r.body["data"].([]any)
	return len(data)
}

func TestSpecModelSelection(t *testing.T) {
	ts, st := modelSelectServer(t, nil)
	msg := `"messages":[{"role":"user","content":"hi"}]`
	cand := `"llm_providers":[{"name":"openai/gpt-4o"},{"name":"openai/gpt-4o-mini"}]`
	tools := func(n int) string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf(`{"name":"t%d"}`, i)
		}
		return "[" + strings.Join(out, ",") + "]"
	}
	bad := func(name, body, field string) specRefusal {
		return specRefusal{name: name, body: body, status: http.StatusBadRequest, kind: KindBadRequest, field: field}
	}
	refusals := []specRefusal{
		bad("Message/role required", `{"messages":[{"content":"hi"}],`+cand+`}`, "messages[0].role"),
		bad("Message/role one of system user assistant", `{"messages":[{"role":"tool","content":"hi"}],`+cand+`}`, "messages[0].role"),
		bad("Message/role string", `{"messages":[{"role":1,"content":"hi"}],`+cand+`}`, "messages[0].role"),
		bad("Message/content required", `{"messages":[{"role":"user"}],`+cand+`}`, "messages[0].content"),
		bad("Message/content string", `{"messages":[{"role":"user","content":5}],`+cand+`}`, "messages[0].content"),
		bad("Model selection request/messages required", `{`+cand+`}`, "messages"),
		bad("Model selection request/messages array", `{"messages":"hi",`+cand+`}`, "messages"),
		bad("Model selection request/llm_providers required", `{`+msg+`}`, "llm_providers"),
		bad("Model selection request/llm_providers array", `{`+msg+`,"llm_providers":{"name":"openai/gpt-4o"}}`, "llm_providers"),
		bad("LLM provider entry/name required", `{`+msg+`,"llm_providers":[{"price":1}]}`, "llm_providers[0]"),
		bad("LLM provider entry/name string", `{`+msg+`,"llm_providers":[{"name":5}]}`, "llm_providers[0].name"),
		bad("LLM provider entry/price number", `{`+msg+`,"llm_providers":[{"name":"openai/gpt-4o","price":"cheap"}]}`, "llm_providers[0].price"),
		bad("LLM provider entry/latency number", `{`+msg+`,"llm_providers":[{"name":"openai/gpt-4o","latency":"fast"}]}`, "llm_providers[0].latency"),
		bad("LLM provider entry/attributes object", `{`+msg+`,"llm_providers":[{"name":"openai/gpt-4o","attributes":[1]}]}`, "llm_providers[0].attributes"),
		bad("Tool/name required", `{`+msg+`,`+cand+`,"tools":[{"description":"d"}]}`, "tools[0].name"),
		bad("Tool/name string", `{`+msg+`,`+cand+`,"tools":[{"name":5}]}`, "tools[0].name"),
		bad("Tool/description string", `{`+msg+`,`+cand+`,"tools":[{"name":"f","description":5}]}`, "tools[0].description"),
		bad("Tool/parameters object", `{`+msg+`,`+cand+`,"tools":[{"name":"f","parameters":[1]}]}`, "tools[0].parameters"),
		bad("Tool/only functions are supported", `{`+msg+`,`+cand+`,"tools":[{"type":"retrieval","name":"f"}]}`, "tools[0].type"),
		bad("Model selection request/tools array", `{`+msg+`,`+cand+`,"tools":{"name":"f"}}`, "tools"),
		bad("Limits/tools at most 128", `{`+msg+`,`+cand+`,"tools":`+tools(129)+`}`, "tools"),
		bad("Model selection request/max_model_depth integer", `{`+msg+`,`+cand+`,"max_model_depth":1.5}`, "max_model_depth"),
		bad("Model selection request/max_model_depth int32", `{`+msg+`,`+cand+`,"max_model_depth":2147483648}`, "max_model_depth"),
		bad("Model selection request/max_model_depth not a string", `{`+msg+`,`+cand+`,"max_model_depth":"2"}`, "max_model_depth"),
		bad("Model selection request/tradeoff cost or latency", `{`+msg+`,`+cand+`,"tradeoff":"quality"}`, "tradeoff"),
		bad("Model selection request/tradeoff string", `{`+msg+`,`+cand+`,"tradeoff":1}`, "tradeoff"),
		bad("Model selection request/preference_id string", `{`+msg+`,`+cand+`,"preference_id":5}`, "preference_id"),
		bad("Model selection request/hash_content boolean", `{`+msg+`,`+cand+`,"hash_content":"yes"}`, "hash_content"),
		bad("Model selection request/previous_session string", `{`+msg+`,`+cand+`,"previous_session":5}`, "previous_session"),
		bad("Errors/400 bad request (malformed JSON)", `{"messages":[`, ""),
		{name: "Errors/404 not found (preference_id)", body: `{` + msg + `,` + cand + `,"preference_id":"rm_nope"}`, status: http.StatusNotFound, kind: KindNotFound, field: "preference_id"},
		{name: "Errors/404 not found (previous_session)", body: `{` + msg + `,` + cand + `,"previous_session":"sess_nope"}`, status: http.StatusNotFound, kind: KindNotFound, field: "previous_session"},
	}
	for _, c := range refusals {
		for _, path := range []string{"/api/v1/model-select", "/v1/modelSelect"} {
			t.Run(c.name+" "+path, func(t *testing.T) {
				status, body := postSelect(t, ts, path, testKey, c.body)
				raw, _ := json.Marshal(body)
				c.check(t, status, body, string(raw))
			})
		}
	}
	if entries, _ := st.List(context.Background(), store.Sessions, store.ListOptions{}); len(entries) != 0 {
		t.Errorf("refused requests stored %d sessions", len(entries))
	}

	accepted := []struct {
		name, path, body string
		labels           []string // llm_label must be one of these
		providers        int      // ranked providers returned, when > 0
	}{
		{"LLM provider entry/name shape", "/api/v1/model-select", `{` + msg + `,` + cand + `}`, []string{"openai/gpt-4o", "openai/gpt-4o-mini"}, 2},
		{"LLM provider entry/provider and model shape of the usage example", "/api/v1/model-select",
			`{` + msg + `,"llm_providers":[{"provider":"openai","model":"gpt-4o"},{"provider":"anthropic","model":"claude-3-5-sonnet-20241022"}]}`,
			[]string{"openai/gpt-4o", "anthropic/claude-3-5-sonnet-20241022"}, 2},
		{"LLM provider entry/models array of the introduction", "/api/v1/model-select", `{` + msg + `,"models":[{"provider":"openai","model":"gpt-4o"},"openai/gpt-4o-mini"]}`,
			[]string{"openai/gpt-4o", "openai/gpt-4o-mini"}, 2},
		{"LLM provider entry/price latency attributes", "/api/v1/model-select",
			`{` + msg + `,"llm_providers":[{"name":"openai/gpt-4o","price":2.5,"latency":0.8,"attributes":{"region":"eu","quality":0.9}},{"name":"my-llm","price":0.1,"latency":1.5,"attributes":{}}]}`,
			[]string{"openai/gpt-4o", "my-llm"}, 2},
		{"Endpoints/alternative path /v1/modelSelect", "/v1/modelSelect", `{` + msg + `,` + cand + `}`, []string{"openai/gpt-4o", "openai/gpt-4o-mini"}, 2},
		{"Message/roles system user assistant", "/api/v1/model-select",
			`{"messages":[{"role":"system","content":"Be terse."},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"2+2?"}],` + cand + `}`,
			[]string{"openai/gpt-4o", "openai/gpt-4o-mini"}, 2},
		{"Limits/tools 128 accepted", "/api/v1/model-select", `{` + msg + `,` + cand + `,"tools":` + tools(128) + `}`, []string{"openai/gpt-4o", "openai/gpt-4o-mini"}, 0},
		{"Tool/description and parameters", "/api/v1/model-select",
			`{` + msg + `,` + cand + `,"tools":[{"name":"get_weather","description":"Weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]}`,
			[]string{"openai/gpt-4o", "openai/gpt-4o-mini"}, 0},
		{"Model selection request/max_model_depth limits the ranked list", "/api/v1/model-select", `{` + msg + `,` + cand + `,"max_model_depth":1}`, []string{"openai/gpt-4o", "openai/gpt-4o-mini"}, 1},
		{"Model selection request/tradeoff cost", "/api/v1/model-select", `{` + msg + `,` + cand + `,"tradeoff":"cost"}`, []string{"openai/gpt-4o", "openai/gpt-4o-mini"}, 2},
		{"Model selection request/tradeoff latency", "/api/v1/model-select", `{` + msg + `,` + cand + `,"tradeoff":"latency"}`, []string{"openai/gpt-4o", "openai/gpt-4o-mini"}, 2},
		{"Model selection request/hash_content true", "/api/v1/model-select", `{` + msg + `,` + cand + `,"hash_content":true}`, []string{"openai/gpt-4o", "openai/gpt-4o-mini"}, 2},
		{"Model selection request/optional fields null", "/api/v1/model-select",
			`{` + msg + `,` + cand + `,"tools":null,"max_model_depth":null,"tradeoff":null,"preference_id":null,"hash_content":null,"previous_session":null}`,
			[]string{"openai/gpt-4o", "openai/gpt-4o-mini"}, 2},
	}
	var session string
	for _, c := range accepted {
		t.Run(c.name, func(t *testing.T) {
			status, body := postSelect(t, ts, c.path, testKey, c.body)
			if status != http.StatusOK {
				t.Fatalf("%d %v", status, body)
			}
			label, ok := body["llm_label"].(string)
			if !ok || !contains(c.labels, label) {
				t.Fatalf("Model selection response/llm_label = %v, want one of %v", body["llm_label"], c.labels)
			}
			if provs, _ := body["providers"].([]any); c.providers > 0 && len(provs) != c.providers {
				t.Errorf("%d ranked providers, want %d: %v", len(provs), c.providers, body)
			}
			session, _ = body["session_id"].(string)
		})
	}
	t.Run("Model selection request/previous_session links an earlier call", func(t *testing.T) {
		status, body := postSelect(t, ts, "/api/v1/model-select", testKey, `{`+msg+`,`+cand+`,"previous_session":"`+session+`"}`)
		if status != http.StatusOK || body["llm_label"] == nil {
			t.Fatalf("%d %v", status, body)
		}
	})
	t.Run("Errors/400 message names the field, not a pointer into it", func(t *testing.T) {
		// Every 400 names its field as the paths above do: "llm_providers[0].price", never
		// with a leading dot.
		for _, c := range refusals {
			_, body := postSelect(t, ts, "/api/v1/model-select", testKey, c.body)
			if m, _ := body["message"].(string); strings.HasPrefix(m, ".") {
				t.Errorf("%s: message %q starts with a dot", c.name, m)
			}
		}
	})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestSpecCompletions(t *testing.T) {
	hs, s, _ := completionsServer(t)
	url := hs.URL + "/api/v1/completions"
	msgs := `"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]`
	models := `"models":["up/ok"]`
	v := func(name, body, field string) specRefusal {
		return specRefusal{name: name, body: body, status: http.StatusUnprocessableEntity, kind: "Validation Error", field: field}
	}
	refusals := []specRefusal{
		v("Completions request/messages required", `{`+models+`}`, "messages"),
		v("Completions request/messages array", `{"messages":"hi",`+models+`}`, "messages"),
		v("Completions request/messages not empty", `{"messages":[],`+models+`}`, "messages"),
		v("Message (completions)/role required", `{"messages":[{"content":[{"type":"text","text":"hi"}]}],`+models+`}`, "messages[0].role"),
		v("Message (completions)/role one of system user assistant", `{"messages":[{"role":"tool","content":[{"type":"text","text":"hi"}]}],`+models+`}`, "messages[0].role"),
		v("Message (completions)/content required", `{"messages":[{"role":"user"}],`+models+`}`, "messages[0].content"),
		v("Message (completions)/content block type required", `{"messages":[{"role":"user","content":[{"text":"hi"}]}],`+models+`}`, "messages[0].content[0].type"),
		v("Message (completions)/content block type only text", `{"messages":[{"role":"user","content":[{"type":"image","text":"hi"}]}],`+models+`}`, "messages[0].content[0].type"),
		v("Message (completions)/content block text required", `{"messages":[{"role":"user","content":[{"type":"text"}]}],`+models+`}`, "messages[0].content[0].text"),
		v("Message (completions)/content block text string", `{"messages":[{"role":"user","content":[{"type":"text","text":1}]}],`+models+`}`, "messages[0].content[0].text"),
		v("Completions request/models required", `{`+msgs+`}`, "models"),
		{name: "Errors/422 no model given in models", body: `{` + msgs + `,"models":[]}`, status: 422, kind: "Validation Error", field: "models"},
		v("Limits/models at least 1 (null)", `{`+msgs+`,"models":null}`, "models"),
		v("Completions request/models array of strings", `{`+msgs+`,"models":"up/ok"}`, "models"),
		v("Completions request/models provider/model format", `{`+msgs+`,"models":["ok"]}`, "models[0]"),
		v("Completions request/fallback_models provider/model format", `{`+msgs+`,`+models+`,"fallback_models":["ok"]}`, "fallback_models[0]"),
		v("Completions request/fallback_models array", `{`+msgs+`,`+models+`,"fallback_models":"up/ok"}`, "fallback_models"),
		v("Completions request/stream boolean", `{`+msgs+`,`+models+`,"stream":"true"}`, "stream"),
		v("Limits/temperature 0-1 (below)", `{`+msgs+`,`+models+`,"temperature":-0.01}`, "temperature"),
		v("Limits/temperature 0-1 (above)", `{`+msgs+`,`+models+`,"temperature":1.01}`, "temperature"),
		v("Completions request/temperature number", `{`+msgs+`,`+models+`,"temperature":"0.5"}`, "temperature"),
		v("Completions request/maxTokens integer", `{`+msgs+`,`+models+`,"maxTokens":10.5}`, "maxTokens"),
		v("Completions request/maxTokens not negative", `{`+msgs+`,`+models+`,"maxTokens":-1}`, "maxTokens"),
		v("Completions request/maxRetries integer", `{`+msgs+`,`+models+`,"maxRetries":1.5}`, "maxRetries"),
		v("Completions request/maxRetries not negative", `{`+msgs+`,`+models+`,"maxRetries":-1}`, "maxRetries"),
		v("Completions request/search boolean", `{`+msgs+`,`+models+`,"search":"yes"}`, "search"),
		v("Completions request/conversationId UUID", `{`+msgs+`,`+models+`,"conversationId":"conv-1"}`, "conversationId"),
		v("Completions request/conversationId string", `{`+msgs+`,`+models+`,"conversationId":7}`, "conversationId"),
		v("Completions request/member names exact (max_tokens is not maxTokens)", `{`+msgs+`,`+models+`,"max_tokens":10}`, "max_tokens"),
		{name: "Errors/401 missing key", body: `{` + msgs + `,` + models + `}`, status: 401, kind: "Unauthorized"},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			key := testKey
			if c.status == 401 {
				key = ""
			}
			resp, b := post(t, url, key, c.body)
			c.check(t, resp.StatusCode, decodeMap(t, b), string(b))
		})
	}
	t.Run("Errors/refused requests store nothing", func(t *testing.T) {
		if n := specCount(t, s, "/api/v1/conversations"); n != 0 {
			t.Fatalf("%d conversations after refused requests", n)
		}
	})

	var first map[string]any
	for _, c := range []struct{ name, extra string }{
		{"Completions request/temperature 0 accepted", `,"temperature":0`},
		{"Completions request/temperature 1 accepted", `,"temperature":1`},
		{"Completions request/every optional field", `,"fallback_models":["up/ok2"],"stream":false,"temperature":0.5,"maxTokens":64,"maxRetries":0,"search":false`},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, b := post(t, url, testKey, `{`+msgs+`,`+models+c.extra+`}`)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			first = decodeMap(t, b)
		})
	}
	t.Run("Completions response/fields", func(t *testing.T) {
		r := first
		for f, want := range map[string]any{"provider": "up", "model": "ok", "conversationTitle": "hi"} {
			if r[f] != want {
				t.Errorf("%s = %v, want %v", f, r[f], want)
			}
		}
		for _, f := range []string{"responseMessageId", "conversationId"} {
			if id, _ := r[f].(string); !specUUID.MatchString(id) {
				t.Errorf("%s = %v, want a UUID", f, r[f])
			}
		}
		m, _ := r["message"].(map[string]any)
		blocks, _ := m["content"].([]any)
		if m["role"] != "assistant" || m["type"] != "text" || len(blocks) != 1 {
			t.Fatalf("message = %v", r["message"])
		}
		if b := blocks[0].(map[string]any); b["type"] != "text" || b["text"] != "Hello from ok" {
			t.Errorf("message.content[0] = %v", b)
		}
		u, _ := r["usage"].(map[string]any)
		for _, f := range []string{"promptTokens", "completionTokens", "totalTokens", "reasoningTokens"} {
			if n, ok := u[f].(float64); !ok || n != math.Trunc(n) || n < 0 {
				t.Errorf("usage.%s = %v, want an integer", f, u[f])
			}
		}
		if u["promptTokens"].(float64)+u["completionTokens"].(float64) != u["totalTokens"].(float64) || u["reasoningTokens"] != 0.0 {
			t.Errorf("usage = %v: totalTokens must be prompt + completion, reasoningTokens 0", u)
		}
		costs, _ := u["costs"].(map[string]any)
		for _, f := range []string{"input_tokens_cost", "output_tokens_cost", "total_tokens_cost"} {
			if _, ok := costs[f].(float64); !ok {
				t.Errorf("usage.costs.%s = %v, want a number", f, costs[f])
			}
		}
		for _, f := range []string{"latency", "ttft"} {
			if n, ok := r[f].(float64); !ok || n != math.Trunc(n) || n < 0 {
				t.Errorf("%s = %v, want integer milliseconds", f, r[f])
			}
		}
	})
	t.Run("Completions request/conversationId links an existing conversation", func(t *testing.T) {
		resp, b := post(t, url, testKey, fmt.Sprintf(`{%s,%s,"conversationId":%q}`, msgs, models, first["conversationId"]))
		if resp.StatusCode != http.StatusOK || decodeMap(t, b)["conversationId"] != first["conversationId"] {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
	})
	t.Run("Events/streaming chunks", func(t *testing.T) {
		resp, b := post(t, url, testKey, `{`+msgs+`,`+models+`,"stream":true}`)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
		var text strings.Builder
		var id any
		var n int
		for _, ev := range readSSE(t, strings.NewReader(string(b))) {
			if ev[1] == "[DONE]" || ev[1] == "" {
				continue
			}
			c := decodeMap(t, []byte(ev[1]))
			if c["type"] != "text" {
				t.Fatalf("chunk type %v: %s", c["type"], ev[1])
			}
			if c["final"] == true {
				if c["responseMessageId"] != id || c["usage"] == nil || c["latency"] == nil {
					t.Errorf("final event %s", ev[1])
				}
				continue
			}
			n++
			for _, f := range []string{"provider", "model", "responseMessageId", "text", "message"} {
				if c[f] == nil {
					t.Errorf("chunk lacks %s: %s", f, ev[1])
				}
			}
			if id == nil {
				id = c["responseMessageId"]
			} else if c["responseMessageId"] != id {
				t.Errorf("responseMessageId changed within the stream: %s", ev[1])
			}
			frag, _ := c["text"].(string)
			blocks, _ := c["message"].(map[string]any)["content"].([]any)
			if len(blocks) != 1 || blocks[0].(map[string]any)["text"] != frag {
				t.Errorf("message does not hold the fragment %q: %s", frag, ev[1])
			}
			text.WriteString(frag)
		}
		if n == 0 || text.String() != "Hello from ok" {
			t.Fatalf("%d chunks joined to %q", n, text.String())
		}
	})
}

// TestSpecCompletionsDefaults: what the upstream receives when optional fields are left out.
func TestSpecCompletionsDefaults(t *testing.T) {
	hs, _, up, _ := r14Server(t, func(w http.ResponseWriter, path string, req map[string]any) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	})
	url := hs.URL + "/api/v1/completions"
	for i, c := range []struct {
		name, extra string
		check       func(body map[string]any) string
	}{
		{"Completions request/temperature default is the model preset", ``, func(b map[string]any) string {
			if _, ok := b["temperature"]; ok {
				return fmt.Sprintf("temperature %v sent without one in the request", b["temperature"])
			}
			return ""
		}},
		{"Completions request/temperature passed", `,"temperature":0.3`, func(b map[string]any) string {
			if b["temperature"] != 0.3 {
				return fmt.Sprintf("temperature %v, want 0.3", b["temperature"])
			}
			return ""
		}},
		{"Completions request/maxTokens passed", `,"maxTokens":42`, func(b map[string]any) string {
			if b["max_tokens"] != 42.0 && b["max_completion_tokens"] != 42.0 {
				return fmt.Sprintf("no max tokens of 42 in %v", b)
			}
			return ""
		}},
		{"Completions request/stream default false", ``, func(b map[string]any) string {
			if b["stream"] == true {
				return "streamed without stream in the request"
			}
			return ""
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Distinct content per row: the server's response cache never answers.
			body := fmt.Sprintf(`{"messages":[{"role":"user","content":[{"type":"text","text":"row %d"}]}],"models":["openai/gpt-4o-mini"]%s}`, i, c.extra)
			resp, b := post(t, url, testKey, body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			if decodeMap(t, b)["message"] == nil {
				t.Fatalf("stream false did not answer one JSON object: %s", b)
			}
			up.mu.Lock()
			sent := up.bodies[len(up.bodies)-1]
			up.mu.Unlock()
			if msg := c.check(sent); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func TestSpecCustomRouter(t *testing.T) {
	e := routersServer(t)
	v := func(name, body, field string) specRefusal {
		return specRefusal{name: name, body: body, status: http.StatusUnprocessableEntity, kind: KindValidation, field: field}
	}
	for _, c := range []specRefusal{
		v("Start training/Data_URLs required", `{}`, "Data_URLs"),
		v("Start training/Data_URLs required (empty body)", ``, "Data_URLs"),
		v("Start training/Data_URLs array of strings", `{"Data_URLs":"https://x.test/a.csv"}`, "Data_URLs"),
		v("Start training/Data_URLs items strings", `{"Data_URLs":[1]}`, "Data_URLs[0]"),
		v("Start training/Data_URLs at least one", `{"Data_URLs":[]}`, "Data_URLs"),
		v("Start training/Data_URLs URLs", `{"Data_URLs":["not a url"]}`, "Data_URLs[0]"),
		v("Start training/Data_URLs exact name", `{"data_urls":["https://x.test/a.csv"]}`, "data_urls"),
	} {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, e.h, "POST", "/api/v1/routers/train", testKey, c.body)
			c.check(t, r.status, r.body, r.raw)
		})
	}
	t.Run("Start training/refused requests create no job", func(t *testing.T) {
		if n := specCount(t, e.h, "/api/v1/routers/train/jobs"); n != 0 {
			t.Fatalf("%d jobs after refused requests", n)
		}
	})
	for _, c := range []struct {
		name, path string
		status     int
		field      string
	}{
		{"Training status/task_id required", "/api/v1/routers/train/status", 422, "task_id"},
		{"Training status/task_id not empty", "/api/v1/routers/train/status?task_id=", 422, "task_id"},
		{"Training status/unknown task_id", "/api/v1/routers/train/status?task_id=tj_nope", 404, "tj_nope"},
		{"Model details/model_id not empty", "/api/v1/routers/models?model_id=", 422, "model_id"},
		{"Model details/unknown model_id", "/api/v1/routers/models?model_id=rm_nope", 404, "rm_nope"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, e.h, "GET", c.path, testKey, "")
			kind := KindValidation
			if c.status == 404 {
				kind = KindNotFound
			}
			wantError(t, r, c.status, kind, c.field)
		})
	}

	// Train on the bundled CSV (60 rows).
	r := do(t, e.h, "POST", "/api/v1/routers/train", testKey, fmt.Sprintf(`{"Data_URLs":[%q]}`, e.files.URL+"/routing_train.csv"))
	var version string
	t.Run("Training job (returned on start)/fields", func(t *testing.T) {
		if r.status != http.StatusAccepted {
			t.Fatalf("%d %s", r.status, r.raw)
		}
		id, _ := r.body["training_job_id"].(string)
		version, _ = r.body["version"].(string)
		if id == "" || r.body["status"] != "queued" || version == "" {
			t.Fatalf("training job %s: want training_job_id, status queued, version", r.raw)
		}
	})
	jobID, _ := r.body["training_job_id"].(string)
	if jobID == "" {
		t.Fatal("no job to follow")
	}
	st := e.waitJob(t, testKey, jobID)
	modelID, _ := st.body["model_id"].(string)
	t.Run("Training job status/fields when completed", func(t *testing.T) {
		if st.body["training_job_id"] != jobID || st.body["status"] != "completed" || modelID == "" {
			t.Fatalf("status %s", st.raw)
		}
		for _, f := range []string{"started_at", "completed_at"} {
			if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(st.body[f])); err != nil {
				t.Errorf("%s = %v: %v", f, st.body[f], err)
			}
		}
		timing, _ := st.body["training_config"].(map[string]any)["timing"].(map[string]any)
		for _, f := range []string{"training_time_seconds", "embedding_time_seconds", "total_time_seconds"} {
			if _, ok := timing[f].(float64); !ok {
				t.Errorf("training_config.timing.%s = %v, want a number", f, timing[f])
			}
		}
	})
	var classes int
	t.Run("Router model details/fields", func(t *testing.T) {
		d := do(t, e.h, "GET", "/api/v1/routers/models?model_id="+modelID, testKey, "")
		if d.status != http.StatusOK {
			t.Fatalf("%d %s", d.status, d.raw)
		}
		if d.body["model_id"] != modelID || d.body["version"] != version || d.body["status"] != "active" || d.body["embedding_model"] == "" {
			t.Errorf("details %s", d.raw)
		}
		n, ok := d.body["num_classes"].(float64)
		if !ok || n != math.Trunc(n) || n < 2 {
			t.Errorf("num_classes = %v", d.body["num_classes"])
		}
		classes = int(n)
		if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(d.body["created_at"])); err != nil {
			t.Errorf("created_at: %v", err)
		}
		m, _ := d.body["metrics"].(map[string]any)
		for _, f := range []string{"top1_hit_rate", "top3_hit_rate", "accuracy"} {
			if x, ok := m[f].(float64); !ok || x < 0 || x > 1 {
				t.Errorf("metrics.%s = %v, want 0-1", f, m[f])
			}
		}
	})

	pv := func(name, body, field string) specRefusal {
		return specRefusal{name: name, body: body, status: http.StatusUnprocessableEntity, kind: KindValidation, field: field}
	}
	many := func(n int) string {
		b, _ := json.Marshal(map[string]any{"model_id": modelID, "inputs": make([]string, n)})
		return strings.ReplaceAll(string(b), `""`, `"q"`)
	}
	for _, c := range []specRefusal{
		pv("Prediction request/model_id required", `{"inputs":["x"]}`, "model_id"),
		pv("Prediction request/model_id string", `{"model_id":5,"inputs":["x"]}`, "model_id"),
		pv("Prediction request/inputs required", `{"model_id":"`+modelID+`"}`, "inputs"),
		pv("Prediction request/inputs array of strings", `{"model_id":"`+modelID+`","inputs":"x"}`, "inputs"),
		pv("Prediction request/inputs items strings", `{"model_id":"`+modelID+`","inputs":[1]}`, "inputs[0]"),
		pv("Limits/inputs per request at most 500", many(501), "inputs"),
		{name: "Predict/unknown model_id", body: `{"model_id":"rm_nope","inputs":["x"]}`, status: 404, kind: KindNotFound, field: ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, e.h, "POST", "/api/v1/routers/predict", testKey, c.body)
			c.check(t, r.status, r.body, r.raw)
		})
	}
	t.Run("Limits/inputs per request 500 accepted", func(t *testing.T) {
		r := do(t, e.h, "POST", "/api/v1/routers/predict", testKey, many(500))
		if preds, _ := r.body["predictions"].([]any); r.status != 200 || len(preds) != 500 {
			t.Fatalf("%d, %d predictions", r.status, len(preds))
		}
	})
	t.Run("Prediction response/one per input in input order", func(t *testing.T) {
		inputs := []string{"Write a Python function to reverse a linked list", "What is 17 * 23?", "Translate 'good morning' into French"}
		predict := func(in []string) []map[string]any {
			b, _ := json.Marshal(map[string]any{"model_id": modelID, "inputs": in})
			r := do(t, e.h, "POST", "/api/v1/routers/predict", testKey, string(b))
			if r.status != 200 || r.body["version"] != version {
				t.Fatalf("%d %s (version want %q)", r.status, r.raw, version)
			}
			var out []map[string]any
			for _, p := range r.body["predictions"].([]any) {
				out = append(out, p.(map[string]any))
			}
			return out
		}
		fwd := predict(inputs)
		rev := predict([]string{inputs[2], inputs[1], inputs[0]})
		if len(fwd) != 3 || len(rev) != 3 {
			t.Fatalf("%d and %d predictions for 3 inputs", len(fwd), len(rev))
		}
		for i, p := range fwd {
			if fmt.Sprint(p) != fmt.Sprint(rev[2-i]) {
				t.Errorf("input %d: %v forwards, %v reversed", i, p, rev[2-i])
			}
			ranked, _ := p["models"].([]any)
			if len(ranked) != classes {
				t.Errorf("input %d: %d ranked models, want %d", i, len(ranked), classes)
			}
			prev := math.Inf(1)
			for j, m := range ranked {
				m := m.(map[string]any)
				c, _ := m["confidence"].(float64)
				if m["rank"] != float64(j+1) || c > prev || c < 0 || c > 1 || m["model"] == "" {
					t.Errorf("input %d: models[%d] = %v", i, j, m)
				}
				prev = c
			}
			top := ranked[0].(map[string]any)
			if p["top_model"] != top["model"] || p["top_prob"] != top["confidence"] {
				t.Errorf("input %d: top_model/top_prob %v/%v, models[0] %v", i, p["top_model"], p["top_prob"], top)
			}
		}
	})
}

func TestSpecOptimization(t *testing.T) {
	e := optimizeServer(t, fakeAgentRunner{block: func(sandbox.Job) bool { return true }})
	u := `"input_url":"` + e.url + `"`
	tm := `"target_models":["scripted/task"]`
	ex := func(name, body, msg string) specRefusal {
		return specRefusal{name: name, body: body, status: http.StatusUnprocessableEntity, kind: KindValidation, exact: msg}
	}
	refusals := []specRefusal{
		ex("Errors/input_url missing", `{"optimizer":"agentopt",`+tm+`}`, "agentopt requires input_url"),
		ex("Errors/input_url missing (empty string)", `{"optimizer":"agentopt","input_url":"",`+tm+`}`, "agentopt requires input_url"),
		ex("Errors/input_url missing (blank)", `{"optimizer":"agentopt","input_url":"  ",`+tm+`}`, "agentopt requires input_url"),
		ex("Errors/input_url missing (null)", `{"optimizer":"agentopt","input_url":null,`+tm+`}`, "agentopt requires input_url"),
		ex("Errors/input_url missing (empty body)", ``, "agentopt requires input_url"),
		ex("Errors/input_url missing comes before target_models empty", `{"optimizer":"agentopt","target_models":[]}`, "agentopt requires input_url"),
		ex("Errors/target_models empty", `{"optimizer":"agentopt",`+u+`,"target_models":[]}`, "agentopt requires target_models"),
		ex("Errors/target_models empty (absent)", `{"optimizer":"agentopt",`+u+`}`, "agentopt requires target_models"),
		ex("Errors/target_models empty (null)", `{"optimizer":"agentopt",`+u+`,"target_models":null}`, "agentopt requires target_models"),
		ex("Errors/target_models empty comes before n_iterations", `{"optimizer":"agentopt",`+u+`,"target_models":[],"n_iterations":0}`, "agentopt requires target_models"),
	}
	for _, b := range []struct {
		field     string
		lo, hi    int
		msg       string
		tooLarge  string
		tooSmall  string
		fraction  string
		nonNumber string
	}{
		{field: "n_iterations", lo: 1, hi: 50, msg: "n_iterations must be 1-50"},
		{field: "overall_timeout_seconds", lo: 300, hi: 7200, msg: "overall_timeout_seconds must be 300-7200"},
		{field: "llm_call_timeout_seconds", lo: 30, hi: 600, msg: "llm_call_timeout_seconds must be 30-600"},
		{field: "sandbox_timeout_seconds", lo: 60, hi: 1800, msg: "sandbox_timeout_seconds must be 60-1800"},
	} {
		for _, n := range []int{b.lo - 1, b.hi + 1, -1} {
			refusals = append(refusals, ex(fmt.Sprintf("Limits/%s %d-%d (%d)", b.field, b.lo, b.hi, n),
				fmt.Sprintf(`{"optimizer":"agentopt",%s,%s,%q:%d}`, u, tm, b.field, n), b.msg))
		}
		refusals = append(refusals,
			specRefusal{name: "Submit body/" + b.field + " integer", body: fmt.Sprintf(`{"optimizer":"agentopt",%s,%s,%q:%d.5}`, u, tm, b.field, b.lo),
				status: 422, kind: KindValidation, field: b.field},
			specRefusal{name: "Submit body/" + b.field + " number", body: fmt.Sprintf(`{"optimizer":"agentopt",%s,%s,%q:"%d"}`, u, tm, b.field, b.lo),
				status: 422, kind: KindValidation, field: b.field})
	}
	refusals = append(refusals,
		ex("Errors/n_iterations comes before overall_timeout_seconds", `{"optimizer":"agentopt",`+u+`,`+tm+`,"n_iterations":51,"overall_timeout_seconds":1}`, "n_iterations must be 1-50"),
		specRefusal{name: "Submit body/optimizer value agentopt", body: `{"optimizer":"dspy",` + u + `,` + tm + `}`, status: 422, kind: KindValidation, field: "optimizer"},
		specRefusal{name: "Submit body/optimizer string", body: `{"optimizer":1,` + u + `,` + tm + `}`, status: 422, kind: KindValidation, field: "optimizer"},
		specRefusal{name: "Submit body/input_url string", body: `{"optimizer":"agentopt","input_url":5,` + tm + `}`, status: 422, kind: KindValidation, field: "input_url"},
		specRefusal{name: "Submit body/input_url URL", body: `{"optimizer":"agentopt","input_url":"bundle.zip",` + tm + `}`, status: 422, kind: KindValidation, field: "input_url"},
		specRefusal{name: "Submit body/target_models array of strings", body: `{"optimizer":"agentopt",` + u + `,"target_models":"scripted/task"}`, status: 422, kind: KindValidation, field: "target_models"},
		specRefusal{name: "Submit body/target_models items strings", body: `{"optimizer":"agentopt",` + u + `,"target_models":[5]}`, status: 422, kind: KindValidation, field: "target_models[0]"},
		specRefusal{name: "Errors/401 missing key", body: `{"optimizer":"agentopt",` + u + `,` + tm + `}`, status: 401, kind: KindUnauthorized},
	)
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			key := testKey
			if c.status == 401 {
				key = ""
			}
			r := e.call(t, "POST", "/api/v1/optimize", key, c.body)
			c.check(t, r.status, r.body, r.raw)
		})
	}
	t.Run("Submit/refused requests create no job", func(t *testing.T) {
		if n := specCount(t, e.s, "/api/v1/optimize/jobs"); n != 0 {
			t.Fatalf("%d jobs after refused submits", n)
		}
	})

	submit := func(t *testing.T, extra string) map[string]any {
		t.Helper()
		r := e.call(t, "POST", "/api/v1/optimize", testKey, `{"optimizer":"agentopt",`+u+`,`+tm+extra+`}`)
		if r.status != http.StatusAccepted {
			t.Fatalf("%d %s", r.status, r.raw)
		}
		if id, _ := r.body["job_id"].(string); id == "" || r.body["status"] != "queued" || r.body["version"] == "" {
			t.Fatalf("Optimization job (returned on submit) %s: want job_id, status queued, version", r.raw)
		}
		// Stop it at once: the blocking runner would hold a sandbox slot.
		defer e.call(t, "POST", "/api/v1/optimize/cancel?job_id="+r.body["job_id"].(string), testKey, "")
		return r.body
	}
	t.Run("Limits/bounds inclusive (lower)", func(t *testing.T) {
		submit(t, `,"n_iterations":1,"overall_timeout_seconds":300,"llm_call_timeout_seconds":30,"sandbox_timeout_seconds":60`)
	})
	t.Run("Limits/bounds inclusive (upper)", func(t *testing.T) {
		submit(t, `,"n_iterations":50,"overall_timeout_seconds":7200,"llm_call_timeout_seconds":600,"sandbox_timeout_seconds":1800`)
	})
	t.Run("Submit body/defaults 15, 3600, 300, 600", func(t *testing.T) {
		sub := submit(t, "")
		id := sub["job_id"].(string)
		st := e.call(t, "GET", "/api/v1/optimize/status?job_id="+id, testKey, "")
		if st.status != 200 || st.body["n_iterations"] != 15.0 {
			t.Errorf("status n_iterations = %v, want 15: %s", st.body["n_iterations"], st.raw)
		}
		rec, err := store.GetJSON[map[string]any](context.Background(), e.s.Store(), store.OptimizationJobs, id)
		if err != nil {
			t.Fatal(err)
		}
		for f, want := range map[string]string{"overall_timeout": "1h0m0s", "llm_call_timeout": "5m0s", "sandbox_timeout": "10m0s"} {
			if rec[f] != want {
				t.Errorf("stored %s = %v, want %s", f, rec[f], want)
			}
		}
	})
	t.Run("Optimization job status/fields and results before the end", func(t *testing.T) {
		r := e.call(t, "POST", "/api/v1/optimize", testKey, `{"optimizer":"agentopt",`+u+`,`+tm+`,"n_iterations":3}`)
		id, _ := r.body["job_id"].(string)
		st := e.call(t, "GET", "/api/v1/optimize/status?job_id="+id, testKey, "")
		if st.status != 200 {
			t.Fatalf("%d %s", st.status, st.raw)
		}
		if s := st.body["status"]; s != "queued" && s != "running" {
			t.Errorf("status = %v", s)
		}
		for _, f := range []string{"current_iteration", "n_iterations"} {
			if n, ok := st.body[f].(float64); !ok || n != math.Trunc(n) {
				t.Errorf("%s = %v, want an integer", f, st.body[f])
			}
		}
		if st.body["n_iterations"] != 3.0 || st.body["error_message"] != nil {
			t.Errorf("status %s", st.raw)
		}
		res := e.call(t, "GET", "/api/v1/optimize/results?job_id="+id, testKey, "")
		if res.status != http.StatusConflict || res.body["status"] == nil {
			t.Errorf("results of an unfinished job: %d %s", res.status, res.raw)
		}
		e.call(t, "POST", "/api/v1/optimize/cancel?job_id="+id, testKey, "")
		done := e.wait(t, id)
		if done.body["status"] != "interrupted" || done.body["error_message"] == nil {
			t.Errorf("States/interrupted with error_message: %s", done.raw)
		}
		res = e.call(t, "GET", "/api/v1/optimize/results?job_id="+id, testKey, "")
		if res.status != 200 || res.body["job_id"] != id || res.body["status"] != "interrupted" {
			t.Errorf("Optimization result: %d %s", res.status, res.raw)
		}
		if _, ok := res.body["results"].([]any); !ok {
			t.Errorf("Optimization result/results not an array: %s", res.raw)
		}
	})
	for _, c := range []struct {
		name, path string
		status     int
		names      string
	}{
		{"Status/job_id required", "/api/v1/optimize/status", 422, "job_id"},
		{"Results/job_id required", "/api/v1/optimize/results", 422, "job_id"},
		{"Status/job_id required (blank)", "/api/v1/optimize/status?job_id=%20", 422, "job_id"},
		{"Results/job_id required (blank)", "/api/v1/optimize/results?job_id=%20", 422, "job_id"},
		{"Status/unknown job_id", "/api/v1/optimize/status?job_id=opt_nope", 404, "opt_nope"},
		{"Results/unknown job_id", "/api/v1/optimize/results?job_id=opt_nope", 404, "opt_nope"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.call(t, "GET", c.path, testKey, "")
			kind := KindValidation
			if c.status == 404 {
				kind = KindNotFound
			}
			wantError(t, r, c.status, kind, c.names)
		})
	}
}

// TestSpecAuthentication: every operation of the spec takes the key as a bearer token and
// answers a missing or invalid one with 401 and the error body.
func TestSpecAuthentication(t *testing.T) {
	ms, _ := modelSelectServer(t, nil)
	ro := routersServer(t)
	op := optimizeServer(t, fakeAgentRunner{})
	type route struct {
		h            http.Handler
		method, path string
	}
	routes := []route{
		{ms.Config.Handler, "POST", "/api/v1/model-select"},
		{ms.Config.Handler, "POST", "/v1/modelSelect"},
		{op.s, "POST", "/api/v1/completions"},
		{ro.h, "POST", "/api/v1/routers/train"},
		{ro.h, "GET", "/api/v1/routers/train/status?task_id=tj_x"},
		{ro.h, "GET", "/api/v1/routers/models?model_id=rm_x"},
		{ro.h, "POST", "/api/v1/routers/predict"},
		{op.s, "POST", "/api/v1/optimize"},
		{op.s, "GET", "/api/v1/optimize/status?job_id=opt_x"},
		{op.s, "GET", "/api/v1/optimize/results?job_id=opt_x"},
	}
	for _, r := range routes {
		for _, a := range []struct{ name, header string }{
			{"missing key", ""},
			{"invalid key", "Bearer not-a-key"},
			{"not the bearer scheme", "Basic " + testKey},
			{"key without a scheme", testKey},
			{"bearer without a key", "Bearer "},
		} {
			t.Run(fmt.Sprintf("Authentication/%s %s %s", a.name, r.method, r.path), func(t *testing.T) {
				req, _ := http.NewRequest(r.method, r.path, strings.NewReader(`{}`))
				if a.header != "" {
					req.Header.Set("Authorization", a.header)
				}
				rec := httptest.NewRecorder()
				r.h.ServeHTTP(rec, req)
				var body map[string]any
				json.Unmarshal(rec.Body.Bytes(), &body)
				if m, _ := body["message"].(string); rec.Code != 401 || body["error"] != KindUnauthorized || m == "" {
					t.Fatalf("%d %s, want 401 {error: Unauthorized, message}", rec.Code, rec.Body)
				}
			})
		}
	}
	t.Run("Authentication/bearer scheme name is case-insensitive", func(t *testing.T) {
		// RFC 9110: the auth-scheme is case-insensitive; clients send "bearer" too.
		req, _ := http.NewRequest("GET", "/api/v1/optimize/status?job_id=opt_x", nil)
		req.Header.Set("Authorization", "bearer "+testKey)
		rec := httptest.NewRecorder()
		op.s.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotFound {
			t.Fatalf("%d %s, want the 404 of an authenticated call", rec.Code, rec.Body)
		}
	})
}

// TestSpecVersioning: the path prefix is /api/v1 and the version strings agree.
func TestSpecVersioning(t *testing.T) {
	op := optimizeServer(t, fakeAgentRunner{block: func(sandbox.Job) bool { return true }})
	for _, p := range []string{"/api/v1/completions", "/api/v1/optimize"} {
		t.Run("Versioning/prefix "+p, func(t *testing.T) {
			r := op.call(t, "POST", strings.Replace(p, "/api/v1", "/api/v2", 1), testKey, `{}`)
			if r.status != http.StatusNotFound {
				t.Errorf("%s under /api/v2: %d", p, r.status)
			}
		})
	}
	t.Run("Versioning/optimize submit carries the server's version", func(t *testing.T) {
		r := op.call(t, "POST", "/api/v1/optimize", testKey, `{"optimizer":"agentopt","input_url":"`+op.url+`","target_models":["scripted/task"]}`)
		if r.status != 202 || r.body["version"] != op.svc.Version() || op.svc.Version() == "" {
			t.Fatalf("%d %s (service version %q)", r.status, r.raw, op.svc.Version())
		}
		op.call(t, "POST", "/api/v1/optimize/cancel?job_id="+r.body["job_id"].(string), testKey, "")
	})
}
