package completions

import (
	"bytes"
	"encoding/json"
)

// decodeStringOrList reads a JSON value that the OpenAI and Anthropic APIs allow as a plain
// string or a list of parts: null gives nil, a string the one part text makes, a list its
// parts. isString reports the string form (so it can be written back the same way).
func decodeStringOrList[T any](b []byte, text func(string) T) (parts []T, isString bool, err error) {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		return nil, false, nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, false, err
		}
		return []T{text(s)}, true, nil
	}
	err = json.Unmarshal(b, &parts)
	return parts, false, err
}
