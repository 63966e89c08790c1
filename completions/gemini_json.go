package completions

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// Google's API reads a request in either of proto JSON's forms: the fields' JSON names
// (systemInstruction, generationConfig.maxOutputTokens — what the SDKs send) or their
// proto names (system_instruction, generation_config.max_output_tokens — what Google's own
// curl examples send), and it refuses a name it does not know. NormalizeGeminiJSON brings
// a body to the JSON names before it is decoded, so nothing the translation reads is lost
// to the spelling.

// GeminiGenerateTopLevel are the names a generateContent (and streamGenerateContent) body
// may hold, as Google's API and Vertex AI's define them, and LiteLLM's request fallbacks
// and context_window_fallbacks, which its proxy reads on these routes too.
var GeminiGenerateTopLevel = []string{"model", "contents", "systemInstruction", "tools", "toolConfig", "generationConfig",
	"safetySettings", "cachedContent", "labels", "fallbacks", "contextWindowFallbacks"}

// GeminiCountTopLevel are the names a countTokens body may hold: Google's (contents or a
// generateContentRequest) and Vertex AI's (model, contents, systemInstruction, tools,
// generationConfig), and LiteLLM's fallbacks and context_window_fallbacks, taken as
// generateContent takes them (a client sends one body to both) and ignored: they do not
// change what the prompt counts.
var GeminiCountTopLevel = []string{"model", "contents", "generateContentRequest", "systemInstruction", "tools", "generationConfig",
	"fallbacks", "contextWindowFallbacks"}

// geminiOpaque are the fields whose values are the caller's own data (a function's
// arguments and result, labels, JSON Schemas, a schema's example): their names are kept.
var geminiOpaque = map[string]bool{"args": true, "response": true, "labels": true, "parametersJsonSchema": true,
	"responseJsonSchema": true, "example": true, "default": true, "enum": true, "required": true, "propertyOrdering": true}

// geminiModelNames are the top-level fields (LiteLLM's, in GeminiGenerateTopLevel) whose
// values name models, kept as written: a model name is not a proto name.
var geminiModelNames = map[string]bool{"fallbacks": true, "contextWindowFallbacks": true}

// NormalizeGeminiJSON is body, a Gemini API request object whose top-level names must be
// among known, with every proto field name (snake_case) rewritten to its JSON name
// (lowerCamelCase) — never the names inside a function's args or response, labels, a JSON
// Schema or a schema's properties — and a contents given as one Content object (as
// Google's API accepts) made a list. A name not in known is refused as Google's API does
// (a *ValidationError naming it), and so is a field given in both forms. A body that is
// not a JSON object is returned as it is, for the decoder to describe; so is one that
// needs no change.
func NormalizeGeminiJSON(body []byte, known []string) ([]byte, error) {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return body, nil
	}
	changed := false
	out := make(map[string]json.RawMessage, len(top))
	for k, v := range top {
		name := snakeToCamel(k)
		if !containsString(known, name) {
			return nil, invalid(k, "Invalid JSON payload received. Unknown name %q: Cannot find field", k)
		}
		if _, dup := out[name]; dup {
			return nil, invalid(name, "is given twice (as %s and as its proto name)", name)
		}
		if name != k {
			changed = true
		}
		nv, err := v, error(nil)
		if !geminiModelNames[name] {
			nv, err = normalizeGeminiValue(name, v)
		}
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(nv, v) {
			changed = true
		}
		out[name] = nv
	}
	if !changed {
		return body, nil
	}
	return json.Marshal(out)
}

// normalizeGeminiValue is the value of the top-level field name, normalised.
func normalizeGeminiValue(name string, v json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(v)
	wrap := name == "contents" && len(trimmed) > 0 && trimmed[0] == '{'
	if geminiOpaque[name] || !wrap && name != "generateContentRequest" && !hasGeminiProtoName(v) {
		return v, nil // what the SDKs and Gemini CLI send: no tree to walk
	}
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber() // seeds and budgets keep every digit
	var tree any
	if d.Decode(&tree) != nil {
		return v, nil // the decoder describes it
	}
	// The value is walked as the member of an object holding it alone, so that a contents
	// object is made a list like a nested one.
	wrapped, changed, err := normalizeGeminiNode("", map[string]any{name: tree}, false, 0)
	if err != nil {
		return nil, err
	}
	tree = wrapped.(map[string]any)[name]
	if !changed {
		return v, nil
	}
	return json.Marshal(tree)
}

