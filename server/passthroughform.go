package server

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
)

// maxFormModelBytes bounds the value of a form's model field read (a pass-through form's
// model or stream, the model a key's aliases rewrite: aliasedForm), a model's name being
// far shorter; a longer one is refused.
const maxFormModelBytes = 1 << 10

// isMultipartForm reports whether contentType is multipart/form-data, and its boundary.
func isMultipartForm(contentType string) (boundary string, ok bool) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return "", false
	}
	return params["boundary"], true
}

// formAsk is the model and stream fields of body, a multipart/form-data body with
// boundary (OpenAI's audio transcriptions and translations, image edits and variations),
// as a provider may read them: parts named model and stream in any case, by their name or
// their RFC 2231/5987 name* (see partFieldNames: a part either names is the field), a file
// part's too (a provider's parser may take it as the field). The body is only read, never changed (it
// is forwarded byte for byte), each field's value at most maxFormModelBytes. A form
// naming model more than once is a 400 naming the field. A body that is not a form read
// unambiguously names no model: one that is not a readable form, a part whose
// Content-Disposition does not parse or comes more than once, a model or stream part
// with a Content-Transfer-Encoding, or a delimiter the reader did not take as one (behind
// a bare LF, in a preamble or epilogue) — a provider's more lenient parser could find a
// model part there that was never checked.
func formAsk(boundary string, body []byte) (model string, stream bool, err error) {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	models, parts := 0, 0
	for {
		part, perr := mr.NextRawPart()
		if perr != nil {
			if !errors.Is(perr, io.EOF) {
				return "", false, nil // not a readable form: it names no model
			}
			break
		}
		parts++
		cds := part.Header.Values("Content-Disposition")
		if len(cds) > 1 {
			return "", false, nil
		}
		var names []string
		if len(cds) == 1 {
			var perr error
			if names, perr = partFieldNames(cds[0]); perr != nil {
				return "", false, nil
			}
		}
		// Any name a parser may read (name or name*, in any case) makes the part the field.
		isModel := slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, "model") })
		isStream := slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, "stream") })
		if !isModel && !isStream {
			continue
		}
		name := "stream"
		if isModel {
			name = "model"
		}
		if cte := strings.ToLower(strings.TrimSpace(part.Header.Get("Content-Transfer-Encoding"))); cte != "" && cte != "7bit" && cte != "8bit" && cte != "binary" {
			return "", false, nil
		}
		v, rerr := io.ReadAll(io.LimitReader(part, maxFormModelBytes+1))
		if rerr != nil {
			return "", false, nil
		}
		if len(v) > maxFormModelBytes {
			return "", false, Errorf(http.StatusBadRequest, KindBadRequest, "%s: the form's %s field is longer than %d bytes", name, name, maxFormModelBytes)
		}
		if isModel {
			models++
			model = string(v)
		}
		if isStream {
			stream = strings.EqualFold(strings.TrimSpace(string(v)), "true")
		}
	}
	// Every "--boundary" in the body is one of the parts' delimiters or the closing one:
	// another (behind a bare LF, in the preamble or the epilogue) is a delimiter to a
	// parser that reads lines otherwise.
	if bytes.Count(body, []byte("--"+boundary)) != parts+1 {
		return "", false, nil
	}
	if models > 1 {
		return "", false, Errorf(http.StatusBadRequest, KindBadRequest, "model: the form names model %d times; name it once", models)
	}
	return model, stream, nil
}
