package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// decodeReference is decodeJSON as first written (json.Valid before decoding); the single-
// pass decodeJSON must answer every body with the same error.
func decodeReference(body []byte, v any, opts decodeOptions) error {
	if opts.ValidationStatus == 0 {
		opts.ValidationStatus = http.StatusUnprocessableEntity
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return Errorf(http.StatusBadRequest, KindBadRequest, "request body is empty; expected a JSON object")
	}
	if !json.Valid(body) {
		var syn *json.SyntaxError
		if err := json.Unmarshal(body, new(any)); errors.As(err, &syn) {
			return Errorf(http.StatusBadRequest, KindBadRequest, "malformed JSON at byte %d: %v", syn.Offset, syn)
		}
		return Errorf(http.StatusBadRequest, KindBadRequest, "malformed JSON body")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if !opts.AllowUnknownFields {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return decodeError(err, opts.ValidationStatus)
	}
	if dec.More() {
		return Errorf(http.StatusBadRequest, KindBadRequest, "malformed JSON: more than one value in the body")
	}
	return nil
}

// exactDecoding is what the strict endpoints answer where it differs from encoding/json.
var exactDecoding = map[string]string{
	`{"items":[{"n":"1"}]}`:    `field "items[0].n" must be an integer, got string`,
	`{"count":1.5}`:            `field "count" must be an integer, got number`,
	`{"count": 1, "count": 2}`: `field "count" appears more than once`,
}

func TestDecodeJSONMatchesReference(t *testing.T) {
	type item struct {
		N int `json:"n"`
	}
	type body struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
		Items []item `json:"items"`
	}
	bodies := []string{
		`{"name":"a","count":2,"items":[{"n":1}]}`,
		` {"name":"a"} `,
		"{\"name\":\"a\"}\n\t",
		`{"name":"a"} {"name":"b"}`,
		`{"name":"a"} x`,
		`{"name":"a"}]`,
		`{"name":`,
		`{"name":"a",}`,
		`{"name":"a","colour":"red"}`,
		`{"name":5}`,
		`{"count":"x","name":5}`,
		`{"items":[{"n":"1"}]}`,
		`{"count":1.5}`,
		`[1,2]`,
		`"text"`,
		`null`,
		`   `,
		`{"name":"a"`,
		`{"name":"\u00e9t\u00e9"}`,
		`{"count": 1, "count": 2}`,
		`{"name":"a", "colour": {"deep": [1, {"x": 2}]}, "count": 3}`,
	}
	for _, allow := range []bool{false, true} {
		for _, status := range []int{0, http.StatusBadRequest} {
			opts := decodeOptions{AllowUnknownFields: allow, ValidationStatus: status}
			for _, b := range bodies {
				var got, want body
				r := httptest.NewRequest("POST", "/", strings.NewReader(b))
				gotErr := decodeJSON(r, &got, opts)
				wantErr := decodeReference([]byte(b), &want, opts)
				// Strict endpoints decode exactly (decode_exact.go): field paths carry the
				// index, and a repeated name is refused instead of overriding the first.
				if want, ok := exactDecoding[b]; ok && !allow {
					st := status
					if st == 0 {
						st = http.StatusUnprocessableEntity
					}
					wantErr = Validation(st, "%s", want)
				}
				if errText(gotErr) != errText(wantErr) {
					t.Errorf("allow=%v status=%d body %s: error %q, want %q", allow, status, b, errText(gotErr), errText(wantErr))
				}
				if gotErr == nil && (got.Name != want.Name || got.Count != want.Count || len(got.Items) != len(want.Items)) {
					t.Errorf("allow=%v body %s: decoded %+v, want %+v", allow, b, got, want)
				}
			}
		}
	}
}

func errText(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		return http.StatusText(ae.Status) + ": " + ae.Kind + ": " + ae.Message
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func TestDecodeJSONShortBody(t *testing.T) {
	// A body shorter than its declared Content-Length is a read failure, not a short value.
	r := httptest.NewRequest("POST", "/", strings.NewReader(`{"name":"a"}`))
	r.ContentLength = 40
	var v struct {
		Name string `json:"name"`
	}
	err := decodeJSON(r, &v, decodeOptions{})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.Contains(ae.Message, "reading request body") {
		t.Fatalf("err = %v, want a 400 about reading the body", err)
	}
}

// TestStrictEndpointsMatchNamesExactly: on endpoints that reject unknown fields, a field
// name in another case is unknown (encoding/json would have let "COUNT" set count).
func TestStrictEndpointsMatchNamesExactly(t *testing.T) {
	type body struct {
		ModelID string `json:"model_id"`
		Count   int    `json:"count"`
	}
	for _, b := range []string{`{"MODEL_ID":"x"}`, `{"model_id":"a","Model_Id":"b"}`, `{"Count":1}`} {
		var got body
		err := decodeJSON(httptest.NewRequest("POST", "/", strings.NewReader(b)), &got, decodeOptions{})
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != 422 || !strings.Contains(ae.Message, "unknown field") {
			t.Fatalf("%s: %v (decoded %+v)", b, err, got)
		}
	}
}
