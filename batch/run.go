package batch

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
)

// Endings of a run that do not end the batch.
const (
	// endShutdown: the process stops (or the store failed); the batch is handed back.
	endShutdown ending = "shutdown"
	// endLost: another run took the batch over (this one was presumed dead).
	endLost ending = "lost"
)

// errLost is the cause a run's lines are cut with when another run took the batch over.
var errLost = errors.New("batch: taken over by another worker")

// lineResult is one answered line in store.BatchResults, keyed "<batch id>/<index>".
type lineResult struct {
	// OK: answered with a 2xx status (the output file); else the error file.
	OK bool `json:"ok"`
	// Line is the output or error file's line.
	Line    json.RawMessage `json:"line"`
	Usage   Usage           `json:"usage"`
	CostUSD float64         `json:"cost_usd,omitempty"`
}

func resultKey(id string, i int) string { return fmt.Sprintf("%s/%06d", id, i) }
func resultPrefix(id string) string     { return id + "/" }
func resultIndex(prefix, key string) (int, bool) {
	var i int
	if _, err := fmt.Sscanf(strings.TrimPrefix(key, prefix), "%d", &i); err != nil {
		return 0, false
	}
	return i, true
}

// run is one claim of a batch by this process.
type run struct {
	s   *Service
	rec record // as claimed

	// lineCtx is the lines' context: it ends at a shutdown or a take-over, not at a
	// cancel or an expiry (the lines in flight then finish).
	lineCtx     context.Context
	cancelLines context.CancelCauseFunc

	stopOnce sync.Once
	stopped  chan struct{} // closed when no more lines may start

	mu        sync.Mutex
	why       ending
	completed int
	failed    int
	usage     Usage
	cost      float64
}

// stop ends the dispatch of lines for reason e (the first reason wins, but a shutdown or
// a take-over overrides a cancel or an expiry: the batch is then not finalized here).
func (r *run) stop(e ending) {
	r.mu.Lock()
	if r.why == "" || e == endShutdown || e == endLost {
		if r.why != endLost {
			r.why = e
		}
	}
	r.mu.Unlock()
	r.stopOnce.Do(func() { close(r.stopped) })
}

// shutdown stops the run and cuts its lines in flight.
func (r *run) shutdown(cause error) {
	if errors.Is(cause, errLost) {
		r.stop(endLost)
	} else {
		r.stop(endShutdown)
	}
	r.cancelLines(cause)
}

// reason is why the run stopped ("" while it has not).
func (r *run) reason() ending {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.why
}

// add counts an answered line.
func (r *run) add(res *lineResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if res.OK {
		r.completed++
	} else {
		r.failed++
	}
	r.usage.add(res.Usage)
	r.cost += res.CostUSD
}

