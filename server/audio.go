package server

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// maxAudioFormBytes is the body limit of the transcription routes: OpenAI's 25 MB audio
// file and room for the form's other fields.
const maxAudioFormBytes = completions.MaxAudioFileBytes + 1<<20

// maxAudioFormField bounds one text field of the form (a prompt is at most a few hundred
// tokens).
const maxAudioFormField = 64 << 10

// transcriptionForm documents the multipart form of POST /v1/audio/transcriptions and
// /v1/audio/translations (OpenAPI only; the handler reads the parts as they come).
type transcriptionForm struct {
	File                   string   `json:"file" jsonschema:"required,format=binary,description=the audio file (flac mp3 mp4 mpeg mpga m4a ogg wav or webm) of at most 25 MiB"`
	Model                  string   `json:"model" jsonschema:"required,description=provider/model or a bare name (whisper-1 or gpt-4o-transcribe or whisper-large-v3) or a model group"`
	Language               string   `json:"language,omitempty" jsonschema:"description=the audio's language (ISO-639-1) for transcriptions"`
	Prompt                 string   `json:"prompt,omitempty" jsonschema:"description=text to guide the model's style or continue a previous segment"`
	ResponseFormat         string   `json:"response_format,omitempty" jsonschema:"enum=json,enum=text,enum=srt,enum=verbose_json,enum=vtt"`
	Temperature            float64  `json:"temperature,omitempty" jsonschema:"minimum=0,maximum=1"`
	TimestampGranularities []string `json:"timestamp_granularities[],omitempty" jsonschema:"description=word and/or segment (with verbose_json)"`
	Stream                 bool     `json:"stream,omitempty" jsonschema:"description=true streams the transcript as server-sent events (transcript.text.delta then transcript.text.done) from gpt-4o transcription models; other models answer whole (as OpenAI answers whisper-1); translations refuse it"`
	Include                []string `json:"include[],omitempty" jsonschema:"description=passed to the upstream as it came (logprobs with gpt-4o-transcribe)"`
	ChunkingStrategy       string   `json:"chunking_strategy,omitempty" jsonschema:"description=passed to the upstream as it came (auto or the server_vad object's fields)"`
}

// transcriptionAnswer documents a transcription's JSON answer (OpenAPI only; the
// upstream's answer is passed back as it came, verbose_json with segments and words too).
type transcriptionAnswer struct {
	Text  string         `json:"text" jsonschema:"required"`
	Usage map[string]any `json:"usage,omitempty" jsonschema:"description=the upstream's usage: type duration with seconds or type tokens with input_tokens and output_tokens"`
}

