package server

import (
	"mime"
	"strings"
)

// partFieldNames is every name a multipart/form-data part's Content-Disposition cd gives
// its field, as form parsers may read it: the name Go reads (the RFC 2231/5987 name*
// parameter, decoded, in place of name when it has one) and, when both name and name*
// are there and differ, the plain name too (RFC 7578 has no name*: a parser that follows
// it reads name). A name is as it came; callers compare it without regard to case, as a
// lenient parser may. It fails when cd does not parse.
func partFieldNames(cd string) ([]string, error) {
	_, params, err := mime.ParseMediaType(cd)
	if err != nil {
		return nil, err
	}
	names := []string{params["name"]}
	if plain, extended := plainNameParam(cd); extended && plain != names[0] {
		names = append(names, plain)
	}
	return names, nil
}

// plainNameParam is the value of cd's plain name parameter ("" when none) and whether cd
// also has an extended one (name*, name*0…). cd is one mime.ParseMediaType parsed.
func plainNameParam(cd string) (plain string, extended bool) {
	for i, seg := range splitParams(cd) {
		if i == 0 {
			continue // the disposition type
		}
		key, _, _ := strings.Cut(seg, "=")
		switch key = strings.ToLower(strings.TrimSpace(key)); {
		case key == "name":
			if _, p, err := mime.ParseMediaType("form-data;" + seg); err == nil {
				plain = p["name"]
			}
		case strings.HasPrefix(key, "name*"):
			extended = true
		}
	}
	return plain, extended
}

// splitParams splits a header value at its semicolons outside quoted strings.
func splitParams(v string) []string {
	var out []string
	quoted, escaped, from := false, false, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case escaped:
			escaped = false
		case quoted && c == '\\':
			escaped = true
		case c == '"':
			quoted = !quoted
		case c == ';' && !quoted:
			out = append(out, v[from:i])
			from = i + 1
		}
	}
	return append(out, v[from:])
}
