package completions

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
)

// OpenAI's background mode of the Responses API (background: true): the request is
// answered at once with the response in status queued, and answered on in this process;
// clients poll GET /v1/responses/{id} (Gateway.StoredResponse) until it ends, and may
// cancel it (Gateway.CancelResponse). The run lives in the stored response's record (its
// run: an id, a heartbeat, a cancel asked), so replicas on one store see its status, a
// cancel asked on another replica stops it at the next heartbeat, and a run whose process
// died (its heartbeat older than StoredResponsesOptions.BackgroundStaleAfter) reads failed
// — as batch runs and the job queues' workers do (jobqueue.KeepAlive, jobqueue.Stale). A run
// is not taken over by another process: its request is not replayed (it may have been
// paid for), the client sends it again.

// DefaultBackgroundStaleAfter is how long a background response's heartbeat may stay
// unchanged before its run counts as dead, by default.
const DefaultBackgroundStaleAfter = 30 * time.Second

// ErrSynchronousResponse is CancelResponse's error for a response that was not asked in
// the background (OpenAI: "Cannot cancel a synchronous response.").
var ErrSynchronousResponse = errors.New("completions: Cannot cancel a synchronous response.")

// ErrGatewayClosed means the Gateway was closed: it starts no more background responses.
// It is the only call a closed Gateway refuses (see Gateway.Close).
var ErrGatewayClosed = errors.New("completions: the gateway is closed")

// The causes a background run's context ends with.
var (
	errBackgroundCancelled = errors.New("completions: the background response was cancelled")
	errBackgroundLost      = errors.New("completions: the background response's record was deleted or ended elsewhere")
)

// backgroundRun is the run of a background response, in its stored record.
type backgroundRun struct {
	// ID names this run (a record shows the run that owns it).
	ID string `json:"id"`
	// Heartbeat is when the run's process last said it was alive.
	Heartbeat time.Time `json:"heartbeat"`
	// CancelRequested is set by a cancel (on any replica); the run stops at its next beat.
	CancelRequested bool `json:"cancel_requested,omitempty"`
}

// unfinished reports whether status is a background response's before its end.
func unfinished(status string) bool { return status == "queued" || status == "in_progress" }

// backgroundRuns are the background responses this process runs.
type backgroundRuns struct {
	mu     sync.Mutex
	closed bool
	runs   map[string]context.CancelCauseFunc // by response id
	logs   map[string]*eventLog               // the events of the streamed ones, by response id
	wg     sync.WaitGroup
}

// setLog registers the event log of response id, run by this process.
func (b *backgroundRuns) setLog(id string, l *eventLog) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.logs == nil {
		b.logs = map[string]*eventLog{}
	}
	b.logs[id] = l
}

// log is the event log of response id when this process runs it (nil otherwise).
func (b *backgroundRuns) log(id string) *eventLog {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.logs[id]
}

// add registers the run of response id (cancel ends it); false once closed.
func (b *backgroundRuns) add(id string, cancel context.CancelCauseFunc) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	if b.runs == nil {
		b.runs = map[string]context.CancelCauseFunc{}
	}
	b.runs[id] = cancel
	b.wg.Add(1)
	return true
}

// done unregisters the run of response id.
func (b *backgroundRuns) done(id string) {
	b.mu.Lock()
	delete(b.runs, id)
	delete(b.logs, id)
	b.mu.Unlock()
	b.wg.Done()
}

// cancel ends the run of response id in this process, if it runs it.
func (b *backgroundRuns) cancel(id string, cause error) {
	b.mu.Lock()
	c := b.runs[id]
	b.mu.Unlock()
	if c != nil {
		c(cause)
	}
}

// running reports whether this process runs response id.
func (b *backgroundRuns) running(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.runs[id] != nil
}

