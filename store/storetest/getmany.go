package storetest

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// testGetMany: GetMany reads the records of the keys given in one collection, leaving out
// the keys without one and those of another collection, a key given twice once; the
// values are copies; an empty key is ErrInvalid; a closed store is ErrClosed.
func testGetMany(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.Open(t)
	mustPut(t, s, store.Artifacts, "a", "1")
	mustPut(t, s, store.Artifacts, "b", "")
	mustPut(t, s, store.Artifacts, "c", "3")
	mustPut(t, s, store.TrainingJobs, "d", "other collection")
	got, err := s.GetMany(ctx, store.Artifacts, []string{"c", "a", "b", "missing", "d", "a"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "1", "b": "", "c": "3"}
	have := map[string]string{}
	for k, v := range got {
		have[k] = string(v)
	}
	if !maps.Equal(have, want) {
		t.Fatalf("GetMany = %q, want %q", have, want)
	}
	got["a"][0] = 'X'
	if v := mustGet(t, s, store.Artifacts, "a"); v != "1" {
		t.Fatalf("writing into GetMany's value changed the record: %q", v)
	}
	if got, err := s.GetMany(ctx, store.RouterModels, []string{"a"}); err != nil || len(got) != 0 {
		t.Fatalf("GetMany of an empty collection = %q, %v", got, err)
	}
	if _, err := s.GetMany(ctx, store.Artifacts, []string{"a", ""}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("GetMany with an empty key: %v, want ErrInvalid", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetMany(ctx, store.Artifacts, []string{"a"}); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("GetMany after Close: %v, want ErrClosed", err)
	}
}
