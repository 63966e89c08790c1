package completions

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// OperationImageEdit is RequestRecord.Operation for an image edit request.
const OperationImageEdit = "image_edit"

// Image edit bounds, OpenAI's: gpt-image models take up to MaxImageEditImages png, webp or
// jpg images of less than MaxImageEditFileBytes each; dall-e-2 one square PNG of less than
// MaxDallE2EditFileBytes; a mask is a PNG of less than MaxDallE2EditFileBytes.
const (
	MaxImageEditImages     = 16
	MaxImageEditFileBytes  = 50 << 20
	MaxDallE2EditFileBytes = 4 << 20
)

// ImageFile is one uploaded file of an image edit: its bytes, file name and media type as
// the form gave them (the format is told from the bytes).
type ImageFile = providers.ImageFile

// ImageEditRequest is OpenAI's POST /v1/images/edits form. The model is "provider/model",
// a bare OpenAI image model name (dall-e-2, gpt-image-1) or a model group; DefaultImageModel
// when empty, unless the request sets a field only gpt-image models take or sends several
// images (DefaultGPTImageModel then, as OpenAI does). The other fields mean what they mean
// in an ImageGenerationRequest.
type ImageEditRequest struct {
	Model  string
	Prompt string
	// Images are the images to edit (the form's image, or image[] for several).
	Images []ImageFile
	// Mask is an optional PNG whose fully transparent areas say where to edit (the first
	// image's, with several).
	Mask              *ImageFile
	N                 *int
	Size              string
	Quality           string
	ResponseFormat    string
	Background        string
	OutputFormat      string
	OutputCompression *int
	// InputFidelity is high or low (gpt-image-1 only).
	InputFidelity string
	User          string
	// Tags label the request for cost attribution, as on chat requests.
	Tags []string
	// Extra are the form's other text fields, passed on to the provider as they came.
	Extra [][2]string
}

// generation is the request's fields an image generation request has, for the checks and
// the provider request they share.
func (r *ImageEditRequest) generation() *ImageGenerationRequest {
	gen := &ImageGenerationRequest{Model: r.Model, Prompt: r.Prompt, N: r.N, Size: r.Size, Quality: r.Quality,
		ResponseFormat: r.ResponseFormat, Background: r.Background, OutputFormat: r.OutputFormat,
		OutputCompression: r.OutputCompression, User: r.User, Tags: r.Tags}
	for _, kv := range r.Extra {
		if gen.Extra == nil {
			gen.Extra = map[string]json.RawMessage{}
		}
		b, _ := json.Marshal(kv[1])
		gen.Extra[kv[0]] = b
	}
	return gen
}

// imageFormat tells a file's format from its first bytes: "png", "jpeg", "webp", or "".
func imageFormat(b []byte) string {
	return strings.TrimPrefix(providers.ImageFileType(b), "image/")
}

// pngSize reads a PNG's width and height from its IHDR chunk (ok false when absent).
func pngSize(b []byte) (w, h uint32, ok bool) {
	if len(b) < 24 || imageFormat(b) != "png" || string(b[12:16]) != "IHDR" {
		return 0, 0, false
	}
	return binary.BigEndian.Uint32(b[16:20]), binary.BigEndian.Uint32(b[20:24]), true
}

// validateEdit checks what holds for every model: the generation fields (as an image
// generation request's, style and partial images aside), input_fidelity, the images
// (1 to 16, png, webp or jpg, under 50 MB) and the mask (a PNG under 4 MB, the first
// image's dimensions when both are PNGs).
func (r *ImageEditRequest) validateEdit(gen *ImageGenerationRequest) (*providers.ImageRequest, error) {
	preq, err := gen.validate()
	if err != nil {
		return nil, err
	}
	if err := oneOf("input_fidelity", r.InputFidelity, "high", "low"); err != nil {
		return nil, err
	}
	if len(r.Images) == 0 {
		return nil, invalid("image", "is required: one image file (image), or up to %d as image[] for gpt-image models", MaxImageEditImages)
	}
	if len(r.Images) > MaxImageEditImages {
		return nil, invalid("image", "has %d images: at most %d", len(r.Images), MaxImageEditImages)
	}
	for i, f := range r.Images {
		if len(f.Data) >= MaxImageEditFileBytes {
			return nil, invalid("image", "image %d is %d bytes: each must be under %d bytes (50 MB)", i, len(f.Data), MaxImageEditFileBytes)
		}
		if imageFormat(f.Data) == "" {
			return nil, invalid("image", "image %d (%q) is not a png, webp or jpg file", i, f.Filename)
		}
	}
	if m := r.Mask; m != nil {
		if imageFormat(m.Data) != "png" {
			return nil, invalid("mask", "must be a PNG file (with an alpha channel), got %q", m.Filename)
		}
		if len(m.Data) >= MaxDallE2EditFileBytes {
			return nil, invalid("mask", "is %d bytes: it must be under %d bytes (4 MB)", len(m.Data), MaxDallE2EditFileBytes)
		}
		mw, mh, _ := pngSize(m.Data)
		if w, h, ok := pngSize(r.Images[0].Data); ok && (w != mw || h != mh) {
			return nil, invalid("mask", "is %dx%d: it must have the dimensions of the (first) image, %dx%d", mw, mh, w, h)
		}
	}
	return preq, nil
}

