package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

// chatServer runs the real server with a gateway to the scripted upstream ("up", priced as
// gpt-4o-mini) and a provider nothing listens for ("down").
func chatServer(t *testing.T) string {
	return chatServerOver(t, fakeOpenAIUpstream(t).URL, nil)
}

// chatServerOver is chatServer with the upstream at upURL and the model groups given.
func chatServerOver(t *testing.T, upURL string, groups map[string]completions.ModelGroup) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	return cliServer(t, func(st *store.Store) []server.Option {
		reg := providers.NewRegistry(
			providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: upURL + "/v1", APIKey: "sk-up"}),
			providers.NewOpenAI(providers.Config{Name: "down", BaseURL: dead, APIKey: "sk-down"}),
		)
		g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, DefaultMaxRetries: -1, ModelGroups: groups})
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Completions(g)}
	})
}

func TestChatOneShotWithFallback(t *testing.T) {
	url := chatServer(t)
	code, out, errOut := cli(t, "chat", "--url", url, "--key", cliKey, "-m", "down/any", "--fallback", "openai/gpt-4o-mini", "Say", "hello")
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	if out != "Hello from the fake upstream\n" {
		t.Errorf("stdout %q", out)
	}
	for _, want := range []string{"[openai/gpt-4o-mini after down/any", "12 tokens (7 in, 5 out)", "· $0.0000", "first token"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("summary %q lacks %q", errOut, want)
		}
	}
}

func TestChatInteractiveKeepsTheConversation(t *testing.T) {
	url := chatServer(t)
	var out, errOut bytes.Buffer
	in := strings.NewReader("first question\n\nsecond question\n")
	err := chat(context.Background(), []string{"--url", url, "--key", cliKey, "-m", "openai/gpt-4o-mini", "--system", "Be brief."}, in, &out, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "Hello from the fake upstream\n"); got != 2 {
		t.Errorf("%d answers in %q", got, out.String())
	}
	if got := strings.Count(errOut.String(), "[openai/gpt-4o-mini ·"); got != 2 {
		t.Errorf("%d summaries in %q", got, errOut.String())
	}
	if code, _, errs := cli(t, "chat", "--url", url, "--key", cliKey, "hi"); code == 0 || !strings.Contains(errs, "-m provider/model is required") {
		t.Errorf("without -m: %d %q", code, errs)
	}
}

// With --json, stdout holds only the answers as JSON (one per turn, decodable in a row), and
// the conversation still goes on from turn to turn.
func TestChatJSONIsScriptable(t *testing.T) {
	url := chatServer(t)
	var out, errOut bytes.Buffer
	in := strings.NewReader("first question\nsecond question\n")
	if err := chat(context.Background(), []string{"--url", url, "--key", cliKey, "-m", "openai/gpt-4o-mini", "--json"}, in, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&out)
	var convs []string
	for dec.More() {
		var a struct {
			ConversationID string `json:"conversationId"`
			Model          string `json:"model"`
		}
		if err := dec.Decode(&a); err != nil {
			t.Fatalf("stdout is not a series of JSON answers: %v", err)
		}
		convs = append(convs, a.ConversationID)
	}
	if len(convs) != 2 || convs[0] == "" || convs[0] != convs[1] {
		t.Errorf("conversation ids %v: want two turns of one conversation", convs)
	}
}

// gatewayCLIServer runs the real server with a gateway to the scripted upstream (priced as
// gpt-4o-mini) and points the CLI's environment at it with the operator's key; it returns
// the server's URL.
func gatewayCLIServer(t *testing.T) string {
	t.Helper()
	up := fakeOpenAIUpstream(t)
	url := cliServer(t, func(st *store.Store) []server.Option {
		reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "sk-up"}))
		g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st})
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Completions(g)}
	})
	t.Setenv("SWITCHYARD_BASE_URL", url)
	t.Setenv("SERVICE_API_KEY", cliKey)
	return url
}