// handle is the queue's handler of a batch.
func (s *Service) handle(ctx context.Context, id string) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errShutdown
	}
	if s.held[id] != nil {
		// An expiry of this process (a read of the batch past its window) has it: it ends
		// the batch, and this job then finds it ended.
		s.mu.Unlock()
		return jobqueue.RetryLater(time.Second)
	}
	h := &holder{done: make(chan struct{})}
	s.held[id] = h
	s.wg.Add(1)
	s.runs.Add(1)
	exec := s.exec
	s.mu.Unlock()
	defer s.wg.Done()
	defer s.runs.Done()
	defer s.release(id, h)

	rec, wait, err := s.claim(ctx, id)
	if err != nil {
		return fmt.Errorf("batch: claim %s: %w", id, err)
	}
	if wait > 0 {
		return jobqueue.RetryLater(wait)
	}
	if rec == nil {
		return nil // ended, or gone
	}
	r := &run{s: s, rec: *rec, stopped: make(chan struct{})}
	r.lineCtx, r.cancelLines = context.WithCancelCause(context.WithoutCancel(ctx))
	defer r.cancelLines(nil)
	// The queue's context: a cancel (jobqueue.ErrCancelled) stops sending lines; a
	// shutdown cuts the lines in flight too.
	stopWatch := context.AfterFunc(ctx, func() {
		if cause := context.Cause(ctx); errors.Is(cause, jobqueue.ErrCancelled) {
			r.stop(endCancelled)
		} else {
			r.shutdown(fmt.Errorf("%w: %w", errShutdown, cause))
		}
	})
	defer stopWatch()
	unregister, ok := s.register(id, r)
	if !ok {
		s.handBack(r)
		return errShutdown
	}
	defer unregister()
	s.log.Info("batch: running", "batch", id, "start", rec.Starts, "requests", rec.Total)
	// The heartbeat goes on from the claim to the end — reading what was answered, the
	// lines, and the finalization, which may take longer than StaleAfter — so that no other
	// process takes the batch over while this one still works on it.
	stopAlive := r.keepAlive()
	defer stopAlive()

	end, err := r.execute(exec)
	switch {
	case err != nil:
		s.log.Warn("batch: run stopped; it is handed back and resumes", "batch", id, "err", err)
		s.handBack(r)
		return err
	case end == endShutdown:
		s.handBack(r)
		return errShutdown
	case end == endLost:
		s.log.Warn("batch: taken over by another worker (this one was presumed dead)", "batch", id)
		return nil
	}
	if err := s.finalize(r, end); err != nil {
		if errors.Is(err, errLost) {
			return nil
		}
		s.log.Warn("batch: finalizing stopped; it is handed back and resumes", "batch", id, "err", err)
		s.handBack(r)
		return err
	}
	return nil
}

// claim takes batch id for a run of this process, which holds id (s.held): a validating
// batch starts, a batch claimed by a run that is gone (its heartbeat is stale; a restart, a
// dead worker) is resumed. It returns nil when there is nothing to run, and a wait when a
// live run has it.
func (s *Service) claim(ctx context.Context, id string) (*record, time.Duration, error) {
	var out *record
	var wait time.Duration
	err := s.st.Update(ctx, func(tx store.Tx) error {
		out, wait = nil, 0
		rec, err := store.GetJSON[record](ctx, tx, store.Batches, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		switch rec.Status {
		case StatusValidating:
			rec.Status, rec.InProgressAt = StatusInProgress, s.now().UTC()
		case StatusInProgress, StatusCancelling, StatusFinalizing:
			// No other goroutine of this process has it (the caller holds id): only a
			// live run of another process does.
			dead, left := jobqueue.Stale(rec.LastSeen(), time.Now(), s.q.StaleAfter())
			if !dead {
				wait = max(left, s.q.StaleAfter()/4, time.Second) + 100*time.Millisecond
				return nil
			}
			if rec.diedTooOften() {
				rec.Ending = endCrashed
				s.log.Warn("batch: its runs died too often; it fails with what it has", "batch", id, "died", rec.Starts-rec.HandedBack)
			} else {
				s.log.Info("batch: resuming a batch whose run stopped", "batch", id, "starts", rec.Starts)
			}
		default:
			return nil
		}
		rec.startRun()
		out = &rec
		return store.PutJSON(ctx, tx, store.Batches, id, rec)
	})
	return out, wait, err
}

// register makes r batch id's run in this process (reads overlay its counts, Close cuts
// it) and returns what undoes that; false once the service is closed, when r must not start.
func (s *Service) register(id string, r *run) (unregister func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false
	}
	s.running[id] = r
	return func() {
		s.mu.Lock()
		delete(s.running, id)
		s.mu.Unlock()
	}, true
}

// diedTooOften reports whether r's runs died MaxStarts times without handing it back and
// it has no ending yet: it then fails with what it has.
func (r *record) diedTooOften() bool {
	return r.Starts-r.HandedBack >= MaxStarts && r.Ending == ""
}

