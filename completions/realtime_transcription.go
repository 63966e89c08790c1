package completions

import (
	"context"

	"github.com/switchyard-ai/switchyard/providers"
)

// DefaultRealtimeTranscriptionModel is the transcription model of a realtime transcription
// session that names none (LiteLLM's default for ?intent=transcription).
const DefaultRealtimeTranscriptionModel = "gpt-realtime-whisper"

// servesRealtimeTranscription reports whether p opens realtime transcription sessions.
func servesRealtimeTranscription(p providers.Provider) bool {
	_, ok := p.(providers.RealtimeTranscriptionDialer)
	return ok && hasAudio(p, false)
}

// realtimeTranscriptionTargets resolves a transcription session's model, a transcription
// model (audio models' names): a model group's members in order, else the model itself.
func (g *Gateway) realtimeTranscriptionTargets(name string) ([]target, error) {
	return g.groupTargets(name, g.audioModel, servesRealtimeTranscription, func(field, provider, m string) error {
		return invalid(field, "model %q has no realtime transcription here (provider %q does not open Realtime API transcription sessions)", m, provider)
	})
}

// ResolveRealtimeTranscriptionModel returns the "provider/model" a realtime transcription
// session's model name stands for, and whether it stands for one model a configured
// provider opens transcription sessions with.
func (g *Gateway) ResolveRealtimeTranscriptionModel(name string) (string, bool) {
	ts, err := g.realtimeTranscriptionTargets(name)
	if err != nil || len(ts) != 1 || !providers.IsConfigured(ts[0].p) {
		return name, false
	}
	return ts[0].name, true
}

// BeginRealtimeTranscription admits a transcription-only realtime session (OpenAI's
// ?intent=transcription) of scope with model, a transcription model ("gpt-4o-transcribe",
// "openai/whisper-1", an Azure OpenAI deployment, or a model group whose members are; ""
// is DefaultRealtimeTranscriptionModel), as BeginRealtime admits a realtime session: the
// key's models are checked against the transcription model, which Dial opens the session
// for and which the session's transcriptions are billed at (RealtimeSession.BillTranscription).
// Errors as BeginRealtime's.
func (g *Gateway) BeginRealtimeTranscription(ctx context.Context, scope Scope, model string, tags ...string) (*RealtimeSession, error) {
	if g.breakers == nil {
		return nil, ErrZeroGateway
	}
	if model == "" {
		model = DefaultRealtimeTranscriptionModel
	}
	targets, err := g.realtimeTranscriptionTargets(model)
	if err != nil {
		return nil, err
	}
	g.audioIndex()
	cat, _ := g.prices().(interface {
		LookupAudio(string) (providers.AudioPrice, bool)
	})
	for _, t := range targets {
		// A provider whose audio models the catalogue lists opens sessions of those only
		// (gpt-realtime is no transcription model); an Azure deployment's or an
		// uncatalogued endpoint's names are their operator's.
		if _, azure := t.p.(*providers.Azure); azure || cat == nil || !g.audioCatalogued[t.provider] {
			continue
		}
		if ap, ok := cat.LookupAudio(priceNameOf(g.prices(), t)); !ok || ap.Mode != providers.AudioTranscription {
			return nil, invalid("model", "model %q has no realtime transcription here (the catalogue prices no transcription model of that name)", t.name)
		}
	}
	s, err := g.beginRealtime(ctx, scope, model, tags, targets)
	if err != nil {
		return nil, err
	}
	s.transcription = true
	return s, nil
}

// CheckRealtimeTranscription reports whether a transcription session of scope with model
// would be admitted as to its model, as BeginRealtimeTranscription admits it, without
// counting a request or reading any spend, and whether each model it stands for is a
// priced transcription model (or an Azure OpenAI deployment): for handing out a client
// secret of a transcription session.
func (g *Gateway) CheckRealtimeTranscription(scope Scope, model string) error {
	if g.breakers == nil {
		return ErrZeroGateway
	}
	if model == "" {
		model = DefaultRealtimeTranscriptionModel
	}
	targets, err := g.realtimeTranscriptionTargets(model)
	if err != nil {
		return err
	}
	cat, _ := g.prices().(interface {
		LookupAudio(string) (providers.AudioPrice, bool)
	})
	for _, t := range targets {
		if _, azure := t.p.(*providers.Azure); azure {
			continue // its deployments' names are its operator's
		}
		if cat == nil {
			return invalid("model", "model %q: the price catalogue has no audio prices", t.name)
		}
		if ap, ok := cat.LookupAudio(priceNameOf(g.prices(), t)); !ok || ap.Mode != providers.AudioTranscription {
			return invalid("model", "model %q has no realtime transcription here (the catalogue prices no transcription model of that name)", t.name)
		}
	}
	_, err = g.opPlan(scope, model, nil, targets)
	return err
}

// Transcription returns the provider's name of a transcription session's model (the
// member dialled: "gpt-4o-transcribe", an Azure deployment), and whether the session is one.
func (s *RealtimeSession) Transcription() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.t.model, s.transcription
}

// TranscriptionModel checks name, a transcription model a client's session update asks a
// transcription session to switch to, and returns the provider's name of it to send on:
// the session's own model (by its name, its provider's, or the model group it was opened
// with), or one model of the provider the session is open at which the scope's key may call. Errors: *ValidationError naming the model, ErrModelNotAllowed.
func (s *RealtimeSession) TranscriptionModel(name string) (string, error) {
	t := s.target()
	if name == t.model || name == t.name || name == s.p.asked {
		return t.model, nil // the session's own model, by any of its names (its group's)
	}
	targets, err := s.g.realtimeTranscriptionTargets(name)
	if err != nil {
		return "", err
	}
	if len(targets) != 1 || targets[0].provider != t.provider {
		return "", invalid("model", "this session is open at provider %q: model %q is not one of its transcription models (open another session for it)", t.provider, name)
	}
	if _, err := s.g.opPlan(s.p.scope, name, nil, targets); err != nil {
		return "", err
	}
	return targets[0].model, nil
}
