package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/switchyard-ai/switchyard/completions"
)

// OpenAI's beta Realtime API minted a transcription session's ephemeral key with POST
// /v1/realtime/transcription_sessions (its SDKs' beta.realtime.transcriptionSessions); the
// GA API mints it with POST /v1/realtime/client_secrets and a session of type
// transcription. Either way the gateway mints its own client secret (see
// realtimesecrets.go), bound to the transcription model, which opens transcription
// sessions (GET /v1/realtime?intent=transcription) only.

// RealtimeTranscriptionSessionRequest is OpenAI's beta POST
// /v1/realtime/transcription_sessions body: the configuration of the transcription
// sessions the secret opens (a transcription_session.update's session) and the secret's life.
type RealtimeTranscriptionSessionRequest struct {
	// ClientSecret sets the secret's life.
	ClientSecret *RealtimeTranscriptionSecretOptions `json:"client_secret,omitempty"`
	// InputAudioTranscription names the transcription model.
	InputAudioTranscription json.RawMessage `json:"input_audio_transcription,omitempty" jsonschema:"type=object,description=The transcription configuration: model (gpt-4o-transcribe or gpt-4o-mini-transcribe or whisper-1 or a model group of them; gpt-realtime-whisper when absent) with language and prompt"`
	// InputAudioFormat is the input audio's format.
	InputAudioFormat string `json:"input_audio_format,omitempty" jsonschema:"description=pcm16 or g711_ulaw or g711_alaw"`
	// InputAudioNoiseReduction configures the input's noise reduction.
	InputAudioNoiseReduction json.RawMessage `json:"input_audio_noise_reduction,omitempty" jsonschema:"type=object"`
	// TurnDetection configures turn detection.
	TurnDetection json.RawMessage `json:"turn_detection,omitempty" jsonschema:"type=object"`
	// Include lists extra fields of the events (item.input_audio_transcription.logprobs).
	Include []string `json:"include,omitempty"`
	// Modalities are the session's modalities.
	Modalities []string `json:"modalities,omitempty"`
}

// RealtimeTranscriptionSecretOptions is the beta request's client_secret.
type RealtimeTranscriptionSecretOptions struct {
	// ExpiresAt sets the secret's life from its creation.
	ExpiresAt *RealtimeSecretExpiry `json:"expires_at,omitempty" jsonschema:"description=When the secret expires: anchor created_at and seconds (10-7200; 600 when absent)"`
}

// RealtimeTranscriptionSession is the answer of POST /v1/realtime/transcription_sessions:
// the configuration bound to the secret with the secret itself.
type RealtimeTranscriptionSession struct {
	// ClientSecret is the secret (ek_…) and when it expires (Unix seconds).
	ClientSecret struct {
		Value     string `json:"value"`
		ExpiresAt int64  `json:"expires_at"`
	} `json:"client_secret"`
	InputAudioTranscription json.RawMessage `json:"input_audio_transcription,omitempty" jsonschema:"type=object"`
	InputAudioFormat        string          `json:"input_audio_format,omitempty"`
	TurnDetection           json.RawMessage `json:"turn_detection,omitempty" jsonschema:"type=object"`
	Modalities              []string        `json:"modalities,omitempty"`
}

// realtimeTranscriptionRoutes registers POST /v1/realtime/transcription_sessions over g.
func (s *Server) realtimeTranscriptionRoutes(g *completions.Gateway) {
	s.Handle(Route{Method: "POST", Path: "/v1/realtime/transcription_sessions",
		Summary: "OpenAI-compatible (beta) ephemeral client secret for realtime transcription sessions: a browser offers it (ek_…) in place of a key to open /v1/realtime?intent=transcription sessions of its transcription model with the beta protocol — and nothing else — until it expires; each session is admitted and billed as the minting key's own and starts with the bound configuration",
		Tags:    []string{"Completions"}, VirtualKeys: true,
		Request: RealtimeTranscriptionSessionRequest{}, Response: RealtimeTranscriptionSession{},
		Errors: map[int]string{400: "a field is wrong (named), or the model has no realtime transcription here", 401: "key_model_access_denied (LiteLLM's): the key may not call the model"}},
		func(w http.ResponseWriter, r *http.Request) error {
			return s.handleRealtimeTranscriptionSession(g, w, r)
		})
}

// handleRealtimeTranscriptionSession mints a client secret of beta transcription sessions
// for the caller's key.
func (s *Server) handleRealtimeTranscriptionSession(g *completions.Gateway, w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Store == nil {
		return s.openAIError(w, r, Errorf(http.StatusServiceUnavailable, KindUnavailable, "client secrets need the server's store"))
	}
	var req RealtimeTranscriptionSessionRequest
	if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest, AllowUnknownFields: true}); err != nil {
		return s.openAIError(w, r, err)
	}
	var expiry RealtimeClientSecretRequest
	if req.ClientSecret != nil {
		expiry.ExpiresAfter = req.ClientSecret.ExpiresAt
	}
	ttl, err := expiry.ttl()
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) {
			ae.Param = strings.Replace(ae.Param, "expires_after", "client_secret.expires_at", 1)
			ae.Message = strings.ReplaceAll(ae.Message, "expires_after", "client_secret.expires_at")
		}
		return s.openAIError(w, r, err)
	}
	model := completions.DefaultRealtimeTranscriptionModel
	if len(req.InputAudioTranscription) > 0 && string(req.InputAudioTranscription) != "null" {
		var tr struct {
			Model *string `json:"model"`
		}
		if json.Unmarshal(req.InputAudioTranscription, &tr) != nil {
			return s.openAIError(w, r, paramError("input_audio_transcription", "input_audio_transcription must be an object"))
		}
		if tr.Model != nil {
			if strings.TrimSpace(*tr.Model) == "" {
				return s.openAIError(w, r, paramError("input_audio_transcription.model", "input_audio_transcription.model must name the transcription model (gpt-4o-transcribe, whisper-1, …)"))
			}
			model = *tr.Model
		}
	}
	config := req
	config.ClientSecret = nil
	session, err := json.Marshal(config)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	rec := realtimeSecretRecord{Model: model, Type: sessionTypeTranscription, Beta: true, Session: session}
	if err := s.checkSecretModel(g, r, &rec, "input_audio_transcription.model"); err != nil {
		return s.openAIError(w, r, err)
	}
	secret, err := s.mintRealtimeSecret(r, &rec, ttl)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	fields := map[string]any{}
	json.Unmarshal(session, &fields)
	setPath(fields, []string{"input_audio_transcription", "model"}, model)
	fields["client_secret"] = map[string]any{"value": secret, "expires_at": rec.ExpiresAt.Unix()}
	writeJSON(w, http.StatusOK, fields)
	return nil
}
