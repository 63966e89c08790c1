package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/textproto"
	"path"
	"strconv"
)

// imagesPath is the OpenAI-compatible image generation endpoint of the gateway.
const imagesPath = "/v1/images/generations"

// ImageRequest asks the gateway to draw images from a prompt. Empty fields are left to
// the model's defaults.
type ImageRequest struct {
	// Model is "provider/model", a bare OpenAI image model ("dall-e-3", "gpt-image-1";
	// the gateway's default is dall-e-2) or a model group.
	Model string `json:"model,omitempty"`
	// Prompt describes the images wanted (required).
	Prompt string `json:"prompt"`
	// N is how many images to make: 1 to 10 (dall-e-3: 1); 0 for one.
	N int `json:"n,omitempty"`
	// Size is WIDTHxHEIGHT ("1024x1024") or auto.
	Size string `json:"size,omitempty"`
	// Quality is standard or hd (dall-e-3), low, medium or high (gpt-image), or auto.
	Quality string `json:"quality,omitempty"`
	// ResponseFormat is url or b64_json (dall-e models only).
	ResponseFormat string `json:"response_format,omitempty"`
	// Style is vivid or natural (dall-e-3 only).
	Style string `json:"style,omitempty"`
	// Background (transparent, opaque, auto), OutputFormat (png, jpeg, webp),
	// OutputCompression (0-100, with jpeg or webp) and Moderation (low, auto) are gpt-image
	// models' only.
	Background        string `json:"background,omitempty"`
	OutputFormat      string `json:"output_format,omitempty"`
	OutputCompression *int   `json:"output_compression,omitempty"`
	Moderation        string `json:"moderation,omitempty"`
	// User identifies the end user to the provider.
	User string `json:"user,omitempty"`
	// Extra are more body fields, passed on to the provider as they are (a provider's own
	// options).
	Extra map[string]any `json:"-"`
}

// MarshalJSON writes the request with its Extra fields (the named fields win).
func (r ImageRequest) MarshalJSON() ([]byte, error) {
	type plain ImageRequest
	b, err := json.Marshal(plain(r))
	if err != nil || len(r.Extra) == 0 {
		return b, err
	}
	all := map[string]any{}
	for k, v := range r.Extra {
		all[k] = v
	}
	var named map[string]json.RawMessage
	if err := json.Unmarshal(b, &named); err != nil {
		return nil, err
	}
	for k, v := range named {
		all[k] = v
	}
	return json.Marshal(all)
}

// ImageResponse is the images drawn for an ImageRequest.
type ImageResponse struct {
	// Created is the answer's Unix time.
	Created int64   `json:"created"`
	Data    []Image `json:"data"`
	// Model is the "provider/model" that drew the images.
	Model string `json:"model"`
	// Background, OutputFormat, Quality and Size are what a gpt-image model says it made.
	Background   string     `json:"background,omitempty"`
	OutputFormat string     `json:"output_format,omitempty"`
	Quality      string     `json:"quality,omitempty"`
	Size         string     `json:"size,omitempty"`
	Usage        ImageUsage `json:"usage"`
}

// Image is one image: its URL or its bytes base64-encoded, and the prompt dall-e-3 drew
// from.
type Image struct {
	URL           string `json:"url,omitempty"`
	B64JSON       string `json:"b64_json,omitempty"`
	RevisedPrompt string `json:"revised_prompt,omitempty"`
}

// ImageUsage is the tokens a gpt-image model reported (0 for dall-e models) and what the
// call cost.
type ImageUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
	// Costs is the gateway's price of the call.
	Costs *Costs `json:"costs,omitempty"`
}

