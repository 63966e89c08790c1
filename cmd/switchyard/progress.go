package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal (then progress is drawn as a bar redrawn in
// place; otherwise it is printed as plain lines, one per change).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress shows a job's state and elapsed time. On a terminal it redraws one line with a
// bar several times a second; elsewhere it prints a line whenever the state or detail
// changes. Use set from the polling loop and finish once at the end.
type progress struct {
	w     io.Writer
	tty   bool
	start time.Time
	now   func() time.Time

	mu       sync.Mutex
	state    string
	detail   string
	frac     float64 // 0..1, or < 0 when unknown
	lastLine string
	frame    int
	stop     chan struct{}
	stopped  chan struct{}
}

func newProgress(w io.Writer, tty bool) *progress {
	p := &progress{w: w, tty: tty, start: time.Now(), now: time.Now, frac: -1}
	if tty {
		p.stop, p.stopped = make(chan struct{}), make(chan struct{})
		go p.tick()
	}
	return p
}

func (p *progress) tick() {
	defer close(p.stopped)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.frame++
			p.draw()
			p.mu.Unlock()
		}
	}
}

// set records the job's state, a detail line and its completed fraction (< 0: unknown).
func (p *progress) set(state, detail string, frac float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state, p.detail, p.frac = state, detail, frac
	p.draw()
}

// finish stops redrawing and ends the line.
func (p *progress) finish() {
	if p.tty {
		close(p.stop)
		<-p.stopped
		p.mu.Lock()
		p.frac = max(p.frac, 0)
		p.draw()
		fmt.Fprintln(p.w)
		p.mu.Unlock()
	}
}

// draw writes the current line; the caller holds mu.
func (p *progress) draw() {
	elapsed := formatElapsed(p.now().Sub(p.start))
	if !p.tty {
		line := p.state
		if p.detail != "" {
			line += "  " + p.detail
		}
		if line == p.lastLine || p.state == "" {
			return
		}
		p.lastLine = line
		fmt.Fprintf(p.w, "[%s] %s\n", elapsed, line)
		return
	}
	line := fmt.Sprintf("%s %s  %-9s %s", bar(p.frac, 24, p.frame), elapsed, p.state, p.detail)
	// \r and clear-to-end-of-line, so a shorter line leaves no leftovers.
	fmt.Fprintf(p.w, "\r%s\x1b[K", line)
}

// bar draws [#####-----] for a known fraction, or a moving block when it is unknown.
func bar(frac float64, width, frame int) string {
	b := []rune(strings.Repeat("·", width))
	if frac >= 0 {
		n := int(min(frac, 1)*float64(width) + 0.5)
		for i := 0; i < n; i++ {
			b[i] = '█'
		}
		return fmt.Sprintf("[%s] %3.0f%%", string(b), min(frac, 1)*100)
	}
	const block = 5
	span := width - block
	pos := frame % (2 * span)
	if pos > span {
		pos = 2*span - pos
	}
	for i := pos; i < pos+block; i++ {
		b[i] = '█'
	}
	return fmt.Sprintf("[%s]     ", string(b))
}

func formatElapsed(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}
