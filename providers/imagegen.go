package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
)

// ImageGenerator is implemented by adapters whose provider makes images from a prompt with
// OpenAI's images API: the OpenAI format (OpenAI's dall-e and gpt-image models, Azure
// OpenAI deployments of them, OpenAI-compatible servers with /images/generations).
// Anthropic, Gemini and Bedrock have no such API here.
type ImageGenerator interface {
	// GenerateImages posts req to the provider's image generation endpoint. Failures are
	// *Error values.
	GenerateImages(ctx context.Context, req *ImageRequest) (*ImageResponse, error)
}

// ImageRequest is OpenAI's image generation request, checked by the caller. Empty fields
// are not sent (the provider's defaults apply).
type ImageRequest struct {
	// Model is the provider's model name ("dall-e-3"; an Azure deployment's name).
	Model string
	// Prompt describes the images wanted.
	Prompt string
	// N is how many images to make (0: the provider's default, 1).
	N int
	// Size, Quality, ResponseFormat, Style, Background, OutputFormat, Moderation and User
	// are OpenAI's fields, passed on when set.
	Size, Quality, ResponseFormat, Style, Background, OutputFormat, Moderation, User string
	// OutputCompression (0-100) and PartialImages (0-3) are passed on when non-nil.
	OutputCompression, PartialImages *int
	// Extra are fields the gateway does not know, sent as the caller sent them (LiteLLM
	// passes them through to the provider).
	Extra map[string]json.RawMessage
}

// ImageResponse is an image generation answer: the images, and what the answer says of
// them and of its usage.
type ImageResponse struct {
	// Created is the answer's Unix time.
	Created int64
	// Data are the images, each an object with a url or a b64_json (and a revised_prompt
	// for dall-e-3), as the provider sent them.
	Data []ImageDatum
	// Background, OutputFormat, Quality and Size are what gpt-image models say they made
	// ("" when the answer does not say).
	Background, OutputFormat, Quality, Size string
	// Usage is the answer's token usage (gpt-image models); nil when it reports none.
	Usage *ImageTokenUsage
}

// ImageDatum is one generated image: its URL (valid for an hour at OpenAI) or its bytes
// base64-encoded, and the prompt dall-e-3 actually drew from.
type ImageDatum struct {
	URL           string `json:"url,omitempty"`
	B64JSON       string `json:"b64_json,omitempty"`
	RevisedPrompt string `json:"revised_prompt,omitempty"`
}

// ImageTokenUsage is OpenAI's usage of a gpt-image answer.
type ImageTokenUsage struct {
	InputTokens        int                `json:"input_tokens"`
	InputTokensDetails *ImageTokenDetails `json:"input_tokens_details,omitempty"`
	OutputTokens       int                `json:"output_tokens"`
	// OutputTokensDetails splits the output (gpt-image-1.5 and later); nil when absent.
	OutputTokensDetails *ImageTokenDetails `json:"output_tokens_details,omitempty"`
	TotalTokens         int                `json:"total_tokens"`
}

// ImageTokenDetails splits tokens into text and image tokens.
type ImageTokenDetails struct {
	TextTokens  int `json:"text_tokens"`
	ImageTokens int `json:"image_tokens"`
}

// maxImageBody bounds an image generation answer: ten 1536x1024 PNGs in base64 run to
// tens of MiB.
const maxImageBody = 128 << 20

type openAIImageResponse struct {
	Created      int64            `json:"created"`
	Data         []ImageDatum     `json:"data"`
	Background   string           `json:"background"`
	OutputFormat string           `json:"output_format"`
	Quality      string           `json:"quality"`
	Size         string           `json:"size"`
	Usage        *ImageTokenUsage `json:"usage"`
}

// imageBody is req as OpenAI's JSON body: the caller's unknown fields, then the known ones
// (which win over a same-named extra).
func imageBody(req *ImageRequest) map[string]any {
	body := make(map[string]any, len(req.Extra)+12)
	for k, v := range req.Extra {
		body[k] = v
	}
	body["model"], body["prompt"] = req.Model, req.Prompt
	set := func(k, v string) {
		if v != "" {
			body[k] = v
		}
	}
	if req.N > 0 {
		body["n"] = req.N
	}
	set("size", req.Size)
	set("quality", req.Quality)
	set("response_format", req.ResponseFormat)
	set("style", req.Style)
	set("background", req.Background)
	set("output_format", req.OutputFormat)
	set("moderation", req.Moderation)
	set("user", req.User)
	if req.OutputCompression != nil {
		body["output_compression"] = *req.OutputCompression
	}
	if req.PartialImages != nil {
		body["partial_images"] = *req.PartialImages
	}
	return body
}

// GenerateImages implements ImageGenerator with POST {base}/images/generations (for Azure
// OpenAI, the deployment's path). An answer without an image, or with an image that has
// neither a url nor a b64_json, is a bad response (KindBadResponse: not retried on the
// model).
func (o *OpenAI) GenerateImages(ctx context.Context, req *ImageRequest) (*ImageResponse, error) {
	if err := o.ep.checkKey(req.Model); err != nil {
		return nil, err
	}
	h := http.Header{}
	if err := o.setAuth(ctx, req.Model, h); err != nil {
		return nil, err
	}
	c, err := o.ep.send(ctx, req.Model, o.url("/images/generations", req.Model), h, imageBody(req), parseOpenAIError)
	if err != nil {
		return nil, err
	}
	return decodeImageResponse(c)
}

// decodeImageResponse reads an images answer (generations and edits answer alike). An
// answer without an image, or with an image that has neither a url nor a b64_json, is a bad
// response (KindBadResponse: not retried on the model).
func decodeImageResponse(c *call) (*ImageResponse, error) {
	defer c.Close()
	var r openAIImageResponse
	if err := c.decodeAll(maxImageBody, &r, "images response"); err != nil {
		return nil, err
	}
	if len(r.Data) == 0 {
		return nil, c.failure(KindBadResponse, "images response has no image", nil)
	}
	for i, d := range r.Data {
		if d.URL == "" && d.B64JSON == "" {
			return nil, c.failure(KindBadResponse, "images response's image "+strconv.Itoa(i)+" has neither a url nor a b64_json", nil)
		}
	}
	return &ImageResponse{Created: r.Created, Data: r.Data, Background: r.Background, OutputFormat: r.OutputFormat,
		Quality: r.Quality, Size: r.Size, Usage: r.Usage}, nil
}

// ServesImages reports whether p answers image generation requests: an OpenAI-format
// provider (Azure OpenAI included) that serves chat (not an embeddings- or rerank-only
// one, whose servers have no such API).
func ServesImages(p Provider) bool {
	_, ok := p.(ImageGenerator)
	return ok && ServesChat(p)
}

// ServesImageEdits reports whether p answers image edit requests: as ServesImages, with
// an ImageEditor.
func ServesImageEdits(p Provider) bool {
	_, ok := p.(ImageEditor)
	return ok && ServesImages(p)
}
