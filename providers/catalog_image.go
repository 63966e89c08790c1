package providers

import (
	"strconv"
	"strings"
)

// ImageMode is the catalogue mode of image generation models (LiteLLM's
// "image_generation").
const ImageMode = "image_generation"

// ImagePrice is an image model's catalogue entry. LiteLLM keys per-image prices by quality
// and size ("hd/1024-x-1792/dall-e-3", "1024-x-1024/dall-e-2") and token prices by the
// model ("gpt-image-1"). Rates are USD; a rate the catalogue does not give is 0 and its
// Has* flag false.
type ImagePrice struct {
	// Key is the catalogue key; Provider is LiteLLM's litellm_provider.
	Key, Provider string
	// PerImage prices an image (input_cost_per_image).
	PerImage    float64
	HasPerImage bool
	// PerPixel prices a pixel of an image (input_cost_per_pixel: dall-e's sized entries).
	PerPixel    float64
	HasPerPixel bool
	// InputPerToken prices a text token of the prompt; InputPerImageToken an image token
	// in (gpt-image-1).
	InputPerToken, InputPerImageToken       float64
	HasInputPerToken, HasInputPerImageToken bool
	// OutputPerImageToken prices an image token out; OutputPerToken a text token out.
	OutputPerImageToken, OutputPerToken       float64
	HasOutputPerImageToken, HasOutputPerToken bool
}

// imagePrice is e's rates as an image model's.
func (e catalogEntry) imagePrice(key string) ImagePrice {
	return ImagePrice{Key: key, Provider: e.Provider,
		PerImage: e.InputPerImage.v, HasPerImage: e.InputPerImage.ok, PerPixel: e.InputPerPixel.v, HasPerPixel: e.InputPerPixel.ok,
		InputPerToken: e.Input.v, HasInputPerToken: e.Input.ok, InputPerImageToken: e.InputPerImageToken.v, HasInputPerImageToken: e.InputPerImageToken.ok,
		OutputPerImageToken: e.OutputPerImageToken.v, HasOutputPerImageToken: e.OutputPerImageToken.ok, OutputPerToken: e.Output.v, HasOutputPerToken: e.Output.ok}
}

// ImageUsage is what an image generation call used: the tokens the answer reported
// (gpt-image models), else the images made with their size and quality (dall-e's answers
// report no usage).
type ImageUsage struct {
	// InputTokens are the prompt's tokens: InputTextTokens of text, InputImageTokens of
	// images (both 0 when the answer gave no details: all are text then).
	InputTokens, InputTextTokens, InputImageTokens int
	// OutputTokens are the tokens made: OutputImageTokens of images, OutputTextTokens of
	// text (both 0 when the answer gave no details: all are image tokens then).
	OutputTokens, OutputImageTokens, OutputTextTokens int
	// Images is how many images the answer carries.
	Images int
	// Size ("1024x1792"; "" or "auto" for the model's default) and Quality ("hd"; "" for
	// the default) are the images', for per-image prices.
	Size, Quality string
}

// LookupImage finds the catalogue entry of an image model given as "provider/model" under
// key (a catalogue key without its provider prefix: "hd/1024-x-1792/dall-e-3"): the
// provider's LiteLLM key, "provider/key" verbatim, then the bare key (an Azure deployment
// of dall-e-3 costs what OpenAI's does where Azure has no entry of its own). A key that
// matches none is looked up by its canonical form, as Lookup finds chat models, so a dated
// name ("gpt-image-1-2025-04-15") or one with a vendor prefix ("openai/gpt-image-1") finds
// its entry; but only among the entries of the provider or of the vendor the key names,
// never another provider's entry of a similar name (see lookupImageCanonical).
func (c *Catalog) LookupImage(provider, key string) (ImagePrice, bool) {
	if c == nil {
		return ImagePrice{}, false
	}
	var keys []string
	if pre, ok := catalogPrefix(provider); ok {
		keys = append(keys, pre+key)
	}
	keys = append(keys, provider+"/"+key, key)
	for _, k := range keys {
		if p, ok := c.images[k]; ok {
			return p, true
		}
	}
	return c.lookupImageCanonical(provider, key)
}

