package server

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
)

// maxFormModelBytes bounds the value of a pass-through form's model or stream field read
// (a model's name is far shorter); a longer one is refused.
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
// as the provider reads them: form fields (not files) named exactly model and stream. The
// body is only read, never changed (it is forwarded byte for byte), each field's value at
// most maxFormModelBytes. A form naming model more than once is a 400 naming the field; a
// body that is not a readable form names no model.
func formAsk(boundary string, body []byte) (model string, stream bool, err error) {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	models := 0
	for {
		part, perr := mr.NextRawPart()
		if perr != nil {
			if !errors.Is(perr, io.EOF) {
				return "", false, nil // not a readable form: it names no model
			}
			break
		}
		name := part.FormName()
		if part.FileName() != "" || name != "model" && name != "stream" {
			continue
		}
		v, rerr := io.ReadAll(io.LimitReader(part, maxFormModelBytes+1))
		if rerr != nil {
			return "", false, nil
		}
		if len(v) > maxFormModelBytes {
			return "", false, Errorf(http.StatusBadRequest, KindBadRequest, "%s: the form's %s field is longer than %d bytes", name, name, maxFormModelBytes)
		}
		if name == "model" {
			models++
			model = string(v)
		} else {
			stream = strings.EqualFold(strings.TrimSpace(string(v)), "true")
		}
	}
	if models > 1 {
		return "", false, Errorf(http.StatusBadRequest, KindBadRequest, "model: the form names model %d times; name it once", models)
	}
	return model, stream, nil
}
