package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// Magic starts every frame the harness writes on stdout (see harness.py).
const Magic = "\x1eSWITCHYARD\x1f"

// Frame kinds.
const (
	// FrameResult carries the result JSON.
	FrameResult = 'R'
	// FrameHTTP carries one raw HTTP request for the gateway (wasm backend).
	FrameHTTP = 'H'
	// FrameSleep asks the host to sleep for the payload's seconds (wasm backend).
	FrameSleep = 'Z'
	// FrameStarted (empty) is written by the harness before it loads any user code; a run
	// that ends without it failed to start, which is the sandbox's fault, not the job's.
	FrameStarted = 'S'
)

// Size bounds on what the host accepts.
const (
	// MaxFrameBytes bounds one frame's payload.
	MaxFrameBytes = 32 << 20
	// MaxPredictionBytes bounds one prediction.
	MaxPredictionBytes = 1 << 20
	// TailBytes is how much of stdout and stderr a Result keeps.
	TailBytes = 16 << 10
	// MaxResultFrames and MaxResultBytes bound the result frames a run may write (only one
	// is valid; a scoring stage may see a few forged by user code, which the nonce
	// rejects): the host keeps them in memory, outside the sandbox's memory limit.
	MaxResultFrames = 8
	MaxResultBytes  = 2 * MaxFrameBytes
)

// errOutputLimit is returned by the writers once the output cap is passed.
var errOutputLimit = errors.New("sandbox output limit exceeded")

// Collector receives a run's stdout and stderr. Plain text counts towards the output cap and
// is kept as tails; frames on stdout are parsed out. It is safe for concurrent use by the two
// streams. The zero value is not usable; call [NewCollector].
type Collector struct {
	mu        sync.Mutex
	maxText   int64
	textBytes int64
	exceeded  bool
	frameErr  error
	onAbort   func()
	aborted   bool
	onRequest func(kind byte, payload []byte) error
	stdout    tail
	stderr    tail
	results   [][]byte
	resultsSz int
	started   bool
	parser    frameParser
}

// NewCollector returns a Collector that allows maxOutput bytes of plain output and calls
// abort (once) when that cap is passed or a malformed frame arrives, so the backend can kill
// the run. onRequest, if not nil, receives each FrameHTTP and FrameSleep frame; it must not
// block on the guest (answer from another goroutine), and an error from it ends the run as
// malformed output (a guest flooding the host with requests). Without it those frames are
// invalid.
func NewCollector(maxOutput int64, abort func(), onRequest func(kind byte, payload []byte) error) *Collector {
	return &Collector{maxText: maxOutput, onAbort: abort, onRequest: onRequest}
}

// Stdout returns the writer for the harness's stdout (frames and plain text).
func (c *Collector) Stdout() *StreamWriter { return &StreamWriter{c: c, frames: true} }

// Stderr returns the writer for the harness's stderr (plain text).
func (c *Collector) Stderr() *StreamWriter { return &StreamWriter{c: c} }

// StreamWriter is one of a Collector's two streams.
type StreamWriter struct {
	c      *Collector
	frames bool
}

