package main

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store/memstore"
)

// wiring.options starts the Rollup's writer before steps that can fail (--model-groups,
// completions.New, --proposer-model, optimizer.New); on failure nobody closes it (no
// server, so no OnClose): its goroutine and ticker leak.
func TestReview12eFailedWiringLeaksRollupWriter(t *testing.T) {
	var logs bytes.Buffer
	w := &wiring{cfg: &serveConfig{ModelGroups: filepath.Join(t.TempDir(), "missing.json")},
		store: memstore.New(), log: slog.New(slog.NewTextHandler(&logs, nil))}
	if _, err := w.options(context.Background()); err == nil {
		t.Fatal("options accepted a missing --model-groups file")
	}
	time.Sleep(50 * time.Millisecond)
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	if strings.Contains(stacks, "usagelog.(*Rollup).run") {
		t.Fatal("a failed wiring left the Rollup's writer running")
	}
}