// audioRoutes registers OpenAI's audio API over the gateway's OpenAI-format providers:
// POST /v1/audio/transcriptions and /v1/audio/translations (a multipart form; the
// upstream's answer passed back as it came) and POST /v1/audio/speech (the audio streamed
// back as it arrives), with the gateway's keys, budgets, retries, usage log and metrics;
// errors in OpenAI's envelope.
func (s *Server) audioRoutes(g *completions.Gateway) {
	errs := map[int]string{
		400: "validation error naming the field (param), or a model without an audio API here",
		401: "key_model_access_denied (LiteLLM's): the key may not call the model",
		413: "the body is over the route's limit (a 25 MiB file)",
		429: "the key's budget is spent",
		502: "every model failed",
	}
	for _, tr := range []struct {
		path, summary string
		translate     bool
	}{
		{"/v1/audio/transcriptions", "OpenAI-compatible speech to text (multipart form; the upstream's answer is passed back in its response_format)", false},
		{"/v1/audio/translations", "OpenAI-compatible speech to English text (multipart form; the upstream's answer is passed back in its response_format)", true},
	} {
		op := completions.OperationTranscription
		if tr.translate {
			op = completions.OperationTranslation
		}
		s.handleGateway(Route{Method: "POST", Path: tr.path, Summary: tr.summary, Tags: []string{"Completions"},
			Request: transcriptionForm{}, RequestContentType: "multipart/form-data", MaxBodyBytes: maxAudioFormBytes,
			Response: transcriptionAnswer{}, ResponseContentTypes: []string{"text/plain", "text/vtt", "application/x-subrip", "text/event-stream"}, ScopedKeys: true, Errors: errs},
			g, op, func(w http.ResponseWriter, r *http.Request) error {
				received := time.Now()
				req, err := readTranscriptionForm(r)
				if err != nil {
					return s.openAIError(w, r, err)
				}
				req.Translate = tr.translate
				if req.Tags, err = headerTags(r, nil); err != nil {
					return s.openAIError(w, r, err)
				}
				scope, err := s.gatewayScope(r, received) // the end user of LiteLLM's headers
				if err != nil {
					return s.openAIError(w, r, err)
				}
				if req.Stream {
					ts, err := g.TranscribeStream(r.Context(), scope, req)
					if err != nil {
						return s.openAIError(w, r, err)
					}
					w.Header().Set("X-Switchyard-Model", ts.Model)
					if err := completions.WriteTranscriptionStream(w, ts); err != nil {
						s.logStreamEnd(r, "transcriptions", err)
					}
					return nil
				}
				res, err := g.Transcribe(r.Context(), scope, req)
				if err != nil {
					return s.openAIError(w, r, err)
				}
				ctype := res.ContentType
				if ctype == "" {
					ctype = "application/json"
				}
				w.Header().Set("Content-Type", ctype)
				w.Header().Set("X-Switchyard-Model", res.Model)
				w.WriteHeader(http.StatusOK)
				w.Write(res.Body) // a client gone away gets nothing more
				return nil
			})
	}
	s.handleGateway(Route{Method: "POST", Path: "/v1/audio/speech", Summary: "OpenAI-compatible text to speech: the audio is streamed back as the model sends it, with its Content-Type",
		Tags: []string{"Completions"}, Request: completions.SpeechRequest{}, ScopedKeys: true, Errors: errs,
		ResponseContentTypes: []string{"audio/mpeg", "audio/opus", "audio/aac", "audio/flac", "audio/wav", "audio/pcm", "text/event-stream"}},
		g, completions.OperationSpeech, func(w http.ResponseWriter, r *http.Request) error {
			received := time.Now()
			var req completions.SpeechRequest
			if err := decodeJSON(r, &req, decodeOptions{AllowUnknownFields: true}); err != nil {
				return s.openAIError(w, r, err)
			}
			var err error
			if req.Tags, err = headerTags(r, req.Tags); err != nil {
				return s.openAIError(w, r, err)
			}
			scope, err := s.gatewayScope(r, received) // the end user of LiteLLM's headers
			if err != nil {
				return s.openAIError(w, r, err)
			}
			sp, err := g.Speak(r.Context(), scope, &req)
			if err != nil {
				return s.openAIError(w, r, err)
			}
			defer sp.Close()
			w.Header().Set("Content-Type", sp.ContentType)
			w.Header().Set("X-Switchyard-Model", sp.Model)
			w.WriteHeader(http.StatusOK)
			return copyFlushing(w, sp)
		})
}

// copyFlushing writes src to w as it is read, flushing each piece so that the client
// hears the audio as it comes. A failure of src after the status was sent can only cut
// the answer short: the connection is aborted (the gateway's observer records it).
func copyFlushing(w http.ResponseWriter, src io.Reader) error {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return nil // the client went away
			}
			if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
				return nil // the client went away
			}
			// A writer that cannot flush (a middleware's) still gets every byte, at its pace.
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				// Cut the connection so the client cannot take a truncated file for a whole
				// one (the status is sent; only the missing end of the chunked body tells).
				panic(http.ErrAbortHandler)
			}
			return nil
		}
	}
}