// ImageCost prices an image generation call of model ("provider/model") from what it used,
// as LiteLLM does: by its tokens where the answer reports them and the catalogue prices
// the model's tokens (gpt-image models), else per image of the size and quality made — an
// entry's input_cost_per_image, or input_cost_per_pixel times the image's pixels, times the
// images (dall-e-2's and dall-e-3's sized entries; gpt-image's per-image entries of low,
// medium and high quality). A size "" or auto is 1024x1024; a quality "" or auto is
// dall-e-3's standard and a gpt-image model's medium (the quality its answer did not
// say). A model, size or quality the catalogue does not price costs 0 with Known false:
// an unknown price, never a guess.
func (c *Catalog) ImageCost(model string, u ImageUsage) Cost {
	prov, m, err := ParseModel(model)
	if err != nil {
		return Cost{}
	}
	if u.InputTokens+u.OutputTokens > 0 {
		if p, ok := c.LookupImage(prov, m); ok {
			if cost := p.tokenCost(u); cost.Known {
				return cost
			}
		}
	}
	size := u.Size
	if size == "" || size == "auto" {
		size = "1024x1024" // every dall-e model's default, and gpt-image's square
	}
	w, h, ok := imageDimensions(size)
	if !ok {
		return Cost{}
	}
	quality := u.Quality
	if quality == "" || quality == "auto" {
		switch {
		case strings.Contains(m, "dall-e-3"):
			quality = "standard" // dall-e-3's default, which auto draws
		case strings.Contains(m, "gpt-image"):
			// OpenAI bills a gpt-image model by its tokens; an answer that reports none
			// nor the quality it drew is priced per image at medium, the middle of the
			// qualities auto chooses from (LiteLLM's default quality of gpt-image-1's
			// token estimate too), rather than at no price.
			quality = "medium"
		}
	}
	sized := strconv.Itoa(w) + "-x-" + strconv.Itoa(h) + "/" + m
	keys := []string{sized, m}
	if quality != "" {
		keys = append([]string{quality + "/" + sized}, keys...)
	}
	for _, k := range keys {
		p, ok := c.LookupImage(prov, k)
		if !ok {
			continue
		}
		var usd float64
		switch {
		case p.HasPerImage && p.PerImage > 0:
			usd = float64(u.Images) * p.PerImage
		case p.HasPerPixel:
			usd = float64(u.Images) * float64(w*h) * p.PerPixel
		case p.HasPerImage:
			usd = 0
		default:
			continue // a token-priced entry: no price per image
		}
		return Cost{InputUSD: usd, TotalUSD: usd, Known: true}
	}
	return Cost{}
}

// tokenCost prices u's tokens at p's rates: text in at the input rate, images in at the
// image input rate, images out at the image output rate and text out at the output rate;
// Known false when p lacks a rate u needs.
func (p ImagePrice) tokenCost(u ImageUsage) Cost {
	inText, inImage := u.InputTokens, 0
	if u.InputTextTokens+u.InputImageTokens > 0 {
		inText, inImage = u.InputTextTokens, u.InputImageTokens
	}
	outImage, outText := u.OutputTokens, 0
	if u.OutputImageTokens+u.OutputTextTokens > 0 {
		outImage, outText = u.OutputImageTokens, u.OutputTextTokens
	}
	imageIn := p.InputPerImageToken
	if !p.HasInputPerImageToken {
		imageIn = p.InputPerToken
	}
	if !p.HasInputPerToken || !p.HasOutputPerImageToken || outText > 0 && !p.HasOutputPerToken {
		return Cost{}
	}
	in := float64(inText)*p.InputPerToken + float64(inImage)*imageIn
	out := float64(outImage)*p.OutputPerImageToken + float64(outText)*p.OutputPerToken
	return Cost{InputUSD: in, OutputUSD: out, TotalUSD: in + out, Known: true}
}

// imageDimensions parses an image size "WxH".
func imageDimensions(size string) (w, h int, ok bool) {
	ws, hs, found := strings.Cut(size, "x")
	if !found {
		return 0, 0, false
	}
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if err1 != nil || err2 != nil || w <= 0 || h <= 0 {
		return 0, 0, false
	}
	return w, h, true
}
