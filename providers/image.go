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
	// Detail is OpenAI's fidelity hint ("auto", "low", "high", "original", …; empty for the
	// provider's default). Only OpenAI-format upstreams take it, as it is.
	Detail string `json:"detail,omitempty"`
	// MediaType is the image's type when its URL does not tell it (LiteLLM's
	// image_url.format), for upstreams that must be told it (Gemini's fileData).
	MediaType string `json:"media_type,omitempty"`
}

// Part is one part of a turn's content, in order: text, an image (Image non-nil), a
// document (File non-nil) or a recording (Audio non-nil).
type Part struct {
	Text  string `json:"text,omitempty"`
	Image *Image `json:"image,omitempty"`
	File  *File  `json:"file,omitempty"`
	Audio *Audio `json:"audio,omitempty"`
}

// ImageMediaTypes are the image types every adapter's upstream takes (the intersection of
// OpenAI's, Anthropic's and Gemini's lists).
var ImageMediaTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// ErrImage matches CheckImage's errors.
var ErrImage = errors.New("invalid image")

// ImageError says what is wrong with an image or a file: Field is "url", "detail",
// "media_type" or "filename".
type ImageError struct {
	Field, Reason string
}

// Error formats the error.
func (e *ImageError) Error() string { return "invalid image: " + e.Field + ": " + e.Reason }

// Is makes errors.Is(err, ErrImage) true.
func (e *ImageError) Is(target error) bool { return target == ErrImage }

// CheckImage reports whether img can be passed on: an http or https URL with a host, or a
// base64 data URL of one of ImageMediaTypes (or image/jpg, read as image/jpeg) whose data
// is well-formed base64; a Detail of lower-case letters (OpenAI's values are left to it,
// so that new ones need no release); a MediaType, when set, of ImageMediaTypes. Its errors
// are *ImageError.
func CheckImage(img Image) error {
	for _, c := range img.Detail {
		if c < 'a' || c > 'z' {
			return &ImageError{"detail", fmt.Sprintf("must be a word such as auto, low or high, got %q", clip(img.Detail, 32))}
		}
	}
	if img.MediaType != "" && !imageType(normalType(img.MediaType)) {
		return &ImageError{"media_type", fmt.Sprintf("type %q is not one of %s", clip(img.MediaType, 32), strings.Join(ImageMediaTypes, ", "))}
	}
	if strings.HasPrefix(img.URL, "data:") {
		mt, data, ok := ParseDataURL(img.URL)
		if !ok {
			return &ImageError{"url", `a data URL must be "data:<image type>;base64,<data>"`}
		}
		if !imageType(mt) {
			return &ImageError{"url", fmt.Sprintf("type %q is not one of %s", clip(mt, 32), strings.Join(ImageMediaTypes, ", "))}
		}
		if !wellFormedBase64(data) {
			return &ImageError{"url", "the data URL's data is not base64"}
		}
		return nil
	}
	u, err := url.Parse(img.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &ImageError{"url", fmt.Sprintf("must be an http or https URL or a base64 data URL, got %q", clip(img.URL, 64))}
	}
	return nil
}

// normalType is a media type as ImageMediaTypes spell it (image/jpg is image/jpeg).
func normalType(mt string) string {
	mt = strings.ToLower(strings.TrimSpace(mt))
	if mt == "image/jpg" {
		return "image/jpeg"
	}
	return mt
}

// ParseDataURL splits a base64 data URL into its media type (lower-case, parameters
// dropped, image/jpg read as image/jpeg) and its base64 data; ok is false for anything else.
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
	return normalType(mediaType), data, true
}

// ImageMediaType is the type of img, for upstreams that must be told it (Anthropic's
// base64 source, Gemini): a data URL's type (corrected by the data's first bytes when they
// are another of ImageMediaTypes: Anthropic refuses a type that does not match); else the
// type the URL path's extension names, else img.MediaType; "" when nothing says.
func ImageMediaType(img Image) string {
	if mt, data, ok := ParseDataURL(img.URL); ok {
		if sniffed := sniffImage(data); sniffed != "" {
			return sniffed
		}
		return mt
	}
	if mt := extensionType(img.URL); mt != "" {
		return mt
	}
	return normalType(img.MediaType)
}

// extensionType is the image type the extension of rawURL's path names.
func extensionType(rawURL string) string {
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

// hasImages reports whether any turn of msgs has an image, a file or a recording.
func hasImages(msgs []Message) bool {
	for i := range msgs {
		for _, p := range msgs[i].Parts {
			if p.Image != nil || p.File != nil || p.Audio != nil {
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
