package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"strconv"
	"strings"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// passThroughMedia is what a pass-through OpenAI model call that is not billed by tokens
// is: "audio" (transcriptions, translations: by the audio's length), "images" (image
// generations, edits, variations: per image), "" otherwise. path is below the prefix.
func passThroughMedia(pt passThroughRoute, method, path string) string {
	if pt.provider != "openai" || !isModelCall(pt, method, path) {
		return ""
	}
	switch strings.TrimPrefix(path, "v1/") {
	case "audio/transcriptions", "audio/translations":
		return "audio"
	case "images/generations", "images/edits", "images/variations":
		return "images"
	}
	return ""
}

// mediaFields are the request's fields a media call's estimate reads: the uploaded audio
// and the response_format, size, quality and n asked.
type mediaFields struct {
	file                  []byte
	format, size, quality string
	n                     int
}

// readMediaFields reads them from body as the provider reads the body forwarded to it: a
// multipart/form-data form (contentType's boundary) or a JSON object, field names matched
// exactly — OpenAI's are case-sensitive, so a SIZE it ignores (drawing its default size)
// is not taken for size — and a part named by its name, not its name* (mediaPartName).
// (The model check, passThroughAsk, takes a part named in any case, by any of its names,
// for the model: there the stricter reading is the one that refuses.) A field given twice
// counts as the last.
func readMediaFields(contentType string, body []byte) mediaFields {
	var f mediaFields
	set := func(name, v string) {
		switch name {
		case "response_format":
			f.format = v
		case "size":
			f.size = v
		case "quality":
			f.quality = v
		case "n":
			f.n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if boundary, ok := isMultipartForm(contentType); ok {
		mr := multipart.NewReader(bytes.NewReader(body), boundary)
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) || err != nil {
				return f
			}
			name := mediaPartName(part)
			if name == "file" {
				f.file, _ = io.ReadAll(part)
				continue
			}
			v, _ := io.ReadAll(io.LimitReader(part, maxFormModelBytes))
			set(name, string(v))
		}
	}
	var fields map[string]json.RawMessage // keys as they came, unlike a struct's
	if json.Unmarshal(body, &fields) != nil {
		return f
	}
	for _, name := range []string{"response_format", "size", "quality"} {
		var v string
		if json.Unmarshal(fields[name], &v) == nil {
			set(name, v)
		}
	}
	json.Unmarshal(fields["n"], &f.n)
	return f
}

// mediaPartName is part's field name as the provider's RFC 7578 form parser reads it: its
// Content-Disposition's name parameter (Go's FormName prefers an RFC 2231 name*, which
// RFC 7578 does not define for field names), its name* only when it has no name; "" for
// a part that is not form-data. The model check (formAsk) takes any of a part's names,
// the stricter reading there.
func mediaPartName(part *multipart.Part) string {
	name := part.FormName()
	if name == "" {
		return ""
	}
	if plain, extended := plainNameParam(part.Header.Get("Content-Disposition")); extended && plain != "" {
		return plain
	}
	return name
}

// mediaUsage sets pu's Audio or Images (kind, see passThroughMedia) from the request's
// body and the answer's when the answer reported no tokens: the length or images it
// reports, else an estimate, marked estimated. over says the answer was larger than
// maxMediaAnswer and not kept (answer is then nil): unread, it is billed as the gateway's
// own routes bill an answer over their cap — the audio's length as the file says it (else
// its size at 128 kbit/s), the images asked (n, else 1) at the size and quality asked.
func mediaUsage(pu *completions.PassThroughUsage, kind, contentType string, body, answer []byte, over bool) {
	if pu.Reported && pu.Usage.PromptTokens+pu.Usage.CompletionTokens > 0 {
		return
	}
	f := readMediaFields(contentType, body)
	switch kind {
	case "audio":
		if u, estimated, ok := completions.PassThroughAudioUsage(f.file, f.format, answer); ok {
			pu.Audio, pu.Estimated = &u, estimated || over
		}
	case "images":
		if over {
			pu.Images, pu.Estimated = &providers.ImageUsage{Images: max(f.n, 1), Size: f.size, Quality: f.quality}, true
		} else if u, ok := completions.PassThroughImageUsage(answer, f.size, f.quality, f.n); ok {
			pu.Images, pu.Estimated = &u, true
		}
	}
}

// cappedBuffer keeps what is written to it up to limit bytes; past that it keeps nothing
// (Bytes is nil) but takes every write.
type cappedBuffer struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

// Write keeps p while the whole stays within the limit; it never fails.
func (c *cappedBuffer) Write(p []byte) (int, error) {
	if !c.over && c.buf.Len()+len(p) > c.limit {
		c.over = true
		c.buf = bytes.Buffer{}
	}
	if !c.over {
		c.buf.Write(p)
	}
	return len(p), nil
}

// Bytes is what was written, nil when it went past the limit.
func (c *cappedBuffer) Bytes() []byte {
	if c.over {
		return nil
	}
	return c.buf.Bytes()
}

// Over reports whether what was written went past the limit (and was not kept).
func (c *cappedBuffer) Over() bool { return c.over }

// maxMediaAnswer bounds the media answer kept to read its usage (an image answer's
// base64 images included), as a JSON answer's usage is read (providers.MaxMeteredBody).
const maxMediaAnswer = providers.MaxMeteredBody