// startRun marks r as claimed by a new run: one more start, its heartbeat now.
func (r *record) startRun() {
	now := time.Now().UTC()
	r.Starts++
	r.StartedAt, r.HeartbeatAt = now, now
}

// handBack gives the run's batch back (a shutdown, or a failure of the store): its
// heartbeat is set in the past so that the next run, in any process, resumes it at once,
// and the start is not counted as a death.
func (s *Service) handBack(r *run) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.lineCtx), 10*time.Second)
	defer cancel()
	err := s.st.Update(ctx, func(tx store.Tx) error {
		cur, err := store.GetJSON[record](ctx, tx, store.Batches, r.rec.ID)
		if err != nil {
			return err
		}
		if cur.Starts != r.rec.Starts || !cur.Running() {
			return nil
		}
		cur.HandedBack++
		cur.HeartbeatAt = time.Unix(1, 0).UTC()
		r.flushInto(&cur)
		return store.PutJSON(ctx, tx, store.Batches, cur.ID, cur)
	})
	if err != nil {
		s.log.Warn("batch: hand back (the batch resumes once its heartbeat is stale)", "batch", r.rec.ID, "err", err)
	}
}

// flushInto copies the run's counts into cur.
func (r *run) flushInto(cur *record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur.Completed, cur.Failed, cur.Usage, cur.CostUSD = r.completed, r.failed, r.usage, r.cost
}

// flushEvery is how often a run refreshes its heartbeat and counts in the record, and
// looks for a cancel asked in another process.
func (s *Service) flushEvery() time.Duration {
	if sa := s.q.StaleAfter(); sa > 0 {
		return min(time.Second, jobqueue.HeartbeatInterval(sa))
	}
	return time.Second
}

// execute sends the batch's lines not answered yet, Concurrency at a time, until every
// line is answered or the run stops; it returns how the run ended. An error (the store
// failed) leaves the batch to the next run.
func (r *run) execute(exec Executor) (ending, error) {
	s, rec := r.s, &r.rec
	if rec.Ending != "" { // finalizing, or failed for its deaths
		return rec.Ending, nil
	}
	if rec.Status == StatusCancelling {
		return endCancelled, nil
	}
	if !s.now().Before(rec.ExpiresAt) {
		return endExpired, nil
	}
	done, err := r.load()
	if err != nil {
		return "", err
	}
	input, err := s.files.openInput(r.lineCtx, rec.Owner, rec.InputFileID)
	if err != nil {
		return "", err
	}
	defer input.Close()

	beatDone := make(chan struct{})
	go r.heartbeat(beatDone)
	defer func() { r.stopOnce.Do(func() { close(r.stopped) }); <-beatDone }()

	sem := make(chan struct{}, s.concurrency)
	var wg sync.WaitGroup
	br := bufio.NewReaderSize(input, 64<<10)
	idx := 0
	var readErr error
dispatch:
	for lineNo := 1; ; lineNo++ {
		b, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			readErr = err
			break
		}
		if line := inputLineText(b, lineNo); len(line) > 0 {
			i := idx
			idx++
			if !done[i] {
				select {
				case <-r.stopped:
					break dispatch
				case sem <- struct{}{}:
				}
				if !s.now().Before(rec.ExpiresAt) {
					r.stop(endExpired)
				}
				select {
				case <-r.stopped:
					<-sem
					break dispatch
				default:
				}
				wg.Add(1)
				go func(i, lineNo int, line []byte) {
					defer wg.Done()
					defer func() { <-sem }()
					r.runLine(exec, i, lineNo, line)
				}(i, lineNo, line)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	wg.Wait()
	if why := r.reason(); why != "" {
		return why, nil
	}
	if readErr != nil {
		return "", fmt.Errorf("read the input file: %w", readErr)
	}
	return endCompleted, nil
}

// load reads the lines already answered (by earlier runs) and counts them.
func (r *run) load() (map[int]bool, error) {
	done := map[int]bool{}
	prefix := resultPrefix(r.rec.ID)
	after := ""
	for {
		entries, err := r.s.st.List(r.lineCtx, store.BatchResults, store.ListOptions{Prefix: prefix, After: after, Limit: 256})
		if err != nil {
			return nil, fmt.Errorf("read the answered lines: %w", err)
		}
		for _, e := range entries {
			i, ok := resultIndex(prefix, e.Key)
			var res lineResult
			if !ok || decode(e.Value, &res) != nil {
				continue
			}
			done[i] = true
			r.add(&res)
		}
		if len(entries) < 256 {
			return done, nil
		}
		after = entries[len(entries)-1].Key
	}
}

// keepAlive refreshes the run's heartbeat in the record every flushEvery until the returned
// stop is called (heartbeat also flushes the counts and watches for a cancel, while lines
// are sent).
func (r *run) keepAlive() (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(r.s.flushEvery())
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-r.lineCtx.Done():
				return
			case <-t.C:
			}
			err := r.s.st.Update(r.lineCtx, func(tx store.Tx) error {
				cur, err := store.GetJSON[record](r.lineCtx, tx, store.Batches, r.rec.ID)
				if err != nil || cur.Starts != r.rec.Starts || !cur.Running() {
					return err // gone, taken over or ended: nothing to keep alive
				}
				cur.HeartbeatAt = time.Now().UTC()
				return store.PutJSON(r.lineCtx, tx, store.Batches, cur.ID, cur)
			})
			if err != nil && r.lineCtx.Err() == nil && !errors.Is(err, store.ErrNotFound) {
				r.s.log.Warn("batch: heartbeat", "batch", r.rec.ID, "err", err)
			}
		}
	}()
	return func() { close(quit); <-done }
}

