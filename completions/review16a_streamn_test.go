package completions

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"

	"net/http/httptest"

	"github.com/switchyard-ai/switchyard/providers"
)

// Close from another goroutine while Recv waits, twice, then Recv again: no race, no
// deadlock, no leak; Recv answers an error.
func TestReview16aStreamNCloseConcurrentWithRecv(t *testing.T) {
	h, p := chanHarness(t)
	base := runtime.NumGoroutine()
	for range 20 {
		m, _, err, streams := startN(t, h.g, p, context.Background(), 3, 3)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			for {
				if _, err := m.Recv(); err != nil {
					return
				}
			}
		}()
		go func() { defer wg.Done(); m.Close() }()
		for _, s := range streams {
			s.text("x")
		}
		wg.Wait()
		m.Close()
		if _, err := m.Recv(); err == nil {
			t.Fatal("Recv after Close: no error")
		}
	}
	waitGoroutines(t, base)
}

// A choice failing mid-stream while another is mid-read: ChoiceError names it, the other
// stream is closed, nothing leaks.
func TestReview16aStreamNFailWhileSiblingPending(t *testing.T) {
	h, p := chanHarness(t)
	base := runtime.NumGoroutine()
	m, _, err, streams := startN(t, h.g, p, context.Background(), 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	streams[1].fail(errors.New("boom"))
	var ce *ChoiceError
	for {
		_, err := m.Recv()
		if err != nil {
			if !errors.As(err, &ce) {
				t.Fatalf("err %v", err)
			}
			break
		}
	}
	if _, err := m.Recv(); !errors.As(err, &ce) {
		t.Fatalf("second Recv %v", err)
	}
	m.Close()
	for k, s := range streams {
		if !s.closed.Load() {
			t.Errorf("stream %d not closed", k)
		}
	}
	waitGoroutines(t, base)
}

// A choice that failed before it started must not leave a hole in the wire's indices:
// CompleteN renders the k answers that came as choices 0..k-1, and the SDKs' stream
// accumulators (openai-go's ChatCompletionAccumulator, openai-python's stream state) grow
// their choice list up to the highest index, so a gap becomes an empty choice with no role,
// content or finish_reason.
func TestReview16aWriteOpenAIStreamNIndicesContiguous(t *testing.T) {
	h, p := chanHarness(t)
	p.openErr = func(k int) error {
		if k == 1 {
			return &providers.Error{Provider: "c", Model: "m", Kind: providers.KindBadRequest, StatusCode: 400, Message: "no"}
		}
		return nil
	}
	// Which choice gets the failing call varies: try a few times.
	for range 10 {
		p.calls.Store(0)
		streamNIndicesOnce(t, h, p)
	}
}

func streamNIndicesOnce(t *testing.T, h *harness, p *chanProvider) {
	t.Helper()
	m, failed, err, streams := startN(t, h.g, p, context.Background(), 3, 2)
	if err != nil || len(failed) != 1 {
		t.Fatalf("StreamN: %v %v", failed, err)
	}
	for _, s := range streams {
		s.end(2)
	}
	rec := httptest.NewRecorder()
	if err := WriteOpenAIStreamN(rec, m, true); err != nil {
		t.Fatal(err)
	}
	chunks, done, _ := sseChunks(t, rec.Body.String())
	if !done {
		t.Fatalf("no [DONE]:\n%s", rec.Body.String())
	}
	seen := map[int]bool{}
	for _, ck := range chunks {
		for _, ch := range ck.Choices {
			seen[ch.Index] = true
		}
	}
	if len(seen) != 2 || !seen[0] || !seen[1] {
		t.Fatalf("wire choice indices %v, want 0 and 1 (as CompleteN numbers the answers that came):\n%s", seen, rec.Body.String())
	}
}
