package providers

import (
	"fmt"
	"net/url"
	"strings"
)

// File is a document in a user turn: a PDF, as a base64 data URL
// ("data:application/pdf;base64,…") or an http or https URL the provider fetches. Anthropic
// gets a document block (base64 or url source), Gemini inlineData or fileData, and
// OpenAI-format upstreams a file part with file_data — they take no URL, so a file URL makes
// an OpenAI-format model refuse the request (RequestChecker). Files are passed on, never
// fetched by the gateway.
type File struct {
	// URL is the PDF's data URL or its http(s) URL.
	URL string `json:"url"`
	// Filename names the file for the model (OpenAI's filename, Anthropic's title); empty
	// for none (OpenAI-format upstreams then get "document.pdf").
	Filename string `json:"filename,omitempty"`
}

// FileMediaType is the one document type every adapter takes.
const FileMediaType = "application/pdf"

// maxFilename bounds File.Filename.
const maxFilename = 255

// CheckFile reports whether f can be passed on: a base64 data URL of a PDF whose data is
// well-formed base64, or an http or https URL with a host; a Filename of at most 255
// bytes without control characters. Its errors are *ImageError (the same fields: url, or
// "filename").
func CheckFile(f File) error {
	if len(f.Filename) > maxFilename || strings.ContainsFunc(f.Filename, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return &ImageError{"filename", fmt.Sprintf("must be at most %d bytes without control characters", maxFilename)}
	}
	if strings.HasPrefix(f.URL, "data:") {
		mt, data, ok := ParseDataURL(f.URL)
		switch {
		case !ok:
			return &ImageError{"url", `a data URL must be "data:application/pdf;base64,<data>"`}
		case mt != FileMediaType:
			return &ImageError{"url", fmt.Sprintf("type %q is not %s (the one document type every provider takes)", clip(mt, 32), FileMediaType)}
		case !wellFormedBase64(data):
			return &ImageError{"url", "the data URL's data is not base64"}
		}
		return nil
	}
	u, err := url.Parse(f.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &ImageError{"url", fmt.Sprintf("must be an http or https URL or a base64 data URL, got %q", clip(f.URL, 64))}
	}
	return nil
}

// fileTokens estimates the prompt tokens of a PDF: a page costs providers about 1,500 to
// 3,000 tokens (its text and its image) and a page of a typical PDF is tens of kilobytes,
// so one token per 12 bytes of data, at least 1,000. Only for usage an upstream did not
// report; a URL's size is unknown (1,000).
func fileTokens(f *File) int {
	if _, data, ok := ParseDataURL(f.URL); ok {
		return max(1000, len(data)*3/4/12)
	}
	return 1000
}

// hasFileURL reports whether any turn of msgs has a file given by URL.
func hasFileURL(msgs []Message) bool {
	for i := range msgs {
		for _, p := range msgs[i].Parts {
			if p.File != nil && !strings.HasPrefix(p.File.URL, "data:") {
				return true
			}
		}
	}
	return false
}
