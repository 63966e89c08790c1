package providers

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Gemini's function parameters and responseSchema take a Schema object, a subset of the
// OpenAPI 3.0 schema, not JSON Schema. geminiSchema converts a JSON Schema to it:
//
//   - kept: type (upper-cased), format (date-time, enum and the numeric formats), title,
//     description, nullable, enum (strings only), properties, required, items, minItems,
//     maxItems, minProperties, maxProperties, minLength, maxLength, pattern, minimum,
//     maximum, default, example, anyOf, propertyOrdering;
//   - converted: a type list (["string", "null"]) to one type with nullable, or to anyOf;
//     const to a one-value enum; oneOf to anyOf; a one-element allOf merged in; examples to
//     example; local $ref (#/$defs/…, #/definitions/…) inlined;
//   - dropped, as Gemini refuses them: additionalProperties, $schema, $id, $defs,
//     definitions, $comment, strict, exclusive bounds, if/then/else, not, patternProperties
//     and any other keyword.
//
// A recursive or non-local $ref, or an allOf of several schemas, cannot be expressed: the
// error says so and the request is refused before any call.

// maxGeminiSchemaDepth bounds the inlining of references.
const maxGeminiSchemaDepth = 32

var errRecursiveRef = errors.New("recursive $ref cannot be expressed in Gemini's schema dialect")

func geminiSchema(raw json.RawMessage) (map[string]any, error) {
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("schema is not a JSON object: %w", err)
	}
	c := schemaConverter{root: root}
	return c.convert(root, 0, nil)
}

type schemaConverter struct {
	root map[string]any
}

// geminiTypes maps JSON Schema type names to Gemini's.
var geminiTypes = map[string]string{
	"string": "STRING", "number": "NUMBER", "integer": "INTEGER", "boolean": "BOOLEAN",
	"array": "ARRAY", "object": "OBJECT", "null": "NULL",
}

func (c *schemaConverter) resolve(ref string) (map[string]any, error) {
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		if ref == "#" {
			return nil, errRecursiveRef
		}
		return nil, fmt.Errorf("$ref %q: only references inside the schema (#/$defs/…) can be expressed for Gemini", ref)
	}
	var cur any = c.root
	for _, seg := range strings.Split(path, "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
		if cur, ok = m[seg]; !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("$ref %q is not a schema", ref)
	}
	return m, nil
}

