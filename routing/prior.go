package routing

import (
	"cmp"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/switchyard-ai/switchyard/providers"
)

// Benchmark is one public benchmark figure used as a quality prior.
type Benchmark struct {
	// Quality is the model's MMLU-Pro accuracy scaled to [0,1] — published, or estimated
	// from its GPQA Diamond accuracy when FromGPQA is set; 0 means no figure is known.
	Quality float64
	// GPQA is the model's published GPQA Diamond accuracy, 0-1 (0: none in the table).
	GPQA float64
	// FromGPQA is true when no MMLU-Pro figure was published and Quality is estimated from
	// GPQA: read off a line fitted, in log-odds, over the models in the table that have
	// both figures (see [GPQAToMMLUPro]).
	FromGPQA bool
	// Source names where the figures were published.
	Source string
	// Tools is true when the model is documented to support function/tool calling.
	Tools bool
}

// Sources of the built-in figures. MMLU-Pro (10-option multiple choice, chain-of-thought)
// and GPQA Diamond accuracies as published by the named party; prompts, shot counts and
// reasoning settings differ between sources (vendors publish GPQA for their reasoning
// models with reasoning on), so the figures are a coarse prior, not a leaderboard. The
// 2025 figures were collected from the named pages by the llm-stats.com data set
// (github.com/JonathanChavezTamales/llm-leaderboard, CC BY 4.0, October 2025).
const (
	srcMMLUProPaper = "MMLU-Pro paper, Wang et al. 2024 (arXiv:2406.01574), Table 2, June 2024"
	srcMMLUProBoard = "TIGER-Lab MMLU-Pro leaderboard (huggingface.co/spaces/TIGER-Lab/MMLU-Pro), July 2024"
	srcLlama31Card  = "Meta Llama 3.1 model card, MMLU-Pro (CoT, 5-shot), July 2024"
	srcLlama33Card  = "Meta Llama 3.3 model card, MMLU-Pro (CoT), December 2024"
	srcQwen25Blog   = "Qwen2.5 release blog (qwenlm.github.io/blog/qwen2.5-llm), instruct-model tables, September 2024"
	srcDeepSeekV3   = "DeepSeek-V3 technical report (arXiv:2412.19437), Table 6, December 2024"
	srcDeepSeekR1   = "DeepSeek-R1 report (arXiv:2501.12948), Table 4, January 2025"
	srcToolsOnly    = "no MMLU-Pro figure known; tool calling per the vendor's documentation"

	viaLLMStats       = "; via the llm-stats.com data set (CC BY 4.0)"
	srcGPT5           = "OpenAI, Introducing GPT-5 (openai.com/index/gpt-5), August 2025: GPQA Diamond, reasoning on, no tools" + viaLLMStats
	srcGPT5Devs       = "OpenAI, Introducing GPT-5 for developers, August 2025: GPQA Diamond" + viaLLMStats
	srcGPT41          = "OpenAI, Introducing GPT-4.1 in the API (openai.com/index/gpt-4-1), April 2025: GPQA Diamond" + viaLLMStats
	srcO3O4           = "OpenAI, Introducing o3 and o4-mini, April 2025: GPQA Diamond, no tools" + viaLLMStats
	srcO3Mini         = "OpenAI, o3-mini and GPT-4.1 announcements, 2025: GPQA Diamond" + viaLLMStats
	srcGPTOSS         = "OpenAI, Introducing gpt-oss, August 2025: GPQA Diamond, no tools" + viaLLMStats
	srcClaude4        = "Anthropic, Introducing Claude 4, May 2025: GPQA Diamond, extended thinking" + viaLLMStats
	srcClaudeOpus41   = "Anthropic, Claude Opus 4.1, August 2025: GPQA Diamond, extended thinking" + viaLLMStats
	srcClaudeSonnet45 = "Anthropic, Introducing Claude Sonnet 4.5, September 2025: GPQA Diamond" + viaLLMStats
	srcClaudeHaiku45  = "Anthropic, Introducing Claude Haiku 4.5, October 2025: GPQA Diamond" + viaLLMStats
	srcClaude35Haiku  = "Anthropic, Claude 3.5 Haiku, October 2024: MMLU-Pro and GPQA Diamond, 0-shot CoT" + viaLLMStats
	srcClaude3Haiku   = "Anthropic, Claude 3 Haiku, March 2024: GPQA, 0-shot CoT" + viaLLMStats
	srcGemini25       = "Google DeepMind, Gemini 2.5 Pro / Flash / Flash-Lite model pages and launch posts, 2025: GPQA Diamond, single attempt" + viaLLMStats
	srcGemini20       = "Google, Gemini 2.0 Flash and Flash-Lite announcements, December 2024 - February 2025: MMLU-Pro and GPQA Diamond" + viaLLMStats
	srcGrok           = "xAI, Grok 4 and Grok 4 Fast announcements, 2025: GPQA Diamond" + viaLLMStats
	srcLlama4         = "Meta, The Llama 4 herd (ai.meta.com/blog/llama-4-multimodal-intelligence), April 2025: MMLU-Pro and GPQA Diamond" + viaLLMStats
	srcQwen3          = "Qwen3-2507 and Qwen3-Next model cards and posts (huggingface.co/Qwen, qwenlm.github.io), 2025: MMLU-Pro and GPQA" + viaLLMStats
	srcDeepSeekAPI    = "DeepSeek's API names (deepseek-chat, deepseek-reasoner) serve V3.1 and, since September 2025, V3.2 without and with thinking: the figures of V3.1 (non-thinking) and V3.2-Exp (reasoning) from their model cards" + viaLLMStats
	srcDeepSeek2025   = "DeepSeek-V3-0324, V3.1, V3.2-Exp and R1-0528 release notes and model cards, 2025: MMLU-Pro and GPQA Diamond" + viaLLMStats
	srcKimiK2         = "Moonshot AI, Kimi K2 (moonshotai.github.io/Kimi-K2), July 2025: MMLU-Pro and GPQA Diamond" + viaLLMStats
	srcGLM45          = "Z.ai, GLM-4.5 and GLM-4.6 posts (z.ai/blog), 2025: MMLU-Pro and GPQA" + viaLLMStats
	srcGemma3         = "Google, Gemma 3 model card (ai.google.dev/gemma/docs/core/model_card_3), March 2025: MMLU-Pro and GPQA Diamond, 0-shot" + viaLLMStats
	srcMistralSmall3  = "Mistral Small 3.1 / 3.2 model cards (huggingface.co/mistralai), 2025: MMLU-Pro (5-shot CoT) and GPQA Diamond" + viaLLMStats
	srcPhi4           = "Phi-4 technical report (arXiv:2412.08905), December 2024: MMLU-Pro and GPQA" + viaLLMStats
	srcNova           = "Amazon Nova technical report and model card, December 2024: GPQA" + viaLLMStats
	srcPaired2024     = "GPQA Diamond from the vendor's announcement or model card (2024)" + viaLLMStats
)

