package completions

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// step scripts one upstream call of the fake provider.
type step struct {
	err      error         // returned at once (Complete, or opening the Stream)
	delay    time.Duration // wait before answering (stops when ctx ends)
	hang     bool          // never answer; wait for ctx
	text     string        // the answer; streamed as its words
	usage    providers.Usage
	breakAt  int   // stream: after this many fragments fail with breakErr (when set)
	breakErr error // error of the break
	stallAt  int   // stream: after this many fragments block until ctx ends (when stall)
	stall    bool
	// call, when set, is the answer instead of text: a tool call, streamed as a fragment
	// with its id and name and then one fragment per piece of argPieces (whose
	// concatenation is call.Arguments).
	call      *providers.ToolCall
	argPieces []string
	// reasoning comes before the answer: whole on Complete; streamed as each block's words,
	// then its signature or redacted data, before the first fragment of the answer.
	reasoning []providers.ReasoningBlock
	// fingerprint and tier are the answer's system_fingerprint and service_tier: on the
	// whole answer, and on every streamed chunk (as an OpenAI-compatible upstream sends them).
	fingerprint, tier string
}

// fakeProvider is a scripted in-memory Provider for tests. Each model consumes its steps in
// order; the last step repeats.
type fakeProvider struct {
	name   string
	search bool

	mu       sync.Mutex
	script   map[string][]step
	calls    map[string]int
	requests []providers.Request
	canceled int
	streams  []*fakeStream
}

func newFake(name string) *fakeProvider {
	return &fakeProvider{name: name, script: map[string][]step{}, calls: map[string]int{}}
}

func (f *fakeProvider) on(model string, steps ...step) *fakeProvider {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script[model] = steps
	return f
}

func (f *fakeProvider) Name() string { return f.name }

func (f *fakeProvider) SupportsSearch(string) bool { return f.search }

func (f *fakeProvider) next(req *providers.Request) step {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, *req)
	steps := f.script[req.Model]
	n := f.calls[req.Model]
	f.calls[req.Model]++
	if len(steps) == 0 {
		return step{text: "default answer from " + req.Model, usage: providers.Usage{PromptTokens: 3, CompletionTokens: 4}}
	}
	if n >= len(steps) {
		n = len(steps) - 1
	}
	return steps[n]
}

func (f *fakeProvider) callCount(model string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[model]
}

func (f *fakeProvider) lastRequest() providers.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[len(f.requests)-1]
}

func (f *fakeProvider) wait(ctx context.Context, d time.Duration, hang bool) error {
	if hang {
		<-ctx.Done()
		f.mu.Lock()
		f.canceled++
		f.mu.Unlock()
		return ctx.Err()
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		f.mu.Lock()
		f.canceled++
		f.mu.Unlock()
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (f *fakeProvider) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	s := f.next(req)
	if s.err != nil {
		return nil, s.err
	}
	if err := f.wait(ctx, s.delay, s.hang); err != nil {
		return nil, err
	}
	if s.call != nil {
		return &providers.Response{ToolCalls: []providers.ToolCall{*s.call}, Usage: s.usage, FinishReason: "tool_calls", Model: req.Model, Reasoning: s.reasoning,
			SystemFingerprint: s.fingerprint, ServiceTier: s.tier}, nil
	}
	return &providers.Response{Text: s.text, Usage: s.usage, FinishReason: "stop", Model: req.Model, Reasoning: s.reasoning,
		SystemFingerprint: s.fingerprint, ServiceTier: s.tier}, nil
}

func (f *fakeProvider) Stream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	s := f.next(req)
	if s.err != nil {
		return nil, s.err
	}
	if s.hang {
		if err := f.wait(ctx, 0, true); err != nil {
			return nil, err
		}
	}
	fs := &fakeStream{f: f, ctx: ctx, s: s, frags: words(s.text)}
	for k, r := range s.reasoning {
		for _, w := range words(r.Text) {
			fs.thoughts = append(fs.thoughts, providers.ReasoningDelta{Index: k, Text: w})
		}
		if r.Signature != "" || r.Redacted != "" {
			fs.thoughts = append(fs.thoughts, providers.ReasoningDelta{Index: k, Signature: r.Signature, Redacted: r.Redacted})
		}
	}
	if s.call != nil {
		fs.frags = append([]string{""}, s.argPieces...) // the first is the call's id and name
	}
	f.mu.Lock()
	f.streams = append(f.streams, fs)
	f.mu.Unlock()
	return fs, nil
}

