package routing

import (
	"math"
	"slices"
	"strings"
)

// FeedbackPseudoCount is k, the strength in feedbacks of the prior each correction is
// shrunk towards (see ModelFeedback.Adjustment): with k = 10, ten feedbacks move a model's
// estimate half of the way from the router's belief to what was observed.
const FeedbackPseudoCount = 10

// FeedbackBiasAllowance is how far, in logits, a model's observed success rate may fall
// short of (or exceed) the router's estimates before the preference corrects it. Feedback
// is mostly given on the pick, and a model is picked where its estimate happens to be
// high: its outcomes there fall short of its estimates even when the router is calibrated
// (the winner's curse). Measured on held-out public data, well-measured models fell short
// by 0.03–0.26 logits (about 1–6 points) on the prompts they were picked for, and
// correcting that moved picks to models that were worse there (MMLU-Pro: −3.6 points);
// a model the router misjudges — one it has no figures for, or a belief carried over from
// other kinds of prompts — is off by 0.4 to 2.5. Only the part of a correction beyond the
// allowance applies (BENCHMARKS.md, "Personalized routing from feedback").
const FeedbackBiasAllowance = 0.2

// MaxPreferenceModels bounds how many models one preference keeps feedback counts for;
// feedback on a further model is refused (field provider).
const MaxPreferenceModels = 256

// SourceFeedbackSuffix is appended to a candidate's score_source when a preference's
// feedback corrected its estimate: "learned+feedback", "router+feedback",
// "unknown+feedback", ...
const SourceFeedbackSuffix = "+feedback"

// probability bounds keep the logits finite.
const minProb, maxProb = 1e-3, 1 - 1e-3

// ModelFeedback is what a preference has learned about one model from feedback: the
// counts behind its correction. Updating it is a sum, so the result does not depend on
// the order in which feedback arrives.
type ModelFeedback struct {
	// Model is the candidate name feedback was given on, lower-cased ("openai/gpt-4o").
	Model string `json:"model"`
	// IsCustom says the entry is about the caller's own model of that name (a candidate
	// with is_custom), counted apart from the public model of the same name. Entries
	// stored before it existed are the public model's.
	IsCustom bool `json:"is_custom,omitempty"`
	// Feedback (N) is how many feedbacks the model received.
	Feedback float64 `json:"feedback"`
	// Successes (Y) is how many of them were thumbs up (accuracy 1).
	Successes float64 `json:"successes"`
	// Expected (P) is the sum of the base router's estimates for the model on the
	// selections the feedback was about: the successes the router predicted.
	Expected float64 `json:"expected"`
	// Adjustment is the current correction, in logits, added to the base router's
	// estimate of the model (computed when the preference is read; not stored).
	Adjustment float64 `json:"adjustment"`
	// LatencyReports is how many speeds were reported for the model (ReportLatency), and
	// SecondsPerTokenSum the sum of their inverses; their mean is the model's latency for
	// tradeoff "latency" under the preference.
	LatencyReports     float64 `json:"latency_reports,omitempty"`
	SecondsPerTokenSum float64 `json:"seconds_per_token_sum,omitempty"`
}

// SecondsPerToken is the mean reported latency, seconds per output token; false without
// reports.
func (m ModelFeedback) SecondsPerToken() (float64, bool) {
	if m.LatencyReports <= 0 {
		return 0, false
	}
	return m.SecondsPerTokenSum / m.LatencyReports, true
}

// adjustment is the model-level correction, in logits, of a model's base estimate.
//
// The base router's estimates are treated as a prior belief and the feedback as Bernoulli
// outcomes. With p̄ = P/N the router's mean estimate over the rated selections, a Beta
// prior of strength k centred on p̄ gives the posterior mean success rate
// r = (Y + k·p̄)/(N + k), and the correction is the shift, in logit space, that moves the
// router's mean to it: logit(r) − logit(p̄) (= logit((Y+k·p̄)/(N+k)) −
// logit((P+k·p̄)/(N+k)), the rule's symmetric form). Comparing with the router's expected
// successes P rather than a fixed rate keeps what the router already knows per prompt:
// a model rated only on hard prompts, where the router expected failures, is not
// punished for failing them. Logit space keeps corrected estimates in (0, 1) and moves a
// confident estimate less than an uncertain one. The shift is then reduced by
// FeedbackBiasAllowance towards 0 (a shift within it is 0). Without feedback the shift
// is 0.
func adjustment(n, y, p float64) float64 {
	if n <= 0 {
		return 0
	}
	pbar := clampProb(p / n)
	r := clampProb((y + FeedbackPseudoCount*pbar) / (n + FeedbackPseudoCount))
	a := logit(r) - logit(pbar)
	return math.Copysign(max(0, math.Abs(a)-FeedbackBiasAllowance), a)
}

