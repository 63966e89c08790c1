package server

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// maxImageEditFormBytes is the body limit of POST /v1/images/edits: one image of
// OpenAI's largest (gpt-image: under 50 MB), a 4 MB mask and the form's fields; several
// gpt-image images share it. The files are held in memory while the upstream is called.
const maxImageEditFormBytes = 64 << 20

// imageEditLimitHint says, in a 413, what bounds the route's body.
const imageEditLimitHint = "this route's own: image files of under 50 MB each (dall-e-2: one PNG under 4 MB), a mask under 4 MB, 64 MiB in all"

// maxImageEditPrompt bounds the prompt field in bytes: gpt-image's 32,000 characters of
// UTF-8.
const maxImageEditPrompt = 4 * 32000

// imageEditForm documents the multipart form of POST /v1/images/edits (OpenAPI only; the
// handler reads the parts as they come).
type imageEditForm struct {
	Image string `json:"image" jsonschema:"format=binary,description=the image to edit (this or image[] is required) (dall-e-2: one square PNG under 4 MB; gpt-image: png webp or jpg under 50 MB each; send several as image[])"`
	// ImageArray is Images in generated Go clients, whose field for image would have its name.
	ImageArray        []string `json:"image[],omitempty" jsonschema:"format=binary,maxItems=16,description=several images to edit (gpt-image models: up to 16): one part named image[] per image" jsonschema_extras:"x-go-name=Images"`
	Mask              string   `json:"mask,omitempty" jsonschema:"format=binary,description=a PNG under 4 MB whose fully transparent areas say where to edit (the first image's dimensions)"`
	Prompt            string   `json:"prompt" jsonschema:"required,description=the edit wanted (dall-e-2: at most 1000 characters; gpt-image: 32000)"`
	Model             string   `json:"model,omitempty" jsonschema:"description=provider/model or a bare name (dall-e-2 or gpt-image-1) or a model group; dall-e-2 when absent unless a gpt-image field is set or several images are sent"`
	N                 int      `json:"n,omitempty" jsonschema:"minimum=1,maximum=10"`
	Size              string   `json:"size,omitempty" jsonschema:"description=256x256 512x512 or 1024x1024 (dall-e-2); 1024x1024 1536x1024 1024x1536 or auto (gpt-image)"`
	Quality           string   `json:"quality,omitempty" jsonschema:"enum=standard,enum=low,enum=medium,enum=high,enum=auto"`
	ResponseFormat    string   `json:"response_format,omitempty" jsonschema:"enum=url,enum=b64_json,description=dall-e-2 only"`
	Background        string   `json:"background,omitempty" jsonschema:"enum=transparent,enum=opaque,enum=auto"`
	OutputFormat      string   `json:"output_format,omitempty" jsonschema:"enum=png,enum=jpeg,enum=webp"`
	OutputCompression int      `json:"output_compression,omitempty" jsonschema:"minimum=0,maximum=100"`
	InputFidelity     string   `json:"input_fidelity,omitempty" jsonschema:"enum=high,enum=low,description=gpt-image-1 only"`
	User              string   `json:"user,omitempty"`
}

// imageEditRoute registers POST /v1/images/edits: OpenAI's image edits (a multipart form)
// over the gateway's OpenAI-format providers, answered as /v1/images/generations is, with
// the same keys, model limits, retries, prices, usage log and metrics.
func (s *Server) imageEditRoute(g *completions.Gateway) {
	errs := map[int]string{
		400: "validation error naming the field (param), or a model without an image edit API here",
		401: "key_model_access_denied (LiteLLM's): the key may not call the model",
		413: "the body is over the route's limit (" + imageEditLimitHint + ")",
		429: "the key's budget is spent",
		502: "every model failed",
	}
	s.handleGateway(Route{Method: "POST", Path: "/v1/images/edits", Summary: "OpenAI-compatible image edits (multipart form; answered as image generations)",
		Tags: []string{"Completions"}, Request: imageEditForm{}, RequestContentType: "multipart/form-data",
		MaxBodyBytes: maxImageEditFormBytes, MaxBodyHint: imageEditLimitHint,
		Response: completions.ImageGenerationResponse{}, ScopedKeys: true, Errors: errs},
		g, completions.OperationImageEdit, func(w http.ResponseWriter, r *http.Request) error {
			received := time.Now()
			req, err := readImageEditForm(r)
			if err != nil {
				return s.openAIError(w, r, err)
			}
			if req.Tags, err = headerTags(r, nil); err != nil {
				return s.openAIError(w, r, err)
			}
			scope, err := s.gatewayScope(withEndUserOf(r, req.User), received)
			if err != nil {
				return s.openAIError(w, r, err)
			}
			resp, err := g.EditImages(r.Context(), scope, req)
			if err != nil {
				return s.openAIError(w, r, err)
			}
			writeJSON(w, http.StatusOK, resp)
			return nil
		})
}

// indexedImageField reports whether name is image[N] (N digits).
func indexedImageField(name string) bool {
	n, ok := strings.CutPrefix(name, "image[")
	if !ok {
		return false
	}
	n, ok = strings.CutSuffix(n, "]")
	return ok && n != "" && strings.Trim(n, "0123456789") == ""
}

