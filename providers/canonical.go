package providers

import (
	"regexp"
	"strings"
)

// Model ids name the same model many ways: "anthropic/claude-3-5-haiku-20241022",
// "claude-3.5-haiku-latest", "openrouter/anthropic/claude-3.5-haiku",
// "us.anthropic.claude-3-5-haiku-20241022-v1:0", "vertex_ai/claude-3-5-haiku@20241022".
// CanonicalModel maps them to one form so that the price catalogue (Catalog.Lookup) and
// other tables keyed by model can find an entry whatever spelling a caller used.

var (
	// bedrockRegion and bedrockVendor are Bedrock's "us." region and "anthropic." vendor
	// prefixes of model ids.
	bedrockRegion = regexp.MustCompile(`^(us|eu|apac|au|jp|ca|global|us-gov)\.`)
	bedrockVendor = regexp.MustCompile(`^(anthropic|meta|mistral|amazon|cohere|ai21|deepseek|qwen|openai|writer|moonshot|twelvelabs)\.`)
	// bedrockVersion is Bedrock's version stamp ("-v1:0", ":0").
	bedrockVersion = regexp.MustCompile(`(-v\d+)?:\d+$`)
	// versionSuffix is one dropped suffix: -latest, @latest, a date (-20241022,
	// -2024-10-22, @20241022), an OpenAI month-day stamp (-0613, -1106) or a
	// three-digit version (-001, -002).
	versionSuffix = regexp.MustCompile(`([-@]latest|-\d{8}|-\d{4}-\d{2}-\d{2}|@\d{8}|-(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])|-00\d)$`)
)

// CanonicalModel returns the canonical form of a model id: lower-case, without provider
// prefixes (everything up to the last "/", so "openrouter/anthropic/claude-3.5-haiku" is
// "claude-3-5-haiku") or Bedrock's region and vendor prefixes and version stamp
// ("us.anthropic.claude-3-5-haiku-20241022-v1:0"), without date and version suffixes
// (-YYYYMMDD, -YYYY-MM-DD, @YYYYMMDD, OpenAI's -MMDD such as -0613, -00N such as -002)
// or -latest, and with dots written as dashes ("claude-3.5-sonnet" and
// "claude-3-5-sonnet" are the same). Ids that differ only in these respects are taken to
// name the same model; ids of different models stay different ("gpt-4o" and
// "gpt-4o-mini").
func CanonicalModel(id string) string {
	m := strings.ToLower(strings.TrimSpace(id))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	m = bedrockRegion.ReplaceAllString(m, "")
	m = bedrockVendor.ReplaceAllString(m, "")
	m = bedrockVersion.ReplaceAllString(m, "")
	for {
		s := versionSuffix.ReplaceAllString(m, "")
		if s == m || s == "" {
			break
		}
		m = s
	}
	return strings.ReplaceAll(m, ".", "-")
}
