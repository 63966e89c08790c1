package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/internal/npmtest"
	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// The tests here drive the real coding-agent CLIs — Gemini CLI, Claude Code, Codex CLI —
// headless through the gateway, each on its own surface, as their users run them: the
// scripted upstream asks the agent to read two files in a temporary working directory
// with the agent's own built-in tool (two parallel calls), then answers once the files'
// contents came back, each paired with its call. Each
// installs its npm package into a temporary directory and runs with HOME and the XDG
// directories in temporary directories (nothing of the machine's configuration is read
// or written), telemetry and update checks off, and a dead proxy for anything not on
// localhost. They skip, saying why, under -short, without node and npm, or when the
// package cannot be installed or its binary cannot run here.

// agentFiles are the files the scripted model asks an agent to read, in parallel, one call
// each: call i reads agentFiles[i] with the id agentCallIDs[i].
var (
	agentFiles   = []string{"notes.txt", "extra.txt"}
	agentCallIDs = []string{"call_agent_1", "call_agent_2"}
)

// agentUpstream is a scripted OpenAI-compatible LLM for a coding agent's tool loop, in
// the format the gateway asks it in (chat completions, or OpenAI's Responses API). A
// request offering one of the tools named in tools is answered, until the conversation
// holds a tool result, with two parallel calls of that tool reading agentFiles, whose
// arguments args builds from the tool's parameter schema; after the results, with final.
// Requests without those tools (an agent's side tasks: titles, next-speaker checks, …)
// get a short text, or JSON following the requested schema. It keeps the requests, the
// upstream paths asked and the tool results it saw, by call id.
type agentUpstream struct {
	srv   *httptest.Server
	tools []string
	args  func(tool string, params map[string]any, file string) string
	final string

	mu       sync.Mutex
	requests []map[string]any
	results  map[string]string // the last tool results seen, by call id
	paths    []string          // the upstream paths asked, in order
	calls    int               // the turns that called the tool
}

func newAgentUpstream(t *testing.T, tools []string, args func(string, map[string]any, string) string, final string) *agentUpstream {
	u := &agentUpstream{tools: tools, args: args, final: final}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	return u
}

// setArgs sets the tool call arguments of the turns to come (args: set once the agent's
// directory is known), under mu: the agent is another process, whose requests the race
// detector sees no ordering with.
func (u *agentUpstream) setArgs(args func(tool string, params map[string]any, file string) string) {
	u.mu.Lock()
	u.args = args
	u.mu.Unlock()
}

