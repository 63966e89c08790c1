package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/console"
	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/inference"
	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/trainer"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// chromiumPath finds a Chromium or Chrome binary (SWITCHYARD_CHROMIUM overrides).
func chromiumPath() string {
	if p := os.Getenv("SWITCHYARD_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// headless drives a headless Chromium: each page is one run that loads a URL, lets it run
// for a few seconds of virtual time, saves a screenshot and prints the rendered DOM.
type headless struct {
	bin, dir string
}

// render loads url and returns its DOM after the page's scripts ran; the screenshot (1280
// pixels wide, 900 high unless tall) is saved as name.png in b.dir.
func (b headless) render(t *testing.T, name, url string, tall ...bool) string {
	t.Helper()
	// A page renders in seconds; a cold first start of chromium beside a loaded test run
	// took over 30 s once in CI (killed mid-start, ci-37c), so the bound is generous.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	shot := filepath.Join(b.dir, name+".png")
	size := "--window-size=1280,900"
	if len(tall) > 0 && tall[0] {
		size = "--window-size=1280,1800"
	}
	cmd := exec.CommandContext(ctx, b.bin, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--no-first-run", "--user-data-dir="+t.TempDir(),
		size, "--virtual-time-budget=5000", "--screenshot="+shot, "--dump-dom", url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", name, err, lastLines(stderr.String(), 20))
	}
	t.Logf("screenshot %s: %s", name, shot)
	return stdout.String()
}

// pacedRunner is the scripted sandbox, except that an agent marked "SLOW AGENT" runs
// normally after a pause instead of blocking: a job that stays running for a while (a
// minute and more, so the page of a running job is one on a loaded machine too), with
// scores, for the live chart.
type pacedRunner struct{ pause time.Duration }

func (pacedRunner) Name() string { return "paced" }

func (p pacedRunner) Run(ctx context.Context, j sandbox.Job) (*sandbox.Result, error) {
	if src := string(j.Files["agent.py"]); strings.Contains(src, "SLOW AGENT") {
		files := maps.Clone(j.Files)
		files["agent.py"] = []byte(strings.ReplaceAll(src, "SLOW AGENT", "paced agent"))
		j.Files = files
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(p.pause):
		}
	}
	return scriptedRunner{}.Run(ctx, j)
}

// failingUpstream answers 503 for the model "gpt-4-down" and hands every other request to
// the scripted upstream.
func failingUpstream(t *testing.T) *httptest.Server {
	ok := fakeOpenAIUpstream(t)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if bytes.Contains(b, []byte(`"gpt-4-down"`)) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
			return
		}
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, ok.URL+r.URL.Path, bytes.NewReader(b))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// call sends a JSON request with the test key and decodes the answer.
func call(t *testing.T, method, url, body string, into any) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+cliKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if into != nil {
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
		}
	}
	return resp.StatusCode
}

