package server

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/console"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// usageServer is a gateway over the scripted upstream whose Observer is a recorder, with
// the usage routes and the console.
func usageServer(t *testing.T) *httptest.Server {
	t.Helper()
	ups := httptest.NewServer(&fakeOpenAIUpstream{})
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: ups.URL + "/v1", APIKey: "sk-up"}))
	st := newTestStore(t)
	rec := usagelog.New(usagelog.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Observer: rec,
		Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey, completionsOtherKey}}, nil)
	for _, o := range []Option{Completions(g), Usage(rec), Console()} {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs
}

func getJSON(t *testing.T, url, key string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, decodeMap(t, b)
}

func TestUsageRoutesShowOnlyTheCallersRequests(t *testing.T) {
	hs := usageServer(t)
	const msg = `"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]`
	for key, body := range map[string]string{
		testKey + "#1":             `{"models":["up/ok"],` + msg + `}`,
		testKey + "#2":             `{"models":["up/down"],"fallback_models":["up/ok"],"maxRetries":0,` + msg + `}`,
		testKey + "#3":             `{"models":["up/down"],"maxRetries":0,` + msg + `}`,
		completionsOtherKey + "#1": `{"models":["up/ok"],` + msg + `}`,
	} {
		k, _, _ := strings.Cut(key, "#")
		resp, b := post(t, hs.URL+"/api/v1/completions", k, body)
		if want := map[bool]int{true: 502, false: 200}[key == testKey+"#3"]; resp.StatusCode != want {
			t.Fatalf("%s: %d %s", key, resp.StatusCode, b)
		}
	}
	for _, path := range []string{"/api/v1/usage/requests", "/api/v1/usage/series"} {
		if code, body := getJSON(t, hs.URL+path, ""); code != 401 || body["error"] != KindUnauthorized {
			t.Fatalf("%s without a key: %d %v", path, code, body)
		}
	}

	code, body := getJSON(t, hs.URL+"/api/v1/usage/requests", testKey)
	data, _ := body["data"].([]any)
	if code != 200 || len(data) != 3 {
		t.Fatalf("own requests: %d %v", code, body)
	}
	outcomes := map[string]int{}
	var lastID float64 = 1 << 53
	for _, d := range data {
		r := d.(map[string]any)
		outcomes[r["outcome"].(string)]++
		if id := r["id"].(float64); id >= lastID {
			t.Fatalf("not newest first: %v", data)
		} else {
			lastID = id
		}
		if _, ok := r["owner"]; ok {
			t.Fatalf("the owner leaks: %v", r)
		}
		atts := r["attempts"].([]any)
		first := atts[0].(map[string]any)
		if r["model"] == "up/ok" && r["outcome"] == "ok" && len(atts) == 2 && (first["model"] != "up/down" || first["kind"] == "" || first["outcome"] != "error") {
			t.Fatalf("fallback attempts: %v", atts)
		}
	}
	if outcomes["ok"] != 2 || outcomes["error"] != 1 {
		t.Fatalf("outcomes %v", outcomes)
	}
	code, body = getJSON(t, hs.URL+"/api/v1/usage/requests?limit=2", testKey)
	if data, _ := body["data"].([]any); code != 200 || len(data) != 2 || body["next_before"] == nil {
		t.Fatalf("limit=2: %v", body)
	}
	next := body["next_before"].(float64)
	code, body = getJSON(t, hs.URL+"/api/v1/usage/requests?before="+strconv.FormatInt(int64(next), 10), testKey)
	if data, _ := body["data"].([]any); code != 200 || len(data) != 1 || body["next_before"] != nil {
		t.Fatalf("page 2: %v", body)
	}
	if code, body = getJSON(t, hs.URL+"/api/v1/usage/requests", completionsOtherKey); len(body["data"].([]any)) != 1 {
		t.Fatalf("other key: %d %v", code, body)
	}

	code, body = getJSON(t, hs.URL+"/api/v1/usage/series?window=24h", testKey)
	models, _ := body["models"].([]any)
	if code != 200 || len(models) != 2 || body["step_seconds"].(float64) != 900 {
		t.Fatalf("series: %d %v", code, body)
	}
	for _, m := range models {
		m := m.(map[string]any)
		total := m["total"].(map[string]any)
		switch m["model"] {
		case "up/ok":
			if total["requests"].(float64) != 2 || total["errors"].(float64) != 0 || total["prompt_tokens"].(float64) != 14 {
				t.Fatalf("up/ok: %v", m)
			}
		case "up/down":
			if total["requests"].(float64) != 1 || total["errors"].(float64) != 1 {
				t.Fatalf("up/down: %v", m)
			}
		default:
			t.Fatalf("model %v", m)
		}
	}
	if _, body = getJSON(t, hs.URL+"/api/v1/usage/series", completionsOtherKey); len(body["models"].([]any)) != 1 {
		t.Fatalf("other key's series: %v", body)
	}
	for _, c := range []struct{ query, field string }{
		{"/api/v1/usage/requests?limit=0", "limit"}, {"/api/v1/usage/requests?limit=501", "limit"},
		{"/api/v1/usage/requests?before=x", "before"}, {"/api/v1/usage/series?window=2d", "window"},
		{"/api/v1/usage/series?window=25h", "window"}, {"/api/v1/usage/series?step=90s", "step"},
		{"/api/v1/usage/series?window=1h&step=2h", "step must be whole minutes from 1m to 1h (the window; e.g. 5m or 15m)"},
		{"/api/v1/usage/series?window=90s", "window must be whole minutes"},
	} {
		code, body := getJSON(t, hs.URL+c.query, testKey)
		if msg, _ := body["message"].(string); code != 422 || !strings.Contains(msg, c.field) {
			t.Errorf("%s: %d %v", c.query, code, body)
		}
	}
}

func TestConsoleFiles(t *testing.T) {
	hs := usageServer(t)
	get := func(path string, hdr ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", hs.URL+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		tr := &http.Transport{DisableCompression: true}
		c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := get("/console/")
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		resp.Header.Get("Content-Security-Policy") != console.ContentSecurityPolicy || !strings.Contains(string(b), `src="app.js"`) {
		t.Fatalf("index: %d %v %.200s", resp.StatusCode, resp.Header, b)
	}
	// No script or style from anywhere else, nothing inline.
	for _, bad := range []string{"http://", "https://", "<script>", "style="} {
		if strings.Contains(string(b), bad) {
			t.Errorf("index.html contains %q", bad)
		}
	}
	resp = get("/console/app.js", "Accept-Encoding", "gzip")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("app.js gzip: %d %v", resp.StatusCode, resp.Header)
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := io.ReadAll(zr)
	if !strings.Contains(string(js), "Authorization: 'Bearer '") {
		t.Fatalf("app.js: %.200s", js)
	}
	etag := resp.Header.Get("ETag")
	if resp = get("/console/app.js", "If-None-Match", etag); resp.StatusCode != http.StatusNotModified {
		t.Fatalf("If-None-Match: %d", resp.StatusCode)
	}
	if resp = get("/console/nope.js"); resp.StatusCode != 404 {
		t.Fatalf("unknown file: %d", resp.StatusCode)
	}
	if resp = get("/console"); resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/console/" {
		t.Fatalf("redirect: %d %v", resp.StatusCode, resp.Header)
	}
	_, doc := getJSON(t, hs.URL+"/api/v1/openapi.json", "")
	paths := doc["paths"].(map[string]any)
	for _, p := range []string{"/api/v1/usage/requests", "/api/v1/usage/series", "/console/"} {
		if paths[p] == nil {
			t.Errorf("OpenAPI lacks %s", p)
		}
	}
}
