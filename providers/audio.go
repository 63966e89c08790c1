package providers

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
)

// Transcriber is implemented by adapters whose provider turns speech into text: the
// OpenAI format (OpenAI's whisper-1 and gpt-4o-transcribe models, Groq's
// whisper-large-v3, any OpenAI-compatible server with /audio/transcriptions). Anthropic and
// Gemini have no such API here.
type Transcriber interface {
	// Transcribe posts the audio to the provider's transcriptions (or translations)
	// endpoint and returns its answer as it is. Failures are *Error values.
	Transcribe(ctx context.Context, req *TranscriptionRequest) (*TranscriptionResponse, error)
}

// Speaker is implemented by adapters whose provider turns text into speech (OpenAI's
// tts-1, tts-1-hd and gpt-4o-mini-tts, Groq's playai-tts, OpenAI-compatible servers with
// /audio/speech).
type Speaker interface {
	// Speak posts the text to the provider's speech endpoint and returns the audio as it
	// arrives. Failures before the answer starts are *Error values; so are failures met
	// reading SpeechResponse.Body.
	Speak(ctx context.Context, req *SpeechRequest) (*SpeechResponse, error)
}

// TranscriptionRequest is one audio file to transcribe (OpenAI's multipart form).
type TranscriptionRequest struct {
	// Model is the provider's model name ("whisper-1").
	Model string
	// Translate asks for an English translation (/audio/translations) instead of a
	// transcription in the audio's language.
	Translate bool
	// File is the audio; Filename its name (the upstream tells the format by its
	// extension) and FileType its media type ("" for application/octet-stream).
	File     []byte
	Filename string
	FileType string
	// Language (ISO-639-1), Prompt, ResponseFormat (json, text, srt, verbose_json, vtt),
	// Temperature and TimestampGranularities ("word", "segment") are passed on when set.
	Language               string
	Prompt                 string
	ResponseFormat         string
	Temperature            *float64
	TimestampGranularities []string
	// Extra are more form fields, sent as they are after the others (OpenAI's include[],
	// chunking_strategy).
	Extra [][2]string
}

// TranscriptionResponse is the provider's answer, passed on as it came: its formats
// (JSON, plain text, SRT, WebVTT) differ, and only the usage is read from it.
type TranscriptionResponse struct {
	Body        []byte
	ContentType string
	// Usage is what the answer says the call used (zero when it says nothing).
	Usage AudioUsage
}

// AudioUsage is what an audio call used, as far as the provider reported it (or, for
// speech, as the request itself tells).
type AudioUsage struct {
	// Seconds is the duration of the audio transcribed (OpenAI's usage of type
	// "duration", verbose_json's duration); 0 when not reported.
	Seconds float64 `json:"seconds,omitempty"`
	// InputTokens and OutputTokens are a token-priced model's usage (gpt-4o-transcribe's
	// usage of type "tokens"); InputAudioTokens is the audio part of InputTokens.
	InputTokens      int `json:"input_tokens,omitempty"`
	InputAudioTokens int `json:"input_audio_tokens,omitempty"`
	OutputTokens     int `json:"output_tokens,omitempty"`
	// Characters is the length of a speech request's input, in characters.
	Characters int `json:"characters,omitempty"`
	// TokensEstimated says InputTokens were counted locally (a speech request's input).
	TokensEstimated bool `json:"tokens_estimated,omitempty"`
	// OutputAudioTokens is the audio a speech model made, when the answer says it (a
	// stream_format sse answer's speech.audio.done usage).
	OutputAudioTokens int `json:"output_audio_tokens,omitempty"`
}