// checkEditFamily holds the request to OpenAI's rules of image edits for a model of
// family (imageFamily): dall-e-2 edits one square PNG under 4 MB and takes no
// input_fidelity; dall-e-3 edits nothing; gpt-image takes the fields generations take.
func (r *ImageEditRequest) checkEditFamily(gen *ImageGenerationRequest, family, model string) error {
	switch family {
	case "dall-e-3":
		return invalid("model", "%s has no image edits: OpenAI edits images with dall-e-2 and gpt-image models", model)
	case "dall-e-2":
		if len(r.Images) != 1 {
			return invalid("image", "%s edits one image, got %d: send several to a gpt-image model", model, len(r.Images))
		}
		img := r.Images[0].Data
		if imageFormat(img) != "png" {
			return invalid("image", "%s edits a square PNG, got a %s file", model, imageFormat(img))
		}
		if len(img) >= MaxDallE2EditFileBytes {
			return invalid("image", "is %d bytes: %s takes a PNG under %d bytes (4 MB)", len(img), model, MaxDallE2EditFileBytes)
		}
		if w, h, ok := pngSize(img); ok && w != h {
			return invalid("image", "is %dx%d: %s edits a square PNG", w, h, model)
		}
		if r.InputFidelity != "" {
			return invalid("input_fidelity", "is taken by gpt-image models only, not %s", model)
		}
	}
	return gen.checkFamily(family, model)
}

// editTargets resolves an image edit's model as imageTargets does, refusing providers
// without an image edit API.
func (g *Gateway) editTargets(name string) ([]target, error) {
	return g.groupTargets(name, g.imageModel, providers.ServesImageEdits,
		func(field, provider, model string) error {
			return invalid(field, "provider %q of %q has no image edit API here (OpenAI-format providers such as openai and azure have one)", provider, model)
		})
}

// EditImages answers an image edit request as GenerateImages answers a generation: it
// validates req (OpenAI's rules of image edits, and those of each model's family — dall-e-2
// one square PNG under 4 MB, gpt-image up to 16 png, webp or jpg images under 50 MB each,
// dall-e-3 none), checks the caller's budget, calls the model with OpenAI's multipart form
// (retries, model groups and circuit breakers as for generations), prices the answer from
// the catalogue as a generation's, bills it and records it in the ledger and by the
// observer (operation "image_edit"). Errors: *ValidationError (ErrInvalid),
// ErrModelNotAllowed, ErrBudgetExceeded, *AllFailedError, or the context's error.
func (g *Gateway) EditImages(ctx context.Context, scope Scope, req *ImageEditRequest) (*ImageGenerationResponse, error) {
	if g.breakers == nil {
		return nil, ErrZeroGateway
	}
	if req == nil {
		return nil, errNilRequest()
	}
	gen := req.generation()
	preq, err := req.validateEdit(gen)
	if err != nil {
		return nil, err
	}
	if scope, err = g.withTagBudgets(ctx, scope, req.Tags); err != nil {
		return nil, err
	}
	model := strings.TrimSpace(req.Model)
	if model == "" {
		model = DefaultImageModel
		if gen.gptImageOnly() != "" || req.InputFidelity != "" || len(req.Images) > 1 {
			model = DefaultGPTImageModel
		}
	}
	targets, err := g.editTargets(model)
	if err != nil {
		return nil, err
	}
	// The members the request's tags leave out are not asked whether they take it.
	if targets, err = g.tagTargets(model, scope.tagAsk(req.Tags), targets); err != nil {
		return nil, err
	}
	for _, t := range targets {
		if err := req.checkEditFamily(gen, imageFamily(g.priceName(t.name)), t.name); err != nil {
			return nil, err
		}
	}
	fallbacks := func(have []target) []target {
		return g.opFallbacks(ctx, scope, model, providers.ImageMode, req.Tags, have, g.editTargets, func(t target) bool {
			return req.checkEditFamily(gen, imageFamily(g.priceName(t.name)), t.name) == nil
		})
	}
	return g.drawImages(ctx, scope, gen, targets, fallbacks, OperationImageEdit, func(actx context.Context, t target) (*providers.ImageResponse, error) {
		r := providers.ImageEditRequest{ImageRequest: *preq, Images: req.Images, Mask: req.Mask, InputFidelity: req.InputFidelity}
		r.Model = t.model
		return t.p.(providers.ImageEditor).EditImages(actx, &r)
	})
}
