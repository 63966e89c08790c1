package usagelog

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// RequestQuery selects one owner's requests, newest first, from a request history.
type RequestQuery struct {
	// Owner is whose requests (RequestRecord.Owner).
	Owner string
	// Tag keeps only the requests of one scope (a virtual key's "key:<id>"); "" keeps all.
	Tag string
	// RequestTag keeps only the requests that carried it among their Tags; "" keeps all.
	RequestTag string
	// From keeps the requests received (Start) at or after it; zero: no lower bound.
	From time.Time
	// Until keeps the requests received strictly before it; zero: no upper bound.
	Until time.Time
	// Before keeps the requests whose ID is below it (paging back); 0: no bound.
	Before int64
	// IDs, when not empty, keeps only the requests one of them names: as the request's ID
	// (in decimal), its RequestID or its ResponseID. A History whose lookup index is built
	// (both runs of its migration, see History.Sweep) reads those requests alone (the ID's
	// record, and its lookup index of request and response ids), not the window.
	IDs []string
	// Status keeps only the requests of one status: StatusSuccess (Outcome ok) or
	// StatusFailure (any other outcome); "" keeps all. A History whose lookup index is
	// built lists the failed ones through their status index and the successful ones
	// through its listing without the failed ones' entries (keys only): a page of either
	// reads that page, and their count reads no request.
	Status string
	// Match, when set, keeps only the requests it answers true for.
	Match func(*Request) bool
	// Skip leaves out the first Skip requests selected (a page's offset).
	Skip int
	// Limit lists at most this many requests (0: all): a History then reads no more.
	Limit int

	// scan: a History reads Status and IDs from the records of the owner's (or scope's)
	// listing, not from its lookup index (not yet built for every request).
	scan bool
}

// The values of RequestQuery.Status.
const (
	// StatusSuccess selects the requests whose Outcome is ok (LiteLLM's status success).
	StatusSuccess = "success"
	// StatusFailure selects the requests of every other outcome (LiteLLM's failure).
	StatusFailure = "failure"
)

// status is req's RequestQuery.Status.
func (req *Request) status() string {
	if req.Outcome == completions.RequestOK {
		return StatusSuccess
	}
	return StatusFailure
}

// namedBy reports whether id names req: its ID in decimal, its RequestID or ResponseID.
func (req *Request) namedBy(id string) bool {
	return id != "" && (id == strconv.FormatInt(req.ID, 10) || id == req.RequestID || id == req.ResponseID)
}

// indexOnly reports whether q selects by owner, scope, status, time and ID alone: a
// History then counts and skips requests without reading them.
func (q *RequestQuery) indexOnly() bool {
	return q.RequestTag == "" && q.Match == nil && len(q.IDs) == 0 && (q.Status == "" || !q.scan)
}

// keeps reports whether q selects req, Owner aside.
func (q *RequestQuery) keeps(req *Request) bool {
	return (q.Tag == "" || req.Tag == q.Tag) &&
		(q.RequestTag == "" || slices.Contains(req.Tags, q.RequestTag)) &&
		(q.From.IsZero() || !req.Start.Before(q.From)) &&
		(q.Until.IsZero() || req.Start.Before(q.Until)) &&
		(q.Before <= 0 || req.ID < q.Before) &&
		(q.Status == "" || req.status() == q.Status) &&
		(len(q.IDs) == 0 || slices.ContainsFunc(q.IDs, req.namedBy)) &&
		(q.Match == nil || q.Match(req))
}

// RequestSource is a request history that can be listed: a Recorder (this process's
// recent requests, in memory) or a History (every replica's, in the store).
type RequestSource interface {
	// Each calls fn with the requests q selects, newest first, until fn returns false or
	// none is left. fn may keep what it is given.
	Each(ctx context.Context, q RequestQuery, fn func(Request) bool) error
	// Count is how many requests q selects (q.Skip aside).
	Count(ctx context.Context, q RequestQuery) (int, error)
}

var (
	_ RequestSource = (*Recorder)(nil)
	_ RequestSource = (*History)(nil)
)

// Each lists the recorded requests q selects, newest first (RequestSource); fn runs after
// the Recorder's lock is released.
func (r *Recorder) Each(ctx context.Context, q RequestQuery, fn func(Request) bool) error {
	r.mu.Lock()
	var out []Request
	n := len(r.ring)
	skip := q.Skip
	for i := 1; i <= n; i++ {
		req := &r.ring[((r.next-i)%n+n)%n]
		if req.Owner != q.Owner || !q.keeps(req) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
		c := *req
		c.Attempts = append([]completions.Attempt{}, req.Attempts...)
		c.Tags = slices.Clone(req.Tags)
		out = append(out, c)
	}
	r.mu.Unlock()
	for _, req := range out {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !fn(req) {
			return nil
		}
	}
	return nil
}

// Count is how many recorded requests q selects (RequestSource), q.Skip aside.
func (r *Recorder) Count(ctx context.Context, q RequestQuery) (int, error) {
	q.Skip, q.Limit = 0, 0
	n := 0
	err := r.Each(ctx, q, func(Request) bool { n++; return true })
	return n, err
}

// Take lists at most limit (all when limit ≤ 0) of the requests q selects in src, newest
// first.
func Take(ctx context.Context, src RequestSource, q RequestQuery, limit int) ([]Request, error) {
	out := []Request{}
	if limit > 0 {
		q.Limit = limit
	}
	err := src.Each(ctx, q, func(r Request) bool {
		out = append(out, r)
		return limit <= 0 || len(out) < limit
	})
	return out, err
}
