package routing

import (
	"regexp"
	"strings"
	"sync"

	"github.com/switchyard-ai/switchyard/providers"
)

// Benchmark is one public benchmark figure used as a quality prior.
type Benchmark struct {
	// Quality is the published score scaled to [0,1]; 0 means no figure is known.
	Quality float64
	// Source names where the figure was published.
	Source string
	// Tools is true when the model is documented to support function/tool calling.
	Tools bool
}

// Sources of the built-in figures. All are MMLU-Pro accuracy (10-option multiple choice,
// chain-of-thought) as published by the named party; prompts and shot counts differ a
// little between sources, so the figures are a coarse prior, not a leaderboard.
const (
	srcMMLUProPaper = "MMLU-Pro paper, Wang et al. 2024 (arXiv:2406.01574), Table 2, June 2024"
	srcMMLUProBoard = "TIGER-Lab MMLU-Pro leaderboard (huggingface.co/spaces/TIGER-Lab/MMLU-Pro), July 2024"
	srcLlama31Card  = "Meta Llama 3.1 model card, MMLU-Pro (CoT, 5-shot), July 2024"
	srcLlama33Card  = "Meta Llama 3.3 model card, MMLU-Pro (CoT), December 2024"
	srcQwen25Blog   = "Qwen2.5 release blog (qwenlm.github.io/blog/qwen2.5-llm), instruct-model tables, September 2024"
	srcDeepSeekV3   = "DeepSeek-V3 technical report (arXiv:2412.19437), Table 6, December 2024"
	srcDeepSeekR1   = "DeepSeek-R1 report (arXiv:2501.12948), Table 4, January 2025"
	srcToolsOnly    = "no MMLU-Pro figure known; tool calling per the vendor's documentation"
)

// builtinBenchmarks maps a normalised model name (see normaliseModelName) to its figure.
// Only figures the maintainers could attribute to a named source are listed; every other
// model is unknown to the default scorer.
var builtinBenchmarks = map[string]Benchmark{
	"gpt-4o":                     {0.726, srcMMLUProPaper, true},
	"gpt-4-turbo":                {0.637, srcMMLUProPaper, true},
	"gpt-4o-mini":                {0.631, srcMMLUProBoard, true},
	"claude-3-opus":              {0.685, srcMMLUProPaper, true},
	"claude-3-5-sonnet-20240620": {0.761, srcMMLUProBoard, true},
	"claude-3-5-sonnet-20241022": {0.780, srcDeepSeekV3, true},
	"claude-3-5-sonnet":          {0.780, srcDeepSeekV3, true},
	"gemini-1.5-pro":             {0.690, srcMMLUProPaper, true},
	"gemini-1.5-flash":           {0.591, srcMMLUProPaper, true},
	"llama-3-70b-instruct":       {0.562, srcMMLUProPaper, false},
	"llama-3-8b-instruct":        {0.410, srcMMLUProPaper, false},
	"mixtral-8x7b-instruct-v0.1": {0.433, srcMMLUProPaper, false},
	"llama-3.1-405b-instruct":    {0.733, srcLlama31Card, true},
	"llama-3.1-70b-instruct":     {0.664, srcLlama31Card, true},
	"llama-3.1-8b-instruct":      {0.483, srcLlama31Card, true},
	"llama-3.3-70b-instruct":     {0.689, srcLlama33Card, true},
	"qwen2.5-72b-instruct":       {0.711, srcQwen25Blog, true},
	"qwen2.5-7b-instruct":        {0.563, srcQwen25Blog, true},
	"gemma-2-9b-it":              {0.521, srcQwen25Blog, false},
	"deepseek-v3":                {0.759, srcDeepSeekV3, true},
	"deepseek-chat":              {0.759, srcDeepSeekV3, true},
	"deepseek-r1":                {0.840, srcDeepSeekR1, false},
	"deepseek-reasoner":          {0.840, srcDeepSeekR1, false},
	"o1-mini":                    {0.803, srcDeepSeekR1, false},
	"mistral-7b-instruct-v0.3":   {0, srcToolsOnly, true},
	"gpt-4.1":                    {0, srcToolsOnly, true},
	"gpt-4.1-mini":               {0, srcToolsOnly, true},
	"claude-3-haiku":             {0, srcToolsOnly, true},
	"claude-3-5-haiku":           {0, srcToolsOnly, true},
}

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
	out := []string{m}
	if s := dateSuffix.ReplaceAllString(m, ""); s != m {
		out = append(out, s)
	}
	return out
}

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
		m[c] = builtinBenchmarks[k]
	}
	return m
})

// LookupBenchmark returns the built-in figure for a model name ("provider/model" or a bare
// model name), if one is known. A name that matches no entry as it is (lower-cased, provider
// prefix and date suffix set aside) is matched by its providers.CanonicalModel form, so
// "openrouter/anthropic/claude-3.5-sonnet" and "gemini/gemini-1.5-pro-latest" find theirs.
func LookupBenchmark(name string) (Benchmark, bool) {
	for _, k := range normaliseModelName(name) {
		if b, ok := builtinBenchmarks[k]; ok {
			return b, true
		}
	}
	b, ok := benchmarksByCanonical()[providers.CanonicalModel(name)]
	return b, ok
}
