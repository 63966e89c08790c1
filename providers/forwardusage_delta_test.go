package providers

import "testing"

// TestUsageMeterAnthropicDeltaUsage: a forwarded Anthropic stream is billed by
// message_delta's usage, input and cache counts included (cumulative, they replace
// message_start's, which counted the prompt at the start); message_start's stand only for
// the counts message_delta leaves out. Before message_delta the usage is not Final.
func TestUsageMeterAnthropicDeltaUsage(t *testing.T) {
	const start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-x\",\"usage\":{\"input_tokens\":42,\"cache_read_input_tokens\":100,\"cache_creation_input_tokens\":20,\"cache_creation\":{\"ephemeral_1h_input_tokens\":20},\"output_tokens\":1}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi there\"}}\n\n"
	for _, c := range []struct {
		name, delta string
		want        Usage
	}{
		{"whole usage", `{"input_tokens":50,"cache_read_input_tokens":120,"cache_creation_input_tokens":0,"cache_creation":{"ephemeral_1h_input_tokens":0},"output_tokens":9}`,
			Usage{PromptTokens: 170, CompletionTokens: 9, CachedTokens: 120}},
		{"output only", `{"output_tokens":9}`,
			Usage{PromptTokens: 162, CompletionTokens: 9, CachedTokens: 100, CacheCreationTokens: 20, CacheCreation1hTokens: 20}},
	} {
		m, err := NewUsageMeter(FormatAnthropic, "text/event-stream")
		if err != nil {
			t.Fatal(err)
		}
		m.Write([]byte(start))
		if u, _, ok := m.Usage(); !ok || m.Final() || u.PromptTokens != 162 {
			t.Errorf("%s: before message_delta %+v (reported %v, final %v), want message_start's 162 prompt tokens, not final", c.name, u, ok, m.Final())
		}
		m.Write([]byte("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":" + c.delta + "}\n\n"))
		if u, _, ok := m.Usage(); !ok || !m.Final() || u != c.want {
			t.Errorf("%s: %+v (reported %v, final %v), want message_delta's %+v", c.name, u, ok, m.Final(), c.want)
		}
	}
}