// readTranscriptionForm reads a transcription request's multipart form as it arrives: the
// file (at most completions.MaxAudioFileBytes) and OpenAI's text fields; others are read
// and ignored. Failures name the field (OpenAI's param).
func readTranscriptionForm(r *http.Request) (*completions.TranscriptionRequest, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		ae := Errorf(http.StatusBadRequest, KindBadRequest, "the body must be a multipart/form-data form with the fields file and model (got Content-Type %q)", r.Header.Get("Content-Type"))
		ae.Param = "file"
		return nil, ae
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, formError("", err)
	}
	req := &completions.TranscriptionRequest{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, formError("", err)
		}
		// Field names are matched without regard to case (Model is model); a name given
		// as RFC 2231/5987 name* is read decoded (FormName).
		name := strings.ToLower(part.FormName())
		if name == "file" {
			b, err := io.ReadAll(io.LimitReader(part, completions.MaxAudioFileBytes+1))
			if err != nil {
				return nil, formError(name, err)
			}
			if len(b) > completions.MaxAudioFileBytes {
				ae := Errorf(http.StatusRequestEntityTooLarge, KindTooLarge, "file: the audio file is over the limit of %d bytes (25 MiB, OpenAI's)", completions.MaxAudioFileBytes)
				ae.Param = "file"
				return nil, ae
			}
			req.File, req.Filename, req.FileType = b, part.FileName(), part.Header.Get("Content-Type")
			continue
		}
		b, err := io.ReadAll(io.LimitReader(part, maxAudioFormField+1))
		if err != nil {
			return nil, formError(name, err)
		}
		if len(b) > maxAudioFormField {
			ae := Validation(http.StatusBadRequest, "%s: at most %d bytes", name, maxAudioFormField)
			ae.Param = name
			return nil, ae
		}
		v := string(b)
		switch name {
		case "model":
			req.Model = v
		case "language":
			req.Language = v
		case "prompt":
			req.Prompt = v
		case "response_format":
			req.ResponseFormat = v
		case "temperature":
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				ae := Validation(http.StatusBadRequest, "field \"temperature\" must be a number, got %q", v)
				ae.Param = name
				return nil, ae
			}
			req.Temperature = &f
		case "timestamp_granularities[]", "timestamp_granularities":
			req.TimestampGranularities = append(req.TimestampGranularities, v)
		case "stream":
			on, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				ae := Validation(http.StatusBadRequest, "field \"stream\" must be true or false, got %q", v)
				ae.Param = name
				return nil, ae
			}
			req.Stream = on
		default:
			// OpenAI's newer options (logprobs, server-side chunking) pass as they came.
			if name == "include[]" || name == "chunking_strategy" || strings.HasPrefix(name, "chunking_strategy[") {
				req.Extra = append(req.Extra, [2]string{name, v})
			}
		}
	}
	// Read the body to its end (the closing boundary may leave an epilogue or the end of a
	// chunked body): until it is, the server does not watch the connection, and a client
	// that hung up would not cancel the upstream call.
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		return nil, formError("", err)
	}
	if model, ok := deploymentModel(r); ok {
		req.Model = model // an Azure deployment route: the path's model is the request's
	}
	return req, nil
}

// formError is the failure of reading the form (in field, when known): over the body
// limit 413, too slow 408, else malformed 400.
func formError(field string, err error) error {
	return formErrorOf(field, "a 25 MiB audio file and its fields", err)
}

// formErrorOf is formError of a form whose limit is what (said in a 413).
func formErrorOf(field, what string, err error) error {
	if ae := (*APIError)(nil); errors.As(err, &ae) {
		return ae // the server's own refusal of the form (a key alias's rewriting: aliasedForm)
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		ae := Errorf(http.StatusRequestEntityTooLarge, KindTooLarge, "request body exceeds this route's limit of %d bytes (%s)", mbe.Limit, what)
		ae.Param = field
		return ae
	}
	if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
		return Errorf(http.StatusRequestTimeout, KindRequestTimeout, "the request body did not arrive in time (the server's --body-read-timeout)")
	}
	where := "the multipart form"
	if field != "" {
		where = fmt.Sprintf("the form field %q", field)
	}
	ae := Errorf(http.StatusBadRequest, KindBadRequest, "reading %s: %v", where, err)
	ae.Param = field
	return ae
}