// TestConsoleInChromium runs the server with every capability the console shows (the
// gateway over a scripted upstream with the request recorder as its Observer, router
// training on examples/data, the optimizer with the scripted sandbox and proposer), makes
// completions, trains a router and runs a short optimization, then opens each console page
// in headless Chromium and checks the rendered DOM shows the data, charts included.
func TestConsoleInChromium(t *testing.T) {
	bin := chromiumPath()
	if bin == "" {
		t.Skip("no chromium here (apt-get install chromium, or set SWITCHYARD_CHROMIUM): the console's browser test skips")
	}
	start := time.Now()
	up := failingUpstream(t)
	data := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "..", "examples", "data"))))
	defer data.Close()
	bundles := bundleServer(t)
	quiet := slog.New(slog.DiscardHandler)

	cache := &completions.MemoryCache{}
	var spendOption server.Option
	url := cliServer(t, func(st *store.Store) []server.Option {
		rec := usagelog.New(usagelog.Options{})
		roll := usagelog.NewRollup(st, usagelog.RollupOptions{})
		spendOption = server.Spend(roll)
		g, err := completions.New(completions.Options{
			Providers: providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "sk-fake"})),
			Prices:    providers.DefaultCatalog(), Store: st, Observer: completions.JoinObservers(rec, roll), Logger: quiet,
			Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond},
			// Only requests that ask are cached: the one asked twice below.
			Cache: completions.CacheOptions{Driver: cache, OptIn: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := trainer.New(st, trainer.WithFetcher(&fetch.Fetcher{AllowLocal: true}), trainer.WithLogger(quiet),
			trainer.WithFitOptions(func(o *inference.FitOptions) { o.L2 = []float64{1e-3} }))
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		opt, err := optimizer.New(st, pacedRunner{pause: 3 * time.Second}, scriptedProposer{},
			optimizer.WithFetcher(&fetch.Fetcher{AllowLocal: true}), optimizer.WithWorkers(2), optimizer.WithLogger(quiet))
		if err != nil {
			t.Fatal(err)
		}
		if err := opt.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Completions(g), server.Usage(rec), spendOption, server.CustomRouters(tr), server.Optimizer(opt), server.Console()}
	})

	// Completions: answered, answered after a fallback, failed, streamed, and a second turn.
	msg := func(text string) string {
		return fmt.Sprintf(`"messages":[{"role":"user","content":[{"type":"text","text":%q}]}]`, text)
	}
	var first completions.Response
	if code := call(t, "POST", url+"/api/v1/completions", `{"models":["openai/gpt-4o-mini"],`+msg("Name a colour of the sea")+`}`, &first); code != 200 {
		t.Fatalf("completion: %d", code)
	}
	for _, body := range []string{
		`{"models":["openai/gpt-4o-mini"],"conversationId":"` + first.ConversationID + `",` + msg("And of the sky?") + `}`,
		`{"models":["openai/gpt-4-down"],"fallback_models":["openai/gpt-4o"],"maxRetries":0,` + msg("Fallback please") + `}`,
		`{"models":["openai/gpt-4-down"],"maxRetries":0,` + msg("This one fails") + `}`,
		`{"models":["openai/gpt-4o-mini"],"stream":true,` + msg("Stream it") + `}`,
	} {
		call(t, "POST", url+"/api/v1/completions", body, nil)
	}
	// One asked twice with the cache: the second is a hit.
	cached := `{"models":["openai/gpt-4o-mini"],"cache":{"use-cache":true},"tags":["feature:console"],` + msg("Cache this") + `}`
	call(t, "POST", url+"/api/v1/completions", cached, nil)
	for deadline := time.Now().Add(5 * time.Second); cache.Len() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the answer was not cached")
		}
	}
	var hit completions.Response
	if call(t, "POST", url+"/api/v1/completions", cached, &hit); hit.Cache == nil || hit.Cache.Result != completions.CacheHit {
		t.Fatalf("the second request: cache %+v, want a hit", hit.Cache)
	}
	// A virtual key and one request made with it.
	var vk struct{ ID, Key string }
	if code := call(t, "POST", url+"/api/v1/keys", `{"name":"console bot","max_budget_usd":5,"budget_duration":"30d"}`, &vk); code != 201 {
		t.Fatalf("issue a key: %d", code)
	}
	vreq, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"From the bot"}]}`))
	vreq.Header.Set("Authorization", "Bearer "+vk.Key)
	if resp, err := http.DefaultClient.Do(vreq); err != nil || resp.StatusCode != 200 {
		t.Fatalf("a request with the virtual key: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	// A router trained on the example data, priced so it has a cost/quality frontier.
	var prices []string
	for i, m := range []string{"google/codegemma-7b", "google/gemma-2-9b-it", "meta/llama-3.1-8b-instruct", "mistralai/mistral-7b-instruct-v0.3",
		"nvidia/llama-3.1-nemotron-51b-instruct", "nvidia/llama-3.3-nemotron-super-49b-v1", "nvidia/llama3-chatqa-1.5-70b",
		"nvidia/llama3-chatqa-1.5-8b", "qwen/qwen2.5-7b-instruct"} {
		prices = append(prices, fmt.Sprintf("%q: %g", m, 0.05+0.1*float64(i)))
	}
	var job trainer.Job
	if code := call(t, "POST", url+"/api/v1/routers/train", `{"Data_URLs":["`+data.URL+`/routing_train.json"],"model_prices":{`+strings.Join(prices, ",")+`}}`, &job); code != 202 {
		t.Fatalf("train: %d", code)
	}
	// A short optimization job with the scripted sandbox and proposer, and a paced one that
	// is still running when its page is opened.
	var sub, paced struct {
		JobID string `json:"job_id"`
	}
	if code := call(t, "POST", url+"/api/v1/optimize", `{"optimizer":"agentopt","input_url":"`+bundles+`/bundle.zip","target_models":["openai/gpt-4o-mini"],"n_iterations":4}`, &sub); code != 202 {
		t.Fatalf("optimize: %d", code)
	}
	if code := call(t, "POST", url+"/api/v1/optimize", `{"optimizer":"agentopt","input_url":"`+bundles+`/slow.zip","target_models":["openai/gpt-4o-mini"],"n_iterations":20}`, &paced); code != 202 {
		t.Fatalf("optimize (paced): %d", code)
	}
	defer call(t, "POST", url+"/api/v1/optimize/cancel?job_id="+paced.JobID, "", nil)
	var model string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var ts trainer.JobStatus
		var ost struct{ Status string }
		call(t, "GET", url+"/api/v1/routers/train/status?task_id="+job.TrainingJobID, "", &ts)
		call(t, "GET", url+"/api/v1/optimize/status?job_id="+sub.JobID, "", &ost)
		if ts.Status == trainer.StateFailed || ost.Status == "failed" {
			t.Fatalf("a job failed: %+v %+v", ts, ost)
		}
		var pst optimizer.JobStatus
		call(t, "GET", url+"/api/v1/optimize/status?job_id="+paced.JobID, "", &pst)
		if ts.Status == trainer.StateCompleted && ost.Status == "completed" && pst.BestScore != nil {
			model = ts.ModelID
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs did not finish: %+v %+v", ts, ost)
		}
	}
	t.Logf("data ready after %v", time.Since(start).Round(time.Millisecond))

	// Screenshots go to the test's temporary directory, or to SWITCHYARD_CONSOLE_SCREENSHOTS
	// to keep them.
	b := headless{bin: bin, dir: t.TempDir()}
	if d := os.Getenv("SWITCHYARD_CONSOLE_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		b.dir = d
	}
	key := "key=" + cliKey
	want := func(page, dom string, patterns ...string) {
		t.Helper()
		for _, p := range patterns {
			if !regexp.MustCompile(p).MatchString(dom) {
				t.Errorf("%s: the page lacks %s\n%s", page, p, lastLines(dom, 40))
			}
		}
	}

	// The paced job first, while it runs: the live chart of its best score.
	dom := b.render(t, "optimize-running", url+"/console/#/optimize/"+paced.JobID+"?"+key)
	want("optimize-running", dom, `data-loaded="true"`, `<span class="pill warn">running</span>`, `id="live-chart"`, `<svg class="chart"`, `class="point"`)

	// Without a key: the sign-in form, and no data call made.
	dom = b.render(t, "login", url+"/console/")
	want("login", dom, `<form id="login-form"`, `<nav id="nav" hidden`)
	// A wrong key: the API's 401 brings the sign-in form back, saying why.
	dom = b.render(t, "wrong-key", url+"/console/#/requests?key=not-a-key")
	want("wrong-key", dom, `<form id="login-form"`, `refused the key \(401\)`)

	dom = b.render(t, "usage", url+"/console/#/usage?"+key)
	// The key left the address bar: the route the page shows has no key= in it.
	want("usage", dom, `<body data-route="#/usage">`, `data-loaded="true"`, `id="spend-chart"`, `id="latency-chart"`, `<svg class="chart"`,
		`id="tag-spend"`, `class="tag-spend"><td class="mono">feature:console</td><td class="num">1</td>`,
		`<path class="series" d="M[^"]+L`, `<td>openai/gpt-4o-mini</td>`, `<td>openai/gpt-4-down</td>`, `<td>openai/gpt-4o</td>`)

	// The 24-hour view keeps its other fragment parameters when the key is taken out.
	dom = b.render(t, "usage-24h", url+"/console/#/usage?window=24h&"+key)
	want("usage-24h", dom, `<body data-route="#/usage\?window=24h">`, `Spend per 15 min`, `<option value="24h" selected`, `<path class="series"`)

	dom = b.render(t, "requests", url+"/console/#/requests?"+key)
	want("requests", dom, `data-loaded="true"`, `class="request"`, `attempt 2`, `openai/gpt-4-down`,
		`<span class="pill bad">error</span>`, `class="mono"> overloaded`, `Hello|stream`, `#/conversations/`+first.ConversationID,
		`class="muted cache-hit"[^>]*> · cache hit`, `saved \$`, `class="muted tags">feature:console</div>`)
	if n := strings.Count(dom, `class="request"`) + strings.Count(dom, `class="request no-attempts"`); n != 8 {
		t.Errorf("requests: %d rows, want 8", n)
	}
	if n := strings.Count(dom, `class="request no-attempts"`); n != 1 {
		t.Errorf("requests: %d rows without attempts, want 1 (the cache hit)", n)
	}

	dom = b.render(t, "keys", url+"/console/#/keys?"+key)
	want("keys", dom, `data-loaded="true"`, `class="virtual-key"`, regexp.QuoteMeta(vk.ID), `console bot`, `\$5\.00 / 30d`, `<td>all</td>`, `<td>never</td>`)
	dom = b.render(t, "key-requests", url+"/console/#/requests?tag=key:"+vk.ID+"&"+key)
	want("key-requests", dom, `data-loaded="true"`, regexp.QuoteMeta("key:"+vk.ID))
	if n := strings.Count(dom, `class="request"`); n != 1 {
		t.Errorf("one key's requests: %d rows, want 1", n)
	}

	dom = b.render(t, "conversations", url+"/console/#/conversations?"+key)
	want("conversations", dom, `data-loaded="true"`, `Name a colour of the sea`, `Fallback please`)
	dom = b.render(t, "messages", url+"/console/#/conversations/"+first.ConversationID+"?"+key)
	want("messages", dom, `data-loaded="true"`, `class="msg user"`, `And of the sky\?`, `Hello from the fake upstream`, `class="msg assistant"`)
	if n := strings.Count(dom, `<article class="msg`); n != 4 {
		t.Errorf("messages: %d, want 4", n)
	}

	dom = b.render(t, "routers", url+"/console/#/routers?"+key)
	want("routers", dom, `data-loaded="true"`, regexp.QuoteMeta(model), regexp.QuoteMeta(job.TrainingJobID), `class="router-model"`)
	dom = b.render(t, "router-model", url+"/console/#/routers/"+model+"?"+key)
	want("router-model", dom, `data-loaded="true"`, `id="frontier"`, `<svg class="chart"`, `tol 0[,<]`, `\(default\)`, `top-1 hit rate`, `Points given up`)
	if n := strings.Count(dom, `class="point"`); n < 2 {
		t.Errorf("frontier: %d points", n)
	}

	dom = b.render(t, "optimize", url+"/console/#/optimize?"+key)
	want("optimize", dom, `data-loaded="true"`, regexp.QuoteMeta(sub.JobID), `class="optimize-job"`)
	dom = b.render(t, "optimize-job", url+"/console/#/optimize/"+sub.JobID+"?"+key, true)
	want("optimize-job", dom, `data-loaded="true"`, `class="card model-result"`, `<svg class="chart"`, `Kept variants \(2\)`,
		`<ins>[^<]*Queues include`, `class="agent-link"`, `href="http[^"]*/api/v1/artifacts/[^"]+/agent.py"`)
	t.Logf("console pages rendered; %v in all", time.Since(start).Round(time.Millisecond))
}

