package providers

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// ImageEditor is implemented by adapters whose provider edits images with OpenAI's
// images API (POST /images/edits, a multipart form): the OpenAI format (OpenAI's dall-e-2
// and gpt-image models, Azure OpenAI deployments of them).
type ImageEditor interface {
	// EditImages posts req to the provider's image edit endpoint. Failures are *Error
	// values.
	EditImages(ctx context.Context, req *ImageEditRequest) (*ImageResponse, error)
}

// ImageFile is one file of an image edit: its bytes, file name and media type ("" for
// application/octet-stream).
type ImageFile struct {
	Filename    string
	ContentType string
	Data        []byte
}

// ImageEditRequest is OpenAI's image edit request, checked by the caller: the fields of
// an image generation request (Style, Moderation and PartialImages are sent when set, as
// any other), the images and the mask. Extra values that are JSON strings are sent as
// their text, others as their JSON.
type ImageEditRequest struct {
	ImageRequest
	// Images are the images to edit: one is sent as the form's image field, several as
	// image[] (gpt-image models take up to 16).
	Images []ImageFile
	// Mask, when not nil, is a PNG whose transparent areas say where to edit.
	Mask *ImageFile
	// InputFidelity is high or low (gpt-image-1), passed on when set.
	InputFidelity string
}

// ImageFileType is the media type a PNG, JPEG or WebP file's first bytes say it is
// ("image/png", "image/jpeg", "image/webp"), or "" for other bytes (the image edits'
// formats; ImageMediaType reads an Image of a chat message).
func ImageFileType(b []byte) string {
	switch mt := http.DetectContentType(b[:min(len(b), 512)]); mt {
	case "image/png", "image/jpeg", "image/webp":
		return mt
	}
	return ""
}

// imageEditForm encodes req as OpenAI's multipart form: the image generation fields
// (imageBody's) as text, input_fidelity, the images and the mask.
func imageEditForm(req *ImageEditRequest) ([]byte, string, error) {
	size := 1024
	for _, f := range req.Images {
		size += len(f.Data) + 256
	}
	if req.Mask != nil {
		size += len(req.Mask.Data) + 256
	}
	var buf bytes.Buffer
	buf.Grow(size)
	w := multipart.NewWriter(&buf)
	fields := imageBody(&req.ImageRequest)
	if req.InputFidelity != "" {
		fields["input_fidelity"] = req.InputFidelity
	}
	// model and prompt first, as OpenAI's SDKs send them; the others in a fixed order.
	names := []string{"model", "prompt"}
	for k := range fields {
		if k != "model" && k != "prompt" {
			names = append(names, k)
		}
	}
	slices.Sort(names[2:])
	for _, k := range names {
		var v string
		switch x := fields[k].(type) {
		case string:
			v = x
		case int:
			v = strconv.Itoa(x)
		case json.RawMessage:
			if json.Unmarshal(x, &v) != nil {
				v = string(x)
			}
		default:
			b, err := json.Marshal(x)
			if err != nil {
				return nil, "", err
			}
			v = string(b)
		}
		if err := w.WriteField(formQuote.Replace(k), v); err != nil {
			return nil, "", err
		}
	}
	field := "image"
	if len(req.Images) > 1 {
		field = "image[]"
	}
	for i, f := range req.Images {
		// The bytes say the type: a client's label may be application/octet-stream (the
		// SDKs' for a plain reader), which OpenAI refuses for images.
		sniffed := ImageFileType(f.Data)
		mt := cmp.Or(sniffed, f.ContentType)
		name := cmp.Or(f.Filename, "image"+strconv.Itoa(i)+"."+cmp.Or(strings.TrimPrefix(sniffed, "image/"), "png"))
		if err := writeFilePart(w, field, name, mt, f.Data); err != nil {
			return nil, "", err
		}
	}
	if m := req.Mask; m != nil {
		if err := writeFilePart(w, "mask", cmp.Or(m.Filename, "mask.png"), cmp.Or(m.ContentType, "image/png"), m.Data); err != nil {
			return nil, "", err
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

// EditImages implements ImageEditor with POST {base}/images/edits (for Azure OpenAI, the
// deployment's path), the form built with mime/multipart; the answer is read as an image
// generation answer is.
func (o *OpenAI) EditImages(ctx context.Context, req *ImageEditRequest) (*ImageResponse, error) {
	if err := o.ep.checkKey(req.Model); err != nil {
		return nil, err
	}
	body, ctype, err := imageEditForm(req)
	if err != nil {
		return nil, &Error{Provider: o.ep.cfg.Name, Model: req.Model, Kind: KindBadRequest, Message: "encoding the image edit form", Err: err}
	}
	h := http.Header{}
	h.Set("Content-Type", ctype)
	if err := o.setAuth(ctx, req.Model, h); err != nil {
		return nil, err
	}
	c, err := o.ep.send(ctx, req.Model, o.url("/images/edits", req.Model), h, body, parseOpenAIError)
	if err != nil {
		return nil, err
	}
	return decodeImageResponse(c)
}