// heartbeat refreshes the run's heartbeat and counts in the record every flushEvery until
// the run stops; it stops the run when the record shows a cancel (cancelled), a take-over
// (lost) or the end of the completion window (expired).
func (r *run) heartbeat(done chan struct{}) {
	defer close(done)
	s := r.s
	t := time.NewTicker(s.flushEvery())
	defer t.Stop()
	for {
		select {
		case <-r.stopped:
			return
		case <-t.C:
		}
		lost, cancelled := false, false
		err := s.st.Update(r.lineCtx, func(tx store.Tx) error {
			lost, cancelled = false, false
			cur, err := store.GetJSON[record](r.lineCtx, tx, store.Batches, r.rec.ID)
			if errors.Is(err, store.ErrNotFound) {
				lost = true
				return nil
			}
			if err != nil {
				return err
			}
			if cur.Starts != r.rec.Starts || !cur.Running() {
				lost = true
				return nil
			}
			cancelled = cur.Status == StatusCancelling
			cur.HeartbeatAt = time.Now().UTC()
			r.flushInto(&cur)
			return store.PutJSON(r.lineCtx, tx, store.Batches, cur.ID, cur)
		})
		switch {
		case err != nil && r.lineCtx.Err() == nil:
			s.log.Warn("batch: heartbeat", "batch", r.rec.ID, "err", err)
		case lost:
			r.shutdown(errLost)
			return
		case cancelled:
			r.stop(endCancelled)
		}
		if !s.now().Before(r.rec.ExpiresAt) {
			r.stop(endExpired)
		}
	}
}

// newRequestID returns a line's id: "batch_req_" and 24 hex digits.
func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "batch_req_" + hex.EncodeToString(b[:])
}

