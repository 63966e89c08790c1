package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// A virtual key's aliases (LiteLLM's key aliases, {"my-model": "gpt-4o"}) are its own
// model names: a request of the key naming one is the request naming the model it stands
// for, as LiteLLM's proxy rewrites the request's model before routing it. The rewrite is
// made before the route's handler reads the request, so everything after it — the key's,
// team's and organization's models (checked against the model the alias stands for, as
// LiteLLM resolves an alias before its model check), a LiteLLM config's served models,
// routing, billing, the answer's model — sees the model itself. The request's model is
// where each surface takes it: the JSON body's top-level "model" (and each entry of the
// native /api/v1/completions' "models" and "fallback_models"), a multipart form's model
// field (audio, image edits), the Gemini API's path ({model}:generateContent), an Azure
// deployment or engine path, and /v1/realtime's model (or deployment) query parameter.

// withKeyAliases wraps h, a gateway route's handler: a request of a virtual key with
// aliases has its model rewritten when it names one of them.
func withKeyAliases(h HandlerFunc) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, _ := PrincipalFrom(r.Context())
		vk, ok := p.Scope.(virtualKeyScope)
		if !ok || len(vk.Aliases) == 0 {
			return h(w, r)
		}
		r, stop := aliasedRequest(r, vk.Aliases)
		defer stop()
		return h(w, r)
	}
}

// keyAliasTarget is the model name stands for when r's virtual key has it as an alias,
// else name: for the routes that read a model without calling it (/utils/token_counter,
// /spend/calculate), which answer with the name asked and so resolve it themselves.
func keyAliasTarget(r *http.Request, name string) string {
	p, _ := PrincipalFrom(r.Context())
	if vk, ok := p.Scope.(virtualKeyScope); ok {
		if target, ok := vk.Aliases[name]; ok {
			return target
		}
	}
	return name
}

// aliasedRequest is r with the model it names replaced by the model aliases says it
// stands for (r itself when it names none); stop releases what the rewrite holds (a
// multipart body's rewriting), to be called once the handler has returned.
func aliasedRequest(r *http.Request, aliases map[string]string) (*http.Request, func()) {
	stop := func() {}
	if m, ok := r.Context().Value(deploymentModelKey{}).(string); ok {
		if target, ok := aliases[m]; ok {
			r = r.WithContext(context.WithValue(r.Context(), deploymentModelKey{}, target))
		}
	}
	if rest := r.PathValue("model"); strings.Contains(rest, ":") {
		// The Gemini API's {model}:{method}, its model perhaps as models/{model}.
		cut := strings.LastIndexByte(rest, ':')
		prefix, model := "", rest[:cut]
		if m, ok := strings.CutPrefix(model, "models/"); ok {
			prefix, model = "models/", m
		}
		if target, ok := aliases[model]; ok {
			r = r.Clone(r.Context())
			r.SetPathValue("model", prefix+target+rest[cut:])
		}
	}
	if r.Method == http.MethodGet {
		q := r.URL.Query()
		changed := false
		for _, name := range []string{"model", "deployment"} {
			if target, ok := aliases[q.Get(name)]; ok {
				q.Set(name, target)
				changed = true
			}
		}
		if changed {
			r2 := new(http.Request)
			*r2 = *r
			r2.URL = new(url.URL)
			*r2.URL = *r.URL
			r2.URL.RawQuery = q.Encode()
			r = r2
		}
		return r, stop
	}
	if r.Body == nil || r.Body == http.NoBody {
		return r, stop
	}
	if mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && mt == "multipart/form-data" && params["boundary"] != "" {
		return aliasedForm(r, params["boundary"], aliases)
	}
	body, err := io.ReadAll(r.Body)
	r2 := new(http.Request)
	*r2 = *r
	if err != nil {
		// Too large or too slow: the handler reads the same failure where it would have.
		r2.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		return r2, stop
	}
	if out, ok := aliasedJSON(body, aliases); ok {
		body = out
		r2.ContentLength = int64(len(body))
		r2.Header = r.Header.Clone()
		r2.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	r2.Body = io.NopCloser(bytes.NewReader(body))
	return r2, stop
}

// errReader fails every read with its error.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// aliasedJSONFields are the top-level fields of a JSON body naming models a key's alias
// may stand in: the OpenAI-style routes' model, and the native /api/v1/completions'
// models and fallback_models (each entry an alias or a model; the OpenAI-style routes'
// fallback_models, Switchyard's own, alike). LiteLLM's own request fallbacks and
// context_window_fallbacks are left as sent: LiteLLM's proxy rewrites a key alias in the
// request's model alone (_update_model_if_key_alias_exists), so its callers name real
// models there.
var aliasedJSONFields = []string{"model", "models", "fallback_models"}

// aliasedJSON is body, a JSON object, with its top-level "model" (a string), "models" and
// "fallback_models" (lists of strings) replaced by the models aliases says they stand for
// (each field's last occurrence, the one decoding takes); ok is false (body unchanged)
// when they name none, or when body is not a JSON object (the handler reports that). A
// field of another type is left for the handler to refuse.
func aliasedJSON(body []byte, aliases map[string]string) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return body, false
	}
	type span struct {
		at int // where the value starts in body
		v  json.RawMessage
	}
	var last [3]span // of aliasedJSONFields, at -1 when absent
	for i := range last {
		last[i].at = -1
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return body, false
		}
		start := dec.InputOffset()
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return body, false
		}
		if i := slices.Index(aliasedJSONFields, tok.(string)); i >= 0 {
			last[i] = span{at: int(start) + bytes.Index(body[start:dec.InputOffset()], v), v: v}
		}
	}
	type edit struct {
		at, n int
		with  []byte
	}
	var edits []edit
	for i, sp := range last {
		if sp.at < 0 {
			continue
		}
		var with any
		if i == 0 {
			var name string
			if json.Unmarshal(sp.v, &name) != nil {
				continue
			}
			target, ok := aliases[name]
			if !ok {
				continue
			}
			with = target
		} else {
			var names []string
			if json.Unmarshal(sp.v, &names) != nil {
				continue
			}
			changed := false
			for j, name := range names {
				if target, ok := aliases[name]; ok {
					names[j], changed = target, true
				}
			}
			if !changed {
				continue
			}
			with = names
		}
		out, _ := json.Marshal(with)
		edits = append(edits, edit{at: sp.at, n: len(sp.v), with: out})
	}
	if len(edits) == 0 {
		return body, false
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.at - b.at })
	out := make([]byte, 0, len(body)+64)
	from := 0
	for _, e := range edits {
		out = append(append(out, body[from:e.at]...), e.with...)
		from = e.at + e.n
	}
	return append(out, body[from:]...), true
}

