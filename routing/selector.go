package routing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// Options configure a Selector. The zero value is usable: NewSelector(Options{}) ranks with
// the learned default router and keeps sessions in memory.
type Options struct {
	// Store keeps the sessions (collection store.Sessions); nil keeps them in memory, for
	// this process's lifetime (ExpireSessions still applies).
	Store *store.Store
	// CustomModels runs trained routers for preference_id; nil answers every preference_id
	// with not found.
	CustomModels CustomModels
	// Catalog supplies prices and tool support for candidates that do not declare them; nil
	// means the embedded price catalogue (ProvidersCatalog(providers.DefaultCatalog())), so
	// that tradeoff: cost works for models the catalogue lists without any wiring.
	Catalog Catalog
	// Scorer ranks without a preference_id and ranks the candidates a custom router does not
	// know; nil means the learned default router embedded in the binary ([DefaultRouter]),
	// which falls back to DefaultScorer's priors for models it has not measured.
	Scorer Router
	// Tolerance is the cost/latency tradeoff's quality tolerance: a candidate is eligible
	// when its estimated quality is at least the best estimate minus Tolerance. A request's
	// tradeoff_tolerance overrides it. 0 (unset) means the router's measured default (a
	// trained router's, or the learned default router's), else DefaultTolerance (0.05);
	// when set, it overrides the routers' defaults. A negative value means no tolerance
	// (only ties with the best are eligible).
	Tolerance float64
	// LastTurnWeight is the weight of the last user turn (see Conversation); 0 means 0.7.
	LastTurnWeight float64
	// Latency gives a model's ("provider/model") measured latency — any unit, lower is
	// faster; the completions gateway's seconds per output token (Gateway.Latency) — for a
	// latency tradeoff whose candidates declare none, so that tradeoff: latency picks the
	// fastest of the eligible models this server has seen answer. nil, or a model it has
	// not measured: no latency (the quality order decides).
	Latency func(model string) (float64, bool)
	// SessionRetention is how long sessions are kept: ExpireSessions deletes older ones.
	// 0 means DefaultSessionRetention; a negative value keeps them forever.
	SessionRetention time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives one debug line per selection (never message content); nil means
	// slog.Default().
	Logger *slog.Logger
}

// Selector answers model selection requests and keeps their sessions. Make one with
// NewSelector; a zero Selector answers every call with an error.
type Selector struct {
	store  *store.Store
	custom CustomModels
	cat    Catalog
	scorer Router
	tol    float64
	tolSet bool // Options.Tolerance was given: it overrides the routers' learned ones
	keep   time.Duration
	w      float64
	now    func() time.Time
	log    *slog.Logger
	// latency: Options.Latency.
	latency func(model string) (float64, bool)
}

