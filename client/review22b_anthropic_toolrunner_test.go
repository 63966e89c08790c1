package client_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestReview22bAnthropicNodeToolRunner: the official Anthropic Node SDK's tool runner runs on
// message threads — its second turn sends only the tool results, continuing the thread of
// the first reply. The gateway keeps no threads and says so as Anthropic does for a lost
// thread (404, thread_not_found), on which the SDK replays the whole conversation: the
// loop ends with the model's answer to the tool result. Skips, saying why, without node
// and npm or the package.
func TestReview22bAnthropicNodeToolRunner(t *testing.T) {
	run := nodePackage(t, "@anthropic-ai/sdk@1", "the official Anthropic Node SDK")
	up := newToolUpstream(t)
	_, base := realServerURL(t, up.options(t))
	out := run("testdata/anthropic_toolrunner_check.mjs", base)
	var got struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
		Statuses []int `json:"statuses"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if len(got.Content) != 1 || got.Content[0].Text != "It is 18°C in Paris." {
		t.Errorf("the tool runner ended with %s", out)
	}
	// The replayed turn reached the upstream with the whole conversation.
	msgs, _ := json.Marshal(up.last()["messages"])
	if want := `"tool_call_id":"call_1"`; !json.Valid(msgs) || !strings.Contains(string(msgs), want) || !strings.Contains(string(msgs), "Weather in Paris?") {
		t.Errorf("the upstream's last request had the messages %s", msgs)
	}
}