// builtinBenchmarks maps a normalised model name (see normaliseModelName) to its figures.
// Only figures the maintainers could attribute to a named source are listed; every other
// model is unknown to the default scorer. An entry with a GPQA figure and no MMLU-Pro
// figure gets an estimated one (see [GPQAToMMLUPro]); LookupBenchmark returns it filled in.
var builtinBenchmarks = map[string]Benchmark{
	"gpt-4o":                     {Quality: 0.726, GPQA: 0.536, Source: srcMMLUProPaper + "; " + srcPaired2024, Tools: true},
	"gpt-4-turbo":                {Quality: 0.637, Source: srcMMLUProPaper, Tools: true},
	"gpt-4o-mini":                {Quality: 0.631, GPQA: 0.402, Source: srcMMLUProBoard + "; " + srcPaired2024, Tools: true},
	"claude-3-opus":              {Quality: 0.685, GPQA: 0.504, Source: srcMMLUProPaper + "; " + srcPaired2024, Tools: true},
	"claude-3-5-sonnet-20240620": {Quality: 0.761, GPQA: 0.594, Source: srcMMLUProBoard + "; " + srcPaired2024, Tools: true},
	"claude-3-5-sonnet-20241022": {Quality: 0.780, GPQA: 0.672, Source: srcDeepSeekV3 + "; " + srcPaired2024, Tools: true},
	"claude-3-5-sonnet":          {Quality: 0.780, GPQA: 0.672, Source: srcDeepSeekV3 + "; " + srcPaired2024, Tools: true},
	"gemini-1.5-pro":             {Quality: 0.690, GPQA: 0.591, Source: srcMMLUProPaper + "; " + srcPaired2024, Tools: true},
	"gemini-1.5-flash":           {Quality: 0.591, GPQA: 0.510, Source: srcMMLUProPaper + "; " + srcPaired2024, Tools: true},
	"llama-3-70b-instruct":       {Quality: 0.562, Source: srcMMLUProPaper},
	"llama-3-8b-instruct":        {Quality: 0.410, Source: srcMMLUProPaper},
	"mixtral-8x7b-instruct-v0.1": {Quality: 0.433, Source: srcMMLUProPaper},
	"llama-3.1-405b-instruct":    {Quality: 0.733, GPQA: 0.507, Source: srcLlama31Card + "; " + srcPaired2024, Tools: true},
	"llama-3.1-70b-instruct":     {Quality: 0.664, GPQA: 0.417, Source: srcLlama31Card + "; " + srcPaired2024, Tools: true},
	"llama-3.1-8b-instruct":      {Quality: 0.483, GPQA: 0.304, Source: srcLlama31Card + "; " + srcPaired2024, Tools: true},
	"llama-3.3-70b-instruct":     {Quality: 0.689, GPQA: 0.505, Source: srcLlama33Card + "; " + srcPaired2024, Tools: true},
	"qwen2.5-72b-instruct":       {Quality: 0.711, GPQA: 0.490, Source: srcQwen25Blog + "; " + srcPaired2024, Tools: true},
	"qwen2.5-7b-instruct":        {Quality: 0.563, GPQA: 0.364, Source: srcQwen25Blog + "; " + srcPaired2024, Tools: true},
	"gemma-2-9b-it":              {Quality: 0.521, Source: srcQwen25Blog},
	"deepseek-v3":                {Quality: 0.759, GPQA: 0.591, Source: srcDeepSeekV3 + "; " + srcPaired2024, Tools: true},
	"deepseek-chat":              {Quality: 0.837, GPQA: 0.749, Source: srcDeepSeekAPI, Tools: true},
	"deepseek-r1":                {Quality: 0.840, GPQA: 0.715, Source: srcDeepSeekR1 + "; " + srcPaired2024},
	"deepseek-reasoner":          {Quality: 0.850, GPQA: 0.799, Source: srcDeepSeekAPI, Tools: true},
	"o1-mini":                    {Quality: 0.803, GPQA: 0.600, Source: srcDeepSeekR1 + "; " + srcPaired2024},
	"mistral-7b-instruct-v0.3":   {Source: srcToolsOnly, Tools: true},

	// 2025 models with a published MMLU-Pro figure.
	"llama-4-maverick":                       {Quality: 0.805, GPQA: 0.698, Source: srcLlama4, Tools: true},
	"llama-4-maverick-17b-128e-instruct":     {Quality: 0.805, GPQA: 0.698, Source: srcLlama4, Tools: true},
	"llama-4-maverick-17b-128e-instruct-fp8": {Quality: 0.805, GPQA: 0.698, Source: srcLlama4, Tools: true},
	"llama-4-scout":                          {Quality: 0.743, GPQA: 0.572, Source: srcLlama4, Tools: true},
	"llama-4-scout-17b-16e-instruct":         {Quality: 0.743, GPQA: 0.572, Source: srcLlama4, Tools: true},
	"qwen3-235b-a22b-instruct-2507":          {Quality: 0.830, GPQA: 0.775, Source: srcQwen3, Tools: true},
	"qwen3-235b-a22b-thinking-2507":          {Quality: 0.844, GPQA: 0.811, Source: srcQwen3, Tools: true},
	"qwen3-next-80b-a3b-instruct":            {Quality: 0.806, GPQA: 0.729, Source: srcQwen3, Tools: true},
	"qwen3-next-80b-a3b-thinking":            {Quality: 0.827, GPQA: 0.772, Source: srcQwen3, Tools: true},
	"deepseek-v3-0324":                       {Quality: 0.812, GPQA: 0.684, Source: srcDeepSeek2025, Tools: true},
	"deepseek-v3.1":                          {Quality: 0.837, GPQA: 0.749, Source: srcDeepSeek2025, Tools: true},
	"deepseek-v3.2-exp":                      {Quality: 0.850, GPQA: 0.799, Source: srcDeepSeek2025, Tools: true},
	"deepseek-r1-0528":                       {Quality: 0.850, GPQA: 0.810, Source: srcDeepSeek2025, Tools: true},
	"kimi-k2-instruct":                       {Quality: 0.811, GPQA: 0.751, Source: srcKimiK2, Tools: true},
	"glm-4.5":                                {Quality: 0.846, GPQA: 0.791, Source: srcGLM45, Tools: true},
	"glm-4.5-air":                            {Quality: 0.814, GPQA: 0.750, Source: srcGLM45, Tools: true},
	"gemma-3-27b-it":                         {Quality: 0.675, GPQA: 0.424, Source: srcGemma3, Tools: true},
	"gemma-3-12b-it":                         {Quality: 0.606, GPQA: 0.409, Source: srcGemma3, Tools: true},
	"gemma-3-4b-it":                          {Quality: 0.436, GPQA: 0.308, Source: srcGemma3, Tools: true},
	"mistral-small-3.1-24b-instruct-2503":    {Quality: 0.668, GPQA: 0.460, Source: srcMistralSmall3, Tools: true},
	"mistral-small-2503":                     {Quality: 0.668, GPQA: 0.460, Source: srcMistralSmall3, Tools: true},
	"mistral-small-3.2-24b-instruct-2506":    {Quality: 0.691, GPQA: 0.461, Source: srcMistralSmall3, Tools: true},
	"mistral-small-2506":                     {Quality: 0.691, GPQA: 0.461, Source: srcMistralSmall3, Tools: true},
	"gemini-2.0-flash":                       {Quality: 0.764, GPQA: 0.621, Source: srcGemini20, Tools: true},
	"gemini-2.0-flash-lite":                  {Quality: 0.716, GPQA: 0.515, Source: srcGemini20, Tools: true},
	"claude-3-5-haiku":                       {Quality: 0.650, GPQA: 0.416, Source: srcClaude35Haiku, Tools: true},
	"phi-4":                                  {Quality: 0.704, GPQA: 0.561, Source: srcPhi4},

	// Models with a published GPQA Diamond figure and none for MMLU-Pro: their Quality is
	// estimated from it.
	"gpt-5":                 {GPQA: 0.857, Source: srcGPT5, Tools: true},
	"gpt-5-mini":            {GPQA: 0.823, Source: srcGPT5, Tools: true},
	"gpt-5-nano":            {GPQA: 0.712, Source: srcGPT5, Tools: true},
	"gpt-4.1":               {GPQA: 0.663, Source: srcGPT5Devs, Tools: true},
	"gpt-4.1-mini":          {GPQA: 0.650, Source: srcGPT5Devs, Tools: true},
	"gpt-4.1-nano":          {GPQA: 0.503, Source: srcGPT41, Tools: true},
	"o3":                    {GPQA: 0.833, Source: srcO3O4, Tools: true},
	"o4-mini":               {GPQA: 0.814, Source: srcO3O4, Tools: true},
	"o3-mini":               {GPQA: 0.772, Source: srcO3Mini, Tools: true},
	"gpt-oss-120b":          {GPQA: 0.801, Source: srcGPTOSS, Tools: true},
	"gpt-oss-20b":           {GPQA: 0.715, Source: srcGPTOSS, Tools: true},
	"claude-sonnet-4-5":     {GPQA: 0.834, Source: srcClaudeSonnet45, Tools: true},
	"claude-haiku-4-5":      {GPQA: 0.730, Source: srcClaudeHaiku45, Tools: true},
	"claude-opus-4-1":       {GPQA: 0.809, Source: srcClaudeOpus41, Tools: true},
	"claude-opus-4":         {GPQA: 0.796, Source: srcClaude4, Tools: true},
	"claude-sonnet-4":       {GPQA: 0.754, Source: srcClaude4, Tools: true},
	"claude-3-haiku":        {GPQA: 0.333, Source: srcClaude3Haiku, Tools: true},
	"gemini-2.5-pro":        {GPQA: 0.864, Source: srcGemini25, Tools: true},
	"gemini-2.5-flash":      {GPQA: 0.828, Source: srcGemini25, Tools: true},
	"gemini-2.5-flash-lite": {GPQA: 0.646, Source: srcGemini25, Tools: true},
	"grok-4":                {GPQA: 0.875, Source: srcGrok, Tools: true},
	"grok-4-fast":           {GPQA: 0.857, Source: srcGrok, Tools: true},
	"glm-4.6":               {GPQA: 0.810, Source: srcGLM45, Tools: true},
	"nova-pro":              {GPQA: 0.469, Source: srcNova, Tools: true},
	"nova-lite":             {GPQA: 0.420, Source: srcNova, Tools: true},
	"nova-micro":            {GPQA: 0.400, Source: srcNova, Tools: true},
}