// close cuts every run and waits for them to end (and record their end) or ctx.
func (b *backgroundRuns) close(ctx context.Context) error {
	b.mu.Lock()
	b.closed = true
	for _, c := range b.runs {
		c(ErrGatewayClosed)
	}
	b.mu.Unlock()
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("completions: background responses still ending: %w", ctx.Err())
	}
}

// backgroundStaleAfter is the configured BackgroundStaleAfter or its default.
func (g *Gateway) backgroundStaleAfter() time.Duration {
	if d := g.opts.StoredResponses.BackgroundStaleAfter; d > 0 {
		return d
	}
	return DefaultBackgroundStaleAfter
}

// checkBackground checks the settings a background request may not have (ToChatRequest).
func (r *ResponsesRequest) checkBackground() error {
	if r.Background == nil || !*r.Background {
		return nil
	}
	switch {
	case r.Store != nil && !*r.Store:
		return invalid("background", "Background mode requires store to be true: a background response is stored so that it can be read back (send store: true or leave it out)")
	case present(r.Conversation):
		return invalid("background", "cannot be used with conversation on this gateway: continue with previous_response_id instead")
	}
	return nil
}

// StartBackgroundResponse answers r (background: true; req is its gateway request, as
// ToChatRequest and ToRequest give it) in the background for owner under scope: it stores
// the response in status queued and returns it at once; the answer is then stored under
// the same id as StoreResponse would (completed, incomplete, or failed with an error
// object for an upstream failure) unless a cancel or a delete came first. What Complete
// refuses before calling a model (a *ValidationError for an unknown model or provider,
// ErrModelNotAllowed, a spent budget's ErrBudgetExceeded or its *TokenRateError, the key's
// per-model limits refusing every model: *ModelBudgetError, *ModelRateError) is
// returned at once and nothing is stored; the budget's call is taken when the run starts. The run
// may last StoredResponsesOptions.BackgroundTimeout (unless the request or the scope
// bounds it), is held to the scope's budget, sees the same observers and ledger, keeps
// ctx's values but not its end, and stops on Close.
func (g *Gateway) StartBackgroundResponse(ctx context.Context, scope Scope, owner string, r *ResponsesRequest, req *Request) (*ResponseObject, error) {
	switch {
	case r.Background == nil || !*r.Background:
		return nil, invalid("background", "must be true to start a background response")
	case !g.StoresResponses():
		return nil, invalid("background", "is not supported: this gateway keeps no responses (serve --responses-store=false), and a background response must be stored")
	}
	if err := r.checkBackground(); err != nil {
		return nil, err
	}
	if r.conversationID != "" {
		return nil, invalid("background", "cannot be used with conversation on this gateway: continue with previous_response_id instead")
	}
	if req == nil {
		return nil, errNilRequest()
	}
	// What Complete would refuse before calling a model (an unknown model, one the key may
	// not call, a spent budget) is refused now, with Complete's error, not queued to fail.
	if err := g.admissible(ctx, scope, req); err != nil {
		return nil, err
	}
	now := g.opts.Now()
	created := scope.Received
	if created.IsZero() {
		created = now
	}
	id := newBackgroundID("resp")
	o := NewResponseObject(r, id, created)
	o.Status, o.Background, o.Store = "queued", true, true
	own := r.ownItems()
	run := &backgroundRun{ID: newBackgroundID("run"), Heartbeat: time.Now().UTC()}
	kept := *o
	// The input is stored only as the pre_call guardrails let it through (masked): with
	// any to run, the run writes it once they ran (runBackground); the record holds none
	// until then.
	stored := own
	if pre, _ := g.guardrailsFor(scope, req, GuardrailPreCall); len(pre) > 0 {
		stored = []ResponsesItem{}
	}
	rec := &storedResponse{Owner: owner, Previous: r.PreviousResponseID, Input: stored, Response: &kept, Expires: g.responseExpiry(now), Run: run}
	var log *eventLog
	if r.Stream {
		rec.Stream = &backgroundStream{}
		log = newEventLog(g.backgroundStreamBounds())
	}
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	if !g.bg.add(id, cancel) {
		cancel(ErrGatewayClosed)
		return nil, ErrGatewayClosed
	}
	if log != nil {
		g.bg.setLog(id, log)
	}
	b, err := json.Marshal(rec)
	if err == nil {
		err = g.opts.Store.Update(ctx, func(tx store.Tx) error {
			if err := tx.Put(ctx, store.Responses, id, b); err != nil {
				return err
			}
			return tx.Put(ctx, store.ResponseExpiry, expiryKey(rec.Expires, id), nil)
		})
	}
	if err != nil {
		cancel(err)
		g.bg.done(id)
		return nil, fmt.Errorf("completions: store background response %s: %w", id, err)
	}
	if scope.CallTimeout == 0 {
		scope.CallTimeout = g.opts.StoredResponses.BackgroundTimeout
		if scope.CallTimeout <= 0 {
			scope.CallTimeout = DefaultBackgroundTimeout
		}
	}
	go g.runBackground(runCtx, cancel, scope, owner, rec, own, req, log)
	return o, nil
}

