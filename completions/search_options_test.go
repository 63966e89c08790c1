package completions

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestSearchOptionsReachEachAPI: a web search's options — chat's web_search_options, the
// Responses web_search tool's, Claude's web_search tool's — reach each provider in its own
// API's words: OpenAI's Responses API a search_context_size, a flat user_location and
// allowed domains; OpenAI's search models in chat completions web_search_options with an
// "approximate" location; Claude its tool's user_location, max_uses and allowed_domains.
// Before, every option was dropped and only "search" was asked for.
func TestSearchOptionsReachEachAPI(t *testing.T) {
	g, f, an := openAIGateway(t)
	f.on("gpt-4o", fakeTurn{text: "Searched."})
	const tool = `"tools":[{"type":"web_search","search_context_size":"high","user_location":{"type":"approximate","city":"Lyon","country":"FR"},"filters":{"allowed_domains":["example.org"]}}]`
	responsesVia(t, g, "", `{"model":"openai/gpt-4o","input":"News?",`+tool+`}`)
	if got := jsonOf(f.last()["tools"]); got != `[{"filters":{"allowed_domains":["example.org"]},"search_context_size":"high","type":"web_search","user_location":{"city":"Lyon","country":"FR","type":"approximate"}}]` {
		t.Errorf("OpenAI Responses API tools %s", got)
	}
	responsesVia(t, g, "", `{"model":"anthropic/claude-sonnet-4-5","input":"News?",`+tool+`}`)
	if got := jsonOf(an.last()["tools"]); !strings.Contains(got, `"user_location":{"city":"Lyon","country":"FR","type":"approximate"}`) || !strings.Contains(got, `"allowed_domains":["example.org"]`) {
		t.Errorf("Claude from the Responses surface: tools %s", got)
	}

	messagesVia(t, g, `{"model":"anthropic/claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"News?"}],
		"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":2,"user_location":{"type":"approximate","timezone":"Europe/Paris"}}]}`)
	if got := jsonOf(an.last()["tools"]); !strings.Contains(got, `"max_uses":2`) || !strings.Contains(got, `"user_location":{"timezone":"Europe/Paris","type":"approximate"}`) {
		t.Errorf("Claude from the Messages surface: tools %s", got)
	}

	if _, err := chatVia(g, "", `{"model":"openai/gpt-4o-search-preview","messages":[{"role":"user","content":"News?"}],
		"web_search_options":{"search_context_size":"low","user_location":{"type":"approximate","approximate":{"country":"GB","city":"London"}}}}`); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	got := jsonOf(f.chats[len(f.chats)-1]["web_search_options"])
	f.mu.Unlock()
	if got != `{"search_context_size":"low","user_location":{"approximate":{"city":"London","country":"GB"},"type":"approximate"}}` {
		t.Errorf("OpenAI search model in chat: web_search_options %s", got)
	}

	for body, field := range map[string]string{
		`{"model":"openai/gpt-4o-search-preview","messages":[{"role":"user","content":"x"}],"web_search_options":{"search_context_size":"huge"}}`: "web_search_options.search_context_size",
		`{"model":"openai/gpt-4o-search-preview","messages":[{"role":"user","content":"x"}],"web_search_options":{"user_location":"Paris"}}`:      "web_search_options",
	} {
		_, err := chatVia(g, "", body)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("%s: %v, want a validation error naming %s", body, err, field)
		}
	}
}

// TestSearchBlockedDomainsSkipOpenAI: Claude's web_search tool may exclude sites; OpenAI's
// search cannot, so an OpenAI model is skipped for such a request (a 400 naming the field
// when it is the only model) rather than searching the excluded sites.
func TestSearchBlockedDomainsSkipOpenAI(t *testing.T) {
	g, _, an := openAIGateway(t)
	const tools = `"tools":[{"type":"web_search_20250305","name":"web_search","blocked_domains":["spam.example"]}]`
	messagesVia(t, g, `{"model":"anthropic/claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"News?"}],`+tools+`}`)
	if got := jsonOf(an.last()["tools"]); !strings.Contains(got, `"blocked_domains":["spam.example"]`) {
		t.Errorf("Claude: tools %s", got)
	}
	var mreq AnthropicMessagesRequest
	if err := json.Unmarshal([]byte(`{"model":"openai/gpt-4o","max_tokens":100,"messages":[{"role":"user","content":"News?"}],`+tools+`}`), &mreq); err != nil {
		t.Fatal(err)
	}
	_, err := viaGateway(g, "o")(mreq.ToChatRequest())
	if err == nil || !strings.Contains(err.Error(), "blocked_domains") {
		t.Errorf("an OpenAI model asked to exclude domains: %v", err)
	}
	mreq.Tools[0].AllowedDomains = []string{"ok.example"}
	_, err = viaGateway(g, "o")(mreq.ToChatRequest())
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "tools[0].blocked_domains" {
		t.Errorf("allowed and blocked domains together: %v", err)
	}
}
