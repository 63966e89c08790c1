package completions

import (
	"errors"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// Images and files (PDFs) in user turns of stateless requests: the OpenAI-compatible
// surfaces and the Messages surface put them in ContentBlocks, the gateway passes them to
// the providers as providers.Part values.

// imageBlock is the block of img.
func imageBlock(img providers.Image) ContentBlock {
	return ContentBlock{Type: "image", Image: &img}
}

// audioBlock is the block of a.
func audioBlock(a providers.Audio) ContentBlock {
	return ContentBlock{Type: "audio", Audio: &a}
}

// fileBlock is the block of f.
func fileBlock(f providers.File) ContentBlock {
	return ContentBlock{Type: "file", File: &f}
}

// imageFieldError is a validation error naming the part of the image or file at field (an
// image_url object: url, detail, format; a file object: file_data, filename) that err (from
// providers.CheckImage or CheckFile) is about.
func imageFieldError(field string, err error) error {
	var ie *providers.ImageError
	if !errors.As(err, &ie) {
		return invalid(field, "%v", err)
	}
	sub := map[string]string{"url": "url", "detail": "detail", "media_type": "format", "filename": "filename", "data": "data", "format": "format"}[ie.Field]
	if strings.HasSuffix(field, ".file") && sub == "url" {
		sub = "file_data"
	}
	return invalid(field+"."+sub, "%s", ie.Reason)
}

// parts is the message's content for providers.Message.Parts: nil without images, files
// or recordings.
func (m *Message) parts() []providers.Part {
	has := false
	for _, c := range m.Content {
		has = has || c.Image != nil || c.File != nil || c.Audio != nil
	}
	if !has {
		return nil
	}
	out := make([]providers.Part, len(m.Content))
	for i, c := range m.Content {
		out[i] = providers.Part{Text: c.Text, Image: c.Image, File: c.File, Audio: c.Audio}
	}
	return out
}
