package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
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