// Write implements io.Writer. After the output cap is passed it fails.
func (w *StreamWriter) Write(p []byte) (int, error) {
	c := w.c
	c.mu.Lock()
	if c.exceeded || c.frameErr != nil {
		c.mu.Unlock()
		return 0, errOutputLimit
	}
	var err error
	if w.frames {
		err = c.parser.feed(c, p)
	} else {
		err = c.text(&c.stderr, p)
	}
	abort := err != nil && !c.aborted
	if abort {
		c.aborted = true
	}
	c.mu.Unlock()
	if abort && c.onAbort != nil {
		c.onAbort()
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// text records plain output; c.mu is held.
func (c *Collector) text(t *tail, p []byte) error {
	c.textBytes += int64(len(p))
	if c.textBytes > c.maxText {
		c.exceeded = true
		keep := int64(len(p)) - (c.textBytes - c.maxText)
		if keep > 0 {
			t.write(p[:keep])
		}
		return errOutputLimit
	}
	t.write(p)
	return nil
}

// frame handles one complete frame; c.mu is held. An error makes the run's output
// malformed.
func (c *Collector) frame(kind byte, payload []byte) error {
	switch kind {
	case FrameResult:
		c.resultsSz += len(payload)
		if len(c.results) >= MaxResultFrames || c.resultsSz > MaxResultBytes {
			return fmt.Errorf("more than %d result frames or %d MiB of them", MaxResultFrames, MaxResultBytes>>20)
		}
		c.results = append(c.results, payload)
	case FrameStarted:
		c.started = true
	case FrameHTTP, FrameSleep:
		return c.onRequest(kind, payload)
	}
	return nil
}

// frameParser finds frames in the stdout byte stream.
type frameParser struct {
	state   int // 0 text, 1 magic, 2 kind, 3 length, 4 payload
	matched int
	kind    byte
	length  []byte
	want    int
	payload []byte
}

func (f *frameParser) feed(c *Collector, p []byte) error {
	for len(p) > 0 {
		switch f.state {
		case 0:
			i := bytes.IndexByte(p, Magic[0])
			if i < 0 {
				return c.text(&c.stdout, p)
			}
			if err := c.text(&c.stdout, p[:i]); err != nil {
				return err
			}
			p = p[i+1:]
			f.state, f.matched = 1, 1
		case 1:
			if p[0] != Magic[f.matched] {
				// Not a frame after all: the bytes matched so far were text.
				f.state = 0
				if err := c.text(&c.stdout, []byte(Magic[:f.matched])); err != nil {
					return err
				}
				continue
			}
			p = p[1:]
			f.matched++
			if f.matched == len(Magic) {
				f.state = 2
			}
		case 2:
			f.kind = p[0]
			p = p[1:]
			switch f.kind {
			case FrameResult, FrameStarted:
			case FrameHTTP, FrameSleep:
				if c.onRequest == nil {
					c.frameErr = fmt.Errorf("frame kind %q is not served by this backend", f.kind)
					return c.frameErr
				}
			default:
				c.frameErr = fmt.Errorf("unknown frame kind %q", f.kind)
				return c.frameErr
			}
			f.state, f.length = 3, f.length[:0]
		case 3:
			b := p[0]
			p = p[1:]
			if b == '\n' {
				n, err := strconv.Atoi(string(f.length))
				if err != nil || n < 0 || n > MaxFrameBytes {
					c.frameErr = fmt.Errorf("frame length %q is not between 0 and %d", f.length, MaxFrameBytes)
					return c.frameErr
				}
				f.want, f.payload, f.state = n, make([]byte, 0, min(n, 1<<20)), 4
				if n == 0 {
					f.state = 0
					if err := c.frame(f.kind, f.payload); err != nil {
						c.frameErr = err
						return err
					}
				}
				continue
			}
			if b < '0' || b > '9' || len(f.length) >= 10 {
				c.frameErr = errors.New("malformed frame length")
				return c.frameErr
			}
			f.length = append(f.length, b)
		case 4:
			n := min(f.want-len(f.payload), len(p))
			f.payload = append(f.payload, p[:n]...)
			p = p[n:]
			if len(f.payload) == f.want {
				payload := f.payload
				f.state, f.payload = 0, nil
				if err := c.frame(f.kind, payload); err != nil {
					c.frameErr = err
					return err
				}
			}
		}
	}
	return nil
}

// tail keeps the last TailBytes bytes written to it.
type tail struct{ buf []byte }

func (t *tail) write(p []byte) {
	if len(p) >= TailBytes {
		t.buf = append(t.buf[:0], p[len(p)-TailBytes:]...)
		return
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*TailBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-TailBytes:]...)
	}
}