// convert converts schema s; refs lists the references being inlined above it.
func (c *schemaConverter) convert(s map[string]any, depth int, refs []string) (map[string]any, error) {
	if depth > maxGeminiSchemaDepth {
		return nil, errors.New("schema nests too deeply for Gemini")
	}
	if ref, ok := s["$ref"].(string); ok {
		for _, r := range refs {
			if r == ref {
				return nil, errRecursiveRef
			}
		}
		target, err := c.resolve(ref)
		if err != nil {
			return nil, err
		}
		out, err := c.convert(target, depth+1, append(refs, ref))
		if err != nil {
			return nil, err
		}
		if d, ok := s["description"].(string); ok { // a description beside $ref wins
			out["description"] = d
		}
		return out, nil
	}
	out := map[string]any{}
	if all, ok := s["allOf"].([]any); ok {
		if len(all) != 1 {
			return nil, errors.New("allOf of several schemas cannot be expressed in Gemini's schema dialect")
		}
		sub, ok := all[0].(map[string]any)
		if !ok {
			return nil, errors.New("allOf must hold schemas")
		}
		merged, err := c.convert(sub, depth+1, refs)
		if err != nil {
			return nil, err
		}
		for k, v := range merged {
			out[k] = v
		}
	}
	for k, v := range s {
		switch k {
		case "type":
			if err := c.setType(out, v); err != nil {
				return nil, err
			}
		case "format":
			if f, ok := v.(string); ok && geminiFormat(f) {
				out[k] = f
			}
		case "title", "description", "nullable", "pattern", "minimum", "maximum", "default", "example", "propertyOrdering",
			"minItems", "maxItems", "minProperties", "maxProperties", "minLength", "maxLength", "required":
			out[k] = v
		case "examples":
			if ex, ok := v.([]any); ok && len(ex) > 0 {
				out["example"] = ex[0]
			}
		case "enum":
			if vals, ok := stringValues(v); ok {
				out["enum"] = vals
			}
		case "const":
			if str, ok := v.(string); ok {
				out["enum"] = []any{str}
			}
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil, errors.New("properties must be an object")
			}
			conv := make(map[string]any, len(props))
			for name, p := range props {
				ps, ok := p.(map[string]any)
				if !ok {
					continue // true/false schemas have no Gemini form
				}
				cp, err := c.convert(ps, depth+1, refs)
				if err != nil {
					return nil, err
				}
				conv[name] = cp
			}
			if len(conv) > 0 { // Gemini refuses an OBJECT with empty properties
				out[k] = conv
			}
		case "items":
			is, ok := v.(map[string]any)
			if !ok {
				continue
			}
			ci, err := c.convert(is, depth+1, refs)
			if err != nil {
				return nil, err
			}
			out[k] = ci
		case "anyOf", "oneOf":
			alts, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("%s must be an array of schemas", k)
			}
			var conv []any
			for _, a := range alts {
				as, ok := a.(map[string]any)
				if !ok {
					continue
				}
				if t, _ := as["type"].(string); t == "null" && len(as) == 1 {
					out["nullable"] = true
					continue
				}
				ca, err := c.convert(as, depth+1, refs)
				if err != nil {
					return nil, err
				}
				conv = append(conv, ca)
			}
			switch len(conv) {
			case 0:
			case 1:
				for ck, cv := range conv[0].(map[string]any) {
					out[ck] = cv
				}
			default:
				out["anyOf"] = conv
			}
		}
	}
	if req, ok := out["required"].([]any); ok {
		// Only properties that made it across: a true/false property schema has no
		// Gemini form, and an OBJECT without properties takes no required list.
		props, _ := out["properties"].(map[string]any)
		kept := req[:0:0]
		for _, r := range req {
			if name, ok := r.(string); ok && props[name] != nil {
				kept = append(kept, name)
			}
		}
		if len(kept) > 0 {
			out["required"] = kept
		} else {
			delete(out, "required")
		}
	}
	if _, typed := out["type"]; !typed {
		if _, ok := out["properties"]; ok {
			out["type"] = "OBJECT"
		} else if _, ok := out["items"]; ok {
			out["type"] = "ARRAY"
		} else if _, ok := out["enum"]; ok {
			out["type"] = "STRING"
		}
	}
	if e, ok := out["enum"]; ok && e != nil && out["type"] == "STRING" {
		out["format"] = "enum"
	}
	return out, nil
}

// setType sets type (and nullable) from a JSON Schema type or list of types.
func (c *schemaConverter) setType(out map[string]any, v any) error {
	switch t := v.(type) {
	case string:
		g, ok := geminiTypes[t]
		if !ok {
			return fmt.Errorf("unknown type %q", t)
		}
		out["type"] = g
	case []any:
		var types []string
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return errors.New("type list must hold strings")
			}
			if s == "null" {
				out["nullable"] = true
				continue
			}
			g, ok := geminiTypes[s]
			if !ok {
				return fmt.Errorf("unknown type %q", s)
			}
			types = append(types, g)
		}
		switch len(types) {
		case 0:
			out["type"] = "NULL"
		case 1:
			out["type"] = types[0]
		default:
			alts := make([]any, len(types))
			for i, g := range types {
				alts[i] = map[string]any{"type": g}
			}
			out["anyOf"] = alts
		}
	default:
		return errors.New("type must be a string or a list of strings")
	}
	return nil
}

// geminiFormat reports whether Gemini accepts format f.
func geminiFormat(f string) bool {
	switch f {
	case "date-time", "enum", "int32", "int64", "float", "double":
		return true
	}
	return false
}

// stringValues returns v when it is a list of strings.
func stringValues(v any) ([]any, bool) {
	vals, ok := v.([]any)
	if !ok {
		return nil, false
	}
	for _, x := range vals {
		if _, ok := x.(string); !ok {
			return nil, false
		}
	}
	return vals, true
}