// aliasedForm is r with its multipart form's model field replaced by the model aliases
// says it stands for, rewritten as the handler reads it (a file is streamed, not held);
// stop ends the rewriting should the handler not read the form to its end. A model field
// over maxFormModelBytes fails the handler's reading of the form with a 400 naming model
// (an *APIError, which the form readers answer as it is).
func aliasedForm(r *http.Request, boundary string, aliases map[string]string) (*http.Request, func()) {
	pr, pw := io.Pipe()
	src := r.Body
	go func() {
		mr := multipart.NewReader(src, boundary)
		mw := multipart.NewWriter(pw)
		if err := mw.SetBoundary(boundary); err != nil {
			pw.CloseWithError(err)
			return
		}
		for {
			part, err := mr.NextRawPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
			dst, err := mw.CreatePart(part.Header)
			if err != nil {
				pw.CloseWithError(err)
				return
			}
			if strings.EqualFold(part.FormName(), "model") && part.FileName() == "" { // as the form's readers match it
				v, err := io.ReadAll(io.LimitReader(part, maxFormModelBytes+1))
				if err != nil {
					pw.CloseWithError(err)
					return
				}
				if len(v) > maxFormModelBytes {
					// Cut, it would name another model than the one sent: refused whole.
					pw.CloseWithError(paramError("model", "model: the form field is over %d bytes; no model has so long a name", maxFormModelBytes))
					return
				}
				if target, ok := aliases[strings.TrimSpace(string(v))]; ok {
					v = []byte(target)
				}
				_, err = dst.Write(v)
			} else {
				_, err = io.Copy(dst, part)
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(mw.Close())
	}()
	r2 := new(http.Request)
	*r2 = *r
	r2.Body = pr
	r2.ContentLength = -1 // the model's length may change
	r2.Header = r.Header.Clone()
	r2.Header.Del("Content-Length")
	return r2, func() { pr.Close() }
}
