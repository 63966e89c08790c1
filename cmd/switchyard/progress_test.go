package main

import (
	"strings"
	"testing"
	"time"
)

func TestProgressPlainLinesOnlyOnChange(t *testing.T) {
	var b syncBuffer
	p := newProgress(&b, false)
	clock := p.start
	p.now = func() time.Time { return clock }
	p.set("queued", "", -1)
	p.set("queued", "", -1)
	clock = clock.Add(65 * time.Second)
	p.set("running", "iteration 1/4", 0.25)
	p.set("running", "iteration 1/4", 0.25)
	p.set("completed", "", 1)
	p.finish()
	want := "[00:00] queued\n[01:05] running  iteration 1/4\n[01:05] completed\n"
	if b.String() != want {
		t.Fatalf("got %q want %q", b.String(), want)
	}
}

func TestProgressBarOnTerminal(t *testing.T) {
	var b syncBuffer
	p := newProgress(&b, true)
	p.set("running", "iteration 2/4", 0.5)
	p.finish()
	out := b.String()
	if !strings.Contains(out, "\r[████████████············]  50%") || !strings.Contains(out, "\x1b[K") ||
		!strings.Contains(out, "running") || !strings.HasSuffix(out, "\n") {
		t.Fatalf("terminal output %q", out)
	}
	// Unknown fraction: a moving block that stays inside the bar.
	for frame := 0; frame < 60; frame++ {
		s := bar(-1, 24, frame)
		if strings.Count(s, "█") != 5 || len([]rune(s)) != len([]rune(bar(-1, 24, 0))) {
			t.Fatalf("frame %d: %q", frame, s)
		}
	}
	if got := formatElapsed(3723 * time.Second); got != "1:02:03" {
		t.Fatal(got)
	}
}
