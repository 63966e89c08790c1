package sandbox

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxDependencies bounds the DEPENDENCIES list of agent.py.
const MaxDependencies = 50

var (
	// dependenciesLine finds a top-level "DEPENDENCIES = [" (or "(") assignment.
	dependenciesLine = regexp.MustCompile(`(?m)^DEPENDENCIES\s*(?::[^=\n]*)?=\s*([\[(])`)
	// requirement is a PEP 508 name with optional extras and version specifiers; URLs,
	// markers and pip options ("--index-url ...") are refused.
	requirement = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9._,-]+\])?` +
		`(\s*(===|==|>=|<=|~=|!=|<|>)\s*[A-Za-z0-9.*+!_-]+(\s*,\s*(===|==|>=|<=|~=|!=|<|>)\s*[A-Za-z0-9.*+!_-]+)*)?$`)
)

// Dependencies returns the DEPENDENCIES list declared in agent.py, or nil when there is none.
// It reads the source without running it: the value must be a literal list (or tuple) of
// strings, each a PEP 508 requirement such as "numpy>=1.26" (no URLs, markers or pip
// options). Errors match [ErrInvalid].
func Dependencies(agentSource []byte) ([]string, error) {
	src := string(agentSource)
	loc := dependenciesLine.FindStringSubmatchIndex(src)
	if loc == nil {
		return nil, nil
	}
	closer := byte(']')
	if src[loc[2]] == '(' {
		closer = ')'
	}
	bad := func(rule string) ([]string, error) {
		return nil, fmt.Errorf("%w: agent.py: DEPENDENCIES %s", ErrInvalid, rule)
	}
	var deps []string
	i := loc[3]
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