// knownImageEditField reports whether name (lower case) is one of OpenAI's image edit
// fields: a text field of textFields, an image, the mask, n, output_compression or stream.
func knownImageEditField(name string, textFields map[string]*string) bool {
	switch name {
	case "image", "image[]", "mask", "n", "output_compression", "stream":
		return true
	}
	return textFields[name] != nil || indexedImageField(name)
}

// readImageEditForm reads an image edit's multipart form as it arrives: the images (image
// or image[], each under completions.MaxImageEditFileBytes, at most
// completions.MaxImageEditImages), the mask and OpenAI's text fields; other text fields are
// passed on as they came. Failures name the field.
func readImageEditForm(r *http.Request) (*completions.ImageEditRequest, error) {
	fail := func(status int, field, format string, args ...any) error {
		kind := KindBadRequest
		if status == http.StatusRequestEntityTooLarge {
			kind = KindTooLarge
		}
		ae := Errorf(status, kind, format, args...)
		ae.Param = field
		return ae
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return nil, fail(http.StatusBadRequest, "image", "the body must be a multipart/form-data form with the fields image and prompt (got Content-Type %q)", r.Header.Get("Content-Type"))
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, formErrorOf("", imageEditLimitHint, err)
	}
	req := &completions.ImageEditRequest{}
	// OpenAI's text fields, read as they come.
	textFields := map[string]*string{"model": &req.Model, "prompt": &req.Prompt, "size": &req.Size, "quality": &req.Quality,
		"response_format": &req.ResponseFormat, "background": &req.Background, "output_format": &req.OutputFormat,
		"input_fidelity": &req.InputFidelity, "user": &req.User}
	number := func(field, v string) (*int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return nil, fail(http.StatusBadRequest, field, "field %q must be an integer, got %q", field, v)
		}
		return &n, nil
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, formErrorOf("", imageEditLimitHint, err)
		}
		// OpenAI's fields are matched without regard to case (Model is model; others pass
		// as they came); a name given as RFC 2231/5987 name* is read decoded (FormName).
		name := part.FormName()
		if known := strings.ToLower(name); knownImageEditField(known, textFields) {
			name = known
		}
		if indexedImageField(name) {
			name = "image[]" // image[0], image[1]…: how some clients number the array
		}
		switch name {
		case "image", "image[]", "mask":
			field := strings.TrimSuffix(name, "[]")
			if field == "image" && len(req.Images) == completions.MaxImageEditImages {
				return nil, fail(http.StatusBadRequest, "image", "image: at most %d images", completions.MaxImageEditImages)
			}
			b, err := io.ReadAll(io.LimitReader(part, completions.MaxImageEditFileBytes))
			if err != nil {
				return nil, formErrorOf(field, imageEditLimitHint, err)
			}
			if len(b) >= completions.MaxImageEditFileBytes {
				return nil, fail(http.StatusRequestEntityTooLarge, field, "%s: an image file must be under %d bytes (50 MB, OpenAI's bound)", field, completions.MaxImageEditFileBytes)
			}
			f := completions.ImageFile{Filename: part.FileName(), ContentType: part.Header.Get("Content-Type"), Data: b}
			if field == "mask" {
				req.Mask = &f
			} else {
				req.Images = append(req.Images, f)
			}
			continue
		}
		if part.FileName() != "" {
			// A file under a field OpenAI does not take would go upstream as text.
			return nil, fail(http.StatusBadRequest, name, "%s: a file under a field image edits do not take (images go in image or image[], the mask in mask)", name)
		}
		bound := maxAudioFormField
		if name == "prompt" {
			bound = maxImageEditPrompt
		}
		b, err := io.ReadAll(io.LimitReader(part, int64(bound)+1))
		if err != nil {
			return nil, formErrorOf(name, imageEditLimitHint, err)
		}
		if len(b) > bound {
			return nil, fail(http.StatusBadRequest, name, "%s: at most %d bytes", name, bound)
		}
		v := string(b)
		if f := textFields[name]; f != nil {
			*f = v
			continue
		}
		switch name {
		case "n":
			if req.N, err = number(name, v); err != nil {
				return nil, err
			}
		case "output_compression":
			if req.OutputCompression, err = number(name, v); err != nil {
				return nil, err
			}
		case "stream":
			if on, err := strconv.ParseBool(strings.TrimSpace(v)); err != nil || on {
				return nil, fail(http.StatusBadRequest, name, "streamed image edits are not served here: leave stream unset or false")
			}
		default:
			if len(req.Extra) == 32 {
				return nil, fail(http.StatusBadRequest, name, "%s: at most 32 form fields besides OpenAI's", name)
			}
			req.Extra = append(req.Extra, [2]string{name, v})
		}
	}
	// Read the body to its end, as readTranscriptionForm does, so that a client that hung
	// up cancels the upstream call.
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		return nil, formErrorOf("", imageEditLimitHint, err)
	}
	return req, nil
}