// runBackground answers the background response rec under run's context: own is its
// request's own input items (stored once the pre_call guardrails masked them); log, for a
// streamed one, records its events.
func (g *Gateway) runBackground(ctx context.Context, cancel context.CancelCauseFunc, scope Scope, owner string, rec *storedResponse, own []ResponsesItem, req *Request, log *eventLog) {
	id, runID := rec.Response.ID, rec.Run.ID
	if scope.BackgroundDone != nil {
		defer scope.BackgroundDone()
	}
	defer g.bg.done(id)
	defer cancel(nil)
	// The heartbeat also watches for a cancel asked on another replica: at least every
	// second, as a batch run does.
	stopBeat := jobqueue.KeepAlive(ctx, min(g.backgroundStaleAfter(), 4*time.Second), g.backgroundBeat(id, runID), cancel,
		errBackgroundLost, errBackgroundCancelled, func(err error) {
			g.log.Warn("responses: background heartbeat", "response_id", id, "err", err)
		})
	// The pre_call guardrails run first: the record gets the input as they let it through.
	greq, err := g.guardRequest(ctx, scope, req, nil)
	if _, werr := g.updateRun(ctx, id, runID, func(cur *storedResponse) bool {
		if cur.Response.Status != "queued" {
			return false
		}
		cur.Response.Status = "in_progress"
		if err == nil {
			cur.Input = maskItems(own, greq.masked)
		}
		return true
	}, nil); werr != nil {
		g.log.Warn("responses: mark a background response in progress", "response_id", id, "err", werr)
	}
	o := *rec.Response
	o.Output = []ResponseOutputItem{}
	var resp *Response
	streamed := false
	if err == nil && log != nil {
		streamed, err = g.streamBackground(ctx, cancel, scope, id, runID, greq, &o, log)
	} else if err == nil {
		resp, err = g.Complete(ctx, scope, greq)
	}
	stopBeat()

	var cf *ContentFilterError
	cause := context.Cause(ctx)
	switch {
	case err == nil && streamed:
		o.Store = true // the stream writer answered o whole
	case err == nil:
		o.Complete(resp)
	case errors.As(err, &cf):
		o.Complete(filteredResponse(cf))
	case errors.Is(cause, errBackgroundCancelled), errors.Is(cause, errBackgroundLost):
		// A cancel ended it (the record says cancelled, or CancelRequested), or the record
		// is gone: nothing to write but a cancel asked whose mark is not a status yet.
		o.Status, o.Error = "cancelled", nil
	case errors.Is(cause, ErrGatewayClosed):
		o.Status, o.Error = "failed", &ResponseError{Code: "server_error", Message: "the gateway shut down before this background response was answered; send the request again"}
	case streamed: // the stream failed after it started: the writer said how
		o.Store = true
	default:
		o.Status, o.Error = "failed", &ResponseError{Code: backgroundErrorCode(err), Message: strings.TrimPrefix(err.Error(), "completions: ")}
	}
	o.Store = true
	if log != nil {
		if o.Status == "cancelled" || errors.Is(cause, ErrGatewayClosed) {
			log.stop()
		}
		log.appendTerminal(&o)
	}
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), storeBackgroundTimeout)
	defer wcancel()
	var frames []streamFrame
	if log != nil {
		frames, _ = log.unstored(true)
	}
	wrote, err := g.updateRun(wctx, id, runID, func(cur *storedResponse) bool {
		if !unfinished(cur.Response.Status) {
			return false // cancelled (or ended) elsewhere: that stands
		}
		kept := o
		cur.Response = &kept
		if cur.Stream != nil && log != nil {
			cur.Stream.DroppedFrom = log.droppedFrom()
		}
		return true
	}, frames, o.Output...)
	if log != nil {
		if !wrote && err == nil {
			// Ended elsewhere (a cancel asked on another replica): the events this run made
			// and a terminal event made from the record are stored after them, the one
			// history every reader replays (readers elsewhere wait for it).
			g.storeCancelledTerminal(wctx, id, runID, log)
		}
		log.seal()
	}
	if err != nil {
		g.log.Warn("responses: the background answer is not stored", "response_id", id, "err", err)
		return
	}
	if wrote && o.Status != "failed" && o.Status != "cancelled" {
		g.KeepResponseItems(owner, &o)
		// A delete that committed after the write above forgets these items itself (it
		// deletes the record as it then is); one that committed before this keep forgot
		// nothing yet kept: drop them when the record is gone (or unreadable) now.
		if cur, err := readRecord(wctx, g.opts.Store, id); err != nil || cur == nil || cur.Run == nil || cur.Run.ID != runID {
			g.forget(id, &storedResponse{Owner: owner, Response: &o})
		}
	}
}