// normalizeGeminiNode normalises v, the value of the field key (a message field, or a
// Google schema's when schema is set); it reports whether anything changed.
func normalizeGeminiNode(key string, v any, schema bool, depth int) (any, bool, error) {
	if depth > 128 {
		return nil, false, invalid(key, "is nested more than 128 levels")
	}
	switch n := v.(type) {
	case []any:
		changed := false
		for i, e := range n {
			ne, c, err := normalizeGeminiNode(key, e, schema, depth+1)
			if err != nil {
				return nil, false, err
			}
			n[i], changed = ne, changed || c
		}
		return n, changed, nil
	case map[string]any:
		if schema && key == "properties" { // property names are the caller's
			changed := false
			for name, p := range n {
				np, c, err := normalizeGeminiNode("", p, true, depth+1)
				if err != nil {
					return nil, false, err
				}
				n[name], changed = np, changed || c
			}
			return n, changed, nil
		}
		out := make(map[string]any, len(n))
		changed := false
		for k, e := range n {
			name := snakeToCamel(k)
			if _, dup := out[name]; dup || name != k && n[name] != nil {
				return nil, false, invalid(name, "is given twice (as %s and as its proto name)", name)
			}
			changed = changed || name != k
			if !geminiOpaque[name] {
				sub := schema || name == "parameters" || name == "responseSchema"
				var c bool
				var err error
				if e, c, err = normalizeGeminiNode(name, e, sub, depth+1); err != nil {
					return nil, false, err
				}
				changed = changed || c
			}
			if m, ok := e.(map[string]any); ok && name == "contents" && !schema {
				e, changed = []any{m}, true
			}
			out[name] = e
		}
		return out, changed, nil
	}
	return v, false, nil
}

// snakeToCamel is a proto field name's JSON name: max_output_tokens → maxOutputTokens.
// A name without an underscore is returned as it is.
func snakeToCamel(s string) string {
	if strings.IndexByte(s, '_') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	up := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' && i > 0:
			up = true
		case up && 'a' <= c && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
			up = false
		default:
			b.WriteByte(c)
			up = false
		}
	}
	return b.String()
}

// containsString reports whether list holds s.
func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// geminiProtoNames are the proto (snake_case) names of the fields with a multi-word JSON
// name that the Gemini request types read (from their json tags) or that Google's Schema
// defines: a body holding none of them as a member name needs no rewriting.
var geminiProtoNames = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	for _, n := range []string{"maxItems", "minItems", "minProperties", "maxProperties", "minLength", "maxLength",
		"anyOf", "propertyOrdering", "additionalProperties", "generateContentRequest"} {
		names[camelToSnake(n)] = true
	}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
				if snake := camelToSnake(name); snake != name {
					names[snake] = true
				}
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[GeminiGenerateRequest]())
	return names
})

// camelToSnake is a JSON name's proto name: maxOutputTokens → max_output_tokens.
func camelToSnake(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b.WriteByte('_')
			b.WriteByte(c - 'A' + 'a')
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// hasGeminiProtoName reports whether v, JSON, may have a member named by one of
// geminiProtoNames: one pass over its strings, without decoding it (a value is not a
// name: a member name is a string followed by a colon). A member name written with
// escapes ("max\u005foutput_tokens") is taken for one: the decoder reads it unescaped.
func hasGeminiProtoName(v []byte) bool {
	names := geminiProtoNames()
	for i := 0; i < len(v); i++ {
		if v[i] != '"' {
			continue
		}
		start, snake, escaped := i+1, false, false
		j := start
		for ; j < len(v) && v[j] != '"'; j++ {
			switch v[j] {
			case '\\':
				escaped = true
				j++
			case '_':
				snake = true
			}
		}
		i = j
		if !snake && !escaped {
			continue
		}
		k := j + 1
		for k < len(v) && (v[k] == ' ' || v[k] == '\t' || v[k] == '\n' || v[k] == '\r') {
			k++
		}
		if k < len(v) && v[k] == ':' && (escaped || names[string(v[start:j])]) {
			return true
		}
	}
	return false
}
