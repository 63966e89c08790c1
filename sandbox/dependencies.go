package sandbox

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxDependencies bounds the DEPENDENCIES list of agent.py.
const MaxDependencies = 50

var (
	// dependenciesLine finds a top-level assignment to DEPENDENCIES (plain, annotated or
	// augmented); group 1 is an augmented operator, group 2 the value's first character.
	dependenciesLine = regexp.MustCompile(`(?m)^DEPENDENCIES[ \t]*(?::[^=\n]*)?([-+*/%@&|^]|//|>>|<<|\*\*)?=[ \t]*(.?)`)
	// requirement is a PEP 508 name with optional extras and version specifiers; URLs,
	// markers and pip options ("--index-url ...") are refused.
	requirement = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9._,-]+\])?` +
		`(\s*(===|==|>=|<=|~=|!=|<|>)\s*[A-Za-z0-9.*+!_-]+(\s*,\s*(===|==|>=|<=|~=|!=|<|>)\s*[A-Za-z0-9.*+!_-]+)*)?$`)
)

// Dependencies returns the DEPENDENCIES list declared in agent.py, or nil when there is none.
// It reads the source without running it: DEPENDENCIES must be assigned once, at top level,
// a literal list (or tuple) of strings and nothing else on the line, each a PEP 508
// requirement such as "numpy>=1.26" (no URLs, markers or pip options). Anything else — a
// plain string such as "requests", an expression, a second or augmented assignment — is
// refused rather than ignored. Errors match [ErrInvalid].
func Dependencies(agentSource []byte) ([]string, error) {
	src := string(agentSource)
	bad := func(rule string) ([]string, error) {
		return nil, fmt.Errorf("%w: agent.py: DEPENDENCIES %s", ErrInvalid, rule)
	}
	all := dependenciesLine.FindAllStringSubmatchIndex(src, -1)
	if len(all) == 0 {
		return nil, nil
	}
	if len(all) > 1 {
		return bad(fmt.Sprintf("is assigned %d times; assign it once, as a literal list of strings such as [\"requests\"]", len(all)))
	}
	loc := all[0]
	if loc[2] >= 0 {
		return bad(fmt.Sprintf("must be assigned with =, not %s=; write one literal list of strings such as [\"requests\"]", src[loc[2]:loc[3]]))
	}
	if loc[4] == loc[5] || (src[loc[4]] != '[' && src[loc[4]] != '(') {
		value := src[loc[4]:]
		if end := strings.IndexByte(value, '\n'); end >= 0 {
			value = value[:end]
		}
		if len(value) > 40 {
			value = value[:40] + "..."
		}
		return bad(fmt.Sprintf("must be a literal list of strings such as [\"requests\"], not %s", strings.TrimSpace(value)))
	}
	closer := byte(']')
	if src[loc[4]] == '(' {
		closer = ')'
	}
	var deps []string
	i := loc[5]
	expectItem := true
	for {
		if i >= len(src) {
			return bad("is not a closed literal list of strings")
		}
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == closer:
			if !onlyCommentFollows(src[i+1:]) {
				return bad("must be one literal list of strings with nothing after it on its line (no expressions)")
			}
			for _, d := range deps {
				if !requirement.MatchString(d) {
					return bad(fmt.Sprintf("entry %q is not a plain requirement like \"name>=1.0\"", d))
				}
			}
			if len(deps) > MaxDependencies {
				return bad(fmt.Sprintf("has %d entries, at most %d allowed", len(deps), MaxDependencies))
			}
			return deps, nil
		case c == ',' && !expectItem:
			expectItem = true
			i++
		case (c == '"' || c == '\'') && expectItem:
			end := strings.IndexByte(src[i+1:], c)
			if end < 0 {
				return bad("has an unterminated string")
			}
			s := src[i+1 : i+1+end]
			if strings.ContainsAny(s, "\\\n") {
				return bad("entries must be plain strings without escapes")
			}
			deps = append(deps, strings.TrimSpace(s))
			i += end + 2
			expectItem = false
		default:
			return bad("must be a literal list of strings")
		}
	}
}

// onlyCommentFollows reports whether rest, up to its first newline, is blank or a comment.
func onlyCommentFollows(rest string) bool {
	if end := strings.IndexByte(rest, '\n'); end >= 0 {
		rest = rest[:end]
	}
	rest = strings.TrimLeft(rest, " \t\r")
	return rest == "" || rest[0] == '#'
}
