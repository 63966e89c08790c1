package usagelog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// Rollup keeps each key's daily spend per request tag, per model, per team, per virtual
// key, per user (a virtual key's user_id) and per user, virtual key and model together in
// a store.Store
// (collection store.SpendRollups): unlike the Recorder's history it survives restarts, and
// on a shared PostgreSQL store every replica adds to the same totals. It is a
// completions.Observer: requests are added up in memory and written every
// RollupOptions.FlushEvery, in transactions of at most rollupBatchRows rows, by adding to
// what is stored (so replicas never overwrite each other) under a batch id the rows
// remember (so a write retried after an unknown outcome is not counted twice). Make one
// with NewRollup and Close it to write the rest.
type Rollup struct {
	st   *store.Store
	opts RollupOptions

	mu      sync.Mutex
	pending map[string]*DayTotals // store key -> increments not yet written
	keyBuf  []byte                // addPending's key, reused
	// failed are written batches whose outcome is unknown (the store said no, perhaps
	// after committing): they are written again under their ids, which the rows remember.
	failed []rollupBatch

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
	// Retention is how long a day's totals are kept: the days before Now minus Retention
	// (UTC) are not read, and Sweep deletes them. 0 means DefaultSpendRetention (forever);
	// a negative value keeps them forever.
	Retention time.Duration
}

// DefaultSpendRetention is what a zero RollupOptions.Retention means: daily totals are
// kept forever, as LiteLLM keeps its daily spend tables (its
// maximum_spend_logs_retention_period is unset by default). They are small: a row per key,
// day and tag or model. A negative duration, this one included, keeps them forever.
const DefaultSpendRetention time.Duration = -1