// SpeechRequest is OpenAI's speech request.
type SpeechRequest struct {
	// Model is the provider's model name ("tts-1").
	Model string `json:"model"`
	// Input is the text to speak.
	Input string `json:"input"`
	// Voice names the voice ("alloy", …).
	Voice string `json:"voice"`
	// ResponseFormat is the audio's format (mp3, opus, aac, flac, wav, pcm); "" for the
	// provider's default (mp3).
	ResponseFormat string `json:"response_format,omitempty"`
	// Speed is 0.25 to 4 (nil: the provider's default, 1).
	Speed *float64 `json:"speed,omitempty"`
	// StreamFormat is "sse" for server-sent events (speech.audio.delta with base64 audio,
	// then speech.audio.done with the usage), "" or "audio" for the audio's bytes.
	StreamFormat string `json:"stream_format,omitempty"`
	// Instructions steer the voice (gpt-4o-mini-tts).
	Instructions string `json:"instructions,omitempty"`
}

// SpeechResponse is the audio of a speech request as it arrives.
type SpeechResponse struct {
	// ContentType is the upstream's ("audio/mpeg", …).
	ContentType string
	// Body is the audio; reads return it as the upstream sends it (a read failing midway
	// is an *Error of KindStreamBroken, or KindTimeout for a stall). The caller closes it.
	Body io.ReadCloser
}

// maxTranscriptionBody bounds a transcription answer: verbose_json with word timestamps
// of 25 MB of audio is a few MiB.
const maxTranscriptionBody = 32 << 20

// Transcribe implements Transcriber with POST {base}/audio/transcriptions (or
// /audio/translations), the form built with mime/multipart.
func (o *OpenAI) Transcribe(ctx context.Context, req *TranscriptionRequest) (*TranscriptionResponse, error) {
	if err := o.ep.checkKey(req.Model); err != nil {
		return nil, err
	}
	body, ctype, err := transcriptionForm(req)
	if err != nil {
		return nil, &Error{Provider: o.ep.cfg.Name, Model: req.Model, Kind: KindBadRequest, Message: "encoding the audio form", Err: err}
	}
	h := http.Header{}
	h.Set("Content-Type", ctype)
	if err := o.setAuth(ctx, req.Model, h); err != nil {
		return nil, err
	}
	path := "/audio/transcriptions"
	if req.Translate {
		path = "/audio/translations"
	}
	c, err := o.ep.send(ctx, req.Model, o.url(path, req.Model), h, body, parseOpenAIError)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	raw, err := c.readAll(maxTranscriptionBody)
	if err != nil {
		return nil, err
	}
	out := &TranscriptionResponse{Body: raw, ContentType: c.resp.Header.Get("Content-Type")}
	out.Usage = transcriptionUsage(out.ContentType, raw)
	return out, nil
}

// formQuote escapes a form-data name or file name (quotes and backslashes escaped, line
// breaks dropped), as mime/multipart does.
var formQuote = strings.NewReplacer("\\", "\\\\", `"`, "\\\"", "\r", "", "\n", "")

// writeFilePart writes data as the form's file field with its file name and media type
// ("" or unparsable: application/octet-stream).
func writeFilePart(w *multipart.Writer, field, filename, mediaType string, data []byte) error {
	h := make(textproto.MIMEHeader)
	// The name as form-data carries it (RFC 7578: filename in UTF-8, quoted; no filename*),
	// as multipart.Writer.CreateFormFile writes it; the type re-formatted from its parse,
	// so that no control character of a library caller's reaches the part's headers.
	h.Set("Content-Disposition", `form-data; name="`+formQuote.Replace(field)+`"; filename="`+formQuote.Replace(filename)+`"`)
	fileType := "application/octet-stream"
	if mt, params, err := mime.ParseMediaType(mediaType); err == nil {
		if f := mime.FormatMediaType(mt, params); f != "" {
			fileType = f
		}
	}
	h.Set("Content-Type", fileType)
	part, err := w.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = part.Write(data)
	return err
}