// claudeReordered matches a Claude 4+ name in the Claude 3 order: version, then family.
var claudeReordered = regexp.MustCompile(`^claude-([4-9](?:[.-]\d)?)-(opus|sonnet|haiku)`)

var dateSuffix = regexp.MustCompile(`-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|\d{3}|latest)$`)

// normaliseModelName lower-cases a candidate's model part and drops vendor prefixes,
// "meta-" and date, version ("-002") or "-latest" suffixes, so "openai/gpt-4o-2024-05-13",
// "together/meta-llama/Meta-Llama-3.1-8B-Instruct", "gemini/gemini-1.5-pro-002" and
// "anthropic/claude-3-opus-20240229" find their entries.
func normaliseModelName(model string) []string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	m = strings.TrimPrefix(m, "meta-")
	m = strings.ReplaceAll(m, "llama3", "llama-3")
	m = strings.ReplaceAll(m, "llama-3-1", "llama-3.1")
	m = strings.ReplaceAll(m, "llama-3-3", "llama-3.3")
	m = strings.Replace(m, "gpt-35-", "gpt-3.5-", 1) // Azure's spelling
	// Claude 4 and later put the family first (claude-opus-4-1); some hosts keep the
	// Claude 3 order (claude-4-opus, claude-4.5-sonnet).
	m = claudeReordered.ReplaceAllStringFunc(m, func(s string) string {
		p := claudeReordered.FindStringSubmatch(s)
		return "claude-" + p[2] + "-" + strings.ReplaceAll(p[1], ".", "-")
	})
	out := []string{m}
	if s := dateSuffix.ReplaceAllString(m, ""); s != m {
		out = append(out, s)
	}
	return out
}

