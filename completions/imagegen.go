package completions

import (
	"cmp"
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/switchyard-ai/switchyard/providers"
)

// OperationImageGeneration is RequestRecord.Operation for an image generation request.
const OperationImageGeneration = "image_generation"

// DefaultImageModel is the model an image generation request without one is drawn by
// (OpenAI's default), unless it sets a field only gpt-image models take
// (DefaultGPTImageModel then, as OpenAI does).
const DefaultImageModel = "dall-e-2"

// DefaultGPTImageModel is the model an image generation request without one is drawn by
// when it sets background, moderation, output_format, output_compression or partial_images.
const DefaultGPTImageModel = "gpt-image-1"

// ImageGenerationRequest is OpenAI's POST /v1/images/generations body. The model is
// "provider/model", a bare OpenAI image model name ("dall-e-3", "gpt-image-1"), or a model
// group, whose members are tried in order (each must take the request). Fields the gateway
// does not know are passed on to the provider as they came, as LiteLLM passes them.
type ImageGenerationRequest struct {
	// Model names the image model (DefaultImageModel when empty).
	Model string `json:"model,omitempty"`
	// Prompt describes the images wanted.
	Prompt string `json:"prompt" jsonschema:"required,minLength=1"`
	// N is how many images to make: 1 to 10 (dall-e-3 makes 1); 1 when absent.
	N *int `json:"n,omitempty" jsonschema:"minimum=1,maximum=10"`
	// Size is the images' size: WIDTHxHEIGHT or auto (dall-e-2: 256x256 512x512 or
	// 1024x1024; dall-e-3: 1024x1024 1792x1024 or 1024x1792).
	Size string `json:"size,omitempty" jsonschema:"description=WIDTHxHEIGHT or auto (the model's default)"`
	// Quality is standard or hd (dall-e-3), low, medium or high (gpt-image), or auto.
	Quality string `json:"quality,omitempty" jsonschema:"enum=standard,enum=hd,enum=low,enum=medium,enum=high,enum=auto"`
	// ResponseFormat is url or b64_json (dall-e models; gpt-image models always answer
	// b64_json and refuse it).
	ResponseFormat string `json:"response_format,omitempty" jsonschema:"enum=url,enum=b64_json"`
	// Style is vivid or natural (dall-e-3 only).
	Style string `json:"style,omitempty" jsonschema:"enum=vivid,enum=natural"`
	// Background is transparent, opaque or auto (gpt-image only).
	Background string `json:"background,omitempty" jsonschema:"enum=transparent,enum=opaque,enum=auto"`
	// OutputFormat is png, jpeg or webp (gpt-image only).
	OutputFormat string `json:"output_format,omitempty" jsonschema:"enum=png,enum=jpeg,enum=webp"`
	// OutputCompression is 0 to 100 (gpt-image only, with output_format jpeg or webp).
	OutputCompression *int `json:"output_compression,omitempty" jsonschema:"minimum=0,maximum=100"`
	// Moderation is low or auto (gpt-image only).
	Moderation string `json:"moderation,omitempty" jsonschema:"enum=low,enum=auto"`
	// PartialImages is 0 to 3: the partial images of a streamed answer (gpt-image only).
	PartialImages *int `json:"partial_images,omitempty" jsonschema:"minimum=0,maximum=3"`
	// Stream asks for partial images as server-sent events: not served here (false only).
	Stream bool `json:"stream,omitempty"`
	// User identifies the end user to the provider.
	User string `json:"user,omitempty"`
	// Tags label the request for cost attribution, as on chat requests (Request.Tags).
	Tags []string `json:"tags,omitempty" jsonschema:"maxItems=16"`
	// Extra are the body's fields the gateway does not know, passed on to the provider.
	Extra map[string]json.RawMessage `json:"-"`
}

// imageRequestFields are ImageGenerationRequest's JSON names: the body's other fields are
// Extra.
var imageRequestFields = sync.OnceValue(func() []string {
	var names []string
	t := reflect.TypeFor[ImageGenerationRequest]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
})