// storeCancelledTerminal records the events of a run whose record another replica ended
// (cancelled): the events before the cut, and a terminal event made from the record.
func (g *Gateway) storeCancelledTerminal(ctx context.Context, id, runID string, log *eventLog) {
	cur, err := readRecord(ctx, g.opts.Store, id)
	if err != nil || cur == nil || cur.Run == nil || cur.Run.ID != runID {
		return
	}
	log.stop() // drops a terminal event this run made: the record's status stands
	log.appendTerminal(cur.Response)
	frames, _ := log.unstored(true)
	err = g.opts.Store.Update(ctx, func(tx store.Tx) error {
		if c, err := readRecord(ctx, tx, id); err != nil || c == nil || c.Run == nil || c.Run.ID != runID {
			return err
		}
		if end, err := storedTerminalSeq(ctx, tx, id); err != nil || end >= 0 {
			return err // a reader ended the stream from the record (this run seemed dead)
		}
		return putFrames(ctx, tx, id, frames)
	})
	if err != nil {
		g.log.Warn("responses: the background stream's last events are not stored", "response_id", id, "err", err)
	}
}

// streamBackground streams the answer of background response id (run runID) into log,
// writing its events to the store as they come: started reports whether the stream
// started (the writer then answered o, its status failed on a failure it reported).
func (g *Gateway) streamBackground(ctx context.Context, cancel context.CancelCauseFunc, scope Scope, id, runID string, req *Request, o *ResponseObject, log *eventLog) (started bool, err error) {
	st, err := g.Stream(ctx, scope, req)
	var cf *ContentFilterError
	if errors.As(err, &cf) {
		f := *o
		f.Output = []ResponseOutputItem{}
		f.Complete(filteredResponse(cf))
		WriteResponsesEvents(log, &f)
		*o = f
		return true, nil
	}
	if err != nil {
		return false, err
	}
	flushCtx, stopFlush := context.WithCancel(context.WithoutCancel(ctx))
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		t := time.NewTicker(backgroundFlushEvery)
		defer t.Stop()
		for {
			select {
			case <-flushCtx.Done():
				return
			case <-t.C:
				if err := g.flushEvents(flushCtx, id, runID, log, cancel); err != nil && flushCtx.Err() == nil {
					g.log.Warn("responses: store a background stream's events", "response_id", id, "err", err)
				}
			}
		}
	}()
	o.Status = "in_progress"
	log.setCut(func() bool { return ctx.Err() != nil }) // a cancelled run's last events say nothing true
	err = WriteResponsesStreamWith(log, st, o, ResponsesStreamOptions{})
	stopFlush()
	<-flushed
	return true, err
}

