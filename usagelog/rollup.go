package usagelog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// Rollup keeps each key's daily spend per request tag and per model in a store.Store
// (collection store.SpendRollups): unlike the Recorder's history it survives restarts, and
// on a shared PostgreSQL store every replica adds to the same totals. It is a
// completions.Observer: requests are added up in memory and written every
// RollupOptions.FlushEvery, in one transaction, by adding to what is stored (so replicas
// never overwrite each other). Make one with NewRollup and Close it to write the rest.
type Rollup struct {
	st   *store.Store
	opts RollupOptions

	mu      sync.Mutex
	pending map[string]*DayTotals // store key -> increments not yet written

	flushMu sync.Mutex // one flush at a time
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// RollupOptions configure a Rollup; the zero value is usable.
type RollupOptions struct {
	// FlushEvery is how often the totals are written; default 10 s.
	FlushEvery time.Duration
	// Logger receives write failures; nil discards them.
	Logger *slog.Logger
	// Now is the clock (the day a request counts in is when it is observed, in UTC); nil
	// means time.Now.
	Now func() time.Time
}

// DayTotals are one day's totals of a key for one tag or model.
type DayTotals struct {
	// Requests counts the requests a model was called for (failed ones too); Errors those
	// that did not end ok (cancelled ones excluded).
	Requests         int64   `json:"requests"`
	Errors           int64   `json:"errors,omitempty"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	// CacheHits counts the requests the response cache answered (no model called, not in
	// Requests); SavedUSD is what their answers cost when they were made.
	CacheHits int64   `json:"cache_hits,omitempty"`
	SavedUSD  float64 `json:"saved_usd,omitempty"`
}

func (t *DayTotals) add(o DayTotals) {
	t.Requests += o.Requests
	t.Errors += o.Errors
	t.PromptTokens += o.PromptTokens
	t.CompletionTokens += o.CompletionTokens
	t.CostUSD += o.CostUSD
	t.CacheHits += o.CacheHits
	t.SavedUSD += o.SavedUSD
}

// SpendRow is one day's totals of one tag or model (SpendBy).
type SpendRow struct {
	Day   string `json:"day"` // YYYY-MM-DD, UTC
	Tag   string `json:"tag,omitempty"`
	Model string `json:"model,omitempty"`
	DayTotals
}

// Spend groupings.
const (
	SpendByTag   = "tag"
	SpendByModel = "model"
)

// NewRollup returns a Rollup writing to st, its writer started.
func NewRollup(st *store.Store, opts RollupOptions) *Rollup {
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &Rollup{st: st, opts: opts, pending: map[string]*DayTotals{}, stop: make(chan struct{}), done: make(chan struct{})}
	go r.run()
	return r
}

var _ completions.Observer = (*Rollup)(nil)

// rollupKey is a store key: the owner (escaped), the day, "t" or "m", the tag or model.
func rollupKey(owner, day, kind, name string) string {
	return url.PathEscape(owner) + "/" + day + "/" + kind + "/" + name
}

// ObserveRequest adds rec to its owner's totals of the day, per tag and per model
// (completions.Observer; it does not block on the store).
func (r *Rollup) ObserveRequest(_ context.Context, rec completions.RequestRecord) {
	var t DayTotals
	switch {
	case rec.Cache == completions.CacheHit:
		t = DayTotals{CacheHits: 1, SavedUSD: rec.SavedUSD}
	default:
		t = DayTotals{Requests: 1, PromptTokens: int64(rec.Usage.PromptTokens), CompletionTokens: int64(rec.Usage.CompletionTokens),
			CostUSD: rec.Usage.Costs.Spent(), SavedUSD: rec.SavedUSD}
		if rec.Outcome != completions.RequestOK && rec.Outcome != completions.RequestCancelled {
			t.Errors = 1
		}
	}
	model := rec.Model
	if model == "" {
		model = NoModel
		if n := len(rec.Attempts); n > 0 {
			model = rec.Attempts[n-1].Model
		}
	}
	day := r.opts.Now().UTC().Format(time.DateOnly)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addPending(rollupKey(rec.Owner, day, "m", model), t)
	for _, tag := range completions.AddTags(nil, rec.Tags...) {
		r.addPending(rollupKey(rec.Owner, day, "t", tag), t)
	}
}

func (r *Rollup) addPending(key string, t DayTotals) {
	p := r.pending[key]
	if p == nil {
		p = &DayTotals{}
		r.pending[key] = p
	}
	p.add(t)
}

func (r *Rollup) run() {
	defer close(r.done)
	t := time.NewTicker(r.opts.FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), r.opts.FlushEvery)
			if err := r.Flush(ctx); err != nil {
				r.opts.Logger.Warn("usagelog: writing the daily spend", "err", err)
			}
			cancel()
		}
	}
}

// Flush writes the totals added up since the last write, in one transaction; on failure
// they are kept for the next one.
func (r *Rollup) Flush(ctx context.Context) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	batch := r.pending
	r.pending = map[string]*DayTotals{}
	r.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	err := r.st.Update(ctx, func(tx store.Tx) error {
		for key, inc := range batch {
			cur, err := store.GetJSON[DayTotals](ctx, tx, store.SpendRollups, key)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			cur.add(*inc)
			if err := store.PutJSON(ctx, tx, store.SpendRollups, key, cur); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		r.mu.Lock()
		for key, inc := range batch { // kept for the next write
			r.addPending(key, *inc)
		}
		r.mu.Unlock()
		return fmt.Errorf("usagelog: writing the daily spend: %w", err)
	}
	return nil
}

// Close stops the writer and writes what is left (until ctx ends). Observing after Close
// adds to totals nobody writes.
func (r *Rollup) Close(ctx context.Context) error {
	r.once.Do(func() { close(r.stop) })
	select {
	case <-r.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return r.Flush(ctx)
}

// MaxSpendDays bounds the days one Spend call reads.
const MaxSpendDays = 366

// Spend returns owner's daily totals from day from to day to (UTC, inclusive) grouped by
// tag (SpendByTag) or model (SpendByModel), by day then costliest first; what was observed
// but not yet written is written first, so a caller sees its own requests.
func (r *Rollup) Spend(ctx context.Context, owner string, from, to time.Time, by string) ([]SpendRow, error) {
	kind := map[string]string{SpendByTag: "t", SpendByModel: "m"}[by]
	if kind == "" {
		return nil, fmt.Errorf("usagelog: spend by %q (want tag or model)", by)
	}
	if err := r.Flush(ctx); err != nil {
		return nil, err
	}
	lo, hi := from.UTC().Format(time.DateOnly), to.UTC().Format(time.DateOnly)
	prefix := url.PathEscape(owner) + "/"
	rows := []SpendRow{}
	after := prefix + lo // every key of day lo sorts after it
	for {
		page, err := r.st.List(ctx, store.SpendRollups, store.ListOptions{Prefix: prefix, After: after, Limit: 500})
		if err != nil {
			return nil, fmt.Errorf("usagelog: reading the daily spend: %w", err)
		}
		for _, e := range page {
			day, rest, _ := strings.Cut(strings.TrimPrefix(e.Key, prefix), "/")
			if day > hi {
				return sortRows(rows), nil
			}
			k, name, _ := strings.Cut(rest, "/")
			if k != kind {
				continue
			}
			var t DayTotals
			if err := json.Unmarshal(e.Value, &t); err != nil {
				return nil, fmt.Errorf("usagelog: a daily spend record %q: %w", e.Key, err)
			}
			row := SpendRow{Day: day, DayTotals: t}
			if kind == "t" {
				row.Tag = name
			} else {
				row.Model = name
			}
			rows = append(rows, row)
		}
		if len(page) < 500 {
			return sortRows(rows), nil
		}
		after = page[len(page)-1].Key
	}
}

func sortRows(rows []SpendRow) []SpendRow {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Day != b.Day {
			return a.Day < b.Day
		}
		if a.CostUSD != b.CostUSD {
			return a.CostUSD > b.CostUSD
		}
		return a.Tag+a.Model < b.Tag+b.Model
	})
	return rows
}
