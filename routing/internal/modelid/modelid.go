// Package modelid normalises LLM model ids so that the names users send ("openai/gpt-4o",
// "gpt-4o-2024-08-06", "together/meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo") meet the
// names evaluation data uses for the same model. It is shared by the learned default
// router and the program that builds it.
package modelid

import (
	"regexp"
	"strings"
)

// versionSuffix matches a trailing date or version stamp: -2024-05-13, -20240620, -0827,
// -002, -2407, -latest.
var versionSuffix = regexp.MustCompile(`-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|\d{3}|latest)$`)

// Key returns the normalised id of a model name: lower case, without provider or
// organisation prefixes, without "meta-", with llama3/llama-3-1 spelled llama-3/llama-3.1,
// and without trailing date, version or -latest stamps.
func Key(name string) string {
	m := strings.ToLower(strings.TrimSpace(name))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	m = strings.TrimPrefix(m, "meta-")
	m = strings.ReplaceAll(m, "llama3", "llama-3")
	m = strings.ReplaceAll(m, "llama-3-1-", "llama-3.1-")
	m = strings.ReplaceAll(m, "llama-3-3-", "llama-3.3-")
	m = strings.ReplaceAll(m, "claude-3.5-", "claude-3-5-")
	for {
		s := versionSuffix.ReplaceAllString(m, "")
		if s == m || s == "" {
			return m
		}
		m = s
	}
}

// looseSuffixes are name parts that mark a serving variant of a model rather than another
// model: dropping or adding them gives a nearest relative.
var looseSuffixes = []string{"turbo", "instruct", "chat", "it", "preview", "exp", "versatile", "hf", "fp8", "online", "001", "002"}

// Relatives returns keys of nearest relatives of key, closest first: the key with trailing
// serving-variant parts (-turbo, -instruct, -chat, -it, -preview, -exp, ...) dropped one
// at a time, then with -instruct, -chat or -it added. The key itself is not included.
func Relatives(key string) []string {
	var out []string
	k := key
	for {
		i := strings.LastIndexByte(k, '-')
		if i <= 0 || !isLoose(k[i+1:]) {
			break
		}
		k = k[:i]
		out = append(out, k)
	}
	for _, s := range []string{"-instruct", "-chat", "-it"} {
		out = append(out, key+s)
		if k != key {
			out = append(out, k+s)
		}
	}
	return out
}

func isLoose(part string) bool {
	for _, s := range looseSuffixes {
		if part == s {
			return true
		}
	}
	return false
}
