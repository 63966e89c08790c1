package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/usagelog"
)

func TestCleanupCommand(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "switchyard.db")
	ctx := context.Background()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Weights without a model record: the lifecycle removes them.
	if err := st.Put(ctx, store.RouterWeights, "rm_orphan", []byte("w")); err != nil {
		t.Fatal(err)
	}
	// While the "server" holds the file, the command refuses and says why.
	var out, errb strings.Builder
	if code := run(ctx, []string{"cleanup", "--data", dir}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "in use by a running server") {
		t.Errorf("locked: code %d, stderr %q", code, errb.String())
	}
	st.Close()

	out.Reset()
	if code := run(ctx, []string{"cleanup", "--data", dir, "--dry-run"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "would remove 1 router model(s): rm_orphan") {
		t.Fatalf("dry run: code %d, out %q, err %q", code, out.String(), errb.String())
	}
	if !weightsPresent(t, path) {
		t.Fatal("the dry run removed the weights")
	}
	out.Reset()
	if code := run(ctx, []string{"cleanup", "--data", dir}, &out, &errb); code != 0 || !strings.Contains(out.String(), "removed 1 router model(s): rm_orphan") {
		t.Fatalf("cleanup: code %d, out %q, err %q", code, out.String(), errb.String())
	}
	if weightsPresent(t, path) {
		t.Fatal("the weights are still there")
	}
	if code := run(ctx, []string{"cleanup", "--data", filepath.Join(dir, "absent")}, &out, &errb); code == 0 {
		t.Error("cleanup of a directory without a database succeeded")
	}
}

func weightsPresent(t *testing.T, path string) bool {
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = st.Get(context.Background(), store.RouterWeights, "rm_orphan")
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// TestCleanupRunsRetentionSweeps: on a stopped server's data, cleanup also deletes what the
// hourly sweeps would have: an OpenAI conversation unused past
// --openai-conversation-retention and daily spend totals past --spend-retention; without
// those flags (forever) and in a dry run it deletes neither.
func TestCleanupRunsRetentionSweeps(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	st, err := boltstore.Open(filepath.Join(dir, "switchyard.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-40 * 24 * time.Hour)
	gw, err := completions.New(completions.Options{Providers: providers.NewRegistry(), Store: st, Now: func() time.Time { return past }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gw.CreateOpenAIConversation(ctx, "key_owner", nil, map[string]string{"topic": "old"}); err != nil {
		t.Fatal(err)
	}
	gw.Close(ctx)
	spend := usagelog.NewRollup(st, usagelog.RollupOptions{Now: func() time.Time { return past }})
	spend.ObserveRequest(ctx, completions.RequestRecord{Owner: "key_owner", Outcome: completions.RequestOK, Provider: "openai", Model: "gpt-4o-mini", Start: past})
	if err := spend.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()

	left := func() (convs, rows int) {
		t.Helper()
		st, err := boltstore.Open(filepath.Join(dir, "switchyard.db"), boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for coll, n := range map[store.Collection]*int{store.OpenAIConversations: &convs, store.SpendRollups: &rows} {
			page, err := st.List(ctx, coll, store.ListOptions{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			*n = len(page)
		}
		return convs, rows
	}
	if c, r := left(); c != 1 || r == 0 {
		t.Fatalf("seeded %d conversations and %d spend rows, want 1 and some", c, r)
	}
	for _, args := range [][]string{
		{"cleanup", "--data", dir},
		{"cleanup", "--data", dir, "--dry-run", "--openai-conversation-retention", "720h", "--spend-retention", "720h"},
	} {
		var out, errb strings.Builder
		if code := run(ctx, args, &out, &errb); code != 0 {
			t.Fatalf("%v: code %d, err %q", args, code, errb.String())
		}
		if c, r := left(); c != 1 || r == 0 {
			t.Fatalf("%v deleted what it must keep: %d conversations and %d spend rows left; out %q", args, c, r, out.String())
		}
	}
	var out, errb strings.Builder
	if code := run(ctx, []string{"cleanup", "--data", dir, "--openai-conversation-retention", "720h", "--spend-retention", "720h"}, &out, &errb); code != 0 {
		t.Fatalf("cleanup with retention: code %d, err %q", code, errb.String())
	}
	if c, r := left(); c != 0 || r != 0 {
		t.Fatalf("after the sweeps %d conversations and %d spend rows are left; out %q", c, r, out.String())
	}
	for _, want := range []string{"deleted 1 expired OpenAI conversation(s)", "expired daily spend total(s)", "expired stored response(s)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report %q does not say %q", out.String(), want)
		}
	}
	if code := run(ctx, []string{"cleanup", "--data", dir, "--spend-retention", "1h"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "--spend-retention") {
		t.Errorf("--spend-retention 1h: code %d, stderr %q", code, errb.String())
	}
}
