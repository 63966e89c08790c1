package providers

import "strings"

// Asking for one tool call per answer: the caller's parallel_tool_calls is sent as it is
// (but to models that refuse the field), while Request.SingleToolCall, the gateway's own
// hint for callers of the legacy functions API, is sent only where the field is known to
// be taken, so that a request that worked without it is never refused for it.
//
// As in LiteLLM: any OpenAI-compatible server (its openai_like and hosted_vllm configs
// inherit OpenAIGPTConfig's parallel_tool_calls) gets the caller's field; Anthropic, and
// Claude 4.5 and later on Bedrock, get disable_parallel_tool_use (see
// bedrockDisablesParallelToolUse); Gemini gets nothing, having no setting for it.

// oneToolCallAsked reports whether req asks for at most one tool call: ParallelToolCalls
// false, or, without it, SingleToolCall.
func (r *Request) oneToolCallAsked() bool {
	if r.ParallelToolCalls != nil {
		return !*r.ParallelToolCalls
	}
	return r.SingleToolCall
}

// openAIParallelToolCallHosts are the OpenAI-compatible upstreams, by preset name and
// host, whose chat completions document parallel_tool_calls (besides OpenAI's own API and
// Azure); SingleToolCall is not sent to others, which may refuse fields they do not know.
var openAIParallelToolCallHosts = map[string]string{
	"openrouter": "openrouter.ai",
	"groq":       "api.groq.com",
	"mistral":    "api.mistral.ai",
	"xai":        "api.x.ai",
}

// takesParallelToolCalls reports whether an OpenAI-format upstream of that name and base
// URL is known to take parallel_tool_calls.
func takesParallelToolCalls(name, baseURL string) bool {
	if _, ok := openAIParallelToolCallHosts[name]; ok {
		return true
	}
	for _, host := range openAIParallelToolCallHosts {
		if strings.Contains(baseURL, "://"+host) {
			return true
		}
	}
	return false
}

// openAIParallelToolCalls is the parallel_tool_calls an OpenAI-format chat request for a
// model of family fam carries: the caller's, left out for the models that refuse it on
// OpenAI's own API (and Azure's, which serves the same models), as LiteLLM's drop_params
// does; else false for SingleToolCall where the upstream takes the field; else none.
func (o *OpenAI) openAIParallelToolCalls(req *Request, fam string) *bool {
	if len(req.Tools) == 0 {
		return nil // OpenAI refuses it without tools
	}
	if o.ownAPI && openAIOSeries(fam) {
		return nil // "Unsupported parameter: 'parallel_tool_calls' is not supported with this model"; GPT-5 takes it
	}
	if req.ParallelToolCalls != nil {
		return req.ParallelToolCalls
	}
	if req.SingleToolCall && (o.ownAPI || o.parallelToolCalls) {
		no := false
		return &no
	}
	return nil
}