func (u *agentUpstream) serve(w http.ResponseWriter, r *http.Request) {
	responses := strings.HasSuffix(r.URL.Path, "/responses") // OpenAI's Responses API: web search asked
	if !responses && !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"the scripted upstream serves chat completions and responses only"}}`, http.StatusNotFound)
		return
	}
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// The tool offered, in either API's declaration, and the tool results, by call id.
	var tool string
	var params map[string]any
	for _, name := range u.tools {
		for _, x := range asSlice(req["tools"]) {
			f := asMap(x)
			if fn := asMap(f["function"]); fn != nil {
				f = fn
			}
			if f["name"] == name && tool == "" {
				tool, params = name, asMap(f["parameters"])
			}
		}
	}
	results := map[string]string{}
	for _, m := range append(asSlice(req["messages"]), asSlice(req["input"])...) {
		mm := asMap(m)
		switch {
		case mm["role"] == "tool":
			b, _ := json.Marshal(mm["content"])
			results[fmt.Sprint(mm["tool_call_id"])] = string(b)
		case mm["type"] == "function_call_output":
			b, _ := json.Marshal(mm["output"])
			results[fmt.Sprint(mm["call_id"])] = string(b)
		}
	}
	format := asMap(req["response_format"])
	if f := asMap(asMap(req["text"])["format"]); f != nil {
		format = map[string]any{"type": f["type"], "json_schema": f}
	}
	call := tool != "" && len(results) == 0
	u.mu.Lock()
	u.requests = append(u.requests, req)
	u.paths = append(u.paths, r.URL.Path)
	if tool != "" && len(results) > 0 {
		u.results = results
	}
	if call {
		u.calls++
	}
	argsOf := u.args
	u.mu.Unlock()

	text := "OK."
	switch {
	case tool != "":
		text = u.final
	case format["type"] == "json_schema":
		b, _ := json.Marshal(sampleJSON(asMap(asMap(format["json_schema"])["schema"])))
		text = string(b)
	case format["type"] == "json_object":
		text = `{"next_speaker":"user","reasoning":"done"}`
	}
	var args []string
	if call {
		for _, f := range agentFiles {
			args = append(args, argsOf(tool, params, f))
		}
	}
	stream, _ := req["stream"].(bool)
	if responses {
		respondResponses(w, req["model"], stream, tool, args, text)
		return
	}
	usage := `{"prompt_tokens":120,"completion_tokens":12,"total_tokens":132}`
	var calls []string
	for i, a := range args {
		calls = append(calls, fmt.Sprintf(`{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}`, i, agentCallIDs[i], tool, jsonString(a)))
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		msg := `{"role":"assistant","content":` + jsonString(text) + `}`
		finish := "stop"
		if call {
			msg, finish = `{"role":"assistant","content":null,"tool_calls":[`+strings.Join(calls, ",")+`]}`, "tool_calls"
		}
		fmt.Fprintf(w, `{"id":"chatcmpl-agent","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":%s,"finish_reason":%q}],"usage":%s}`,
			req["model"], msg, finish, usage)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta, finish string) {
		fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-agent\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n",
			req["model"], delta, finish)
	}
	if call {
		for i, c := range calls {
			role := ""
			if i == 0 {
				role = `"role":"assistant",`
			}
			chunk(`{`+role+`"tool_calls":[`+c+`]}`, "null")
		}
		chunk(`{}`, `"tool_calls"`)
	} else {
		chunk(`{"role":"assistant","content":""}`, "null")
		for _, piece := range strings.SplitAfter(text, " ") {
			chunk(`{"content":`+jsonString(piece)+`}`, "null")
		}
		chunk(`{}`, `"stop"`)
	}
	fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-agent\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[],\"usage\":%s}\n\ndata: [DONE]\n\n", req["model"], usage)
}

// agentReasoning is the encrypted reasoning the scripted upstream returns before a GPT-5
// model's calls on the Responses API.
const agentReasoning = "enc-agent-reasoning"

// respondResponses answers in the Responses API's format, whole or as its event stream:
// the function calls of tool with args (one item each; after an encrypted reasoning item
// for a GPT-5 model), or else the message text.
func respondResponses(w http.ResponseWriter, model any, stream bool, tool string, args []string, text string) {
	items := []string{`{"type":"message","id":"msg_agent","status":"completed","role":"assistant","content":[{"type":"output_text","text":` + jsonString(text) + `,"annotations":[]}]}`}
	if len(args) > 0 {
		items = nil
		if strings.HasPrefix(fmt.Sprint(model), "gpt-5") { // a reasoning model: its reasoning comes first, encrypted
			items = append(items, `{"type":"reasoning","id":"rs_agent","summary":[],"encrypted_content":"`+agentReasoning+`"}`)
		}
		for i, a := range args {
			items = append(items, fmt.Sprintf(`{"type":"function_call","id":"fc_agent_%d","status":"completed","call_id":%q,"name":%q,"arguments":%s}`, i, agentCallIDs[i], tool, jsonString(a)))
		}
	}
	response := fmt.Sprintf(`{"id":"resp_agent","object":"response","created_at":1,"status":"completed","model":%s,"output":[%s],"usage":{"input_tokens":120,"output_tokens":12,"total_tokens":132}}`,
		jsonString(fmt.Sprint(model)), strings.Join(items, ","))
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, response)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(typ, body string) { fmt.Fprintf(w, "event: %s\ndata: {\"type\":%q,%s}\n\n", typ, typ, body) }
	calls := items[len(items)-len(args):]
	if len(args) > 0 && len(items) > len(args) {
		event("response.output_item.added", `"output_index":0,"item":{"type":"reasoning","id":"rs_agent","summary":[]}`)
		event("response.output_item.done", `"output_index":0,"item":`+items[0])
	}
	for i, a := range args {
		n := i + len(items) - len(args)
		event("response.output_item.added", fmt.Sprintf(`"output_index":%d,"item":%s`, n, strings.Replace(calls[i], `"arguments":`+jsonString(a), `"arguments":""`, 1)))
		event("response.function_call_arguments.delta", fmt.Sprintf(`"output_index":%d,"item_id":"fc_agent_%d","delta":%s`, n, i, jsonString(a)))
		event("response.output_item.done", fmt.Sprintf(`"output_index":%d,"item":%s`, n, calls[i]))
	}
	if len(args) == 0 {
		event("response.output_item.added", `"output_index":0,"item":{"type":"message","id":"msg_agent","status":"in_progress","role":"assistant","content":[]}`)
		for _, piece := range strings.SplitAfter(text, " ") {
			event("response.output_text.delta", `"output_index":0,"content_index":0,"item_id":"msg_agent","delta":`+jsonString(piece))
		}
		event("response.output_item.done", `"output_index":0,"item":`+items[0])
	}
	event("response.completed", `"response":`+response)
}

// snapshot returns how many requests the upstream answered, how many turns called the
// tool, the last tool results it saw by call id, and the upstream paths asked.
func (u *agentUpstream) snapshot() (requests, calls int, results map[string]string, paths []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.requests), u.calls, maps.Clone(u.results), slices.Clone(u.paths)
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asSlice(v any) []any        { s, _ := v.([]any); return s }
func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }
func firstProperty(params map[string]any, names ...string) string {
	props := asMap(params["properties"])
	for _, n := range names {
		if _, ok := props[n]; ok {
			return n
		}
	}
	return names[0]
}

// sampleJSON is a value following a JSON schema's required shape: what a side task asking
// for structured output (Gemini CLI's next-speaker check) needs to go on.
func sampleJSON(schema map[string]any) any {
	if e := asSlice(schema["enum"]); len(e) > 0 {
		return e[0]
	}
	switch typ, _ := schema["type"].(string); strings.ToLower(typ) {
	case "object":
		out := map[string]any{}
		props := asMap(schema["properties"])
		for name, p := range props {
			if name == "next_speaker" {
				out[name] = "user"
				continue
			}
			out[name] = sampleJSON(asMap(p))
		}
		return out
	case "array":
		return []any{}
	case "boolean":
		return false
	case "integer", "number":
		return 0
	}
	return "ok"
}

// agentGateway starts the real server over a gateway whose openai provider is up, with
// the model groups given, the usage log as its observer and the usage routes, and returns
// the server's base URL and a reader of the usage log under a key.
func agentGateway(t *testing.T, up *agentUpstream, groups map[string]completions.ModelGroup, extra ...server.Option) (base string, usage func(key string) []usagelog.Request) {
	rec := usagelog.New(usagelog.Options{})
	gw := envGatewayWith(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.srv.URL}, func(o *completions.Options) {
		o.ModelGroups = groups
		o.Observer = rec
	})
	_, base = realServerURL(t, func(st *store.Store, u string) []server.Option {
		return append(append(gw(st, u), server.Usage(rec)), extra...)
	})
	return base, func(key string) []usagelog.Request {
		req, _ := http.NewRequest("GET", base+"/api/v1/usage/requests?limit=500", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct{ Data []usagelog.Request }
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("usage log: %d %v", resp.StatusCode, err)
		}
		return out.Data
	}
}

// agentSandbox is a temporary working directory holding agentFiles, each with a unique
// marker (marker-<file name>),
// and an environment with HOME and the XDG directories in a temporary directory, PATH
// kept, and every other variable dropped (no real keys or configuration leak in): extra
// is added to it.
func agentSandbox(t *testing.T, extra map[string]string) (work, marker, home string, env []string) {
	root := t.TempDir()
	work, home = filepath.Join(root, "work"), filepath.Join(root, "home")
	marker = fmt.Sprintf("switchyard-marker-%d", time.Now().UnixNano())
	for _, d := range []string{work, home, filepath.Join(home, ".config"), filepath.Join(home, ".cache"), filepath.Join(home, ".local", "share"), filepath.Join(home, ".local", "state")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range agentFiles {
		if err := os.WriteFile(filepath.Join(work, f), []byte("The release codename is "+marker+"-"+f+".\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	proxy := deadProxy(t)
	env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "USERPROFILE=" + home, "TMPDIR=" + root, "LANG=C.UTF-8", "TERM=dumb", "CI=1", "NO_COLOR=1",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		// Anything not on localhost goes to a proxy that refuses it and fails the test: no
		// telemetry, update check or download leaves the machine (for the clients that
		// honour the proxy variables — Claude Code and Codex do, as Gemini CLI's HTTP
		// agent does).
		"HTTP_PROXY=" + proxy, "HTTPS_PROXY=" + proxy, "http_proxy=" + proxy, "https_proxy=" + proxy, "ALL_PROXY=" + proxy,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost", "NODE_USE_ENV_PROXY=1",
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return work, marker, home, env
}

// deadProxy is a proxy that refuses every request, failing the test with what it was
// asked for: an agent's attempt to reach the network beyond localhost.
func deadProxy(t *testing.T) string {
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the agent tried to reach the network: %s %s", r.Method, r.Host)
		http.Error(w, "no network in tests", http.StatusForbidden)
	}))
	t.Cleanup(p.Close)
	return p.URL
}

// runAgent runs an agent CLI headless in work with env, at most 90 s, and returns its
// standard output; the test fails with both outputs when the CLI fails.
func runAgent(t *testing.T, work string, env []string, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = work, env
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s ran %v", filepath.Base(bin), time.Since(start).Round(100*time.Millisecond))
	if err != nil {
		t.Fatalf("%s %v: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), args, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// checkAgentRun asserts what every agent's session shows: the scripted tool calls were
// made in one turn, each result (its file's marker) came back to the model with its
// call's id, the CLI printed the final answer, and the usage log holds every upstream call
// under the key used — ok, answered by the model named — (besides requests refused before
// any model) and none under another key.
func checkAgentRun(t *testing.T, up *agentUpstream, usage func(string) []usagelog.Request, out, marker, model string) {
	t.Helper()
	requests, calls, results, paths := up.snapshot()
	var offered []string
	up.mu.Lock()
	for _, x := range asSlice(up.requests[0]["tools"]) {
		f := asMap(x)
		if fn := asMap(f["function"]); fn != nil {
			f = fn
		}
		name, _ := f["name"].(string)
		if name == "" {
			name = fmt.Sprint(f["type"])
		}
		offered = append(offered, name)
	}
	up.mu.Unlock()
	t.Logf("upstream: %d requests %v; the first offered %v", requests, paths, offered)
	if calls != 1 || len(results) != len(agentFiles) {
		t.Errorf("tool loop: %d calling turns, results %q", calls, results)
	}
	for i, f := range agentFiles {
		if r := results[agentCallIDs[i]]; !strings.Contains(r, marker+"-"+f) {
			t.Errorf("the result of %s (reading %s) reached the model as %q", agentCallIDs[i], f, r)
		}
	}
	if !strings.Contains(out, up.final) {
		t.Errorf("the CLI's output lacks the final answer %q:\n%s", up.final, out)
	}
	var logged []usagelog.Request
	for _, r := range usage(testKey) {
		// A request the gateway refused before any model (a CLI's side request for a
		// model it does not serve) is in the log too, under its x-request-id.
		if len(r.Attempts) == 0 && r.Model == usagelog.NoModel {
			if r.Outcome != "error" || r.RequestID == "" {
				t.Errorf("usage log, a refused request: %+v", r)
			}
			t.Logf("refused, as logged: %s", r.Error)
			continue
		}
		logged = append(logged, r)
	}
	if len(logged) != requests || requests < 2 {
		t.Errorf("usage log holds %d requests under the key, the upstream answered %d", len(logged), requests)
	}
	for _, r := range logged {
		if r.Outcome != "ok" || r.Model != model || r.TotalTokens != 132 {
			t.Errorf("usage log: %+v", r)
		}
	}
	if other := usage(otherKey); len(other) != 0 {
		t.Errorf("another key's usage log holds %d requests", len(other))
	}
}

// agentBinary installs spec and returns its bin's path, skipping when the binary cannot
// run here (probed with --version). Callers pin exact versions (the ones these tests were
// written against): a new release that behaves differently must not fail an unrelated
// change's CI; move them on purpose.
func agentBinary(t *testing.T, spec, bin, what string, env []string) string {
	t.Helper()
	_, dir := npmtest.Install(t, spec, what)
	path := filepath.Join(dir, "node_modules", ".bin", bin)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = env
	v, err := cmd.Output()
	if err != nil {
		t.Skipf("skipping: %s does not run here: %v", what, err)
	}
	t.Logf("%s %s", what, strings.TrimSpace(string(v)))
	return path
}

// TestAgentCLIGeminiCLI runs Gemini CLI (npm @google/gemini-cli) headless on the Gemini
// surface, configured as README says: GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY, the
// gemini-api-key auth type in its settings. The model reads notes.txt and extra.txt in parallel with read_file: once
// with a gateway model named (-m openai/gpt-4o-mini), once on Gemini CLI's own default
// model, which a model group of the same name answers for (as do its other Gemini models).
func TestAgentCLIGeminiCLI(t *testing.T) {
	_, _, _, env := agentSandbox(t, nil)
	bin := agentBinary(t, "@google/gemini-cli@0.61.0", "gemini", "Gemini CLI", env)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"gateway model", []string{"-m", "openai/gpt-4o-mini"}},
		{"default model through a model group", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			final := "Gemini CLI read the codename through Switchyard (" + tc.name + ")."
			up := newAgentUpstream(t, []string{"read_file"}, func(_ string, params map[string]any, file string) string {
				b, _ := json.Marshal(map[string]string{firstProperty(params, "file_path", "absolute_path", "path"): file})
				return string(b)
			}, final)
			mini := completions.ModelGroup{Models: []string{"openai/gpt-4o-mini"}}
			groups := map[string]completions.ModelGroup{}
			for _, m := range []string{"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-3-pro-preview",
				"gemini-3-flash-preview", "gemini-3.1-pro-preview", "gemini-3.1-pro-preview-customtools"} {
				groups[m] = mini
			}
			base, usage := agentGateway(t, up, groups)
			work, marker, home, env := agentSandbox(t, map[string]string{
				"GOOGLE_GEMINI_BASE_URL": base, "GEMINI_API_KEY": testKey,
				"GEMINI_TELEMETRY_ENABLED": "false", "GEMINI_CLI_NO_RELAUNCH": "true",
			})
			settings := `{"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
				"general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
				"privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false},
				"tools": {"useRipgrep": false}}`
			if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(settings), 0o644); err != nil {
				t.Fatal(err)
			}
			out := runAgent(t, work, env, bin, append(tc.args, "--output-format", "json",
				"-p", "Read notes.txt and extra.txt and tell me the release codenames.")...)
			var got struct {
				Response string `json:"response"`
			}
			if err := json.Unmarshal([]byte(out[max(strings.Index(out, "{"), 0):]), &got); err != nil {
				t.Fatalf("Gemini CLI's JSON output: %v\n%s", err, out)
			}
			checkAgentRun(t, up, usage, got.Response, marker, "openai/gpt-4o-mini")
		})
	}
}

// claudeCodeEnv is Claude Code's environment for the gateway at base: the Anthropic
// surface with the test key, every model it asks for named as a gateway model, and its
// non-essential traffic (telemetry, updates, error reports) off.
func claudeCodeEnv(base string) map[string]string {
	return map[string]string{
		"ANTHROPIC_BASE_URL": base, "ANTHROPIC_API_KEY": testKey,
		"ANTHROPIC_MODEL": "openai/gpt-4o-mini", "ANTHROPIC_SMALL_FAST_MODEL": "openai/gpt-4o-mini",
		"ANTHROPIC_DEFAULT_HAIKU_MODEL": "openai/gpt-4o-mini", "ANTHROPIC_DEFAULT_SONNET_MODEL": "openai/gpt-4o-mini",
		"ANTHROPIC_DEFAULT_OPUS_MODEL":             "openai/gpt-4o-mini",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
		"DISABLE_ERROR_REPORTING": "1", "DISABLE_BUG_COMMAND": "1", "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
	}
}

// codexConfig is Codex CLI's config.toml for model through the gateway's /v1 at baseURL
// (the Responses wire API, the key in SWITCHYARD_API_KEY), with plugins, analytics and
// feedback off; extra (TOML tables) is added before them.
func codexConfig(model, baseURL, extra string) string {
	return fmt.Sprintf(`model = %q
