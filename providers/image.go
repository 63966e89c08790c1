package providers

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// Image is an image in a user turn (vision input): an http or https URL the provider fetches,
// or a data URL ("data:image/png;base64,…") carrying the image itself. Every adapter takes
// both forms: OpenAI-format upstreams get the URL as it is (image_url), Anthropic a url or
// base64 source, Gemini inlineData for a data URL and fileData for a URL (whose type it must
// be told: see ImageMediaType). Images are passed on, never fetched by the gateway.
type Image struct {
	// URL is the image's http(s) URL or its data URL.
	URL string `json:"url"`
	// Detail is OpenAI's fidelity hint: "auto", "low", "high" or empty for the provider's
	// default. Only OpenAI-format upstreams take it.
	Detail string `json:"detail,omitempty"`
}

// Part is one part of a turn's content, in order: text or an image (Image non-nil).
type Part struct {
	Text  string `json:"text,omitempty"`
	Image *Image `json:"image,omitempty"`
}

// ImageMediaTypes are the image types every adapter's upstream takes (the intersection of
// OpenAI's, Anthropic's and Gemini's lists).
var ImageMediaTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// ErrImage is wrapped by CheckImage's errors.
var ErrImage = errors.New("invalid image")

// CheckImage reports whether img can be passed on: an http or https URL with a host, or a
// base64 data URL of one of ImageMediaTypes whose data is well-formed base64, and a Detail
// of "", "auto", "low" or "high". Its errors wrap ErrImage and say what is wrong, without
// naming a field (the caller knows which).
func CheckImage(img Image) error {
	switch img.Detail {
	case "", "auto", "low", "high":
	default:
		return fmt.Errorf("%w: detail must be auto, low or high, got %q", ErrImage, img.Detail)
	}
	if strings.HasPrefix(img.URL, "data:") {
		mt, data, ok := ParseDataURL(img.URL)
		if !ok {
			return fmt.Errorf(`%w: a data URL must be "data:<image type>;base64,<data>"`, ErrImage)
		}
		if !imageType(mt) {
			return fmt.Errorf("%w: type %q is not one of %s", ErrImage, mt, strings.Join(ImageMediaTypes, ", "))
		}
		if !wellFormedBase64(data) {
			return fmt.Errorf("%w: the data URL's data is not base64", ErrImage)
		}
		return nil
	}
	u, err := url.Parse(img.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: url must be an http or https URL or a base64 data URL, got %q", ErrImage, clip(img.URL, 64))
	}
	return nil
}

// ParseDataURL splits a base64 data URL into its media type (lower-case, parameters
// dropped) and its base64 data; ok is false for anything else.
func ParseDataURL(s string) (mediaType, data string, ok bool) {
	rest, found := strings.CutPrefix(s, "data:")
	if !found {
		return "", "", false
	}
	header, data, found := strings.Cut(rest, ",")
	if !found || !strings.HasSuffix(strings.ToLower(header), ";base64") {
		return "", "", false
	}
	mediaType, _, _ = strings.Cut(header, ";")
	return strings.ToLower(strings.TrimSpace(mediaType)), data, true
}

// ImageMediaType is the type of the image a URL names, for upstreams that must be told it
// (Gemini's fileData): a data URL's type (corrected by the data's first bytes when they are
// another of ImageMediaTypes: Anthropic refuses a type that does not match), else the type
// the URL path's extension names; "" when neither says.
func ImageMediaType(rawURL string) string {
	if mt, data, ok := ParseDataURL(rawURL); ok {
		if sniffed := sniffImage(data); sniffed != "" {
			return sniffed
		}
		return mt
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	switch strings.ToLower(path.Ext(u.Path)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".gif":
		return "image/gif"
	case ".webp":
		return "image/webp"
	}
	return ""
}

// sniffImage is the type the first bytes of base64 data show, when it is one of
// ImageMediaTypes.
func sniffImage(data string) string {
	head := data[:min(len(data), 64)] // 48 bytes: enough for every signature DetectContentType knows
	head = head[:len(head)/4*4]
	b, err := base64.StdEncoding.DecodeString(head)
	if err != nil || len(b) == 0 {
		return ""
	}
	if mt := http.DetectContentType(b); imageType(mt) {
		return mt
	}
	return ""
}

func imageType(mt string) bool {
	for _, t := range ImageMediaTypes {
		if mt == t {
			return true
		}
	}
	return false
}

// wellFormedBase64 checks the standard alphabet, the padding and the length without
// decoding (images may be megabytes; the upstream decodes them).
func wellFormedBase64(s string) bool {
	if s == "" || len(s)%4 != 0 {
		return false
	}
	body := strings.TrimRight(s, "=")
	if len(s)-len(body) > 2 {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}

// hasImages reports whether any turn of msgs has an image.
func hasImages(msgs []Message) bool {
	for i := range msgs {
		for _, p := range msgs[i].Parts {
			if p.Image != nil {
				return true
			}
		}
	}
	return false
}

// clip shortens s to at most n bytes for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// imageTokens estimates the prompt tokens of an image whose size is unknown: OpenAI's
// count for a low-detail image, else for a 1024×1024 image at high detail (Anthropic's
// count for that size is close: about 1,400).
func imageTokens(img *Image) int {
	if img.Detail == "low" {
		return 85
	}
	return 765
}