// modelKey identifies the model a preference's counts are about: its lower-cased
// "provider/model" name and whether it is the caller's own (is_custom), which never
// shares counts with the public model of the same name.
type modelKey struct {
	name   string
	custom bool
}

// candidateKey is the key of a ranked candidate.
func candidateKey(c Candidate) modelKey {
	return modelKey{name: strings.ToLower(c.Name), custom: c.IsCustom}
}

// key is the entry's modelKey.
func (m ModelFeedback) key() modelKey { return modelKey{name: m.Model, custom: m.IsCustom} }

// record adds one feedback (outcome y, 0 or 1, on a selection whose base estimate was b)
// to the preference's counts; delta is +1 to add, −1 to withdraw an earlier one.
func recordFeedback(models []ModelFeedback, key modelKey, y, b, delta float64) []ModelFeedback {
	models, i := modelEntry(models, key)
	m := &models[i]
	m.Feedback += delta
	m.Successes += delta * y
	m.Expected += delta * b
	if m.Feedback <= 0 && m.LatencyReports <= 0 {
		return slices.Delete(models, i, i+1)
	}
	return models
}

// modelEntry returns the index of key's entry, adding an empty one (sorted by model, the
// public entry before the custom one) when absent.
func modelEntry(models []ModelFeedback, key modelKey) ([]ModelFeedback, int) {
	is := func(m ModelFeedback) bool { return m.key() == key }
	if i := slices.IndexFunc(models, is); i >= 0 {
		return models, i
	}
	models = append(models, ModelFeedback{Model: key.name, IsCustom: key.custom})
	slices.SortFunc(models, func(a, b ModelFeedback) int {
		if c := strings.Compare(a.Model, b.Model); c != 0 {
			return c
		}
		switch {
		case a.IsCustom == b.IsCustom:
			return 0
		case b.IsCustom:
			return -1
		}
		return 1
	})
	return models, slices.IndexFunc(models, is)
}

// personalize corrects the base estimates of the ranked candidates by the preference's
// feedback (the entry of the candidate's modelKey: a custom model's are its own),
// re-sorts them, and returns the base estimate (Quality before correction) of every
// candidate by lower-cased name.
//
// A corrected candidate gets Quality = σ(logit(base) + adjustment). One its router ranked
// in the first tier keeps the router's scale: Score = σ(logit(score) + adjustment) (the
// learned routers rank by their estimates, so that is the corrected Quality; a trained
// router may rank by its softmax head, whose scores are not estimates). One ranked by a
// fallback gets Score = Quality and Tier 0: once users' outcomes anchor it, its estimate
// is comparable with the others' whatever router produced it (a model a trained router
// did not know competes with those it did).
func personalize(ranked []Scored, models []ModelFeedback) map[string]float64 {
	base := make(map[string]float64, len(ranked))
	byModel := make(map[modelKey]ModelFeedback, len(models))
	for _, m := range models {
		byModel[m.key()] = m
	}
	for i := range ranked {
		s := &ranked[i]
		base[strings.ToLower(s.Candidate.Name)] = s.Quality
		m, ok := byModel[candidateKey(s.Candidate)]
		if !ok || m.Feedback <= 0 {
			continue
		}
		adj := adjustment(m.Feedback, m.Successes, m.Expected)
		q := sigmoid(logit(clampProb(s.Quality)) + adj)
		switch {
		case s.Tier != 0:
			s.Score, s.Tier = q, 0
		case s.Score == s.Quality:
			s.Score = q
		case adj != 0:
			s.Score = sigmoid(logit(clampProb(s.Score)) + adj)
		}
		s.Quality = q
		s.Source += SourceFeedbackSuffix
	}
	sortScored(ranked)
	return base
}

func clampProb(p float64) float64 {
	if math.IsNaN(p) {
		return 0.5
	}
	return min(max(p, minProb), maxProb)
}

func logit(p float64) float64 { return math.Log(p / (1 - p)) }

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
