package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/switchyard-ai/switchyard/validation"
)

// decodeExact decodes body into v for the endpoints that reject unknown fields: member
// names must match the fields' JSON names exactly (encoding/json would let "MODEL_ID" set
// model_id, and a repeated name override the first), so a wrong-case name is an unknown
// field and a repeated one is refused. Errors name the field by its path
// ("messages[0].role"). An integer field takes an integral number in any notation (2.0,
// 1e0), as JSON Schema's "integer" (and so the OpenAPI document) counts it.
func decodeExact(body []byte, v any, status int) error {
	err := jsonv2.Unmarshal(body, v, jsonv2.RejectUnknownMembers(true), integralNumbers(status))
	if err == nil {
		return nil
	}
	// Custom UnmarshalJSON methods report their own field-naming messages.
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	if errors.Is(err, jsontext.ErrDuplicateName) {
		var se *jsontext.SyntacticError
		if errors.As(err, &se) {
			return fieldInvalid(status, pointerPath(string(se.JSONPointer)), "field %q appears more than once", pointerPath(string(se.JSONPointer)))
		}
		return Validation(status, "a field appears more than once")
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		return malformed(body)
	}
	var se *jsonv2.SemanticError
	if errors.As(err, &se) {
		path := pointerPath(string(se.JSONPointer))
		switch {
		case errors.Is(se.Err, jsonv2.ErrUnknownName):
			return fieldInvalid(status, path, "unknown field %q", path)
		case se.GoType != nil && errors.Is(se.Err, strconv.ErrRange):
			return fieldInvalid(status, path, "field %q is out of range for %s", path, jsonTypeName(se.GoType.Kind().String()))
		case se.GoType != nil && isNumberErr(se.Err):
			return fieldInvalid(status, path, "field %q must be %s, got number", path, jsonTypeName(se.GoType.Kind().String()))
		case se.Err != nil:
			// A type's own UnmarshalJSON failed. A completions message names the field
			// relative to itself: prefix the message's own path ("messages[0]").
			var ve *validation.Error
			if errors.As(se.Err, &ve) {
				field := path
				switch {
				case path == "":
					// The whole body's own UnmarshalJSON (model selection's request):
					// its field is the path ("llm_providers[0].price", not ".llm_…").
					field = ve.Field
				case ve.Field != "":
					field += "." + ve.Field
				}
				return fieldInvalid(status, field, "%s", (&validation.Error{Field: field, Message: ve.Message}).Error())
			}
			// A scalar type's own UnmarshalJSON refusing the kind of value sent (the
			// optimizer's bounded numbers): worded as the decoder's own type errors.
			var ute *json.UnmarshalTypeError
			if errors.As(se.Err, &ute) && ute.Field == "" && ute.Type != nil && path != "" && isScalarKind(ute.Type.Kind()) {
				return fieldInvalid(status, path, "field %q must be %s, got %s", path, jsonTypeName(ute.Type.Kind().String()), ute.Value)
			}
			return decodeError(se.Err, status)
		case path == "":
			return Validation(status, "request body must be a JSON object, got %s", kindName(se.JSONKind))
		case se.GoType != nil:
			return fieldInvalid(status, path, "field %q must be %s, got %s", path, jsonTypeName(se.GoType.Kind().String()), kindName(se.JSONKind))
		}
		return fieldInvalid(status, path, "field %q has the wrong type", path)
	}
	return Validation(status, "%s", strings.TrimPrefix(err.Error(), "json: "))
}

// fieldInvalid is Validation naming field as its Param (the OpenAI-format envelope's
// "param"), when there is one.
func fieldInvalid(status int, field, format string, args ...any) *APIError {
	e := Validation(status, format, args...)
	if field != "" {
		e.Param = field
	}
	return e
}

// integralNumbers decodes the int, int32 and int64 fields: an integral value in any
// notation within the type's range (2.0, 1e0, 9007199254740993.0), read exactly from its
// digits (validation.ParseIntegral), never rounded through float64. A value with a fraction
// part is refused as "must be an integer" and one past the type's range as "out of range",
// naming the field; anything but a number is left to the decoder's own error.
func integralNumbers(status int) jsonv2.Options {
	switch status {
	case http.StatusUnprocessableEntity:
		return integralNumbers422
	case http.StatusBadRequest:
		return integralNumbers400
	}
	return newIntegralNumbers(status)
}

// The options of the two statuses the routes use, built once: building them costs a request
// 29 allocations.
var (
	integralNumbers422 = newIntegralNumbers(http.StatusUnprocessableEntity)
	integralNumbers400 = newIntegralNumbers(http.StatusBadRequest)
)

func newIntegralNumbers(status int) jsonv2.Options {
	return jsonv2.WithUnmarshalers(jsonv2.JoinUnmarshalers(
		jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *int) error { return decodeIntegral(dec, v, strconv.IntSize, status) }),
		jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *int64) error { return decodeIntegral(dec, v, 64, status) }),
		jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *int32) error { return decodeIntegral(dec, v, 32, status) }),
	))
}

func decodeIntegral[T int | int32 | int64](dec *jsontext.Decoder, v *T, bits, status int) error {
	if dec.PeekKind() != '0' {
		return errors.ErrUnsupported // null, or a type error the decoder words itself
	}
	val, err := dec.ReadValue()
	if err != nil {
		return err
	}
	n, err := validation.ParseIntegral(string(val), bits)
	if err != nil {
		path := pointerPath(string(dec.StackPointer()))
		if errors.Is(err, validation.ErrNotInteger) {
			return fieldInvalid(status, path, "field %q must be an integer, got number", path)
		}
		return fieldInvalid(status, path, "field %q is out of range for an integer", path) // 1e400, or past int32
	}
	*v = T(n)
	return nil
}

// isNumberErr reports a number that does not fit its field (a fraction in an integer, out
// of range): a type complaint, like encoding/json's.
func isNumberErr(err error) bool {
	var ne *strconv.NumError
	return errors.As(err, &ne) || errors.Is(err, strconv.ErrSyntax) || errors.Is(err, strconv.ErrRange)
}

// pointerPath turns a JSON Pointer ("/messages/0/role") into the field path the error
// messages use ("messages[0].role").
func pointerPath(p string) string {
	if p == "" {
		return ""
	}
	var b strings.Builder
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(tok); err == nil && b.Len() > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// kindName names the JSON kind of a value as the error messages do.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "a value of another type"
}

// isScalarKind reports whether k is a JSON scalar's Go kind: a boolean, a number or a string.
func isScalarKind(k reflect.Kind) bool {
	return k == reflect.Bool || k == reflect.String || (k >= reflect.Int && k <= reflect.Float64)
}
