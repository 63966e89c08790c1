package routing

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// SourceBenchmarkRelative: a model the built-in table lacks, given the figure of its
// newest older sibling in the table (named in EstimatedFrom): "claude-opus-4-6" gets
// claude-opus-4-1's, "gpt-5.1" gpt-5's, "gemini-3-pro-preview" gemini-2.5-pro's.
const SourceBenchmarkRelative = "benchmark_relative"

// modelLine splits a model name into its line — the name with its version numbers replaced
// by "#" — and its version: the numbers, in order. "claude-sonnet-4-5" is line
// "claude-sonnet-#", version [4 5]; "gemini-2.5-pro" is "gemini-#-pro", [2 5]; a name
// without a version (gpt-4o-mini: "4o" is not a number) has none. Provider prefixes, dates
// and -latest/-preview/-exp suffixes are dropped first.
func modelLine(name string) (line string, version []int) {
	forms := normaliseModelName(name)
	m := forms[len(forms)-1]
	for {
		trimmed := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "-latest"), "-preview"), "-exp")
		if t := dateSuffix.ReplaceAllString(trimmed, ""); t != "" {
			trimmed = t
		}
		if trimmed == m {
			break
		}
		m = trimmed
	}
	var parts []string
	numbered := false
	for _, tok := range strings.Split(m, "-") {
		var nums []int
		for _, p := range strings.Split(tok, ".") {
			n, err := strconv.Atoi(p)
			if err != nil || p == "" || len(p) > 3 {
				nums = nil
				break
			}
			nums = append(nums, n)
		}
		if nums == nil {
			parts = append(parts, tok)
			numbered = false
			continue
		}
		version = append(version, nums...)
		if !numbered {
			parts = append(parts, "#") // consecutive numbers ("4-5") are one version
			numbered = true
		}
	}
	if len(version) == 0 {
		return "", nil
	}
	return strings.Join(parts, "-"), version
}

// lineEntry is a table entry of a model line at a version.
type lineEntry struct {
	key     string
	version []int
}

// benchmarkLines indexes the table's entries with a figure by model line.
var benchmarkLines = sync.OnceValue(func() map[string][]lineEntry {
	lines := map[string][]lineEntry{}
	for k, b := range benchmarks() {
		if b.Quality <= 0 {
			continue
		}
		if line, v := modelLine(k); line != "" {
			lines[line] = append(lines[line], lineEntry{k, v})
		}
	}
	for _, es := range lines {
		slices.SortFunc(es, func(a, b lineEntry) int {
			return cmp.Or(slices.Compare(a.version, b.version), cmp.Compare(a.key, b.key))
		})
	}
	return lines
})

// LookupBenchmarkRelative returns, for a model the built-in table lacks, the figure of its
// newest older sibling (the same model line at a lower version) and that sibling's name:
// a newer model of a line is taken to be at least as good as the last one measured. ok is
// false for a model the table has, or whose line it does not have at an older version.
func LookupBenchmarkRelative(name string) (relative string, b Benchmark, ok bool) {
	if b, ok := LookupBenchmark(name); ok && b.Quality > 0 {
		return "", Benchmark{}, false
	}
	line, v := modelLine(name)
	if line == "" {
		return "", Benchmark{}, false
	}
	es := benchmarkLines()[line]
	for i := len(es) - 1; i >= 0; i-- {
		// The same version under another name (-exp, -preview, a size or date the table
		// spells otherwise) first, else the newest older one.
		if slices.Compare(es[i].version, v) <= 0 {
			return es[i].key, benchmarks()[es[i].key], true
		}
	}
	return "", Benchmark{}, false
}
