package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// decodeOptions says how one endpoint decodes its body.
type decodeOptions struct {
	// ValidationStatus is the status for wrong types and unknown fields (default 422).
	ValidationStatus int
	// AllowUnknownFields tolerates fields the request type does not have (the OpenAI-compatible
	// endpoint does, since SDKs send many optional parameters).
	AllowUnknownFields bool
	// EmptyIsObject reads an empty body as {}: a request giving none of its fields, which
	// the spec's operations answer with the message of the first field missing.
	EmptyIsObject bool
	// Rewrite, when set, turns the body into the one decoded (the Gemini surface's
	// proto-name normalisation); its error is returned as it is.
	Rewrite func(body []byte) ([]byte, error)
}

// decodeJSON reads the whole body (already capped by the size limit) into v.
// Malformed JSON is a 400; a wrong type or an unknown field is a validation failure naming
// the field; an over-limit body is a 413.
func decodeJSON(r *http.Request, v any, opts decodeOptions) error {
	if opts.ValidationStatus == 0 {
		opts.ValidationStatus = http.StatusUnprocessableEntity
	}
	body, err := readBody(r)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return Errorf(http.StatusRequestEntityTooLarge, KindTooLarge, "request body exceeds the limit of %d bytes (serve --max-body-bytes)", mbe.Limit)
		}
		if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
			// The body read deadline: say so, without the socket addresses the error holds.
			return Errorf(http.StatusRequestTimeout, KindRequestTimeout, "the request body did not arrive in time (the server's --body-read-timeout)")
		}
		return Errorf(http.StatusBadRequest, KindBadRequest, "reading request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if !opts.EmptyIsObject {
			return Errorf(http.StatusBadRequest, KindBadRequest, "request body is empty; expected a JSON object")
		}
		body = []byte("{}")
	}
	if model, ok := deploymentModel(r); ok {
		// An Azure deployment or engine route: the path's model is the request's.
		body = withDeploymentModel(body, model)
	}
	if opts.Rewrite != nil {
		if body, err = opts.Rewrite(body); err != nil {
			return err
		}
	}
	err = decodeRequestBody(body, v, opts)
	noteDecodedModel(r, v, body, err)
	return err
}

// decodeRequestBody decodes body, the request's whole body, into v as opts say (decodeJSON).
func decodeRequestBody(body []byte, v any, opts decodeOptions) error {
	// The decoder scans the whole first value before it decodes anything, so a syntax
	// error in it is reported before any type error, as a separate json.Valid pass would.
	if !opts.AllowUnknownFields {
		return decodeExact(body, v, opts.ValidationStatus)
	}
	// Unmarshal works on body in place (no decoder buffer) and rejects trailing data.
	err := json.Unmarshal(body, v)
	var syn *json.SyntaxError
	if errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF) {
		// Rare: find the precise complaint on the whole body.
		return malformed(body)
	}
	if err != nil {
		return decodeError(err, opts.ValidationStatus)
	}
	return nil
}

// malformed describes why body is not exactly one JSON value.
func malformed(body []byte) error {
	if !json.Valid(body) {
		// Decode once more to get a positioned syntax error message.
		var syn *json.SyntaxError
		if err := json.Unmarshal(body, new(any)); errors.As(err, &syn) {
			return Errorf(http.StatusBadRequest, KindBadRequest, "malformed JSON at byte %d: %v", syn.Offset, syn)
		}
		return Errorf(http.StatusBadRequest, KindBadRequest, "malformed JSON body")
	}
	return Errorf(http.StatusBadRequest, KindBadRequest, "malformed JSON: more than one value in the body")
}

func onlySpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// readBody reads the whole (size-capped) body, in one allocation when the client declared
// its length.
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= 1<<20 {
		buf := make([]byte, n+1) // one spare byte to see the end without growing
		got, err := io.ReadFull(r.Body, buf)
		switch {
		case int64(got) < n && (err == io.ErrUnexpectedEOF || err == io.EOF):
			return nil, io.ErrUnexpectedEOF // the client sent less than it declared
		case err == io.ErrUnexpectedEOF:
			return buf[:got], nil
		case err != nil:
			return nil, err
		}
		// More than declared (the server normally stops at Content-Length): read the rest.
		rest, err := io.ReadAll(r.Body)
		return append(buf, rest...), err
	}
	return io.ReadAll(r.Body)
}

func decodeError(err error, status int) error {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		field := ute.Field
		if field == "" {
			return Validation(status, "request body must be a JSON object, got %s", ute.Value)
		}
		ae := Validation(status, "field %q must be %s, got %s", field, jsonTypeName(ute.Type.Kind().String()), ute.Value)
		ae.Param = field
		return ae
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return Validation(status, "unknown field %s", f)
	}
	// Custom UnmarshalJSON methods report their own field-naming messages.
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	return Validation(status, "%s", strings.TrimPrefix(msg, "json: "))
}

func jsonTypeName(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr", "interface":
		return "an object"
	case "float32", "float64":
		return "a number"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	}
	return fmt.Sprintf("of type %s", goKind)
}
