package server

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// realtimeMeter reads the server events of a realtime session for what they bill: each
// response.done's usage, at the realtime model's rates, and each transcription of the
// input audio (conversation.item.input_audio_transcription.completed, sent when the
// session's input transcription is on), at its transcription model's rates — the model
// the session's latest session.created or session.updated event names (GA:
// session.audio.input.transcription.model; the beta protocol's
// session.input_audio_transcription.model, also in transcription_session.* events).
type realtimeMeter struct {
	sess *completions.RealtimeSession
	ctx  context.Context

	mu sync.Mutex
	// transcriber is the session's input transcription model ("" while off or unknown).
	transcriber string
	// session is a transcription session's own model (the provider's name of it), which a
	// transcription is billed at when no event named one; "" for a realtime session.
	session string
}

// newRealtimeMeter meters sess's events, billing with ctx (one that outlives the caller).
func newRealtimeMeter(sess *completions.RealtimeSession, ctx context.Context) *realtimeMeter {
	m := &realtimeMeter{sess: sess, ctx: ctx}
	if model, ok := sess.Transcription(); ok {
		m.session = model
	}
	return m
}

// observe bills what server event msg reports, if anything.
func (m *realtimeMeter) observe(msg []byte) {
	if u, ok := responseDoneUsage(msg); ok {
		m.sess.Bill(m.ctx, u)
		return
	}
	if bytes.Contains(msg, []byte(`session.`)) {
		if model, ok := sessionTranscriber(msg); ok {
			m.mu.Lock()
			m.transcriber = model
			m.mu.Unlock()
			return
		}
	}
	if !bytes.Contains(msg, []byte(`input_audio_transcription.completed`)) {
		return
	}
	u, tokens, ok := transcriptionUsage(msg)
	if !ok {
		return
	}
	m.mu.Lock()
	model := m.transcriber
	m.mu.Unlock()
	switch {
	case model != "":
	case m.session != "":
		model = m.session // a transcription session's, which it was bound to
	default:
		// An event of a session whose configuration event named no model: priced as the
		// model OpenAI reports such usage for (tokens: gpt-4o-transcribe; seconds: whisper-1).
		model = "whisper-1"
		if tokens {
			model = "gpt-4o-transcribe"
		}
	}
	m.sess.BillTranscription(m.ctx, model, u)
}

// realtimeTranscription is a session's input transcription configuration.
type realtimeTranscription struct {
	Model string `json:"model"`
}

// sessionTranscriber is the input transcription model a session.created, session.updated
// or transcription_session.created/updated event's session names ("" when it turns
// transcription off); false for any other event.
func sessionTranscriber(msg []byte) (string, bool) {
	var ev struct {
		Type    string `json:"type"`
		Session struct {
			Audio struct {
				Input struct {
					Transcription *realtimeTranscription `json:"transcription"`
				} `json:"input"`
			} `json:"audio"`
			InputAudioTranscription *realtimeTranscription `json:"input_audio_transcription"`
		} `json:"session"`
	}
	if json.Unmarshal(msg, &ev) != nil {
		return "", false
	}
	switch ev.Type {
	case "session.created", "session.updated", "transcription_session.created", "transcription_session.updated":
	default:
		return "", false
	}
	switch {
	case ev.Session.Audio.Input.Transcription != nil:
		return ev.Session.Audio.Input.Transcription.Model, true
	case ev.Session.InputAudioTranscription != nil:
		return ev.Session.InputAudioTranscription.Model, true
	}
	return "", true
}

// transcriptionUsage is the usage of a conversation.item.input_audio_transcription.completed
// event: tokens (gpt-4o-transcribe's usage of type tokens, tokens true) or seconds
// (whisper-1's usage of type duration); false for another event or one without usage.
func transcriptionUsage(msg []byte) (u providers.AudioUsage, tokens, ok bool) {
	var ev struct {
		Type  string `json:"type"`
		Usage *struct {
			Type              string  `json:"type"`
			InputTokens       int     `json:"input_tokens"`
			OutputTokens      int     `json:"output_tokens"`
			Seconds           float64 `json:"seconds"`
			InputTokenDetails struct {
				AudioTokens int `json:"audio_tokens"`
			} `json:"input_token_details"`
		} `json:"usage"`
	}
	if json.Unmarshal(msg, &ev) != nil || ev.Type != "conversation.item.input_audio_transcription.completed" || ev.Usage == nil {
		return providers.AudioUsage{}, false, false
	}
	if ev.Usage.Type == "duration" || (ev.Usage.Seconds > 0 && ev.Usage.InputTokens+ev.Usage.OutputTokens == 0) {
		return providers.AudioUsage{Seconds: ev.Usage.Seconds}, false, ev.Usage.Seconds > 0
	}
	u = providers.AudioUsage{InputTokens: ev.Usage.InputTokens, InputAudioTokens: ev.Usage.InputTokenDetails.AudioTokens, OutputTokens: ev.Usage.OutputTokens}
	return u, true, u.InputTokens+u.OutputTokens > 0
}