// words splits text into fragments that concatenate back to it.
func words(text string) []string {
	var out []string
	for text != "" {
		i := strings.IndexByte(text[1:], ' ')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

type fakeStream struct {
	f     *fakeProvider
	ctx   context.Context
	s     step
	frags []string
	i     int
	done  bool
	// thoughts are the reasoning fragments sent before frags.
	thoughts []providers.ReasoningDelta
	delta    [1]providers.ToolCallDelta
}

func (s *fakeStream) Recv() (providers.Chunk, error) {
	c, err := s.recv()
	if err == nil {
		c.SystemFingerprint, c.ServiceTier = s.s.fingerprint, s.s.tier
	}
	return c, err
}

func (s *fakeStream) recv() (providers.Chunk, error) {
	if s.done {
		return providers.Chunk{}, io.EOF
	}
	if s.s.breakErr != nil && s.i == s.s.breakAt {
		return providers.Chunk{}, s.s.breakErr
	}
	if s.s.stall && s.i == s.s.stallAt {
		if err := s.f.wait(s.ctx, 0, true); err != nil {
			return providers.Chunk{}, &providers.Error{Provider: s.f.name, Kind: providers.KindConnection, Err: err}
		}
	}
	if s.i == 0 && s.s.delay > 0 {
		if err := s.f.wait(s.ctx, s.s.delay, false); err != nil {
			return providers.Chunk{}, &providers.Error{Provider: s.f.name, Kind: providers.KindConnection, Err: err}
		}
	}
	if len(s.thoughts) > 0 {
		d := s.thoughts[0]
		s.thoughts = s.thoughts[1:]
		return providers.Chunk{Reasoning: &d}, nil
	}
	if s.i < len(s.frags) {
		c := providers.Chunk{Text: s.frags[s.i]}
		if call := s.s.call; call != nil {
			d := providers.ToolCallDelta{Arguments: s.frags[s.i]}
			if s.i == 0 {
				d.ID, d.Name, d.ThoughtSignature = call.ID, call.Name, call.ThoughtSignature
			}
			s.delta[0] = d
			c = providers.Chunk{ToolCalls: s.delta[:]}
		}
		s.i++
		return c, nil
	}
	s.done = true
	u := s.s.usage
	finish := "stop"
	if s.s.call != nil {
		finish = "tool_calls"
	}
	return providers.Chunk{Usage: &u, FinishReason: finish}, nil
}

func (s *fakeStream) Close() error { return nil }

// fakeRegistry is a ProviderLookup over fakes.
type fakeRegistry map[string]providers.Provider

func (r fakeRegistry) Lookup(name string) (providers.Provider, error) {
	if p, ok := r[name]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("%w: %q", providers.ErrUnknownProvider, name)
}

// Names lists the registered providers, sorted.
func (r fakeRegistry) Names() []string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// fakePrices prices every model "<p>/priced" at 1 USD per 1M input and 2 USD per 1M output
// tokens and knows no other price.
type fakePrices struct{}

func (fakePrices) Cost(model string, u providers.Usage) providers.Cost {
	if !strings.HasSuffix(model, "/priced") {
		return providers.Cost{}
	}
	in := float64(u.PromptTokens) * 1e-6
	out := float64(u.CompletionTokens) * 2e-6
	return providers.Cost{InputUSD: in, OutputUSD: out, TotalUSD: in + out, Known: true}
}

// sleepRecorder replaces the gateway's Sleep: it records each wait and returns at once.
type sleepRecorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepRecorder) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// upstreamErr builds a classified upstream failure.
func upstreamErr(kind providers.ErrorKind, status int, retryAfter time.Duration) error {
	return &providers.Error{Provider: "fake", Kind: kind, StatusCode: status, RetryAfter: retryAfter, Message: "scripted " + kind.String()}
}

// recordingLedger keeps every entry.
type recordingLedger struct {
	mu      sync.Mutex
	entries []LedgerEntry
}

func (l *recordingLedger) Record(_ context.Context, e LedgerEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, e)
}

func (l *recordingLedger) all() []LedgerEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]LedgerEntry(nil), l.entries...)
}
