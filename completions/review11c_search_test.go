package completions

// Review 11c: web search options on the Messages surface.

import (
	"strings"
	"testing"
)

// Claude's web_search tool takes blocked_domains as well as allowed_domains (documented
// for web_search_20250305). The Messages surface decodes the tool with unknown fields
// allowed and has no field for it: a client that forbids some sites gets a search over
// every site, without a word.
func TestReview11cMessagesBlockedDomainsReachClaude(t *testing.T) {
	g, _, an := openAIGateway(t)
	messagesVia(t, g, `{"model":"anthropic/claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"News?"}],
		"tools":[{"type":"web_search_20250305","name":"web_search","blocked_domains":["spam.example"]}]}`)
	if got := jsonOf(an.last()["tools"]); !strings.Contains(got, `"blocked_domains":["spam.example"]`) {
		t.Errorf("blocked_domains dropped: Claude was sent tools %s", got)
	}
}