// NewSelector returns a Selector configured by opts.
func NewSelector(opts Options) *Selector {
	if opts.Catalog == nil {
		opts.Catalog = ProvidersCatalog(providers.DefaultCatalog())
	}
	if opts.Store == nil {
		opts.Store = memstore.New()
	}
	s := &Selector{store: opts.Store, custom: opts.CustomModels, cat: opts.Catalog,
		scorer: opts.Scorer, tol: opts.Tolerance, w: opts.LastTurnWeight, now: opts.Now, log: opts.Logger, latency: opts.Latency}
	if s.scorer == nil {
		if l, err := DefaultRouter(); err == nil {
			s.scorer = l
		} else {
			// The embedded router is part of the binary; failing to decode it is a build
			// defect, but selection still works on the priors.
			slog.Default().Error("routing: learned default router unavailable, using the prior scorer", "err", err)
			s.scorer = DefaultScorer{}
		}
	}
	s.tolSet = s.tol != 0
	s.keep = opts.SessionRetention
	if s.keep == 0 {
		s.keep = DefaultSessionRetention
	}
	switch {
	case s.tol == 0:
		s.tol = DefaultTolerance
	case s.tol < 0:
		s.tol = 0
	}
	if s.w <= 0 || s.w > 1 {
		s.w = DefaultLastTurnWeight
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

// Response is the answer to a model selection request.
type Response struct {
	// LLMLabel is the chosen candidate in the caller's shape: the name as given, or
	// "provider/model".
	LLMLabel string `json:"llm_label" jsonschema:"required"`
	// Providers is the ranked list, best first, cut at max_model_depth.
	Providers []RankedProvider `json:"providers" jsonschema:"required"`
	// SessionID identifies the stored session; pass it as previous_session to link calls.
	SessionID string `json:"session_id" jsonschema:"required"`
	// RouterFallback, under a pref_ preference, says why the router it follows did not
	// rank: FallbackRouterDeleted or FallbackTrainingJobDeleted; absent when it did, or
	// when the preference has no router yet.
	RouterFallback string `json:"router_fallback,omitempty" jsonschema:"enum=router_deleted,enum=training_job_deleted,description=Why the pref_ preference's own router did not rank: router_deleted (its trained router model was deleted so the learned default router ranked: score_source learned) or training_job_deleted (its training job was deleted before training a router so its earlier router ranked or else the learned default router); absent when its router ranked or it has none yet"`
	// TradeoffFallback (extension) says the request's tradeoff could not reorder the
	// ranking: TradeoffNoLatencyData or TradeoffNoPriceData, when no candidate had the
	// figure it compares, so the router's quality order stands. Absent when the tradeoff
	// had figures to compare (or without a tradeoff).
	TradeoffFallback string `json:"tradeoff_fallback,omitempty" jsonschema:"enum=no_latency_data,enum=no_price_data,description=Why the tradeoff left the quality order as it was: no_latency_data (tradeoff latency but no candidate had a latency: none in the request nor reported for the preference nor measured by this server) or no_price_data (tradeoff cost but no candidate had a price: none in the request nor in the price catalogue); absent when the tradeoff had figures to compare"`
}

// RankedProvider is one entry of the ranked list, in the caller's shape.
type RankedProvider struct {
	// Name is set for candidates given as {"name": ...}.
	Name string `json:"name,omitempty"`
	// Provider and Model are set for candidates given as {"provider","model"} or strings.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// Rank is the position, 1 = best.
	Rank int `json:"rank"`
	// Score is as in [Scored]: what the candidate was ranked by.
	Score float64 `json:"score"`
	// Quality is the estimated probability, 0-1, of a good answer; the tradeoff compares it.
	Quality float64 `json:"quality"`
	// ScoreSource says where the score came from: learned (the default router embedded in
	// the binary), learned_relative (its estimate for the nearest measured relative named
	// in estimated_from), router (a trained router via preference_id), or a prior for
	// models no router knows: attribute, benchmark, benchmark_relative (the published
	// figure of its newest older sibling, named in estimated_from) or unknown; default
	// (the request's default, answered unranked because the selection could not finish)
	// or default_replaced (the same, but the default could not take the request, so the
	// remaining candidate with the best prior answered); under a
	// pref_ preference whose feedback corrected the estimate, that source followed by
	// "+feedback" ("learned+feedback").
	ScoreSource string `json:"score_source"`
	// EstimatedFrom names the model a learned_relative or benchmark_relative estimate
	// comes from.
	EstimatedFrom string `json:"estimated_from,omitempty"`
}

// Rank validates req and returns the ranked candidates after the tools filter and the
// tradeoff, without storing a session.
func (s *Selector) Rank(ctx context.Context, owner string, req *Request) ([]Scored, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return s.rank(ctx, owner, req)
}

// personalization is what a selection under a pref_ preference keeps for learning.
type personalization struct {
	pref  *Preference
	base  map[string]float64 // lower-cased candidate name → base quality estimate
	tasks []TaskWeight
	// fallback says why the preference's router did not rank (Response.RouterFallback).
	fallback string
}

func (s *Selector) rank(ctx context.Context, owner string, req *Request) ([]Scored, error) {
	ranked, _, err := s.rankPersonal(ctx, owner, req, nil)
	return ranked, err
}

// sessionTasks is how many of the task head's tasks a session keeps.
const sessionTasks = 3

// rankPersonal ranks req's servable candidates for owner, under its pref_ preference when
// it names one (pref, when not nil, is that preference already read).
func (s *Selector) rankPersonal(ctx context.Context, owner string, req *Request, pref *Preference) ([]Scored, *personalization, error) {
	if s.scorer == nil {
		return nil, nil, ErrZeroSelector
	}
	cands, err := s.servable(req)
	if err != nil {
		return nil, nil, err
	}
	conv := NewConversation(req.Messages, len(req.Tools), s.w)
	var r Router = s.scorer
	var pers *personalization
	routerID := req.PreferenceID
	if strings.HasPrefix(req.PreferenceID, PreferencePrefix) {
		if pref == nil {
			var err error
			if pref, err = loadUsablePreference(ctx, s.store, owner, req.PreferenceID); err != nil {
				return nil, nil, err
			}
		}
		pers = &personalization{pref: pref}
		if routerID, pers.fallback, err = s.preferenceRouterWhy(ctx, owner, pref); err != nil {
			return nil, nil, err
		}
		if pers.fallback == FallbackTrainingJobDeleted {
			s.log.WarnContext(ctx, "routing: the preference's training job is gone; ranking with its earlier router, else the learned default router",
				"preference_id", pref.ID, "training_job_id", pref.RouterTrainingJobID, "earlier_router_model_id", pref.PreviousRouterModelID)
		}
	}
	if routerID != "" {
		r = &CustomRouter{Models: s.custom, Owner: routerOwner(owner), ModelID: routerID, Fallback: s.scorer, LastTurnWeight: s.w}
	}
	rank := func(r Router) (ranked []Scored, err error) {
		if l, ok := r.(*LearnedRouter); ok && pers != nil {
			ranked, pers.tasks, err = l.RankTasks(ctx, conv, cands, sessionTasks)
			return ranked, err
		}
		return r.Rank(ctx, conv, cands)
	}
	ranked, err := rank(r)
	if err != nil && pers != nil && routerID != "" && errors.Is(err, ErrNotFound) && ctx.Err() == nil {
		// The preference's trained router model was deleted: the preference ranks with the
		// learned default router (score_source learned) and the response says why
		// (router_fallback router_deleted).
		s.log.WarnContext(ctx, "routing: the preference's router model is gone; ranking with the learned default router",
			"preference_id", req.PreferenceID, "router_model_id", routerID, "error", err)
		r = s.scorer
		pers.fallback = FallbackRouterDeleted
		ranked, err = rank(r)
	}
	if err == nil {
		err = ctx.Err() // a router that ignored the deadline does not win past it
	}
	if err != nil {
		return nil, nil, err
	}
	if len(ranked) != len(cands) {
		return nil, nil, fmt.Errorf("routing: router ranked %d of %d candidates", len(ranked), len(cands))
	}
	if pers != nil {
		pers.base = personalize(ranked, pers.pref.Models)
	}
	tol := s.tol
	if !s.tolSet {
		if lt, ok := r.(interface{ LearnedTolerance() float64 }); ok && lt.LearnedTolerance() > 0 {
			tol = lt.LearnedTolerance()
		}
	}
	if req.TradeoffTolerance != nil {
		tol = *req.TradeoffTolerance
	}
	if req.Tradeoff == "latency" && !slices.ContainsFunc(ranked, func(x Scored) bool { return x.Candidate.Latency != nil }) {
		// Figures of one kind only, seconds per output token, when the request gives none:
		// the preference's reported ones, else the gateway's measured ones.
		reported := map[modelKey]float64{}
		if pers != nil {
			for _, m := range pers.pref.Models {
				if spt, ok := m.SecondsPerToken(); ok {
					reported[m.key()] = spt
				}
			}
		}
		for i := range ranked {
			c := &ranked[i].Candidate
			if l, ok := reported[candidateKey(*c)]; ok {
				c.Latency = &l
			} else if s.latency != nil {
				if l, ok := s.latency(c.Provider + "/" + c.Model); ok {
					c.Latency = &l
				}
			}
		}
	}
	return applyTradeoff(ranked, req.Tradeoff, tol, s.cat), pers, nil
}

// rankWithin ranks within the request's timeout. When the ranking fails for any reason but
// the request's own (invalid, not found) or the caller going away, the request's default
// answers alone (score_source "default"); without one a timeout is ErrTimeout. A default
// the tools or context_length filters removed cannot take the request: the best remaining
// candidate by the prior ([DefaultScorer]) answers alone instead (score_source
// "default_replaced"). With a timeout, the preference_id (a pref_ preference, or a router
// model when the custom models are a ModelChecker) is looked up before it starts: an
// unknown one is the request's own error (not found) however short the timeout.
func (s *Selector) rankWithin(ctx context.Context, owner string, req *Request) ([]Scored, *personalization, error) {
	var pref *Preference
	if req.Timeout != nil && req.PreferenceID != "" {
		// Only a bounded ranking needs the early look; a store failure is left to the
		// ranking, where a default still answers it.
		var err error
		if pref, err = s.checkPreferenceID(ctx, owner, req.PreferenceID); errors.Is(err, ErrNotFound) {
			return nil, nil, err
		}
	}
	rctx := ctx
	if req.Timeout != nil {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, time.Duration(*req.Timeout*float64(time.Second)))
		defer cancel()
	}
	ranked, pers, err := s.rankPersonal(rctx, owner, req, pref)
	if err == nil || errors.Is(err, ErrInvalid) || errors.Is(err, ErrNotFound) || ctx.Err() != nil {
		return ranked, pers, err
	}
	if req.Default != nil {
		return s.answerDefault(ctx, req, err)
	}
	if rctx.Err() != nil {
		return nil, nil, fmt.Errorf("%w (%gs): %w", ErrTimeout, *req.Timeout, err)
	}
	return nil, nil, err
}

// checkPreferenceID looks id up without ranking: a pref_ preference in the store (which
// it returns, for the ranking to use), a router model through the custom models when they
// can tell (ModelChecker). An unknown one is a *NotFoundError naming preference_id.
func (s *Selector) checkPreferenceID(ctx context.Context, owner, id string) (*Preference, error) {
	if strings.HasPrefix(id, PreferencePrefix) {
		return loadUsablePreference(ctx, s.store, owner, id)
	}
	if s.custom == nil {
		return nil, &NotFoundError{Field: "preference_id", ID: id, Err: errors.New("no custom router models are configured")}
	}
	mc, ok := s.custom.(ModelChecker)
	if !ok {
		return nil, nil
	}
	if err := mc.CheckModel(ctx, routerOwner(owner), id); errors.Is(err, ErrNotFound) {
		return nil, &NotFoundError{Field: "preference_id", ID: id, Err: err}
	} else if err != nil {
		return nil, err
	}
	return nil, nil
}

// answerDefault answers a selection that could not finish (cause) with the request's
// default, or, when the filters removed the default, with the best remaining candidate by
// the prior: the fallback never names a candidate that cannot take the request.
func (s *Selector) answerDefault(ctx context.Context, req *Request, cause error) ([]Scored, *personalization, error) {
	all, _ := req.Candidates()
	def := all[req.Default.resolved]
	fit, err := s.servable(req)
	if err != nil {
		return nil, nil, err
	}
	if slices.ContainsFunc(fit, func(c Candidate) bool { return strings.EqualFold(c.Name, def.Name) }) {
		s.log.WarnContext(ctx, "model selection answered with the request's default", "error", cause)
		return []Scored{{Candidate: def, Source: SourceDefault}}, nil, nil
	}
	// the prior needs no router and no conversation features: it cannot fail or wait
	ranked, err := DefaultScorer{}.Rank(ctx, nil, fit)
	if err != nil || len(ranked) == 0 {
		return nil, nil, fmt.Errorf("routing: rank by the prior after %w: %v", cause, err)
	}
	best := ranked[0]
	s.log.WarnContext(ctx, "model selection could not finish and its default cannot take the request; answered the best remaining candidate by the prior",
		"error", cause, "default", def.Name, "chosen", best.Candidate.Name)
	return []Scored{{Candidate: best.Candidate, Score: best.Score, Quality: best.Quality, Source: SourceDefaultReplaced}}, nil, nil
}

// Select validates req, ranks its candidates for owner, stores a session and returns the
// choice. Errors: *ValidationError (ErrInvalid) for bad requests, *NotFoundError
// (ErrNotFound) for an unknown preference_id or previous_session.
func (s *Selector) Select(ctx context.Context, owner string, req *Request) (*Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if s.store == nil {
		return nil, ErrZeroSelector
	}
	if req.PreviousSession != "" {
		if _, err := s.loadSession(ctx, owner, req.PreviousSession, "previous_session"); err != nil {
			return nil, err
		}
	}
	ranked, pers, err := s.rankWithin(ctx, owner, req)
	if err != nil {
		return nil, err
	}
	id, err := newSessionID()
	if err != nil {
		return nil, err
	}
	depth := len(ranked)
	if req.MaxModelDepth != nil && *req.MaxModelDepth < depth {
		depth = *req.MaxModelDepth
	}
	sess := Session{ID: id, Owner: owner, CreatedAt: s.now().UTC(), Chosen: ranked[0].Candidate.Label(),
		Tradeoff: req.Tradeoff, PreferenceID: req.PreferenceID, PreviousSession: req.PreviousSession}
	// Only the list the caller sees is kept: a session is bounded by max_model_depth.
	for _, r := range ranked[:depth] {
		c := SessionCandidate{Label: r.Candidate.Label(), IsCustom: r.Candidate.IsCustom, Score: r.Score, Source: r.Source}
		if pers != nil {
			if b, ok := pers.base[strings.ToLower(r.Candidate.Name)]; ok {
				c.Base = &b
			}
		}
		sess.Ranked = append(sess.Ranked, c)
	}
	if pers != nil {
		sess.Tasks = pers.tasks
	}
	if req.HashContent {
		sess.MessageHashes = hashMessages(req.Messages)
	}
	if err := s.store.Update(ctx, func(tx store.Tx) error { return putSession(ctx, tx, &sess, time.Time{}) }); err != nil {
		return nil, fmt.Errorf("routing: store session: %w", err)
	}
	resp := &Response{LLMLabel: sess.Chosen, SessionID: id, Providers: make([]RankedProvider, depth)}
	if pers != nil {
		resp.RouterFallback = pers.fallback
	}
	if resp.TradeoffFallback = tradeoffFallback(ranked, req.Tradeoff, s.cat); resp.TradeoffFallback != "" {
		s.log.DebugContext(ctx, "the tradeoff had no figures to compare; the quality order stands",
			"tradeoff", req.Tradeoff, "tradeoff_fallback", resp.TradeoffFallback)
	}
	for i, r := range ranked[:depth] {
		p := RankedProvider{Rank: i + 1, Score: r.Score, Quality: r.Quality, ScoreSource: r.Source, EstimatedFrom: r.EstimatedFrom}
		if r.Candidate.Shape() == ShapeName {
			p.Name = r.Candidate.Name
		} else {
			p.Provider, p.Model = r.Candidate.Provider, r.Candidate.Model
		}
		resp.Providers[i] = p
	}
	s.log.DebugContext(ctx, "model selected", "session_id", id, "chosen", sess.Chosen,
		"candidates", len(ranked), "preference_id", req.PreferenceID, "tradeoff", req.Tradeoff)
	return resp, nil
}
