// Package cachetest is the conformance suite of completions.CacheDriver: every driver (the
// in-memory one, the store-backed one, a user's own) must pass RunConformance.
package cachetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// RunConformance runs the suite against drivers made by newDriver (a fresh, empty one per
// call).
func RunConformance(t *testing.T, newDriver func(t *testing.T) completions.CacheDriver) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	miss := func(t *testing.T, d completions.CacheDriver, key string, now time.Time) {
		t.Helper()
		if v, _, err := d.Get(ctx, key, now); !errors.Is(err, completions.ErrCacheMiss) {
			t.Fatalf("Get(%q) = %q, %v; want ErrCacheMiss", key, v, err)
		}
	}
	hit := func(t *testing.T, d completions.CacheDriver, key string, now time.Time, want []byte, stored time.Time) {
		t.Helper()
		v, s, err := d.Get(ctx, key, now)
		if err != nil {
			t.Fatalf("Get(%q): %v", key, err)
		}
		if !bytes.Equal(v, want) || !s.Equal(stored) {
			t.Fatalf("Get(%q) = %q stored %v; want %q stored %v", key, v, s, want, stored)
		}
	}

	t.Run("MissWhenEmpty", func(t *testing.T) {
		miss(t, newDriver(t), "k", t0)
	})
	t.Run("PutThenGet", func(t *testing.T) {
		d := newDriver(t)
		if err := d.Put(ctx, "a", []byte(`{"text":"A"}`), t0, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		hit(t, d, "a", t0.Add(time.Minute), []byte(`{"text":"A"}`), t0)
		miss(t, d, "b", t0.Add(time.Minute))
	})
	t.Run("PutReplaces", func(t *testing.T) {
		d := newDriver(t)
		_ = d.Put(ctx, "a", []byte("one"), t0, t0.Add(time.Hour))
		if err := d.Put(ctx, "a", []byte("two"), t0.Add(time.Second), t0.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		hit(t, d, "a", t0.Add(90*time.Minute), []byte("two"), t0.Add(time.Second))
	})
	t.Run("ExpiredIsAMiss", func(t *testing.T) {
		d := newDriver(t)
		_ = d.Put(ctx, "a", []byte("v"), t0, t0.Add(time.Minute))
		hit(t, d, "a", t0.Add(time.Minute-time.Nanosecond), []byte("v"), t0)
		miss(t, d, "a", t0.Add(time.Minute))
		miss(t, d, "a", t0) // an expired entry read once may be gone for good
	})
	t.Run("KeepsItsOwnCopy", func(t *testing.T) {
		d := newDriver(t)
		v := []byte("value")
		_ = d.Put(ctx, "a", v, t0, t0.Add(time.Hour))
		copy(v, "XXXXX")
		got, _, err := d.Get(ctx, "a", t0)
		if err != nil || string(got) != "value" {
			t.Fatalf("Get after the caller changed its slice = %q, %v", got, err)
		}
		copy(got, "YYYYY")
		hit(t, d, "a", t0, []byte("value"), t0)
	})
	t.Run("DeletePrefix", func(t *testing.T) {
		d := newDriver(t)
		for _, k := range []string{"a.1.x", "a.1.y", "a.2.z", "b.1.x"} {
			if err := d.Put(ctx, k, []byte(k), t0, t0.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		_ = d.Put(ctx, "a.3.old", []byte("v"), t0, t0.Add(time.Minute)) // expired by t0+1h: deleted too
		if n, err := d.DeletePrefix(ctx, "a.1."); err != nil || n != 2 {
			t.Fatalf("DeletePrefix(a.1.) = %d, %v; want 2", n, err)
		}
		miss(t, d, "a.1.x", t0)
		hit(t, d, "a.2.z", t0, []byte("a.2.z"), t0)
		if n, err := d.DeletePrefix(ctx, "a."); err != nil || n != 2 {
			t.Fatalf("DeletePrefix(a.) = %d, %v; want 2 (a.2.z and the expired a.3.old)", n, err)
		}
		hit(t, d, "b.1.x", t0, []byte("b.1.x"), t0)
		if n, err := d.DeletePrefix(ctx, "b.1.x"); err != nil || n != 1 {
			t.Fatalf("DeletePrefix of a whole key = %d, %v; want 1", n, err)
		}
		if n, err := d.DeletePrefix(ctx, "zzz"); err != nil || n != 0 {
			t.Fatalf("DeletePrefix of nothing = %d, %v", n, err)
		}
	})
	t.Run("ListPrefix", func(t *testing.T) {
		d := newDriver(t)
		l, ok := d.(completions.CacheLister)
		if !ok {
			t.Skip("the driver does not list its entries (completions.CacheLister)")
		}
		for _, k := range []string{"a.v1.x", "a.v1.y", "a.v1.z", "a.v2.x", "b.v1.x"} {
			if err := d.Put(ctx, k, []byte("value of "+k), t0, t0.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		_ = d.Put(ctx, "a.v1.old", []byte("v"), t0, t0.Add(time.Minute))
		got, err := l.ListPrefix(ctx, "a.v1.", t0.Add(30*time.Minute), 100)
		if err != nil {
			t.Fatal(err)
		}
		keys := map[string]bool{}
		for _, e := range got {
			if string(e.Value) != "value of "+e.Key || !e.Stored.Equal(t0) || !e.Expires.Equal(t0.Add(time.Hour)) {
				t.Errorf("entry %+v", e)
			}
			keys[e.Key] = true
		}
		if len(got) != 3 || !keys["a.v1.x"] || !keys["a.v1.y"] || !keys["a.v1.z"] {
			t.Fatalf("ListPrefix(a.v1.) = %v; want the 3 live entries under it", keys)
		}
		if got, err := l.ListPrefix(ctx, "a.", t0, 2); err != nil || len(got) != 2 {
			t.Fatalf("ListPrefix with limit 2 = %d entries, %v", len(got), err)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		d := newDriver(t)
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range 20 {
					key := fmt.Sprintf("k%d-%d", i, j)
					if err := d.Put(ctx, key, []byte(key), t0, t0.Add(time.Hour)); err != nil {
						errs <- err
						return
					}
					if v, _, err := d.Get(ctx, key, t0); err != nil || string(v) != key {
						errs <- fmt.Errorf("Get(%s) = %q, %v", key, v, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}