// A model group reaches the gateway through the OpenAI-compatible route (the native one takes
// provider/model names only): the answer streams, the summary names the group, the model
// that answered, the member that failed first and the cost (from the gateway's summary on
// the usage chunk), and an interactive conversation sends the earlier turns each time.
func TestChatModelGroup(t *testing.T) {
	var seen []int
	var mu sync.Mutex
	counting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []json.RawMessage `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &req)
		mu.Lock()
		seen = append(seen, len(req.Messages))
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		fakeOpenAIChat(w, r)
	}))
	t.Cleanup(counting.Close)
	url := chatServerOver(t, counting.URL, map[string]completions.ModelGroup{"smart": {Models: []string{"down/any", "openai/gpt-4o-mini"}}})
	code, out, errOut := cli(t, "chat", "--url", url, "--key", cliKey, "-m", "smart", "Say", "hello")
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	if out != "Hello from the fake upstream\n" {
		t.Errorf("stdout %q", out)
	}
	for _, want := range []string{"[smart", "after down/any ", "12 tokens (7 in, 5 out)", " · $0.0000", "first token", "request "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("summary %q lacks %q", errOut, want)
		}
	}

	var stdout, stderr bytes.Buffer
	in := strings.NewReader("first question\nsecond question\n")
	if err := chat(context.Background(), []string{"--url", url, "--key", cliKey, "-m", "smart", "--system", "Be brief.", "--json"}, in, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&stdout)
	for i := 0; i < 2; i++ {
		var a groupAnswer
		if err := dec.Decode(&a); err != nil {
			t.Fatalf("answer %d: %v (stdout %q)", i, err, stdout.String())
		}
		if a.Content != "Hello from the fake upstream" || a.Requested != "smart" || a.Usage == nil || a.Usage.TotalTokens != 12 {
			t.Errorf("answer %d: %+v", i, a)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// One-shot: system-less user turn (1); then system+user (2), then system+user+assistant+user (4).
	if len(seen) != 3 || seen[0] != 1 || seen[1] != 2 || seen[2] != 4 {
		t.Errorf("messages sent per turn %v, want [1 2 4]", seen)
	}
}

// Several -m models of which one has no provider (a model group, a deployment or a
// catalogued OpenAI name) are asked through the OpenAI-compatible route, as one alone is:
// the first, then the others in order as fallbacks, then --fallback's; stderr says so. The
// native route, which ranks several -m models, takes provider/model names only and refused
// them.
func TestChatSeveralModelsWithABareName(t *testing.T) {
	url := chatServerOver(t, fakeOpenAIUpstream(t).URL, map[string]completions.ModelGroup{"broken": {Models: []string{"down/any"}}})
	for _, args := range [][]string{
		{"-m", "broken", "-m", "openai/gpt-4o-mini"},
		{"-m", "broken", "-m", "gpt-4o-mini"},
		{"-m", "broken,down/other", "--fallback", "openai/gpt-4o-mini"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := cli(t, append([]string{"chat", "--url", url, "--key", cliKey}, append(args, "Say", "hello")...)...)
			if code != 0 {
				t.Fatalf("code %d, stderr %q", code, errOut)
			}
			if out != "Hello from the fake upstream\n" {
				t.Errorf("stdout %q", out)
			}
			for _, want := range []string{"through /v1/chat/completions: broken first", "[broken", "after down/any ", "gpt-4o-mini", "12 tokens (7 in, 5 out)"} {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr %q lacks %q", errOut, want)
				}
			}
		})
	}
	// Provider/model names only still go to the native route (ranked there).
	code, _, errOut := cli(t, "chat", "--url", url, "--key", cliKey, "-m", "down/any", "-m", "openai/gpt-4o-mini", "Say", "hello")
	if code != 0 || strings.Contains(errOut, "/v1/chat/completions") || !strings.Contains(errOut, "[openai/gpt-4o-mini") {
		t.Errorf("provider/model names: code %d, stderr %q", code, errOut)
	}
}
