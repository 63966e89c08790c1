package completions

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// UnmarshalJSON accepts the spec's array of content blocks and, for convenience, a plain
// string (read as one text block). It is as strict as the request around it: member names
// must match exactly (role, content; type, text in a block), a block's text is required,
// and every error is a *ValidationError naming the field relative to the message
// ("content[1].text"; "" for the message itself). It reads the tokens in one pass: it runs
// for every message of every request, so no reflection and no intermediate maps.
func (m *Message) UnmarshalJSON(b []byte) error {
	m.Role, m.Content = "", nil
	d := jsontext.NewDecoder(bytes.NewReader(b))
	if k := d.PeekKind(); k != '{' {
		return invalid("", "must be an object with role and content, got %s", kindName(k))
	}
	if _, err := d.ReadToken(); err != nil {
		return invalid("", "is not valid JSON")
	}
	for d.PeekKind() != '}' {
		name, err := d.ReadToken()
		if err != nil {
			return invalid("", "is not valid JSON")
		}
		switch field := name.String(); field {
		case "role":
			switch k := d.PeekKind(); k {
			case 'n':
				_, _ = d.ReadToken()
			case '"':
				t, err := d.ReadToken()
				if err != nil {
					return invalid("role", "is not a valid JSON string (UTF-8)")
				}
				m.Role = t.String()
			default:
				return invalid("role", "must be a string, got %s", kindName(k))
			}
		case "content":
			if err := m.readContent(d); err != nil {
				return err
			}
		default:
			return invalid(field, "unknown field")
		}
	}
	return nil
}

// readContent reads a message's content: null, a string or an array of blocks.
func (m *Message) readContent(d *jsontext.Decoder) *ValidationError {
	switch k := d.PeekKind(); k {
	case 'n':
		_, _ = d.ReadToken()
		return nil
	case '"':
		t, err := d.ReadToken()
		if err != nil {
			return invalid("content", "is not a valid JSON string (UTF-8)")
		}
		m.Content = []ContentBlock{{Type: "text", Text: t.String()}}
		return nil
	case '[':
		_, _ = d.ReadToken()
		m.Content = []ContentBlock{}
		for i := 0; d.PeekKind() != ']'; i++ {
			var cb ContentBlock
			if err := cb.read(d); err != nil {
				err.Field = fmt.Sprintf("content[%d]", i) + fieldSuffix(err.Field)
				return err
			}
			m.Content = append(m.Content, cb)
		}
		_, _ = d.ReadToken()
		return nil
	default:
		return invalid("content", "must be an array of content blocks or a string, got %s", kindName(k))
	}
}

// read reads one content block strictly; the error's Field is relative to the block.
func (cb *ContentBlock) read(d *jsontext.Decoder) *ValidationError {
	if k := d.PeekKind(); k != '{' {
		return invalid("", "must be an object with type and text, got %s", kindName(k))
	}
	_, _ = d.ReadToken()
	hasType, hasText := false, false
	for d.PeekKind() != '}' {
		name, err := d.ReadToken()
		if err != nil {
			return invalid("", "is not valid JSON")
		}
		field := name.String()
		if field != "type" && field != "text" {
			return invalid(field, "unknown field")
		}
		switch k := d.PeekKind(); {
		case k == 'n':
			_, _ = d.ReadToken()
			continue
		case k != '"' && field == "type":
			return invalid("type", "is required and must be a string")
		case k != '"':
			return invalid("text", "must be a string, got %s", kindName(k))
		}
		t, err := d.ReadToken()
		if err != nil {
			return invalid(field, "is not a valid JSON string (UTF-8)")
		}
		if field == "type" {
			cb.Type, hasType = t.String(), true
		} else {
			cb.Text, hasText = t.String(), true
		}
	}
	_, _ = d.ReadToken()
	switch {
	case !hasType:
		return invalid("type", "is required and must be a string")
	case !hasText && cb.Type == "text":
		return invalid("text", "is required")
	}
	return nil
}

// fieldSuffix is ".field", or "" for the value itself.
func fieldSuffix(field string) string {
	if field == "" {
		return ""
	}
	return "." + field
}

// kindName names a JSON kind for error messages.
func kindName(k jsontext.Kind) string {
	switch k {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '0':
		return "number"
	}
	return "nothing"
}
