package completions

import (
	"cmp"
	"encoding/json"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// PassThroughAudioUsage is the usage of a forwarded transcription or translation (OpenAI's
// audio/transcriptions and audio/translations) whose answer reported no tokens: the
// audio's length its answer reports (usage of type duration, verbose_json's duration),
// else the length as the gateway's own routes measure it (audioSeconds) — the uploaded
// file's headers, or an srt or vtt answer's last cue, whichever is later, else the file's
// size at 128 kbit/s — then estimated. file is the form's uploaded audio, format its
// response_format, answer the answer's body. ok is false when no file came and the
// answer says no length, or the answer reported tokens (a token-priced model's usage,
// which the pass-through bills as it came).
func PassThroughAudioUsage(file []byte, format string, answer []byte) (u providers.AudioUsage, estimated, ok bool) {
	var v struct {
		Duration *float64 `json:"duration"`
		Usage    *struct {
			Type         string  `json:"type"`
			Seconds      float64 `json:"seconds"`
			InputTokens  int     `json:"input_tokens"`
			OutputTokens int     `json:"output_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(answer, &v) == nil {
		switch {
		case v.Usage != nil && v.Usage.InputTokens+v.Usage.OutputTokens > 0:
			return u, false, false
		case v.Usage != nil && v.Usage.Seconds > 0:
			return providers.AudioUsage{Seconds: v.Usage.Seconds}, false, true
		case v.Duration != nil && *v.Duration > 0:
			return providers.AudioUsage{Seconds: *v.Duration}, false, true
		}
	}
	if s := audioSeconds(file, strings.ToLower(strings.TrimSpace(format)), answer); s > 0 {
		return providers.AudioUsage{Seconds: s}, true, true
	}
	return u, false, false
}

// PassThroughImageUsage is the usage of a forwarded image call (OpenAI's
// images/generations, images/edits, images/variations) whose answer reported no tokens: as
// many images as its answer's data holds (else n, else 1), of the size and quality the
// answer says (else the request's), priced by the catalogue's price per image; estimated
// (the answer did not say what it billed). ok is false when the answer is not an image
// answer (no data array) or reported tokens (gpt-image's usage, billed as it came).
func PassThroughImageUsage(answer []byte, size, quality string, n int) (u providers.ImageUsage, ok bool) {
	var v struct {
		Data    *[]json.RawMessage `json:"data"`
		Size    string             `json:"size"`
		Quality string             `json:"quality"`
		Usage   *struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(answer, &v) != nil || v.Data == nil || v.Usage != nil && v.Usage.InputTokens+v.Usage.OutputTokens > 0 {
		return u, false
	}
	images := len(*v.Data)
	if images == 0 {
		images = max(n, 1)
	}
	return providers.ImageUsage{Images: images, Size: cmp.Or(v.Size, size), Quality: cmp.Or(v.Quality, quality)}, true
}
