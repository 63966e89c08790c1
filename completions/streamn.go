package completions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ChoiceChunk is one event of a MultiStream: a fragment of choice Choice, or (Done) the
// end of that choice, whose response MultiStream.Response then returns.
type ChoiceChunk struct {
	// Choice is the choice's index as asked, 0 to n-1.
	Choice int
	// Chunk is the fragment; nil when Done.
	Chunk *Chunk
	// Done says the choice ended properly.
	Done bool
}

// ChoiceError is the failure of one choice of a MultiStream after the stream started: it
// ends the whole stream. Err is the choice's failure (a *StreamError, or the context's
// error when the caller went away).
type ChoiceError struct {
	Choice int
	Err    error
}

// Error names the choice and its failure.
func (e *ChoiceError) Error() string {
	return fmt.Sprintf("completions: choice %d: %v", e.Choice, e.Err)
}

// Unwrap returns the choice's failure.
func (e *ChoiceError) Unwrap() error { return e.Err }

// MultiStream is the n streamed answers of an n-choice request (Gateway.StreamN), read as
// one sequence of events. It is read by one goroutine; Close may be called from any.
type MultiStream struct {
	runs    []*choiceRun // by choice index; nil for a choice that failed before it started
	choices []int        // the indices of the choices that started, in order
	events  chan choiceEvent
	done    chan struct{} // closed by stop: the pumps leave
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	stopped sync.Once

	ack    chan struct{} // the pump whose fragment Recv returned last, to let go on
	live   int           // choices not yet ended
	err    error         // the failure that ended the stream
	onWait func()
}

// errMultiClosed answers Recv on a MultiStream closed before its end.
var errMultiClosed = fmt.Errorf("completions: stream closed before its end: %w", context.Canceled)

// choiceRun is one choice's stream and its pump's hand-over channel.
type choiceRun struct {
	i   int
	st  *ResponseStream
	ack chan struct{} // one slot: Recv hands the turn back without waiting
}

type choiceEvent struct {
	i   int
	c   *Chunk
	err error
}

// StreamN streams req n times at once — n answers, each with req's models, retries,
// fallbacks and continuations, billed and recorded as n requests, as CompleteN does — for a
// client that asks for n streamed choices (OpenAI's n with stream). It returns once every
// choice's stream has started or failed, so that the caller knows the outcome before it
// answers: the choices that started, and the failures of the others (a started choice is
// paid for and never dropped because a sibling failed). A started choice keeps its index
// as asked, so the indices of a stream with failed choices have gaps. err is the first
// failure when none started. Only stateless requests take n above 1 (else a
// *ValidationError naming n); as for CompleteN, the choices neither use nor fill the
// response cache (each would be the same answer). The streams are bound to ctx:
// cancelling it stops all of them. The caller must Close the MultiStream.
func (g *Gateway) StreamN(ctx context.Context, scope Scope, req *Request, n int) (m *MultiStream, failed []error, err error) {
	if g.breakers == nil {
		return nil, nil, ErrZeroGateway
	}
	if req == nil {
		return nil, nil, errNilRequest()
	}
	if err := checkChoices(req, n); err != nil {
		return nil, nil, err
	}
	n = max(n, 1)
	// The pre_call guardrails run once for the n streams.
	if req, err = g.guardRequest(ctx, scope, req, nil); err != nil {
		return nil, nil, err
	}
	// One context for the n streams: a choice failing mid-stream stops its siblings.
	cctx, cancel := context.WithCancel(ctx)
	streams := make([]*ResponseStream, n)
	errs := make([]error, n)
	eachChoice(req, n, func(i int, r *Request) { streams[i], errs[i] = g.Stream(cctx, scope, r) })
	m = &MultiStream{runs: make([]*choiceRun, n), events: make(chan choiceEvent), done: make(chan struct{}), cancel: cancel}
	for i := range n {
		if errs[i] != nil {
			failed = append(failed, errs[i])
			continue
		}
		m.runs[i] = &choiceRun{i: i, st: streams[i], ack: make(chan struct{}, 1)}
		m.choices = append(m.choices, i)
	}
	if len(m.choices) == 0 {
		cancel()
		return nil, failed, failed[0]
	}
	m.live = len(m.choices)
	for _, i := range m.choices {
		m.wg.Add(1)
		go m.pump(m.runs[i])
	}
	return m, failed, nil
}