// gpqaLine is the line, in log-odds, from GPQA Diamond to MMLU-Pro accuracy fitted by
// least squares over the table's models that have both figures, and how many there were.
var gpqaLine = sync.OnceValue(func() (line struct {
	intercept, slope, r float64
	n                   int
}) {
	// Each model once (aliases share their figures), in a fixed order.
	pairs := map[[2]float64]bool{}
	for _, b := range builtinBenchmarks {
		if b.Quality > 0 && b.GPQA > 0 {
			pairs[[2]float64{b.GPQA, b.Quality}] = true
		}
	}
	keys := slices.SortedFunc(maps.Keys(pairs), func(a, b [2]float64) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	var xs, ys []float64
	for _, p := range keys {
		xs, ys = append(xs, logOdds(p[0])), append(ys, logOdds(p[1]))
	}
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i]/n, my+ys[i]/n
	}
	var sxy, sxx, syy float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
		syy += (ys[i] - my) * (ys[i] - my)
	}
	line.slope = sxy / sxx
	line.intercept = my - line.slope*mx
	line.r = sxy / math.Sqrt(sxx*syy)
	line.n = len(xs)
	return line
})

// GPQAToMMLUPro estimates a model's MMLU-Pro accuracy from its GPQA Diamond accuracy (both
// 0-1), by a line in log-odds fitted over the models of the built-in table that have both
// figures (vendors publish GPQA for every frontier model, MMLU-Pro for few). Across those
// models the two correlate strongly (r about 0.95 in log-odds over 38 models), but a single
// model can sit several points off the line: the estimate orders models, it does not
// measure one.
func GPQAToMMLUPro(gpqa float64) float64 {
	l := gpqaLine()
	return 1 / (1 + math.Exp(-(l.intercept + l.slope*logOdds(gpqa))))
}