model_provider = "switchyard"
check_for_update_on_startup = false

[model_providers.switchyard]
name = "Switchyard"
base_url = %q
env_key = "SWITCHYARD_API_KEY"
wire_api = "responses"
%s
[features]
plugins = false

[analytics]
enabled = false

[feedback]
enabled = false
`, model, baseURL, extra)
}

// TestAgentCLIClaudeCode runs Claude Code (npm @anthropic-ai/claude-code) headless
// (claude -p --output-format json) on the Anthropic surface with ANTHROPIC_BASE_URL and
// ANTHROPIC_API_KEY, its main and small models named as gateway models. The model reads
// notes.txt and extra.txt in parallel with Read.
func TestAgentCLIClaudeCode(t *testing.T) {
	const final = "Claude Code read the codename through Switchyard."
	up := newAgentUpstream(t, []string{"Read"}, nil, final) // args once the directory is known
	base, usage := agentGateway(t, up, nil)
	work, marker, _, env := agentSandbox(t, claudeCodeEnv(base))
	up.setArgs(func(_ string, _ map[string]any, file string) string {
		b, _ := json.Marshal(map[string]string{"file_path": filepath.Join(work, file)})
		return string(b)
	})
	bin := agentBinary(t, "@anthropic-ai/claude-code@2.1.197", "claude", "Claude Code", env)
	out := runAgent(t, work, env, bin, "-p", "Read notes.txt and extra.txt and tell me the release codenames.",
		"--output-format", "json", "--allowedTools", "Read")
	var got struct {
		Result  string `json:"result"`
		IsError bool   `json:"is_error"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.IsError {
		t.Fatalf("Claude Code's JSON output: %v\n%s", err, out)
	}
	checkAgentRun(t, up, usage, got.Result, marker, "openai/gpt-4o-mini")
}