// storeBackgroundTimeout bounds the write of a background response's end.
const storeBackgroundTimeout = 10 * time.Second

// filteredResponse is the answer of a request a content filter refused (see the server's
// contentFilteredResponse): an incomplete response with the usage the call is billed.
func filteredResponse(cf *ContentFilterError) *Response {
	resp := &Response{FinishReason: "content_filter", Attempts: cf.Attempts, ResponseMessageID: cf.ResponseMessageID, Usage: cf.Usage, UsageEstimated: cf.UsageEstimated}
	resp.Provider, resp.Model, _ = strings.Cut(cf.Model, "/")
	if resp.ResponseMessageID == "" {
		resp.ResponseMessageID = newBackgroundID("filtered")
	}
	return resp
}

// backgroundErrorCode is the code of a failed background response's error, OpenAI's.
func backgroundErrorCode(err error) string {
	switch {
	case errors.Is(err, ErrBudgetExceeded), errors.Is(err, ErrTokenRate), errors.Is(err, ErrBudgetBusy), errors.Is(err, ErrLimited):
		return "rate_limit_exceeded"
	case errors.Is(err, ErrGuardrailBlocked): // what the synchronous surfaces answer 400 with
		return "guardrail_violation"
	case errors.Is(err, ErrInvalid):
		return "invalid_prompt"
	}
	return "server_error"
}

// updateRun changes the record of background response id while run runID owns it: change
// returns whether to write it. It reports whether it wrote; a record gone or owned by
// another run is left alone. frames are stored stream events; outputs are indexed for
// item_reference.
func (g *Gateway) updateRun(ctx context.Context, id, runID string, change func(*storedResponse) bool, frames []streamFrame, outputs ...ResponseOutputItem) (bool, error) {
	wrote := false
	err := g.opts.Store.Update(ctx, func(tx store.Tx) error {
		wrote = false
		cur, err := readRecord(ctx, tx, id)
		if err != nil || cur == nil || cur.Run == nil || cur.Run.ID != runID || !change(cur) {
			return err
		}
		b, err := json.Marshal(cur)
		if err != nil {
			return err
		}
		if err := tx.Put(ctx, store.Responses, id, b); err != nil {
			return err
		}
		for _, out := range outputs {
			if err := tx.Put(ctx, store.ResponseItems, out.ID, []byte(id)); err != nil {
				return err
			}
		}
		if err := putFrames(ctx, tx, id, frames); err != nil {
			return err
		}
		wrote = true
		return nil
	})
	return wrote, err
}

