package store_test

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// oneAtATimeDriver is a driver that reads one record at a time (no GetMany of its own),
// counting its Gets: a fake for GetMany's fallback.
type oneAtATimeDriver struct {
	store.Driver
	gets int
}

func (d *oneAtATimeDriver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	d.gets++
	return d.Driver.Get(ctx, c, key)
}

// TestGetManyFallsBackToGets: a Store whose driver has no GetMany reads the records one
// Get per distinct key (a key without a record repeated read once too), with the same
// answer (keys without a record absent); a Store without a driver is ErrNoDriver.
func TestGetManyFallsBackToGets(t *testing.T) {
	ctx := context.Background()
	d := &oneAtATimeDriver{Driver: memstore.NewDriver()}
	s := store.New(d)
	defer s.Close()
	for k, v := range map[string]string{"a": "1", "b": "2"} {
		if err := s.Put(ctx, store.Artifacts, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.GetMany(ctx, store.Artifacts, []string{"a", "b", "a", "missing", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]string{}
	for k, v := range got {
		have[k] = string(v)
	}
	if want := map[string]string{"a": "1", "b": "2"}; !maps.Equal(have, want) || d.gets != 3 {
		t.Fatalf("GetMany = %q with %d Gets, want %q with 3 (one per distinct key)", have, d.gets, want)
	}
	if _, err := (&store.Store{}).GetMany(ctx, store.Artifacts, []string{"a"}); !errors.Is(err, store.ErrNoDriver) {
		t.Fatalf("GetMany without a driver: %v, want ErrNoDriver", err)
	}
}