// runLine answers line i (lineNo of the file) and stores its result. A line whose run
// stops before it is answered stores nothing: it is sent by the next run, or written as
// never answered when the batch ends.
func (r *run) runLine(exec Executor, i, lineNo int, raw []byte) {
	s, rec := r.s, &r.rec
	id := newRequestID()
	l, verr := parseLine(raw, lineNo)
	var res *lineResult
	switch {
	case verr != nil: // checked at upload: only a file changed under the store
		res = errorResult(id, "", CodeInternal, verr.Error())
	case streams(l.Body):
		body, _ := json.Marshal(map[string]any{"error": map[string]any{
			"message": "stream: streaming is not supported in a batch: leave stream out or set it to false",
			"type":    "invalid_request_error", "param": "stream", "code": nil}})
		res = answeredResult(id, l.CustomID, Answer{StatusCode: http.StatusBadRequest, RequestID: id, Body: body})
	default:
		call := Call{BatchID: rec.ID, Owner: rec.Owner, Credential: rec.Credential, RequestID: id,
			CustomID: l.CustomID, URL: rec.Endpoint, Body: l.Body}
		var tries lineTries
		for {
			ans, err := exec.Execute(r.lineCtx, call)
			if err != nil {
				if errors.Is(err, ErrKeyRevoked) {
					r.stop(endKeyRevoked)
					return
				}
				if r.lineCtx.Err() != nil {
					return // a shutdown or a take-over: the line runs again later
				}
				s.log.Error("batch: a line could not be sent", "batch", rec.ID, "request_id", id, "err", err)
				res = errorResult(id, l.CustomID, CodeInternal, fmt.Sprintf("internal error: the line was not answered (request id %s)", id))
				break
			}
			if wait, again := lineRetry(ans, tries, s.maxTimeout); again {
				switch {
				case ans.StatusCode >= 500 && ans.TimedOut:
					tries.server++
					tries.timeout++
					s.log.Warn("batch: a line whose upstream call timed out is sent again", "batch", rec.ID, "request_id", id,
						"status", ans.StatusCode, "retry", tries.timeout, "of", s.maxTimeout, "wait", min(wait, s.maxWait))
				case ans.StatusCode >= 500:
					tries.server++
					s.log.Warn("batch: a line answered with a server error is sent again", "batch", rec.ID, "request_id", id,
						"status", ans.StatusCode, "retry", tries.server, "of", maxLineServerRetries, "wait", min(wait, s.maxWait))
				default:
					tries.rate++
				}
				t := time.NewTimer(min(wait, s.maxWait))
				select {
				case <-t.C:
					continue
				case <-r.stopped:
					t.Stop()
					return // cancelled or expired while it waited: never answered
				case <-r.lineCtx.Done():
					t.Stop()
					return
				}
			}
			if ans.Billed && ans.Retryable && ans.StatusCode >= 500 {
				s.log.Error("batch: a line answered with a server error after its upstream call was billed: that answer is kept (error file), not sent again", "batch", rec.ID,
					"request_id", id, "status", ans.StatusCode)
			} else if ans.Retryable && ans.StatusCode >= 500 {
				s.log.Error("batch: a line still answered with a server error after its retries: that answer is kept (error file)", "batch", rec.ID,
					"request_id", id, "status", ans.StatusCode, "tries", tries.server+1, "timed_out", ans.TimedOut)
			}
			res = answeredResult(id, l.CustomID, ans)
			break
		}
	}
	b, err := json.Marshal(res)
	if err == nil {
		// A few tries: the answer is paid for.
		for try := 0; try < 3; try++ {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(r.lineCtx), 30*time.Second)
			err = s.st.Put(ctx, store.BatchResults, resultKey(rec.ID, i), b)
			cancel()
			if err == nil || r.lineCtx.Err() != nil {
				break
			}
			time.Sleep(time.Duration(100<<try) * time.Millisecond)
		}
	}
	if err != nil {
		// The line's answer is lost: the run stops and is handed back, so that the next run
		// sends it again (the batch does not end without it).
		s.log.Error("batch: store a line's answer (the run stops; the line will be sent again)", "batch", rec.ID, "request_id", id, "err", err)
		r.shutdown(fmt.Errorf("batch: store a line's answer: %w", err))
		return
	}
	r.add(res)
}