// GenerateImages draws images with POST /v1/images/generations. Errors are *Error values
// for the gateway's refusals (400 naming the field, a 401 key_model_access_denied (ErrForbidden) for a model the key may not call,
// 404 for an unknown model).
func (c *Client) GenerateImages(ctx context.Context, req *ImageRequest) (*ImageResponse, error) {
	var out ImageResponse
	if err := c.do(ctx, http.MethodPost, imagesPath, nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// imageEditsPath is the OpenAI-compatible image edit endpoint of the gateway.
const imageEditsPath = "/v1/images/edits"

// ImageFile is one file of an image edit: its name, media type ("" for one told from the
// name's extension, else image/png) and content, either Data (bytes held in memory) or
// Reader (streamed).
type ImageFile struct {
	Name        string
	ContentType string
	// Data is the image's bytes; it is ignored when Reader is set.
	Data []byte
	// Reader, when set, is read for the image's bytes as the form is sent, a chunk at a
	// time, so a large image (an *os.File) is never held whole. EditImages reads it from
	// where it is to its end and does not close it. A request sent again (after a 503 or
	// a dropped connection) reads every image again: it is retried only when each Reader
	// is an io.Seeker that can seek (an *os.File of a regular file, a *bytes.Reader),
	// sought back to where it was; with any other Reader (a pipe, an HTTP body) the edit
	// is sent once. A failure reading it ends EditImages with an error wrapping the
	// reader's, never retried.
	Reader io.Reader
}

// content is what is read for f's bytes: Reader, else Data.
func (f ImageFile) content() io.Reader {
	if f.Reader != nil {
		return f.Reader
	}
	return bytes.NewReader(f.Data)
}

// ImageEditRequest asks the gateway to edit images (OpenAI's POST /v1/images/edits).
// Empty fields are left to the model's defaults.
type ImageEditRequest struct {
	// Model is "provider/model", a bare OpenAI image model ("dall-e-2", "gpt-image-1"; the
	// gateway's default is dall-e-2, or gpt-image-1 with several images or a gpt-image
	// field) or a model group.
	Model string
	// Prompt describes the edit wanted (required).
	Prompt string
	// Images are the images to edit (required): dall-e-2 one square PNG under 4 MB;
	// gpt-image models up to 16 png, webp or jpg files under 50 MB each.
	Images []ImageFile
	// Mask is an optional PNG whose fully transparent areas say where to edit.
	Mask *ImageFile
	// N is how many images to make: 1 to 10; 0 for one.
	N int
	// Size, Quality, ResponseFormat (dall-e-2 only), Background, OutputFormat,
	// InputFidelity (gpt-image-1 only: high or low) and User are OpenAI's fields.
	Size, Quality, ResponseFormat, Background, OutputFormat, InputFidelity, User string
	// OutputCompression is 0 to 100 (gpt-image with output_format jpeg or webp).
	OutputCompression *int
	// Extra are more form fields, passed on to the provider as they are.
	Extra map[string]string
}

// EditImages edits images with POST /v1/images/edits. The multipart form is streamed as
// it is sent (chunked), a chunk of an image at a time: it is not built in memory beside
// the images, and an image given as a Reader is never held whole. A failed request is
// sent again only when every image can be read again (see ImageFile.Reader). The answer is an image generation's. Errors are *Error values for the
// gateway's refusals (400 naming the field, a 401 key_model_access_denied (ErrForbidden) for a model the key may not call, 413
// for files over the route's limit).
func (c *Client) EditImages(ctx context.Context, req *ImageEditRequest) (*ImageResponse, error) {
	all := [][2]string{{"model", req.Model}, {"prompt", req.Prompt}, {"size", req.Size}, {"quality", req.Quality},
		{"response_format", req.ResponseFormat}, {"background", req.Background}, {"output_format", req.OutputFormat},
		{"input_fidelity", req.InputFidelity}, {"user", req.User}}
	if req.N > 0 {
		all = append(all, [2]string{"n", strconv.Itoa(req.N)})
	}
	if req.OutputCompression != nil {
		all = append(all, [2]string{"output_compression", strconv.Itoa(*req.OutputCompression)})
	}
	for k, v := range req.Extra {
		all = append(all, [2]string{k, v})
	}
	fields := all[:0]
	for _, f := range all {
		if f[1] != "" || f[0] == "prompt" {
			fields = append(fields, f)
		}
	}
	file := func(field string, f ImageFile) formFile {
		ctype := f.ContentType
		if ctype == "" {
			ctype = cmp.Or(mime.TypeByExtension(path.Ext(f.Name)), "image/png")
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": field, "filename": cmp.Or(f.Name, "image.png")}))
		h.Set("Content-Type", ctype)
		return formFile{field: field, header: h, content: f.content()}
	}
	field := "image"
	if len(req.Images) > 1 {
		field = "image[]"
	}
	files := make([]formFile, 0, len(req.Images)+1)
	for _, f := range req.Images {
		files = append(files, file(field, f))
	}
	if req.Mask != nil {
		files = append(files, file("mask", *req.Mask))
	}
	var out ImageResponse
	if err := c.postMultipart(ctx, imageEditsPath, fields, files, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
