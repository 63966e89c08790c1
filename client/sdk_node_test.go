package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/internal/npmtest"
)

// TestOfficialNodeSDK drives the server with the official OpenAI Node SDK (npm "openai",
// installed into a temporary directory): a tool call on /v1/chat/completions, a streamed
// function call and a tool-result turn on /v1/responses, embeddings (base64, the SDK's
// default, decoded by it), and the SDK's typed errors for an
// unknown model (404 model_not_found with param) and a wrong key (401). Skips, saying why,
// without node and npm or when the package cannot be installed.
func TestOfficialNodeSDK(t *testing.T) {
	run := nodeSDK(t)
	up := newToolUpstream(t)
	// A response cache that keeps only the requests that ask (the last checks do).
	_, base := realServerURL(t, envGatewayWith(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.srv.URL},
		func(o *completions.Options) {
			o.Cache = completions.CacheOptions{Driver: &completions.MemoryCache{}, OptIn: true}
		}))
	out := run("testdata/openai_sdk_check.mjs", base)
	var got struct {
		ChatFinish     string            `json:"chatFinish"`
		ChatCall       map[string]string `json:"chatCall"`
		ResponseEvents []string          `json:"responseEvents"`
		ResponseOutput []map[string]any  `json:"responseOutput"`
		OutputText     string            `json:"outputText"`
		BadModel       map[string]any    `json:"badModel"`
		BadKey         map[string]any    `json:"badKey"`
		Models         *int              `json:"models"`
		Embeddings     [][]float64       `json:"embeddings"`
		EmbedModel     string            `json:"embeddingsModel"`
		EmbedTokens    int               `json:"embeddingsTokens"`
		Cache          []string          `json:"cache"`
		CachedCall     map[string]string `json:"cachedCall"`
		CacheStream    string            `json:"cacheStream"`
		CacheArgs      string            `json:"cacheStreamArgs"`
		Legacy         map[string]any    `json:"legacy"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if got.ChatFinish != "tool_calls" || got.ChatCall["name"] != "get_weather" || got.ChatCall["arguments"] != `{"city": "Paris"}` {
		t.Errorf("chat tool call: %+v", got)
	}
	events := strings.Join(got.ResponseEvents, ",")
	if !strings.HasPrefix(events, "response.created,response.in_progress,response.output_item.added,response.function_call_arguments.delta") ||
		!strings.HasSuffix(events, "response.output_item.done,response.completed") || len(got.ResponseOutput) != 1 ||
		got.ResponseOutput[0]["type"] != "function_call" || got.ResponseOutput[0]["call_id"] != "call_1" {
		t.Errorf("responses stream: %s %v", events, got.ResponseOutput)
	}
	if got.OutputText != "It is 18°C in Paris." {
		t.Errorf("output_text after the tool result: %q", got.OutputText)
	}
	if got.BadModel["name"] != "NotFoundError" || got.BadModel["status"] != float64(404) || got.BadModel["param"] != "model" || got.BadModel["code"] != "model_not_found" {
		t.Errorf("unknown model through the SDK: %v", got.BadModel)
	}
	if got.BadKey["name"] != "AuthenticationError" || got.BadKey["status"] != float64(401) || got.BadKey["code"] != "invalid_api_key" {
		t.Errorf("wrong key through the SDK: %v", got.BadKey)
	}
	if got.Models == nil {
		t.Errorf("models.list failed: %s", out)
	}
	if fmt.Sprint(got.Embeddings) != "[[11 0 0.5] [4 1 0.5]]" || got.EmbedModel != "openai/text-embedding-3-small" || got.EmbedTokens != 4 {
		t.Errorf("embeddings (base64, as the SDK asks by default): %v %q %d", got.Embeddings, got.EmbedModel, got.EmbedTokens)
	}
	if fmt.Sprint(got.Cache) != "[miss hit]" || got.CachedCall["arguments"] != `{"city": "Paris"}` || got.CacheStream != "hit" || got.CacheArgs != `{"city": "Paris"}` {
		t.Errorf("response cache through the SDK: %v %v, stream %q %q", got.Cache, got.CachedCall, got.CacheStream, got.CacheArgs)
	}
	if got.Legacy["object"] != "text_completion" || got.Legacy["choices"] != float64(1) || got.Legacy["finish"] == nil {
		t.Errorf("legacy completions through the SDK: %v", got.Legacy)
	}
}

// TestOfficialNodeSDKReasoning drives Claude's extended thinking with the official OpenAI
// Node SDK's stream helpers (testdata/openai_reasoning_check.mjs) against a scripted Claude
// that, as the real one, refuses a tool loop whose turn lost its signed thinking: the chat
// helper's assembled message and the Responses output sent back as they are must keep the
// loop thinking. Skips, saying why, without node and npm or the package.
func TestOfficialNodeSDKReasoning(t *testing.T) {
	run := nodeSDK(t)
	up := newFakeClaude(t)
	_, base := realServerURL(t, up.options(t))
	out := run("testdata/openai_reasoning_check.mjs", base)
	var got struct {
		ChatReasoning  string           `json:"chatReasoning"`
		ChatBlocks     []map[string]any `json:"chatBlocks"`
		ChatAnswer     string           `json:"chatAnswer"`
		ResponseOutput []map[string]any `json:"responseOutput"`
		ResponseAnswer string           `json:"responseAnswer"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if got.ChatReasoning != "The user wants the weather." || len(got.ChatBlocks) != 1 || got.ChatBlocks[0]["signature"] != claudeSignature ||
		got.ChatBlocks[0]["thinking"] != got.ChatReasoning || got.ChatAnswer != "Sunny in Paris." {
		t.Errorf("chat: %+v", got)
	}
	if len(got.ResponseOutput) != 2 || got.ResponseOutput[0]["type"] != "reasoning" || got.ResponseOutput[0]["summary"] != "The user wants the weather." ||
		got.ResponseOutput[0]["encrypted"] != "claude-thinking:"+claudeSignature || got.ResponseOutput[1]["type"] != "function_call" ||
		got.ResponseAnswer != "Sunny in Paris." {
		t.Errorf("responses: %+v", got)
	}
	// Both loops reached Claude with the signed block first in the turn.
	up.mu.Lock()
	defer up.mu.Unlock()
	for _, i := range []int{1, 3} {
		turn := up.requests[i]["messages"].([]any)[1].(map[string]any)["content"].([]any)[0].(map[string]any)
		if turn["type"] != "thinking" || turn["signature"] != claudeSignature {
			t.Errorf("request %d: the turn began with %v", i, turn)
		}
	}
}

// nodeSDK installs the official OpenAI Node SDK (npm "openai") into a temporary directory
// and returns a runner of a check script against a server: its standard output, the test
// failing when node fails. It skips the test, saying why, under -short, without node and
// npm, or when the package cannot be installed.
func nodeSDK(t *testing.T) (run func(script, base string) []byte) {
	t.Helper()
	return nodePackage(t, "openai@4", "the official OpenAI Node SDK")
}

// nodePackage is nodeSDK for the npm package spec (what names it in skip messages).
func nodePackage(t *testing.T, spec, what string) (run func(script, base string) []byte) {
	t.Helper()
	node, dir := npmtest.Install(t, spec, what)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return func(script, base string) []byte {
		t.Helper()
		b, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "check.mjs")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(ctx, node, path, base, testKey)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("node: %v\n%s\n%s", err, out, stderr)
		}
		return out
	}
}