// UnmarshalJSON decodes OpenAI's body, keeping the fields the gateway does not know in
// Extra.
func (r *ImageGenerationRequest) UnmarshalJSON(b []byte) error {
	type plain ImageGenerationRequest
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	r.Extra = nil
	for k, v := range all {
		known := false
		for _, f := range imageRequestFields() {
			// encoding/json matches names case-insensitively: so must the split.
			if strings.EqualFold(k, f) {
				known = true
				break
			}
		}
		if !known {
			if r.Extra == nil {
				r.Extra = map[string]json.RawMessage{}
			}
			r.Extra[k] = v
		}
	}
	return nil
}

// MarshalJSON writes the request with its Extra fields.
func (r ImageGenerationRequest) MarshalJSON() ([]byte, error) {
	type plain ImageGenerationRequest
	b, err := json.Marshal(plain(r))
	if err != nil || len(r.Extra) == 0 {
		return b, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	for k, v := range r.Extra {
		if _, ok := all[k]; !ok {
			all[k] = v
		}
	}
	return json.Marshal(all)
}

// ImageGenerationResponse is OpenAI's images answer, with the gateway's extensions as on
// an embeddings answer (model, usage with its costs).
type ImageGenerationResponse struct {
	// Created is the answer's Unix time.
	Created int64 `json:"created"`
	// Data are the images.
	Data []ImageData `json:"data"`
	// Background, OutputFormat, Quality and Size are what a gpt-image model says it made.
	Background   string `json:"background,omitempty"`
	OutputFormat string `json:"output_format,omitempty"`
	Quality      string `json:"quality,omitempty"`
	Size         string `json:"size,omitempty"`
	// Model is the "provider/model" that drew the images.
	Model string `json:"model"`
	// Usage is the tokens a gpt-image model reported (0 for dall-e models) and the call's
	// costs.
	Usage ImageGenerationUsage `json:"usage"`
}

// ImageData is one image: its URL (valid for an hour at OpenAI) or its bytes
// base64-encoded, and the prompt dall-e-3 drew from.
type ImageData struct {
	B64JSON       string `json:"b64_json,omitempty" jsonschema:"description=The image base64-encoded"`
	URL           string `json:"url,omitempty" jsonschema:"description=The image's URL"`
	RevisedPrompt string `json:"revised_prompt,omitempty" jsonschema:"description=The prompt the model drew from (dall-e-3)"`
}

// ImageGenerationUsage is OpenAI's usage of a gpt-image answer, with the call's costs (an
// extension, as on embeddings answers).
type ImageGenerationUsage struct {
	InputTokens         int                `json:"input_tokens"`
	InputTokensDetails  *ImageTokenDetails `json:"input_tokens_details,omitempty"`
	OutputTokens        int                `json:"output_tokens"`
	OutputTokensDetails *ImageTokenDetails `json:"output_tokens_details,omitempty"`
	TotalTokens         int                `json:"total_tokens"`
	// Costs prices the call from the catalogue: by its tokens (gpt-image), else per image
	// of its size and quality (dall-e).
	Costs *Costs `json:"costs,omitempty"`
}

// ImageTokenDetails splits tokens into text and image tokens.
type ImageTokenDetails struct {
	TextTokens  int `json:"text_tokens"`
	ImageTokens int `json:"image_tokens"`
}

// imageFamily is the OpenAI image model family model ("provider/model", priced name)
// belongs to: "dall-e-2", "dall-e-3", "gpt-image", or "" for a model the gateway knows no
// rules of (a custom server's, an Azure deployment whose model it is not told).
func imageFamily(model string) string {
	m := strings.ToLower(model[strings.LastIndexByte(model, '/')+1:])
	switch {
	case strings.HasPrefix(m, "dall-e-2"):
		return "dall-e-2"
	case strings.HasPrefix(m, "dall-e-3"):
		return "dall-e-3"
	case strings.HasPrefix(m, "gpt-image"), strings.HasPrefix(m, "chatgpt-image"):
		return "gpt-image"
	}
	return ""
}

// gptImageOnly names the request's fields set that only gpt-image models take ("" when
// none is).
func (r *ImageGenerationRequest) gptImageOnly() string {
	switch {
	case r.Background != "":
		return "background"
	case r.OutputFormat != "":
		return "output_format"
	case r.OutputCompression != nil:
		return "output_compression"
	case r.Moderation != "":
		return "moderation"
	case r.PartialImages != nil:
		return "partial_images"
	}
	return ""
}

// oneOf refuses v, the value of field, unless it is empty or one of allowed.
func oneOf(field, v string, allowed ...string) error {
	if v == "" {
		return nil
	}
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return invalid(field, "must be one of %s, got %q", strings.Join(allowed, ", "), v)
}

// validate checks what OpenAI documents of every image model and returns the provider
// request (its model left for each target).
func (r *ImageGenerationRequest) validate() (*providers.ImageRequest, error) {
	if strings.TrimSpace(r.Prompt) == "" {
		return nil, invalid("prompt", "is required (a non-empty string)")
	}
	if r.N != nil && (*r.N < 1 || *r.N > 10) {
		return nil, invalid("n", "must be between 1 and 10, got %d", *r.N)
	}
	if r.Size != "" && r.Size != "auto" {
		if w, h, ok := strings.Cut(r.Size, "x"); !ok || !positive(w) || !positive(h) {
			return nil, invalid("size", "must be WIDTHxHEIGHT (1024x1024) or auto, got %q", r.Size)
		}
	}
	for _, c := range []struct {
		field, v string
		allowed  []string
	}{
		{"quality", r.Quality, []string{"standard", "hd", "low", "medium", "high", "auto"}},
		{"response_format", r.ResponseFormat, []string{"url", "b64_json"}},
		{"style", r.Style, []string{"vivid", "natural"}},
		{"background", r.Background, []string{"transparent", "opaque", "auto"}},
		{"output_format", r.OutputFormat, []string{"png", "jpeg", "webp"}},
		{"moderation", r.Moderation, []string{"low", "auto"}},
	} {
		if err := oneOf(c.field, c.v, c.allowed...); err != nil {
			return nil, err
		}
	}
	if c := r.OutputCompression; c != nil {
		if *c < 0 || *c > 100 {
			return nil, invalid("output_compression", "must be between 0 and 100, got %d", *c)
		}
		if r.OutputFormat != "jpeg" && r.OutputFormat != "webp" {
			return nil, invalid("output_compression", "applies to output_format jpeg or webp only: set one, or leave output_compression unset")
		}
	}
	if r.Background == "transparent" && r.OutputFormat == "jpeg" {
		return nil, invalid("background", "transparent needs an output_format that keeps transparency (png or webp), not jpeg")
	}
	if p := r.PartialImages; p != nil && (*p < 0 || *p > 3) {
		return nil, invalid("partial_images", "must be between 0 and 3, got %d", *p)
	}
	if r.Stream {
		return nil, invalid("stream", "streamed image generation is not served here: leave stream unset or false")
	}
	if err := CheckTags("tags", r.Tags); err != nil {
		return nil, err
	}
	pr := &providers.ImageRequest{Prompt: r.Prompt, Size: r.Size, Quality: r.Quality, ResponseFormat: r.ResponseFormat,
		Style: r.Style, Background: r.Background, OutputFormat: r.OutputFormat, Moderation: r.Moderation, User: r.User,
		OutputCompression: r.OutputCompression, PartialImages: r.PartialImages, Extra: r.Extra}
	if r.N != nil {
		pr.N = *r.N
	}
	return pr, nil
}

// positive reports whether s is a positive decimal integer.
func positive(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0
}

// checkFamily holds the request to OpenAI's documented rules of an image model family
// (imageFamily); field names the model (its group member) in messages.
func (r *ImageGenerationRequest) checkFamily(family, model string) error {
	sizes := map[string][]string{"dall-e-2": {"256x256", "512x512", "1024x1024"}, "dall-e-3": {"1024x1024", "1792x1024", "1024x1792"}}
	maxPrompt := map[string]int{"dall-e-2": 1000, "dall-e-3": 4000, "gpt-image": 32000}
	if n := maxPrompt[family]; n > 0 && utf8.RuneCountInString(r.Prompt) > n {
		return invalid("prompt", "is %d characters: %s takes at most %d", utf8.RuneCountInString(r.Prompt), model, n)
	}
	switch family {
	case "dall-e-2", "dall-e-3":
		if f := r.gptImageOnly(); f != "" {
			return invalid(f, "is taken by gpt-image models only, not %s", model)
		}
		if r.Size != "" && r.Size != "auto" {
			if err := oneOf("size", r.Size, sizes[family]...); err != nil {
				return invalid("size", "%s makes %s, got %q", model, strings.Join(sizes[family], ", "), r.Size)
			}
		}
	}
	switch family {
	case "dall-e-2":
		if r.Style != "" {
			return invalid("style", "is taken by dall-e-3 only, not %s", model)
		}
		if r.Quality != "" && r.Quality != "standard" && r.Quality != "auto" {
			return invalid("quality", "%s takes standard only, got %q", model, r.Quality)
		}
	case "dall-e-3":
		if r.N != nil && *r.N != 1 {
			return invalid("n", "%s makes one image a request (n=1), got %d", model, *r.N)
		}
		if r.Quality != "" && r.Quality != "standard" && r.Quality != "hd" && r.Quality != "auto" {
			return invalid("quality", "%s takes standard or hd, got %q", model, r.Quality)
		}
	case "gpt-image":
		if r.ResponseFormat != "" {
			return invalid("response_format", "is not taken by %s, which always answers b64_json: leave it unset", model)
		}
		if r.Style != "" {
			return invalid("style", "is taken by dall-e-3 only, not %s", model)
		}
		if r.Quality == "hd" || r.Quality == "standard" {
			return invalid("quality", "%s takes low, medium, high or auto, got %q", model, r.Quality)
		}
	}
	return nil
}

// imageVendors are the makers of the bare image model names.
var imageVendors = []struct{ prefix, provider string }{
	{"dall-e", "openai"}, {"gpt-image", "openai"}, {"chatgpt-image", "openai"},
}

// imageModel returns the "provider/model" a bare image model name stands for.
func (g *Gateway) imageModel(field, name string) (string, error) {
	return g.kindModel(field, name, nil, imageVendors)
}

// imageTargets resolves an image request's model: a model group's members in order, else
// the model itself.
func (g *Gateway) imageTargets(name string) ([]target, error) {
	return g.groupTargets(name, g.imageModel, providers.ServesImages,
		func(field, provider, model string) error {
			return invalid(field, "provider %q of %q has no image generation API here (OpenAI-format providers such as openai and azure have one)", provider, model)
		})
}

// imageCost prices an image call of t, a target of request p (priceAt).
func (g *Gateway) imageCost(p *plan, t target, u providers.ImageUsage) Costs {
	return priceAt(g, p, t, u, imagePricer.ImageCost)
}

// imagePricer is what the gateway's Prices implements to price image generation.
type imagePricer interface {
	ImageCost(model string, u providers.ImageUsage) providers.Cost
}

// GenerateImages answers an image generation request: it validates req (OpenAI's rules,
// and those of each model's family — dall-e-2, dall-e-3, gpt-image — as OpenAI documents
// them), checks the caller's budget and calls the model, retrying it (and, for a model
// group, its other members in order) as chat completions are retried, with the same
// circuit breakers; one call may last the request's whole time (Options.RequestTimeout, a
// request's timeout), not only a chat call's (AttemptTimeout), unless the scope bounds its
// calls (Scope.CallTimeout, Scope.AttemptTimeout). The call, priced from the catalogue (gpt-image by its tokens, dall-e
// per image of its size and quality; an unknown price is answered with price_known false),
// is billed to the scope's budget and recorded in the ledger and by the observer
// (operation "image_generation"). Errors: *ValidationError (ErrInvalid),
// ErrModelNotAllowed, ErrBudgetExceeded, *AllFailedError, or the context's error.
func (g *Gateway) GenerateImages(ctx context.Context, scope Scope, req *ImageGenerationRequest) (*ImageGenerationResponse, error) {
	if g.breakers == nil {
		return nil, ErrZeroGateway
	}
	if req == nil {
		return nil, errNilRequest()
	}
	preq, err := req.validate()
	if err != nil {
		return nil, err
	}
	if scope, err = g.withTagBudgets(ctx, scope, req.Tags); err != nil {
		return nil, err
	}
	model := req.Model
	if model == "" {
		model = DefaultImageModel
		if req.gptImageOnly() != "" {
			model = DefaultGPTImageModel
		}
	}
	targets, err := g.imageTargets(model)
	if err != nil {
		return nil, err
	}
	// The members the request's tags leave out are not asked whether they take it.
	if targets, err = g.tagTargets(model, scope.tagAsk(req.Tags), targets); err != nil {
		return nil, err
	}
	for _, t := range targets {
		if err := req.checkFamily(imageFamily(g.priceName(t.name)), t.name); err != nil {
			return nil, err
		}
	}
	fallbacks := func(have []target) []target {
		return g.opFallbacks(ctx, scope, model, providers.ImageMode, req.Tags, have, g.imageTargets, func(t target) bool {
			return req.checkFamily(imageFamily(g.priceName(t.name)), t.name) == nil
		})
	}
	return g.drawImages(ctx, scope, req, targets, fallbacks, OperationImageGeneration, func(actx context.Context, t target) (*providers.ImageResponse, error) {
		r := *preq
		r.Model = t.model
		return t.p.(providers.ImageGenerator).GenerateImages(actx, &r)
	})
}

// drawImages calls targets with call as GenerateImages describes (budget, retries, a call
// that may last the request's time), then prices, bills and records the answer under op
// (OperationImageGeneration, OperationImageEdit); req is the request's generation fields.
func (g *Gateway) drawImages(ctx context.Context, scope Scope, req *ImageGenerationRequest, targets []target, fallbacks func([]target) []target, op string,
	call func(actx context.Context, t target) (*providers.ImageResponse, error)) (*ImageGenerationResponse, error) {
	p, err := g.enterOp(ctx, scope, req.Model, req.Tags, targets, fallbacks)
	if err != nil {
		return nil, err
	}
	defer p.ended() // every way out of GenerateImages ends the request
	if scope.CallTimeout == 0 && scope.AttemptTimeout == 0 {
		// Drawing takes longer than answering (gpt-image at high quality: a minute or two)
		// and a drawing cut off is paid for all the same: the call may use the request's time.
		p.timing.attempt = max(p.timing.attempt, p.timing.deadline.Sub(p.start))
	}
	var out *providers.ImageResponse
	used, begin, err := g.callAttempts(ctx, p, "no images", func(ctx, actx context.Context, t target, begin time.Time) error {
		res, err := call(actx, t)
		if err == nil && (res == nil || len(res.Data) == 0) {
			err = &providers.Error{Provider: t.provider, Model: t.model, Kind: providers.KindBadResponse, Message: "the image model answered no image"}
		}
		if err != nil {
			// An answer over the cap on its size, unread: the images asked, of the size and
			// quality asked, priced per image (a gpt-image model's auto quality as
			// Catalog.ImageCost prices it), estimated.
			g.chargeOversizedOp(ctx, p, t, err, begin, func(*providers.Error) (providers.Usage, Costs, bool) {
				n := 1
				if req.N != nil && *req.N > 0 {
					n = *req.N
				}
				return providers.Usage{}, g.imageCost(p, t, providers.ImageUsage{Images: n, Size: req.Size, Quality: req.Quality}), true
			})
		}
		out = res
		return err
	})
	if err != nil {
		g.observeOpFailure(ctx, p, op, false, err)
		return nil, err
	}
	now := g.opts.Now()
	iu := providers.ImageUsage{Images: len(out.Data), Size: cmp.Or(out.Size, req.Size), Quality: cmp.Or(out.Quality, req.Quality)}
	usage := ImageGenerationUsage{}
	if u := out.Usage; u != nil {
		iu.InputTokens, iu.OutputTokens = u.InputTokens, u.OutputTokens
		usage.InputTokens, usage.OutputTokens, usage.TotalTokens = u.InputTokens, u.OutputTokens, u.TotalTokens
		if usage.TotalTokens == 0 {
			usage.TotalTokens = u.InputTokens + u.OutputTokens
		}
		if d := u.InputTokensDetails; d != nil {
			iu.InputTextTokens, iu.InputImageTokens = d.TextTokens, d.ImageTokens
			usage.InputTokensDetails = &ImageTokenDetails{TextTokens: d.TextTokens, ImageTokens: d.ImageTokens}
		}
		if d := u.OutputTokensDetails; d != nil {
			iu.OutputTextTokens, iu.OutputImageTokens = d.TextTokens, d.ImageTokens
			usage.OutputTokensDetails = &ImageTokenDetails{TextTokens: d.TextTokens, ImageTokens: d.ImageTokens}
		}
	}
	costs := g.imageCost(p, used, iu)
	usage.Costs = &costs
	// A gpt-image model is billed by its tokens: an answer that reports none is priced per
	// image of its size and quality (Catalog.ImageCost), an estimate of that bill.
	estimated := iu.InputTokens+iu.OutputTokens == 0 && imageFamily(g.priceName(used.name)) == "gpt-image"
	g.account(ctx, p, used, providers.Usage{PromptTokens: iu.InputTokens, CompletionTokens: iu.OutputTokens}, costs, true, estimated, now.Sub(begin))
	resp := &ImageGenerationResponse{Created: out.Created, Data: make([]ImageData, len(out.Data)), Background: out.Background,
		OutputFormat: out.OutputFormat, Quality: out.Quality, Size: out.Size, Model: used.name, Usage: usage}
	if resp.Created == 0 {
		resp.Created = now.Unix()
	}
	for i, d := range out.Data {
		resp.Data[i] = ImageData{B64JSON: d.B64JSON, URL: d.URL, RevisedPrompt: d.RevisedPrompt}
	}
	g.observeOpAnswer(ctx, p, op, used, Usage{PromptTokens: iu.InputTokens, CompletionTokens: iu.OutputTokens,
		TotalTokens: iu.InputTokens + iu.OutputTokens, Costs: costs}, estimated, nil, now)
	return resp, nil
}

// ResolveImageModel returns the "provider/model" an image generation request's model name
// stands for, and whether a configured provider with an images API serves it as an image
// model: one of OpenAI's image families (dall-e-2, dall-e-3, gpt-image; an Azure deployment
// whose base model is one), or a model the catalogue prices as one.
func (g *Gateway) ResolveImageModel(name string) (string, bool) {
	ts, err := g.imageTargets(name)
	if err != nil || len(ts) != 1 || !providers.IsConfigured(ts[0].p) {
		return name, false
	}
	priced := g.priceName(ts[0].name)
	if imageFamily(priced) != "" {
		return ts[0].name, true
	}
	cat, _ := g.prices().(interface {
		LookupImage(provider, key string) (providers.ImagePrice, bool)
	})
	if prov, m, err := providers.ParseModel(priced); err == nil && cat != nil {
		if _, ok := cat.LookupImage(prov, m); ok {
			return ts[0].name, true
		}
	}
	return name, false
}