// pump reads r's stream and hands each event to Recv, one at a time: it reads the next
// only once Recv has returned the last and been called again, so the reader may use the
// choice's stream (its reasoning so far) while the pump waits.
func (m *MultiStream) pump(r *choiceRun) {
	defer m.wg.Done()
	for {
		c, err := r.st.Recv()
		select {
		case m.events <- choiceEvent{i: r.i, c: c, err: err}:
		case <-m.done:
			return
		}
		if err != nil {
			return
		}
		select {
		case <-r.ack:
		case <-m.done:
			return
		}
	}
}

// Choices returns the indices of the choices that started, in order.
func (m *MultiStream) Choices() []int { return m.choices }

// Response returns choice i's final response once Recv reported it Done, else nil.
func (m *MultiStream) Response(i int) *Response {
	if i < 0 || i >= len(m.runs) || m.runs[i] == nil {
		return nil
	}
	return m.runs[i].st.Response()
}

// Answerer names who answers the first choice that started: its model group (the name
// asked, "" when none) and its "provider/model", as ResponseStream.ModelGroup and
// Provider/Model say — what the response headers of an n-choice stream name, once it
// started (the answer's first model; a choice that falls back later is not reflected).
func (m *MultiStream) Answerer() (group, model string) {
	if len(m.choices) == 0 {
		return "", ""
	}
	st := m.runs[m.choices[0]].st
	return st.ModelGroup(), st.Provider() + "/" + st.Model()
}

// stream returns choice i's stream (the reader's, between two Recv calls).
func (m *MultiStream) stream(i int) *ResponseStream { return m.runs[i].st }

// NotifyWait has fn called whenever Recv is about to wait for the next event, so that a
// writer flushes what it buffered then.
func (m *MultiStream) NotifyWait(fn func()) { m.onWait = fn }

// Recv returns the next event of any choice, in the order they arrive: a fragment, or a
// choice's end. It returns io.EOF once every choice ended; a choice failing ends the
// stream: Recv closes the other choices' streams (what they streamed is billed) and
// returns a *ChoiceError, and again on every later call.
func (m *MultiStream) Recv() (ChoiceChunk, error) {
	if m.err != nil {
		return ChoiceChunk{}, m.err
	}
	if m.ack != nil {
		m.ack <- struct{}{}
		m.ack = nil
	}
	if m.live == 0 {
		return ChoiceChunk{}, io.EOF
	}
	var ev choiceEvent
	select {
	case ev = <-m.events:
	default:
		if m.onWait != nil {
			m.onWait()
		}
		select {
		case ev = <-m.events:
		case <-m.done: // closed from another goroutine: no pump is left to answer
			m.err = errMultiClosed
			return ChoiceChunk{}, m.err
		}
	}
	switch {
	case errors.Is(ev.err, io.EOF):
		m.live--
		return ChoiceChunk{Choice: ev.i, Done: true}, nil
	case ev.err != nil:
		m.err = &ChoiceError{Choice: ev.i, Err: ev.err}
		m.stop()
		return ChoiceChunk{}, m.err
	}
	m.ack = m.runs[ev.i].ack
	return ChoiceChunk{Choice: ev.i, Chunk: ev.c}, nil
}

// Close stops every choice's stream that has not ended (what each streamed is billed, as
// ResponseStream.Close does) and waits for their readers to leave. It is safe to call more
// than once and from another goroutine.
func (m *MultiStream) Close() error {
	m.stop()
	return nil
}

// stop closes the choices' streams and waits for the pumps.
func (m *MultiStream) stop() {
	m.stopped.Do(func() {
		close(m.done)
		var wg sync.WaitGroup
		for _, i := range m.choices {
			wg.Add(1)
			go func() { // Close waits for a running Recv: the streams are closed at once
				defer wg.Done()
				m.runs[i].st.Close()
			}()
		}
		wg.Wait()
		m.wg.Wait()
		m.cancel()
	})
}