// streams reports whether a request body asks to be streamed.
func streams(body json.RawMessage) bool {
	var b struct {
		Stream *bool `json:"stream"`
	}
	return json.Unmarshal(body, &b) == nil && b.Stream != nil && *b.Stream
}

// answeredResult is the result of a line the endpoint answered.
func answeredResult(id, customID string, ans Answer) *lineResult {
	body := ans.Body
	if !json.Valid(body) {
		body, _ = json.Marshal(string(body))
	}
	rid := ans.RequestID
	if rid == "" {
		rid = id
	}
	line, _ := json.Marshal(OutputLine{ID: id, CustomID: customID,
		Response: &LineResponse{StatusCode: ans.StatusCode, RequestID: rid, Body: body}})
	res := &lineResult{OK: ans.StatusCode >= 200 && ans.StatusCode < 300, Line: line}
	res.Usage, res.CostUSD = usageOf(body)
	return res
}

// errorResult is the result of a line never answered.
func errorResult(id, customID, code, msg string) *lineResult {
	line, _ := json.Marshal(OutputLine{ID: id, CustomID: customID, Error: &LineError{Code: code, Message: msg}})
	return &lineResult{Line: line}
}

// answerCosts is the gateway's costs member of an answer.
type answerCosts struct {
	TotalTokensCost float64 `json:"total_tokens_cost"`
	SearchCost      float64 `json:"search_cost"`
}

// usageOf reads the usage and the gateway's cost of an endpoint's answer: chat and text
// completions (prompt and completion tokens), responses (input and output tokens) and
// embeddings (prompt tokens); the cost from the switchyard extension or, for
// embeddings, usage.costs.
func usageOf(body []byte) (Usage, float64) {
	var b struct {
		Usage *struct {
			PromptTokens        int `json:"prompt_tokens"`
			CompletionTokens    int `json:"completion_tokens"`
			InputTokens         int `json:"input_tokens"`
			OutputTokens        int `json:"output_tokens"`
			TotalTokens         int `json:"total_tokens"`
			PromptTokensDetails *struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
			CompletionTokensDetails *struct {
				ReasoningTokens int `json:"reasoning_tokens"`
			} `json:"completion_tokens_details"`
			InputTokensDetails *struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"input_tokens_details"`
			OutputTokensDetails *struct {
				ReasoningTokens int `json:"reasoning_tokens"`
			} `json:"output_tokens_details"`
			Costs *answerCosts `json:"costs"`
		} `json:"usage"`
		Switchyard *struct {
			Costs *answerCosts `json:"costs"`
		} `json:"switchyard"`
	}
	if json.Unmarshal(body, &b) != nil || b.Usage == nil {
		return Usage{}, 0
	}
	u := b.Usage
	out := Usage{InputTokens: u.PromptTokens + u.InputTokens, OutputTokens: u.CompletionTokens + u.OutputTokens, TotalTokens: u.TotalTokens}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.InputTokens + out.OutputTokens
	}
	if d := u.PromptTokensDetails; d != nil {
		out.InputTokensDetails.CachedTokens += d.CachedTokens
	}
	if d := u.InputTokensDetails; d != nil {
		out.InputTokensDetails.CachedTokens += d.CachedTokens
	}
	if d := u.CompletionTokensDetails; d != nil {
		out.OutputTokensDetails.ReasoningTokens += d.ReasoningTokens
	}
	if d := u.OutputTokensDetails; d != nil {
		out.OutputTokensDetails.ReasoningTokens += d.ReasoningTokens
	}
	costs := u.Costs
	if b.Switchyard != nil && b.Switchyard.Costs != nil {
		costs = b.Switchyard.Costs
	}
	cost := 0.0
	if costs != nil {
		cost = costs.TotalTokensCost + costs.SearchCost
	}
	return out, cost
}
