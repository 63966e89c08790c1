// Package usagelog keeps, in memory, what the gateway answered recently: the last requests
// with their attempts, and per-minute spend and latency per model over a bounded window. A
// Recorder is a completions.Observer; the server's usage routes and the web console read it.
//
// Everything is bounded: Options.Requests recent requests in a ring shared by every owner
// (a busy key can push a quiet key's requests out), and Options.Window of per-minute
// buckets, each minute holding at most Options.SeriesPerMinute (owner, model) series
// (requests beyond that count under the model "(other)"). Nothing is persisted: a restart
// starts empty, and each replica of a scaled-out deployment sees only its own requests.
package usagelog

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// Defaults of Options.
const (
	DefaultRequests        = 1000
	DefaultWindow          = 24 * time.Hour
	DefaultSeriesPerMinute = 1000
	// OtherModel is the model requests are counted under when a minute already holds
	// SeriesPerMinute series.
	OtherModel = "(other)"
	// NoModel is the model of a request that made no attempt (it failed before any).
	NoModel = "(none)"
)

// Options configures a Recorder; zero values take the defaults.
type Options struct {
	// Requests is how many recent requests are kept (default DefaultRequests).
	Requests int
	// Window is how long per-minute buckets are kept (default DefaultWindow), rounded up
	// to whole minutes.
	Window time.Duration
	// SeriesPerMinute bounds the (owner, model) series of one minute (default
	// DefaultSeriesPerMinute).
	SeriesPerMinute int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Request is one recorded request, as GET /api/v1/usage/requests lists it.
type Request struct {
	// ID numbers the requests this process recorded, from 1.
	ID int64 `json:"id"`
	// RequestID is the id the caller was answered with in the x-request-id header (the
	// server's; absent for a request made through the library without one).
	RequestID string `json:"request_id,omitempty"`
	// ResponseID is a chat answer's id without its surface's prefix (chatcmpl-… on
	// OpenAI's surface, msg_… on Anthropic's); absent for other operations.
	ResponseID string `json:"response_id,omitempty"`
	Owner      string `json:"-"`
	// Tag is the scope's tag (e.g. "optimize:<job id>" for an optimization job's agent).
	Tag string `json:"tag,omitempty"`
	// Operation is "embeddings" for an embeddings request, "transcription", "translation"
	// or "speech" for an audio request, "rerank" for a rerank request, "moderation" for a
	// moderation request, "image_generation" for an image generation request, "image_edit" for an
	// image edit request, "pass_through" for a request forwarded as it is to a provider's
	// own API (/anthropic/…, /gemini/…, /openai/…), absent for chat.
	Operation string `json:"operation,omitempty" jsonschema:"enum=embeddings,enum=transcription,enum=translation,enum=speech,enum=rerank,enum=moderation,enum=image_generation,enum=image_edit,enum=pass_through"`
	Stream    bool   `json:"stream"`
	// Outcome is ok, error, stream_error, content_filter, guardrail_blocked, cancelled (the
	// caller left) or cut (the server's graceful shutdown cut it: OutcomeCut; records written
	// before it was told apart say cancelled).
	Outcome string `json:"outcome" jsonschema:"enum=ok,enum=error,enum=stream_error,enum=content_filter,enum=guardrail_blocked,enum=cancelled,enum=cut"`
	// Model is the "provider/model" that answered (or the last one tried when none did).
	Model string `json:"model"`
	// Answered says Model delivered the answer.
	Answered bool `json:"answered"`
	// Attempts are the upstream attempts in order: retries and fallbacks and continuations.
	Attempts         []completions.Attempt `json:"attempts"`
	PromptTokens     int                   `json:"prompt_tokens"`
	CompletionTokens int                   `json:"completion_tokens"`
	TotalTokens      int                   `json:"total_tokens"`
	// PromptAudioTokens are the part of PromptTokens the input's audio made (a chat's
	// input_audio parts: OpenAI's prompt_tokens_details.audio_tokens; a transcription's
	// input audio tokens; a realtime session's), CompletionAudioTokens the part of
	// CompletionTokens spoken audio made (a chat's spoken answer:
	// completion_tokens_details.audio_tokens; a speech's tokens answered as server-sent
	// events; a realtime session's); both absent when none (and in records written before
	// they were kept).
	PromptAudioTokens     int `json:"prompt_audio_tokens,omitempty"`
	CompletionAudioTokens int `json:"completion_audio_tokens,omitempty"`
	// CostUSD is the answer's total cost (0 when its price is unknown: see PriceKnown).
	CostUSD        float64 `json:"cost_usd"`
	PriceKnown     bool    `json:"price_known"`
	UsageEstimated bool    `json:"usage_estimated,omitempty"`
	Continuations  int     `json:"continuations,omitempty"`
	// Start is when the request was received.
	Start     time.Time `json:"start"`
	LatencyMS float64   `json:"latency_ms"`
	// TTFTMS is the time to the first fragment of a stream (absent when none came).
	TTFTMS         float64 `json:"ttft_ms,omitempty"`
	ConversationID string  `json:"conversation_id,omitempty"`
	// Cache is how the response cache took part: hit (answered from it with no attempt and
	// no cost), partial (embeddings: some inputs from it), miss or bypass; absent when it
	// did not.
	Cache string `json:"cache,omitempty" jsonschema:"enum=hit,enum=partial,enum=miss,enum=bypass"`
	// SavedUSD is what a hit's answer cost when it was made.
	SavedUSD float64 `json:"saved_usd,omitempty"`
	// Tags are the request's tags (its body's tags or metadata.tags, X-Switchyard-Tags).
	Tags []string `json:"tags,omitempty"`
	// Error is the failure (absent on ok).
	Error string `json:"error,omitempty"`
	// ModelGroup is the model name the caller asked for: a model group's or the one
	// "provider/model" it named (absent when it named several).
	ModelGroup string `json:"model_group,omitempty"`
	// EndUser is the end user the request was made for (LiteLLM's end user).
	EndUser string `json:"end_user,omitempty"`
	// APIBase is the endpoint root of Model's provider without credentials.
	APIBase string `json:"api_base,omitempty"`
}

// OutcomeCut is the Outcome of a request the server itself cut — its graceful shutdown
// (completions.RequestRecord.CutBy) — which the gateway records cancelled: unlike a caller
// that left, its caller got a 503 asking to retry, so it is a failure (StatusFailure,
// LiteLLM's status failure) counted in Errors, its Error the server's reason.
const OutcomeCut = "cut"

// newRequest is rec as the history keeps it (ID not set).
func newRequest(rec completions.RequestRecord) Request {
	req := Request{Owner: rec.Owner, Tag: rec.Tag, Operation: rec.Operation, Stream: rec.Stream, Outcome: rec.Outcome,
		Model: rec.Model, Answered: rec.Outcome == completions.RequestOK && rec.Model != "",
		Attempts:     rec.Attempts,
		PromptTokens: rec.Usage.PromptTokens, CompletionTokens: rec.Usage.CompletionTokens, TotalTokens: rec.Usage.TotalTokens,
		PromptAudioTokens: rec.Usage.PromptAudioTokens, CompletionAudioTokens: rec.Usage.CompletionAudioTokens,
		CostUSD: rec.Usage.Costs.Spent(), PriceKnown: rec.Usage.Costs.PriceKnown, UsageEstimated: rec.UsageEstimated,
		Continuations: rec.Continuations, Start: rec.Start.UTC(), LatencyMS: ms(rec.Latency), TTFTMS: ms(rec.TTFT),
		ConversationID: rec.ConversationID, Cache: rec.Cache, SavedUSD: rec.SavedUSD, Tags: completions.AddTags(nil, rec.Tags...),
		ResponseID: rec.ResponseID, RequestID: rec.RequestID, ModelGroup: rec.ModelGroup, EndUser: rec.EndUser, APIBase: rec.APIBase}
	if req.Attempts == nil {
		req.Attempts = []completions.Attempt{}
	}
	if rec.Err != nil {
		req.Error = rec.Err.Error()
	}
	if rec.Outcome == completions.RequestCancelled && rec.CutBy != nil {
		req.Outcome = OutcomeCut
		if rec.Err == nil || errors.Is(rec.Err, context.Canceled) {
			req.Error = rec.CutBy.Error() // what the caller was told, not "context canceled"
		}
	}
	if req.Model == "" {
		req.Model = NoModel
		if n := len(rec.Attempts); n > 0 {
			req.Model = rec.Attempts[n-1].Model
		}
	}
	return req
}

// Bucket aggregates the requests of one model over one step of time.
type Bucket struct {
	Requests int `json:"requests"`
	// Errors counts requests that did not end ok (cancelled ones excluded; cut ones, the
	// server's, counted).
	Errors           int     `json:"errors"`
	Cancelled        int     `json:"cancelled,omitempty"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	LatencyMSSum     float64 `json:"latency_ms_sum"`
	LatencyMSMax     float64 `json:"latency_ms_max"`
	// CacheHits counts the requests the response cache answered for the model's answers;
	// they called no model, so they are not in Requests, the tokens, cost or latency.
	// SavedUSD is what their answers cost when they were made.
	CacheHits int     `json:"cache_hits,omitempty"`
	SavedUSD  float64 `json:"saved_usd,omitempty"`
}

// add folds o into b.
func (b *Bucket) add(o Bucket) {
	b.Requests += o.Requests
	b.Errors += o.Errors
	b.Cancelled += o.Cancelled
	b.PromptTokens += o.PromptTokens
	b.CompletionTokens += o.CompletionTokens
	b.CostUSD += o.CostUSD
	b.LatencyMSSum += o.LatencyMSSum
	b.LatencyMSMax = max(b.LatencyMSMax, o.LatencyMSMax)
	b.CacheHits += o.CacheHits
	b.SavedUSD += o.SavedUSD
}

// Point is a Bucket at the start of its step.
type Point struct {
	T time.Time `json:"t"`
	Bucket
	// LatencyMSMean is LatencyMSSum / Requests.
	LatencyMSMean float64 `json:"latency_ms_mean"`
}

// ModelSeries is one model's steps with at least one request, oldest first, and its totals.
type ModelSeries struct {
	// Model is the series' model, or Tag its request tag (TagSeries).
	Model  string  `json:"model,omitempty"`
	Tag    string  `json:"tag,omitempty"`
	Total  Bucket  `json:"total"`
	Points []Point `json:"points"`
}

// Series is the answer of GET /api/v1/usage/series: per model, the owner's requests over
// [Start, End) in steps of StepSeconds.
type Series struct {
	Start       time.Time     `json:"start"`
	End         time.Time     `json:"end"`
	StepSeconds int           `json:"step_seconds"`
	Models      []ModelSeries `json:"models"`
}

type seriesKey struct{ owner, model string }

// minute holds the buckets of one minute of the window.
type minute struct {
	unix    int64 // minute number since the epoch (Unix seconds / 60); 0: unused
	buckets map[seriesKey]*Bucket
	tagged  map[seriesKey]*Bucket // per request tag (seriesKey.model holds the tag)
	// tagCount is how many tag series each owner has this minute.
	tagCount map[string]int
}

// Recorder keeps recent requests and per-minute buckets. It implements
// completions.Observer; the zero value is not usable, create one with New.
type Recorder struct {
	opts Options

	mu      sync.Mutex
	ring    []Request // capacity opts.Requests; ring[next] is overwritten next once full
	next    int
	lastID  int64
	minutes []minute // ring of opts.Window minutes indexed by minute number mod its length
}

var _ completions.Observer = (*Recorder)(nil)

// New returns an empty Recorder.
func New(opts Options) *Recorder {
	if opts.Requests <= 0 {
		opts.Requests = DefaultRequests
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.SeriesPerMinute <= 0 {
		opts.SeriesPerMinute = DefaultSeriesPerMinute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	n := int((opts.Window + time.Minute - 1) / time.Minute)
	return &Recorder{opts: opts, ring: make([]Request, 0, opts.Requests), minutes: make([]minute, n)}
}

// Window is how far back the buckets reach.
func (r *Recorder) Window() time.Duration { return time.Duration(len(r.minutes)) * time.Minute }

// ObserveRequest records one request (completions.Observer).
func (r *Recorder) ObserveRequest(_ context.Context, rec completions.RequestRecord) {
	req := newRequest(rec)
	b := Bucket{Requests: 1, PromptTokens: int64(req.PromptTokens), CompletionTokens: int64(req.CompletionTokens),
		CostUSD: req.CostUSD, LatencyMSSum: req.LatencyMS, LatencyMSMax: req.LatencyMS}
	switch req.Cache {
	case completions.CacheHit:
		b = Bucket{CacheHits: 1, SavedUSD: req.SavedUSD}
	case completions.CachePartial: // the model answered part of it (embeddings)
		b.SavedUSD = req.SavedUSD
	}
	switch req.Outcome {
	case completions.RequestOK:
	case completions.RequestCancelled:
		b.Cancelled = 1
	default:
		b.Errors = 1
	}
	// The request counts in the minute it ended in, which is when it is observed.
	end := r.opts.Now()

	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastID++
	req.ID = r.lastID
	if len(r.ring) < cap(r.ring) {
		r.ring = append(r.ring, req)
	} else {
		r.ring[r.next] = req
	}
	r.next = (r.next + 1) % cap(r.ring)

	m := r.minuteAt(end.Unix() / 60)
	r.bucket(m.buckets, seriesKey{req.Owner, req.Model}).add(b)
	for _, t := range req.Tags {
		r.tagBucket(m, req.Owner, t).add(b)
	}
}

// tagBucket is bucket for a request tag: tags are the caller's to choose, so the bound
// of SeriesPerMinute holds per owner (one key's many tags cannot push another's into
// OtherModel). Called with r.mu held.
func (r *Recorder) tagBucket(m *minute, owner, tag string) *Bucket {
	k := seriesKey{owner, tag}
	bk := m.tagged[k]
	if bk != nil {
		return bk
	}
	if m.tagCount[owner] >= r.opts.SeriesPerMinute {
		k.model = OtherModel
		if bk = m.tagged[k]; bk != nil {
			return bk
		}
	}
	bk = &Bucket{}
	m.tagged[k] = bk
	m.tagCount[owner]++
	return bk
}

// bucket returns the bucket of k in buckets, made when missing; beyond SeriesPerMinute
// series in a minute, new ones count under OtherModel. Called with r.mu held.
func (r *Recorder) bucket(buckets map[seriesKey]*Bucket, k seriesKey) *Bucket {
	bk := buckets[k]
	if bk == nil {
		if len(buckets) >= r.opts.SeriesPerMinute {
			k.model = OtherModel
			bk = buckets[k]
		}
		if bk == nil {
			bk = &Bucket{}
			buckets[k] = bk
		}
	}
	return bk
}

// minuteAt returns the slot of minute number u, emptied when it held an older minute.
// Called with r.mu held.
func (r *Recorder) minuteAt(u int64) *minute {
	m := &r.minutes[int(u%int64(len(r.minutes)))]
	if m.unix != u {
		m.unix = u
		m.buckets, m.tagged, m.tagCount = map[seriesKey]*Bucket{}, map[seriesKey]*Bucket{}, map[string]int{}
	}
	return m
}

// Requests returns owner's recorded requests, newest first, at most limit (all when limit
// ≤ 0) and only those with an id below before when before > 0 (to page back).
func (r *Recorder) Requests(owner string, limit int, before int64) []Request {
	return r.RequestsTagged(owner, "", limit, before)
}

// RequestsTagged is Requests keeping only the requests whose scope had tag (all when tag
// is ""): a virtual key's ("key:<id>") or an optimization job's ("optimize:<id>").
func (r *Recorder) RequestsTagged(owner, tag string, limit int, before int64) []Request {
	return r.RequestsWith(owner, tag, "", limit, before)
}

// RequestsWith is RequestsTagged also keeping only the requests that carried requestTag
// among their tags (all when it is "").
func (r *Recorder) RequestsWith(owner, tag, requestTag string, limit int, before int64) []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []Request{}
	n := len(r.ring)
	for i := 1; i <= n; i++ {
		req := &r.ring[((r.next-i)%n+n)%n]
		if req.Owner != owner || (before > 0 && req.ID >= before) || (tag != "" && req.Tag != tag) ||
			(requestTag != "" && !slices.Contains(req.Tags, requestTag)) {
			continue
		}
		c := *req
		c.Attempts = append([]completions.Attempt{}, req.Attempts...)
		c.Tags = slices.Clone(req.Tags)
		out = append(out, c)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

// Series returns owner's buckets of the last window (at most Window), per model, summed
// into steps of step (at least a minute; whole minutes). Steps are aligned to multiples of
// step since the Unix epoch; the first may reach back before the window and then holds only
// the minutes inside it.
func (r *Recorder) Series(owner string, window, step time.Duration) Series {
	return r.series(owner, window, step, false)
}

// TagSeries is Series per request tag instead of per model (ModelSeries.Tag set, Model
// empty): a request with several tags counts under each, one without any under none.
func (r *Recorder) TagSeries(owner string, window, step time.Duration) Series {
	return r.series(owner, window, step, true)
}

func (r *Recorder) series(owner string, window, step time.Duration, byTag bool) Series {
	window = min(max(window, time.Minute), r.Window())
	step = max(step.Truncate(time.Minute), time.Minute)
	stepMin := int64(step / time.Minute)
	now := r.opts.Now().Unix() / 60
	first := now - int64(window/time.Minute) + 1 // oldest minute included
	firstStep := floorDiv(first, stepMin) * stepMin
	s := Series{Start: time.Unix(firstStep*60, 0).UTC(), End: time.Unix((now+1)*60, 0).UTC(),
		StepSeconds: int(stepMin * 60), Models: []ModelSeries{}}

	type acc struct {
		total Bucket
		steps map[int64]*Bucket
	}
	per := map[string]*acc{}
	r.mu.Lock()
	for u := first; u <= now; u++ {
		m := &r.minutes[int(((u%int64(len(r.minutes)))+int64(len(r.minutes)))%int64(len(r.minutes)))]
		if m.unix != u {
			continue
		}
		buckets := m.buckets
		if byTag {
			buckets = m.tagged
		}
		for k, b := range buckets {
			if k.owner != owner {
				continue
			}
			a := per[k.model]
			if a == nil {
				a = &acc{steps: map[int64]*Bucket{}}
				per[k.model] = a
			}
			a.total.add(*b)
			st := floorDiv(u, stepMin) * stepMin
			sb := a.steps[st]
			if sb == nil {
				sb = &Bucket{}
				a.steps[st] = sb
			}
			sb.add(*b)
		}
	}
	r.mu.Unlock()

	for model, a := range per {
		ms := ModelSeries{Model: model, Total: a.total, Points: make([]Point, 0, len(a.steps))}
		if byTag {
			ms.Model, ms.Tag = "", model
		}
		for st, b := range a.steps {
			p := Point{T: time.Unix(st*60, 0).UTC(), Bucket: *b}
			if b.Requests > 0 {
				p.LatencyMSMean = b.LatencyMSSum / float64(b.Requests)
			}
			ms.Points = append(ms.Points, p)
		}
		sort.Slice(ms.Points, func(i, j int) bool { return ms.Points[i].T.Before(ms.Points[j].T) })
		s.Models = append(s.Models, ms)
	}
	// The costliest model first, then by name: the order of a chart's legend.
	sort.Slice(s.Models, func(i, j int) bool {
		a, b := s.Models[i], s.Models[j]
		if a.Total.CostUSD != b.Total.CostUSD {
			return a.Total.CostUSD > b.Total.CostUSD
		}
		if a.Total.Requests != b.Total.Requests {
			return a.Total.Requests > b.Total.Requests
		}
		return a.Model+a.Tag < b.Model+b.Tag
	})
	return s
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