func (t *tail) String() string {
	b := t.buf
	if len(b) > TailBytes {
		b = b[len(b)-TailBytes:]
	}
	// Drop a rune cut in half at the start, then replace any invalid UTF-8.
	for i := 0; i < 3 && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}

// Outcome is how the interpreter ended, as the backend saw it.
type Outcome struct {
	// DeadlineExceeded: the wall-clock limit passed and the run was killed.
	DeadlineExceeded bool
	// CPUExceeded: the CPU time limit killed the run.
	CPUExceeded bool
	// MemoryExceeded: the run's processes together passed the memory limit and the kernel
	// killed one of them; the run fails even if a result came.
	MemoryExceeded bool
	// Exit describes the exit, e.g. "exit status 1" or "killed by signal 9".
	Exit string
	// Limits are the job's effective limits, for messages.
	Limits sandbox.Limits
}

// Finish turns what was collected into the stage's result. The Result is never nil: it
// carries the output tails even when the error (a [*sandbox.JobError]) says the job failed.
// A run that never reached the harness fails with sandbox.ErrUnavailable. In the score stage
// only result frames carrying want.Nonce count: any other (a prediction that eval.py printed,
// say) is not the harness's and is dropped.
func (c *Collector) Finish(want Expect, out Outcome) (*sandbox.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	res := &sandbox.Result{Stdout: c.stdout.String(), Stderr: c.stderr.String()}
	results := c.results
	if want.Stage == StageScore {
		results = nil
		for _, r := range c.results {
			if carriesNonce(r, want.Nonce) {
				results = append(results, r)
			}
		}
	}
	fail := func(reason, format string, args ...any) (*sandbox.Result, error) {
		return res, &sandbox.JobError{Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case !c.started && !out.DeadlineExceeded:
		return res, fmt.Errorf("%w: the sandbox did not start (%s): %s", sandbox.ErrUnavailable, out.Exit, lastLine(res.Stderr))
	case out.MemoryExceeded:
		return fail(sandbox.ReasonMemoryLimit, "the run's processes together used more than the memory limit of %d bytes (%d MiB) and the kernel killed one (%s)",
			out.Limits.MemoryBytes, out.Limits.MemoryBytes>>20, out.Exit)
	case c.exceeded:
		return fail(sandbox.ReasonOutputLimit, "the code printed more than %d bytes of output", c.maxText)
	case c.frameErr != nil:
		return fail(sandbox.ReasonInvalidResult, "malformed harness output: %v", c.frameErr)
	case len(results) > 1:
		return fail(sandbox.ReasonInvalidResult, "the harness produced %d results instead of one", len(results))
	case len(results) == 1:
		decoded, err := Decode(results[0], want)
		if decoded != nil {
			decoded.Stdout, decoded.Stderr = res.Stdout, res.Stderr
			res = decoded
		}
		return res, err
	case out.DeadlineExceeded:
		return fail(sandbox.ReasonTimeout, "the run did not finish within the wall-clock limit of %s", out.Limits.Timeout)
	case out.CPUExceeded:
		return fail(sandbox.ReasonTimeout, "the run exceeded the CPU time limit of %s", out.Limits.CPUTime)
	}
	exit := out.Exit
	if exit == "" {
		exit = "exit status 0"
	}
	msg := fmt.Sprintf("the interpreter ended (%s) without a result", exit)
	if line := lastLine(res.Stderr); line != "" {
		msg += ": " + line
	}
	return fail(sandbox.ReasonExit, "%s", msg)
}

// carriesNonce reports whether a result payload is a JSON object whose "nonce" is nonce.
func carriesNonce(payload []byte, nonce string) bool {
	var msg struct {
		Nonce string `json:"nonce"`
	}
	return nonce != "" && json.Unmarshal(payload, &msg) == nil && msg.Nonce == nonce
}

func lastLine(s string) string {
	s = string(bytes.TrimSpace([]byte(s)))
	if i := bytes.LastIndexByte([]byte(s), '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