// transcriptionForm encodes req as OpenAI's multipart form.
func transcriptionForm(req *TranscriptionRequest) ([]byte, string, error) {
	var buf bytes.Buffer
	buf.Grow(len(req.File) + 1024)
	w := multipart.NewWriter(&buf)
	field := func(name, value string) error {
		if value == "" {
			return nil
		}
		return w.WriteField(name, value)
	}
	if err := field("model", req.Model); err != nil {
		return nil, "", err
	}
	if err := writeFilePart(w, "file", cmp.Or(req.Filename, "audio"), req.FileType, req.File); err != nil {
		return nil, "", err
	}
	temp := ""
	if req.Temperature != nil {
		temp = strconv.FormatFloat(*req.Temperature, 'g', -1, 64)
	}
	for _, f := range [][2]string{{"language", req.Language}, {"prompt", req.Prompt}, {"response_format", req.ResponseFormat}, {"temperature", temp}} {
		if err := field(f[0], f[1]); err != nil {
			return nil, "", err
		}
	}
	for _, g := range req.TimestampGranularities {
		if err := field("timestamp_granularities[]", g); err != nil {
			return nil, "", err
		}
	}
	for _, f := range req.Extra {
		if err := field(formQuote.Replace(f[0]), f[1]); err != nil {
			return nil, "", err
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

// transcriptionUsage reads the usage of a JSON transcription answer: OpenAI's usage object
// ({"type":"duration","seconds":N} for whisper-1, {"type":"tokens",…} for
// gpt-4o-transcribe), else verbose_json's duration. Text, SRT and VTT answers say nothing.
func transcriptionUsage(contentType string, raw []byte) AudioUsage {
	mt, _, _ := mime.ParseMediaType(contentType)
	trimmed := bytes.TrimSpace(raw)
	if mt != "application/json" && (len(trimmed) == 0 || trimmed[0] != '{') {
		return AudioUsage{}
	}
	var r struct {
		Duration json.Number `json:"duration"`
		Usage    *struct {
			Type              string      `json:"type"`
			Seconds           json.Number `json:"seconds"`
			InputTokens       int         `json:"input_tokens"`
			OutputTokens      int         `json:"output_tokens"`
			InputTokenDetails *struct {
				AudioTokens int `json:"audio_tokens"`
			} `json:"input_token_details"`
		} `json:"usage"`
	}
	if json.Unmarshal(trimmed, &r) != nil {
		return AudioUsage{}
	}
	var u AudioUsage
	if r.Usage != nil {
		if s, err := r.Usage.Seconds.Float64(); err == nil && s > 0 {
			u.Seconds = s
		}
		u.InputTokens, u.OutputTokens = r.Usage.InputTokens, r.Usage.OutputTokens
		if d := r.Usage.InputTokenDetails; d != nil {
			u.InputAudioTokens = d.AudioTokens
		}
	}
	if u.Seconds == 0 {
		if s, err := r.Duration.Float64(); err == nil && s > 0 {
			u.Seconds = s
		}
	}
	return u
}

// Speak implements Speaker with POST {base}/audio/speech; the answer's body is returned
// unread, for the caller to pass on as it arrives.
func (o *OpenAI) Speak(ctx context.Context, req *SpeechRequest) (*SpeechResponse, error) {
	if err := o.ep.checkKey(req.Model); err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set("Accept", "*/*")
	if err := o.setAuth(ctx, req.Model, h); err != nil {
		return nil, err
	}
	c, err := o.ep.send(ctx, req.Model, o.url("/audio/speech", req.Model), h, req, parseOpenAIError)
	if err != nil {
		return nil, err
	}
	return &SpeechResponse{ContentType: c.resp.Header.Get("Content-Type"), Body: &audioBody{c: c}}, nil
}

// audioBody reads an answer's audio, its failures classified as a stream's are.
type audioBody struct{ c *call }

func (b *audioBody) Read(p []byte) (int, error) {
	n, err := b.c.body.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, b.c.readFailure(err, true)
	}
	return n, err
}

func (b *audioBody) Close() error { return b.c.Close() }