// TestServeConsoleFlag checks serve's wiring: the console at /console/ with its CSP, the
// gateway's requests in the usage API, and --console=false turning the console off.
func TestServeConsoleFlag(t *testing.T) {
	const key = "console-flag-test-key-0123456789abcdef"
	base, _ := serveForClients(t, key)
	resp, err := http.Get(base + "/console/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != console.ContentSecurityPolicy {
		t.Fatalf("console: %d %v", resp.StatusCode, resp.Header)
	}
	body := `{"models":["openai/gpt-4o-mini"],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`
	req, _ := http.NewRequest("POST", base+"/api/v1/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("completion: %v %v", err, resp)
	}
	resp.Body.Close()
	code, got := get(t, base+"/api/v1/usage/requests", key)
	data, _ := got["data"].([]any)
	if code != 200 || len(data) != 1 || data[0].(map[string]any)["model"] != "openai/gpt-4o-mini" {
		t.Fatalf("usage: %d %v", code, got)
	}

	off, _ := serveForClients(t, key, "--console=false")
	if code, _ := get(t, off+"/console/", ""); code != 404 {
		t.Fatalf("--console=false: %d", code)
	}
	if code, _ := get(t, off+"/api/v1/usage/series", key); code != 200 {
		t.Fatalf("--console=false usage API: %d", code)
	}
}
