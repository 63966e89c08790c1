package storetest

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// Bench measures a driver's write path: an Update that reads and writes one small record
// (a budget charge's shape), alone and from parallel goroutines on records of their own.
// open returns a fresh store, closed by the caller.
func Bench(b *testing.B, open func(b *testing.B) *store.Store) {
	value := []byte(`{"calls":1,"tokens":100,"cost_usd":0.001}`)
	update := func(ctx context.Context, s *store.Store, key string) error {
		return s.Update(ctx, func(tx store.Tx) error {
			if _, err := tx.Get(ctx, store.Budgets, key); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			return tx.Put(ctx, store.Budgets, key, value)
		})
	}
	b.Run("Update", func(b *testing.B) {
		s := open(b)
		defer s.Close()
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if err := update(ctx, s, "k"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("UpdateParallel", func(b *testing.B) {
		s := open(b)
		defer s.Close()
		ctx := context.Background()
		var ids atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			key := "k" + strconv.FormatInt(ids.Add(1), 10)
			for pb.Next() {
				if err := update(ctx, s, key); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
