package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
)

// TranscriptionStreamer is implemented by providers that can stream a transcription as
// server-sent events (OpenAI's stream=true, which its gpt-4o transcription models honour:
// transcript.text.delta events, then transcript.text.done with the usage).
type TranscriptionStreamer interface {
	TranscribeStream(ctx context.Context, req *TranscriptionRequest) (*TranscriptionStream, error)
}

// TranscriptionStream is a streamed transcription's events as they arrive — or, when the
// upstream answered whole (a model that ignores stream, as OpenAI's whisper-1 does), Whole.
// The caller closes it.
type TranscriptionStream struct {
	// Whole is the answer of an upstream that did not stream it (its events are none).
	Whole *TranscriptionResponse

	c   *call
	sse *sseReader
}

// Next returns the data of the next event (the JSON of a transcript.text.delta,
// transcript.text.done, … event, valid until the next call), or io.EOF after the last. An
// error event, or a failure midway, is an *Error (KindStreamBroken, KindTimeout for a
// stall).
func (s *TranscriptionStream) Next() ([]byte, error) {
	if s.sse == nil {
		return nil, io.EOF
	}
	for {
		ev, err := s.sse.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			var pe *Error
			if errors.As(err, &pe) {
				return nil, pe
			}
			return nil, s.c.readFailure(err, true)
		}
		data := bytes.TrimSpace(ev.data)
		if ev.raw || ev.event == "error" || bytes.HasPrefix(data, []byte(`{"error"`)) || bytes.Contains(data, []byte(`"type":"error"`)) {
			return nil, &Error{Provider: s.c.ep.cfg.Name, Model: s.c.model, Kind: KindStreamBroken, StatusCode: s.c.resp.StatusCode,
				Message: "the transcription stream failed: " + s.c.ep.trim(streamErrorMessage(data))}
		}
		if len(data) == 0 || bytes.Equal(data, []byte("[DONE]")) {
			continue
		}
		return data, nil
	}
}

// streamErrorMessage is the message of an error event's data ({"error": {"message"}} or
// {"type": "error", "error": {…}} or {"message"}), else the data as it came.
func streamErrorMessage(data []byte) string {
	var e struct {
		Message string `json:"message"`
		Error   *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil {
		if e.Error != nil && e.Error.Message != "" {
			return e.Error.Message
		}
		if e.Message != "" {
			return e.Message
		}
	}
	return string(data)
}

// Close releases the upstream call; it is safe to call more than once.
func (s *TranscriptionStream) Close() error {
	if s.c != nil {
		return s.c.Close()
	}
	return nil
}

// TranscribeStream implements TranscriptionStreamer with POST {base}/audio/transcriptions
// and stream=true. An answer that is not text/event-stream is read whole into Whole.
func (o *OpenAI) TranscribeStream(ctx context.Context, req *TranscriptionRequest) (*TranscriptionStream, error) {
	if req.Translate {
		return nil, &Error{Provider: o.ep.cfg.Name, Model: req.Model, Kind: KindBadRequest, Message: "translations are not streamed"}
	}
	if err := o.ep.checkKey(req.Model); err != nil {
		return nil, err
	}
	r := *req
	r.Extra = append([][2]string{{"stream", "true"}}, req.Extra...)
	body, ctype, err := transcriptionForm(&r)
	if err != nil {
		return nil, &Error{Provider: o.ep.cfg.Name, Model: req.Model, Kind: KindBadRequest, Message: "encoding the audio form", Err: err}
	}
	h := http.Header{}
	h.Set("Content-Type", ctype)
	h.Set("Accept", "text/event-stream, application/json")
	if err := o.setAuth(ctx, req.Model, h); err != nil {
		return nil, err
	}
	c, err := o.ep.send(ctx, req.Model, o.url("/audio/transcriptions", req.Model), h, body, parseOpenAIError)
	if err != nil {
		return nil, err
	}
	answer := c.resp.Header.Get("Content-Type")
	if mt, _, _ := mime.ParseMediaType(answer); mt == "text/event-stream" {
		return &TranscriptionStream{c: c, sse: newSSEReader(&audioBody{c: c})}, nil
	}
	defer c.Close()
	raw, err := c.readAll(maxTranscriptionBody)
	if err != nil {
		return nil, err
	}
	return &TranscriptionStream{Whole: &TranscriptionResponse{Body: raw, ContentType: answer, Usage: transcriptionUsage(answer, raw)}}, nil
}

// TranscriptionEventUsage reads the usage a transcript.text.done event reports (zero for
// other events and for one without usage).
func TranscriptionEventUsage(data []byte) AudioUsage {
	if !bytes.Contains(data, []byte(`"usage"`)) {
		return AudioUsage{}
	}
	return transcriptionUsage("application/json", data)
}

var _ TranscriptionStreamer = (*OpenAI)(nil)