// readRecord reads the record of response id in tx: nil when there is none.
func readRecord(ctx context.Context, tx store.Reader, id string) (*storedResponse, error) {
	b, err := tx.Get(ctx, store.Responses, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec storedResponse
	if err := json.Unmarshal(b, &rec); err != nil || rec.Response == nil {
		return nil, fmt.Errorf("completions: decode response %s: %w", id, errors.Join(err, errors.New("no response")))
	}
	return &rec, nil
}

// backgroundBeat is the heartbeat of run runID of response id (jobqueue.KeepAlive): lost
// when the record is gone or another run's; cancelled when a cancel was asked (its status
// cancelled, or CancelRequested).
func (g *Gateway) backgroundBeat(id, runID string) jobqueue.Beat {
	return func(ctx context.Context) (lost, cancelled bool, err error) {
		err = g.opts.Store.Update(ctx, func(tx store.Tx) error {
			lost, cancelled = false, false
			cur, err := readRecord(ctx, tx, id)
			switch {
			case err != nil:
				return err
			case cur == nil || cur.Run == nil || cur.Run.ID != runID:
				lost = true
				return nil
			case cur.Run.CancelRequested || !unfinished(cur.Response.Status):
				cancelled = true
				return nil
			}
			cur.Run.Heartbeat = time.Now().UTC()
			b, err := json.Marshal(cur)
			if err != nil {
				return err
			}
			return tx.Put(ctx, store.Responses, id, b)
		})
		return lost, cancelled, err
	}
}

// endStale ends rec (response id) failed when its run is unfinished and its process died:
// its heartbeat older than BackgroundStaleAfter, and not a run of this process. It returns
// the record as it now is.
func (g *Gateway) endStale(ctx context.Context, id string, rec *storedResponse) (*storedResponse, error) {
	if rec.Run == nil || !unfinished(rec.Response.Status) || g.bg.running(id) {
		return rec, nil
	}
	if dead, _ := jobqueue.Stale(rec.Run.Heartbeat, time.Now(), g.backgroundStaleAfter()); !dead {
		return rec, nil
	}
	seen := rec.Run.Heartbeat
	failed := &ResponseError{Code: "server_error", Message: fmt.Sprintf("the process running this background response stopped (its last heartbeat was at %s); send the request again", seen.UTC().Format(time.RFC3339))}
	out := rec
	err := g.opts.Store.Update(ctx, func(tx store.Tx) error {
		cur, err := readRecord(ctx, tx, id)
		if err != nil || cur == nil {
			return err
		}
		out = cur
		if cur.Run == nil || !unfinished(cur.Response.Status) || !cur.Run.Heartbeat.Equal(seen) {
			return nil // ended, or alive again, since the read
		}
		cur.Response.Status, cur.Response.Error = "failed", failed
		b, err := json.Marshal(cur)
		if err != nil {
			return err
		}
		return tx.Put(ctx, store.Responses, id, b)
	})
	if err != nil {
		return nil, fmt.Errorf("completions: end the dead run of response %s: %w", id, err)
	}
	return out, nil
}

// CancelResponse cancels the background response id of owner: one not ended yet ends
// cancelled (its run stops, here or on the replica running it, with no further upstream
// work) and is returned so; one already ended is returned as it is, as OpenAI does. A
// response not asked in the background is ErrSynchronousResponse; one not kept for owner
// matches ErrResponseNotFound.
func (g *Gateway) CancelResponse(ctx context.Context, owner, id string) (*ResponseObject, error) {
	rec, err := g.storedResponse(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	if rec.Run == nil && !rec.Response.Background {
		return nil, ErrSynchronousResponse
	}
	if !unfinished(rec.Response.Status) {
		return rec.Response, nil
	}
	out := rec.Response
	err = g.opts.Store.Update(ctx, func(tx store.Tx) error {
		cur, err := readRecord(ctx, tx, id)
		if err != nil {
			return err
		}
		if cur == nil {
			return &responseNotFoundError{id: id}
		}
		out = cur.Response
		if cur.Run == nil || !unfinished(cur.Response.Status) {
			return nil
		}
		cur.Response.Status, cur.Run.CancelRequested = "cancelled", true
		b, err := json.Marshal(cur)
		if err != nil {
			return err
		}
		return tx.Put(ctx, store.Responses, id, b)
	})
	if err != nil {
		if errors.Is(err, ErrResponseNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("completions: cancel response %s: %w", id, err)
	}
	g.bg.cancel(id, errBackgroundCancelled)
	return out, nil
}

// newBackgroundID is a new id with prefix: prefix, "_" and 32 hex digits.
func newBackgroundID(prefix string) string {
	var b [16]byte
	rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}
