package providers

import (
	"net/url"
	"strings"
)

// genAINames are the OpenTelemetry GenAI semantic conventions' well-known
// gen_ai.provider.name values of the presets that have one.
var genAINames = map[string]string{
	"openai":    "openai",
	"anthropic": "anthropic",
	"gemini":    "gcp.gemini",
	"vertex_ai": "gcp.vertex_ai",
	"bedrock":   "aws.bedrock",
	"azure":     "azure.ai.openai",
	"mistral":   "mistral_ai",
	"groq":      "groq",
	"deepseek":  "deepseek",
	"xai":       "x_ai",
	"cohere":    "cohere",
}

// presetNames are the presets' names, made once.
var presetNames = func() map[string]bool {
	m := map[string]bool{}
	for _, p := range Presets() {
		m[p.Name] = true
	}
	return m
}()

// genAIHosts are the hosts of the well-known providers' APIs, for an OpenAI-format entry
// of another name that calls one of them (a LiteLLM deployment "groq-fast" at
// api.groq.com).
var genAIHosts = map[string]string{
	"api.openai.com":                "openai",
	"api.mistral.ai":                "mistral_ai",
	"api.groq.com":                  "groq",
	"api.deepseek.com":              "deepseek",
	"api.x.ai":                      "x_ai",
	"api.perplexity.ai":             "perplexity",
	"api.moonshot.ai":               "moonshot_ai",
	"api.moonshot.cn":               "moonshot_ai",
	"api.cohere.com":                "cohere",
	"api.cohere.ai":                 "cohere",
	"api.anthropic.com":             "anthropic",
	"models.inference.ai.azure.com": "azure.ai.inference",
}

// GenAIName is the gen_ai.provider.name of the OpenTelemetry GenAI semantic conventions
// for the provider called name, p its adapter (nil when it is not registered). A preset
// with a well-known value has it (gemini is gcp.gemini, vertex_ai gcp.vertex_ai, bedrock
// aws.bedrock, azure azure.ai.openai, mistral mistral_ai, xai x_ai); a provider of
// another name has the value of what it calls, as an instrumented client SDK would report
// it: its wire format's provider (an Azure, Vertex AI, Bedrock, Anthropic or Gemini entry),
// else, for the OpenAI format, the well-known provider whose API host its base URL names,
// else "openai" (an OpenAI-compatible server: vLLM, a proxy). The other presets (together,
// openrouter, fireworks, ollama, voyage, jina), which the conventions do not list, and a
// name with no adapter keep their own name, as the conventions allow a custom value.
func GenAIName(name string, p Provider) string {
	if v, ok := genAINames[name]; ok {
		return v
	}
	if presetNames[name] {
		return name
	}
	switch a := p.(type) {
	case *Azure:
		return "azure.ai.openai"
	case *Vertex:
		return "gcp.vertex_ai"
	case *Bedrock:
		return "aws.bedrock"
	case *Anthropic:
		return "anthropic"
	case *Gemini:
		return "gcp.gemini"
	case *OpenAI:
		if v := genAIHostName(a.BaseURL()); v != "" {
			return v
		}
		return "openai"
	}
	return name
}

// GenAIName is GenAIName of the provider called name in r.
func (r *Registry) GenAIName(name string) string {
	p, err := r.Lookup(name)
	if err != nil {
		p = nil
	}
	return GenAIName(name, p)
}

// genAIHostName is the well-known provider whose API base names ("" when none): its host,
// or an Azure OpenAI resource's (*.openai.azure.com).
func genAIHostName(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	if v, ok := genAIHosts[host]; ok {
		return v
	}
	if _, parent, ok := strings.Cut(host, "."); ok && parent == "openai.azure.com" {
		return "azure.ai.openai"
	}
	return ""
}