func logOdds(p float64) float64 {
	p = math.Min(0.999, math.Max(0.001, p))
	return math.Log(p / (1 - p))
}

// benchmarks is builtinBenchmarks with Quality filled in from GPQA where only it is known.
var benchmarks = sync.OnceValue(func() map[string]Benchmark {
	m := make(map[string]Benchmark, len(builtinBenchmarks))
	for k, b := range builtinBenchmarks {
		if b.Quality == 0 && b.GPQA > 0 {
			b.Quality, b.FromGPQA = GPQAToMMLUPro(b.GPQA), true
		}
		m[k] = b
	}
	return m
})

// benchmarksByCanonical is builtinBenchmarks keyed by providers.CanonicalModel; where
// several entries share a canonical form, the undated one, else the newest, wins.
var benchmarksByCanonical = sync.OnceValue(func() map[string]Benchmark {
	keys := map[string]string{}
	for k := range builtinBenchmarks {
		c := providers.CanonicalModel(k)
		undated := func(k string) bool { return strings.ReplaceAll(k, ".", "-") == c }
		if old, ok := keys[c]; !ok || undated(k) && !undated(old) || undated(k) == undated(old) && k > old {
			keys[c] = k
		}
	}
	m := make(map[string]Benchmark, len(keys))
	for c, k := range keys {
		m[c] = benchmarks()[k]
	}
	return m
})

// LookupBenchmark returns the built-in figure for a model name ("provider/model" or a bare
// model name), if one is known. A name that matches no entry as it is (lower-cased, provider
// prefix and date suffix set aside) is matched by its providers.CanonicalModel form, so
// "openrouter/anthropic/claude-3.5-sonnet" and "gemini/gemini-1.5-pro-latest" find theirs.
func LookupBenchmark(name string) (Benchmark, bool) {
	for _, k := range normaliseModelName(name) {
		if b, ok := benchmarks()[k]; ok {
			return b, true
		}
	}
	b, ok := benchmarksByCanonical()[providers.CanonicalModel(name)]
	return b, ok
}