// TestAgentCLIClaudeCodeMCP runs Claude Code headless as TestAgentCLIClaudeCode does, with
// the gateway's MCP endpoint as its one MCP server (--mcp-config, type http, the key in
// an Authorization header): Claude Code lists the tools of /mcp, and the model's two
// parallel calls of mcp__switchyard__docs-echo go through the gateway to a real MCP
// server, whose answers (the marker of each file, echoed) reach the model by call id.
func TestAgentCLIClaudeCodeMCP(t *testing.T) {
	const final = "Claude Code echoed the codenames through Switchyard's MCP gateway."
	const tool = "mcp__switchyard__docs-echo"
	up := newAgentUpstream(t, []string{tool}, nil, final)
	docs := mcpgatewaytest.StartFakeHTTP(t, "fake-docs")
	g, err := mcpgateway.New([]mcpgateway.ServerConfig{{Name: "docs", URL: docs.URL, AllowedTools: []string{"echo"}}}, mcpgateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	base, usage := agentGateway(t, up, nil, server.MCP(g))
	work, marker, _, env := agentSandbox(t, claudeCodeEnv(base))
	up.setArgs(func(_ string, _ map[string]any, file string) string {
		// The file's marker as the agent's sandbox wrote it, echoed back by the MCP server.
		b, _ := os.ReadFile(filepath.Join(work, file))
		a, _ := json.Marshal(map[string]string{"text": strings.TrimSpace(string(b))})
		return string(a)
	})
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	mcpCfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"switchyard": map[string]any{
		"type": "http", "url": base + "/mcp", "headers": map[string]string{"Authorization": "Bearer " + testKey}}}})
	if err := os.WriteFile(cfg, mcpCfg, 0o600); err != nil {
		t.Fatal(err)
	}
	bin := agentBinary(t, "@anthropic-ai/claude-code@2.1.197", "claude", "Claude Code", env)
	out := runAgent(t, work, env, bin, "-p", "Echo the release codenames with the docs echo tool.",
		"--output-format", "json", "--mcp-config", cfg, "--strict-mcp-config", "--allowedTools", tool)
	var got struct {
		Result  string `json:"result"`
		IsError bool   `json:"is_error"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.IsError {
		t.Fatalf("Claude Code's JSON output: %v\n%s", err, out)
	}
	checkAgentRun(t, up, usage, got.Result, marker, "openai/gpt-4o-mini")
	if n := docs.Calls.Load(); n != int64(len(agentFiles)) {
		t.Errorf("the MCP server answered %d calls, want %d", n, len(agentFiles))
	}
}

// TestAgentCLICodex runs Codex CLI (npm @openai/codex, a native binary) headless (codex
// exec) on the Responses surface, with a model provider whose base_url is the gateway's
// /v1 and wire_api "responses", configured in a temporary CODEX_HOME. The model reads
// notes.txt and extra.txt in parallel through Codex's shell tool: on GPT-4o mini, which Codex's web_search tool
// sends to OpenAI's Responses API, on GPT-4.1 nano, which has no search there and so
// gets the request translated to chat completions, and on GPT-5 codex (Responses API
// only), whose encrypted reasoning must come back to it with its calls' results.
func TestAgentCLICodex(t *testing.T) {
	_, _, _, env := agentSandbox(t, nil)
	bin := agentBinary(t, "@openai/codex@0.171.0", "codex", "Codex CLI", env)
	for _, tc := range []struct{ model, path string }{
		{"openai/gpt-4o-mini", "/responses"},
		{"openai/gpt-4.1-nano", "/chat/completions"},
		{"openai/gpt-5-codex", "/responses"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			final := "Codex read the codename through Switchyard on " + tc.model + "."
			up := newAgentUpstream(t, []string{"exec_command", "shell_command", "shell"}, func(tool string, params map[string]any, file string) string {
				var v any = map[string]any{"command": []string{"cat", file}}
				switch tool {
				case "exec_command":
					v = map[string]any{firstProperty(params, "cmd", "command"): "cat " + file}
				case "shell_command":
					v = map[string]any{"command": "cat " + file}
				}
				b, _ := json.Marshal(v)
				return string(b)
			}, final)
			base, usage := agentGateway(t, up, nil)
			work, marker, home, env := agentSandbox(t, map[string]string{"SWITCHYARD_API_KEY": testKey})
			codexHome := filepath.Join(home, ".codex")
			env = append(env, "CODEX_HOME="+codexHome)
			config := codexConfig(tc.model, base+"/v1", "")
			if err := os.MkdirAll(codexHome, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644); err != nil {
				t.Fatal(err)
			}
			out := runAgent(t, work, env, bin, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
				"Read notes.txt and extra.txt and tell me the release codenames.")
			checkAgentRun(t, up, usage, out, marker, tc.model)
			if _, _, _, paths := up.snapshot(); len(paths) == 0 || paths[0] != tc.path {
				t.Errorf("the upstream was asked at %v, want %s", paths, tc.path)
			}
			if strings.Contains(tc.model, "gpt-5") {
				// The reasoning the model returned encrypted went back to it with its calls.
				up.mu.Lock()
				input, _ := json.Marshal(up.requests[len(up.requests)-1]["input"])
				up.mu.Unlock()
				if !strings.Contains(string(input), `"encrypted_content":"`+agentReasoning+`"`) {
					t.Errorf("the encrypted reasoning did not go back to the model: %s", input)
				}
			}
		})
	}
}

// TestAgentCLICodexMCP runs Codex CLI headless as TestAgentCLICodex does, with the
// gateway's MCP endpoint as an MCP server configured as README says ([mcp_servers.switchyard]
// url and bearer_token_env_var): the model's two parallel calls of the docs echo tool go
// through the gateway to a real MCP server, and their answers reach the model by call id.
func TestAgentCLICodexMCP(t *testing.T) {
	_, _, _, env := agentSandbox(t, nil)
	bin := agentBinary(t, "@openai/codex@0.171.0", "codex", "Codex CLI", env)
	const model = "openai/gpt-4.1-nano"
	final := "Codex echoed the codenames through Switchyard's MCP gateway."
	var work string
	up := newAgentUpstream(t, []string{"docs_echo"}, // Codex declares an MCP server's tools in a namespace; "-" becomes "_"
		func(_ string, _ map[string]any, file string) string {
			b, _ := os.ReadFile(filepath.Join(work, file))
			a, _ := json.Marshal(map[string]string{"text": strings.TrimSpace(string(b))})
			return string(a)
		}, final)
	docs := mcpgatewaytest.StartFakeHTTP(t, "fake-docs")
	g, err := mcpgateway.New([]mcpgateway.ServerConfig{{Name: "docs", URL: docs.URL, AllowedTools: []string{"echo"}}}, mcpgateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	base, usage := agentGateway(t, up, nil, server.MCP(g))
	var marker, home string
	work, marker, home, env = agentSandbox(t, map[string]string{"SWITCHYARD_API_KEY": testKey})
	codexHome := filepath.Join(home, ".codex")
	env = append(env, "CODEX_HOME="+codexHome)
	config := codexConfig(model, base+"/v1", fmt.Sprintf(`
[mcp_servers.switchyard]
url = %q
bearer_token_env_var = "SWITCHYARD_API_KEY"
`, base+"/mcp"))
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runAgent(t, work, env, bin, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
		"Echo the release codenames with the docs echo tool.")
	checkAgentRun(t, up, usage, out, marker, model)
	if n := docs.Calls.Load(); n != int64(len(agentFiles)) {
		t.Errorf("the MCP server answered %d calls, want %d", n, len(agentFiles))
	}
}