// DayTotals are one day's totals of a key for one tag or model.
type DayTotals struct {
	// Requests counts the requests a model was called for (failed ones too); Errors those
	// that did not end ok (cancelled ones excluded, except those the server's shutdown cut).
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

// SpendRow is one day's totals of one tag, model, team, key or user (Spend's grouping): the
// field of the grouping is set, the others are empty; SpendByUserKeyModel sets User, Key
// and Model (User "" for a key of no user).
type SpendRow struct {
	Day   string `json:"day"` // YYYY-MM-DD, UTC
	Tag   string `json:"tag,omitempty"`
	Model string `json:"model,omitempty"`
	// Team is the team id (completions.RequestRecord.TeamID) of SpendByTeam.
	Team string `json:"team,omitempty"`
	// Key is the virtual key id (completions.RequestRecord.KeyID) of SpendByKey, "" for the
	// requests the owner made with no virtual key (its own key, a job key).
	Key string `json:"key,omitempty"`
	// User is the user id (completions.RequestRecord.UserID: the virtual key's user_id) of
	// SpendByUser.
	User string `json:"user,omitempty"`
	DayTotals
}

// Spend groupings. SpendByTeam counts only the requests of a team's virtual keys and
// SpendByUser only those of virtual keys with a user_id; the team and key totals are kept
// from the release that added them on, the user totals from the release after (the days
// before have none).
const (
	SpendByTag   = "tag"
	SpendByModel = "model"
	SpendByTeam  = "team"
	SpendByKey   = "key"
	SpendByUser  = "user"
	// SpendByUserKeyModel is per user, virtual key and model together, kept from the
	// release after the user totals on.
	SpendByUserKeyModel = "user_key_model"
)

// Rollup row kinds (the third part of a row's store key), per grouping.
const (
	kindTag   = "t"
	kindModel = "m"
	kindTeam  = "tm"
	kindKey   = "k"
	kindUser  = "u"
	kindCross = "x" // user, key and model: crossName
)

// spendKinds are the row kinds of the Spend groupings.
var spendKinds = map[string]string{SpendByTag: kindTag, SpendByModel: kindModel, SpendByTeam: kindTeam, SpendByKey: kindKey, SpendByUser: kindUser, SpendByUserKeyModel: kindCross}

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

// rollupKey is a store key: the owner (escaped), the day, the kind ("t" tag, "m" model,
// "tm" team, "k" virtual key, "u" user), the tag, model, team, key or user id ("" for none) (a name over maxRollupName bytes cut and followed by a hash of it: model names are the
// caller's, and a store key has a size limit).
func rollupKey(owner, day, kind, name string) string {
	return url.PathEscape(owner) + "/" + day + "/" + kind + "/" + shortName(name, maxRollupName)
}

// shortName is name, or when it is over limit bytes its start cut and followed by "~" and
// a hash of it (limit bytes in all).
func shortName(name string, limit int) string {
	if len(name) <= limit {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return strings.ToValidUTF8(name[:limit-17], "") + "~" + hex.EncodeToString(sum[:8])
}

// appendCrossName appends the name of a user, key and model row to b: the user and key
// escaped (no "/") and bounded (a user id of up to 128 bytes, as users' ids are, and a key
// id kept whole), then the model as a model row names it. It is not bounded as a whole
// (rollupKey would cut into the model, which then would not be the model rows' name).
// Nothing is allocated unless a part is escaped or shortened.
func appendCrossName(b []byte, user, key, model string) []byte {
	b = append(b, shortName(url.PathEscape(user), maxCrossUser)...)
	b = append(b, '/')
	b = append(b, shortName(url.PathEscape(key), maxCrossKey)...)
	b = append(b, '/')
	return append(b, shortName(model, maxRollupName)...)
}

// parseCrossName splits a name appendCrossName made; ok is false when name is not one.
func parseCrossName(name string) (user, key, model string, ok bool) {
	u, rest, ok1 := strings.Cut(name, "/")
	k, m, ok2 := strings.Cut(rest, "/")
	if !ok1 || !ok2 {
		return "", "", "", false
	}
	if v, err := url.PathUnescape(u); err == nil {
		u = v
	}
	if v, err := url.PathUnescape(k); err == nil {
		k = v
	}
	return u, k, m, true
}

// Bounds of the user and key parts of a crossName.
const (
	maxCrossUser = 128
	maxCrossKey  = 64
)

// appendRollupKey appends rollupKey(owner, day, kind, name) to b.
func appendRollupKey(b []byte, owner string, day []byte, kind, name string) []byte {
	if len(name) > maxRollupName {
		return append(b, rollupKey(owner, string(day), kind, name)...)
	}
	b = append(b, url.PathEscape(owner)...) // owner itself (no copy) when nothing is escaped
	b = append(b, '/')
	b = append(b, day...)
	b = append(b, '/')
	b = append(b, kind...)
	b = append(b, '/')
	return append(b, name...)
}

// maxRollupName bounds the name part of a rollup key.
const maxRollupName = 200

// rollupBatch is increments written in one transaction under one id.
type rollupBatch struct {
	id   string
	incs map[string]*DayTotals
}

// storedTotals is a row as stored: the totals and the ids of the last batches added to it,
// so that a batch written again after an unknown outcome is not added twice.
type storedTotals struct {
	DayTotals
	Batches []string `json:"batches,omitempty"`
}

// rollupBatchMemory is how many batch ids a row remembers: more than the batches that can
// be retried before one is known (a retried batch is written again at the next flush).
const rollupBatchMemory = 32

// rollupBatchRows bounds the rows of one transaction: a large backlog is written in parts,
// each with its own deadline, so it is never too large to write at all.
const rollupBatchRows = 256

// rollupWriteTimeout bounds one batch's transaction (not the flush interval: a slow store
// still writes).
const rollupWriteTimeout = 30 * time.Second

// ObserveRequest adds rec to its owner's totals of the day, per tag, per model, per key
// (rec.KeyID, "" without one), per team (rec.TeamID, when it has one) and per user
// (rec.UserID, when it has one), and per user, key and model together
// (completions.Observer; it does not block on the store).
func (r *Rollup) ObserveRequest(_ context.Context, rec completions.RequestRecord) {
	var t DayTotals
	switch {
	case rec.Cache == completions.CacheHit:
		t = DayTotals{CacheHits: 1, SavedUSD: rec.SavedUSD}
	default:
		t = DayTotals{Requests: 1, PromptTokens: int64(rec.Usage.PromptTokens), CompletionTokens: int64(rec.Usage.CompletionTokens),
			CostUSD: rec.Usage.Costs.Spent(), SavedUSD: rec.SavedUSD}
		// A request the server's shutdown cut failed (its caller got a 503); one whose
		// caller left did not.
		if rec.Outcome != completions.RequestOK && (rec.Outcome != completions.RequestCancelled || rec.CutBy != nil) {
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
	var dayBuf [len(time.DateOnly)]byte
	day := r.opts.Now().UTC().AppendFormat(dayBuf[:0], time.DateOnly)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addPending(rec.Owner, day, kindModel, model, t)
	for i, tag := range rec.Tags {
		if !slices.Contains(rec.Tags[:i], tag) { // a tag named twice counts once
			r.addPending(rec.Owner, day, kindTag, tag, t)
		}
	}
	r.addPending(rec.Owner, day, kindKey, rec.KeyID, t)
	if rec.TeamID != "" {
		r.addPending(rec.Owner, day, kindTeam, rec.TeamID, t)
	}
	if rec.UserID != "" {
		r.addPending(rec.Owner, day, kindUser, rec.UserID, t)
	}
	r.keyBuf = appendCrossName(appendRollupKey(r.keyBuf[:0], rec.Owner, day, kindCross, ""), rec.UserID, rec.KeyID, model)
	r.addPendingKey(t)
}

// addPending adds t to the pending row of owner, day, kind and name; r.mu is held. The
// row's key is built in r.keyBuf, so adding to a row already pending allocates nothing.
func (r *Rollup) addPending(owner string, day []byte, kind, name string, t DayTotals) {
	r.keyBuf = appendRollupKey(r.keyBuf[:0], owner, day, kind, name)
	r.addPendingKey(t)
}

// addPendingKey adds t to the pending row whose key is r.keyBuf; r.mu is held.
func (r *Rollup) addPendingKey(t DayTotals) {
	p := r.pending[string(r.keyBuf)]
	if p == nil {
		p = &DayTotals{}
		r.pending[string(r.keyBuf)] = p
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
			if err := r.Flush(context.Background()); err != nil {
				r.opts.Logger.Warn("usagelog: writing the daily spend", "err", err)
			}
		}
	}
}

// Flush writes the totals added up since the last write, in batches of at most
// rollupBatchRows rows, each one transaction under its own id; a batch whose write failed
// is written again by the next Flush under the same id (so that, had the store committed
// it before failing, it is not added twice). ctx bounds the wait for an earlier Flush; each
// write has its own deadline, so a caller going away does not cut a commit short.
func (r *Rollup) Flush(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	return r.flushLocked()
}

// flushLocked is Flush once it holds r.flushMu.
func (r *Rollup) flushLocked() error {
	r.mu.Lock()
	batches := r.failed
	r.failed = nil
	if len(r.pending) > 0 {
		b := rollupBatch{id: uuid.NewString(), incs: map[string]*DayTotals{}}
		for key, inc := range r.pending {
			if len(b.incs) == rollupBatchRows {
				batches = append(batches, b)
				b = rollupBatch{id: uuid.NewString(), incs: map[string]*DayTotals{}}
			}
			b.incs[key] = inc
		}
		batches = append(batches, b)
		r.pending = map[string]*DayTotals{}
	}
	r.mu.Unlock()
	var errs []error
	for _, b := range batches {
		if err := r.write(b); err != nil {
			errs = append(errs, err)
			r.mu.Lock()
			r.failed = append(r.failed, b)
			r.mu.Unlock()
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("usagelog: writing the daily spend (%d of %d batches kept for the next write): %w", len(errs), len(batches), errors.Join(errs...))
	}
	return nil
}

// write adds batch b to the stored rows in one transaction, skipping a row that already
// has it.
func (r *Rollup) write(b rollupBatch) error {
	ctx, cancel := context.WithTimeout(context.Background(), rollupWriteTimeout)
	defer cancel()
	return r.st.Update(ctx, func(tx store.Tx) error {
		for key, inc := range b.incs {
			cur, err := store.GetJSON[storedTotals](ctx, tx, store.SpendRollups, key)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			if slices.Contains(cur.Batches, b.id) {
				continue // written before, though the store said otherwise
			}
			cur.add(*inc)
			cur.Batches = append(cur.Batches, b.id)
			if n := len(cur.Batches); n > rollupBatchMemory {
				cur.Batches = cur.Batches[n-rollupBatchMemory:]
			}
			if err := store.PutJSON(ctx, tx, store.SpendRollups, key, cur); err != nil {
				return err
			}
		}
		return nil
	})
}

// Close stops the writer and writes what is left — even when ctx has ended (a shutdown's
// budget spent by others), each write bounded by its own deadline. Observing after Close
// adds to totals nobody writes.
func (r *Rollup) Close(ctx context.Context) error {
	r.once.Do(func() { close(r.stop) })
	<-r.done // the writer stops at once, or after the write under way
	return r.Flush(context.WithoutCancel(ctx))
}

// MaxSpendDays bounds the days one Spend call reads.
const MaxSpendDays = 366

// Spend returns owner's daily totals from day from to day to (UTC, inclusive) grouped by
// tag (SpendByTag), model (SpendByModel), team (SpendByTeam), virtual key (SpendByKey) or
// user (SpendByUser), by day then costliest first; what was observed but not yet written is
// written first, so a caller sees its own requests.
func (r *Rollup) Spend(ctx context.Context, owner string, from, to time.Time, by string) ([]SpendRow, error) {
	groups, err := r.SpendGroups(ctx, owner, from, to, by)
	if err != nil {
		return nil, err
	}
	return groups[by], nil
}

// SpendGroups returns, per grouping of by, what Spend returns for it, every grouping read
// from one state of the totals: what was observed before the call is written once, then
// the rows are read while this Rollup writes nothing else (a request observed meanwhile
// counts in none of the groupings, and in all of them at the next read), so the groupings
// of one request always add up alike. Writes of other Rollups sharing the store (replicas
// on one PostgreSQL store) are not held back.
func (r *Rollup) SpendGroups(ctx context.Context, owner string, from, to time.Time, by ...string) (map[string][]SpendRow, error) {
	kinds := make(map[string]string, len(by)) // row kind -> grouping
	for _, b := range by {
		kind := spendKinds[b]
		if kind == "" {
			return nil, fmt.Errorf("usagelog: spend by %q (want tag, model, team, key or user)", b)
		}
		kinds[kind] = b
	}
	if from.After(to) || to.Sub(from) >= MaxSpendDays*24*time.Hour {
		return nil, fmt.Errorf("usagelog: spend from %s to %s: at most %d days, from first", from.Format(time.DateOnly), to.Format(time.DateOnly), MaxSpendDays)
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
	}
	// Held from the write through the reads: no flush of r lands between them.
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	if err := r.flushLocked(); err != nil {
		return nil, err
	}
	groups := make(map[string][]SpendRow, len(by))
	for _, b := range by {
		groups[b] = []SpendRow{}
	}
	lo, hi := from.UTC().Format(time.DateOnly), to.UTC().Format(time.DateOnly)
	if first, ok := r.firstKeptDay(r.opts.Now()); ok && first > lo {
		lo = first // older days are past the retention, swept or not
	}
	if lo > hi {
		return groups, nil
	}
	prefix := url.PathEscape(owner) + "/"
	after := prefix + lo // every key of day lo sorts after it
	sorted := func() map[string][]SpendRow {
		for b, rows := range groups {
			groups[b] = sortRows(rows)
		}
		return groups
	}
	for {
		page, err := r.st.List(ctx, store.SpendRollups, store.ListOptions{Prefix: prefix, After: after, Limit: 500})
		if err != nil {
			return nil, fmt.Errorf("usagelog: reading the daily spend: %w", err)
		}
		for _, e := range page {
			day, rest, _ := strings.Cut(strings.TrimPrefix(e.Key, prefix), "/")
			if day > hi {
				return sorted(), nil
			}
			kind, name, _ := strings.Cut(rest, "/")
			b, ok := kinds[kind]
			if !ok {
				continue
			}
			var t storedTotals
			if err := json.Unmarshal(e.Value, &t); err != nil {
				return nil, fmt.Errorf("usagelog: a daily spend record %q: %w", e.Key, err)
			}
			row := SpendRow{Day: day, DayTotals: t.DayTotals}
			switch kind {
			case kindTag:
				row.Tag = name
			case kindModel:
				row.Model = name
			case kindTeam:
				row.Team = name
			case kindUser:
				row.User = name
			case kindCross:
				var ok bool
				if row.User, row.Key, row.Model, ok = parseCrossName(name); !ok {
					continue // not a row this release writes
				}
			default:
				row.Key = name
			}
			groups[b] = append(groups[b], row)
		}
		if len(page) < 500 {
			return sorted(), nil
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
		return a.Tag+a.Model+a.Team+a.Key+a.User < b.Tag+b.Model+b.Team+b.Key+b.User
	})
	return rows
}

// firstKeptDay is the first day (YYYY-MM-DD, UTC) whose totals the retention keeps at now;
// ok is false when every day is kept.
func (r *Rollup) firstKeptDay(now time.Time) (string, bool) {
	keep := r.opts.Retention
	if keep == 0 {
		keep = DefaultSpendRetention
	}
	if keep < 0 {
		return "", false
	}
	return now.UTC().Add(-keep).Format(time.DateOnly), true
}

// sweepPage is the most rows Sweep reads, and deletes in one transaction, at a time.
const sweepPage = 500

// Sweep deletes the daily totals of every owner older than RollupOptions.Retention at now
// and returns how many rows it deleted. Spend already leaves them out; the sweep frees
// their room. Each transaction deletes at most sweepPage rows; deleting a row twice is
// harmless, so replicas of one PostgreSQL store may sweep at once. It stops when ctx ends.
//
// It reads only what may have expired: an owner's rows are in day order (owner/day/…), so
// past the owner's first kept row the sweep skips to the next owner. It reads each owner's
// expired rows, at most as many again (its pages start at one row and double while every
// row read expired), and one kept row: a sweep that deletes nothing reads one row an owner.
func (r *Rollup) Sweep(ctx context.Context, now time.Time) (int, error) {
	first, ok := r.firstKeptDay(now)
	if !ok {
		return 0, nil
	}
	deleted := 0
	for after, limit := "", 1; ; {
		if err := ctx.Err(); err != nil {
			return deleted, err
		}
		page, err := r.st.List(ctx, store.SpendRollups, store.ListOptions{After: after, Limit: limit})
		if err != nil {
			return deleted, fmt.Errorf("usagelog: sweep the daily spend: %w", err)
		}
		var old []string
		next := "" // past the rest of an owner whose kept rows start here
		for _, e := range page {
			// owner (escaped: no "/") / day / kind / name
			owner, rest, ok := strings.Cut(e.Key, "/")
			if !ok || len(rest) < len(time.DateOnly) {
				continue // not a row's key: kept, and says nothing of the rows after it
			}
			if rest[:len(time.DateOnly)] < first {
				old = append(old, e.Key)
				continue
			}
			next = ownerRowsEnd(owner)
			break
		}
		if len(old) > 0 {
			err := r.st.Update(ctx, func(tx store.Tx) error {
				for _, k := range old {
					if err := tx.Delete(ctx, store.SpendRollups, k); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return deleted, fmt.Errorf("usagelog: sweep the daily spend: %w", err)
			}
			deleted += len(old)
		}
		switch {
		case next != "":
			after, limit = next, 1
		case len(page) < limit:
			return deleted, nil
		default:
			after, limit = page[len(page)-1].Key, min(2*limit, sweepPage)
		}
	}
}

// ownerRowsEnd is a key after every row of owner (escaped) and before the rows of the
// owners after it: in a row's key "owner/" is followed by its day, which starts with a
// digit (below "\x7f"); an escaped owner has no "/", so the keys of an owner that starts
// with owner and sorts after it have a byte above "/" where owner's have it.
func ownerRowsEnd(owner string) string { return owner + "/\x7f" }
