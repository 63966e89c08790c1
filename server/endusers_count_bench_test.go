package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
)

// readCountingDriver counts the records that reach a store driver's readers, in and out
// of transactions: each Get of a present record and each entry a List returns.
type readCountingDriver struct {
	store.Driver
	gets, lists, entries atomic.Int64
}

// records is the records read so far (Gets that found one plus entries listed).
func (d *readCountingDriver) records() int64 { return d.gets.Load() + d.entries.Load() }

// reset starts the counts again.
func (d *readCountingDriver) reset() { d.gets.Store(0); d.lists.Store(0); d.entries.Store(0) }

func (d *readCountingDriver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	return d.countGet(d.Driver.Get(ctx, c, key))
}

func (d *readCountingDriver) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	return d.countList(d.Driver.List(ctx, c, opts))
}

func (d *readCountingDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return d.Driver.Update(ctx, func(tx store.Tx) error { return fn(readCountingTx{Tx: tx, d: d}) })
}

// readCountingTx counts a transaction's reads into d.
type readCountingTx struct {
	store.Tx
	d *readCountingDriver
}

func (t readCountingTx) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	return t.d.countGet(t.Tx.Get(ctx, c, key))
}

func (t readCountingTx) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	return t.d.countList(t.Tx.List(ctx, c, opts))
}

func (d *readCountingDriver) countGet(v []byte, err error) ([]byte, error) {
	if err == nil {
		d.gets.Add(1)
	}
	return v, err
}

func (d *readCountingDriver) countList(es []store.Entry, err error) ([]store.Entry, error) {
	d.lists.Add(1)
	d.entries.Add(int64(len(es)))
	return es, err
}

// endUsersOwner is the owner of the end users s stores (one owner's; s must have made
// one end user already).
func endUsersOwner(tb testing.TB, s *Server) string {
	tb.Helper()
	es, err := s.cfg.Store.List(context.Background(), store.EndUsers, store.ListOptions{Limit: 1})
	if err != nil || len(es) != 1 {
		tb.Fatalf("no end user to find the owner by: %v %v", es, err)
	}
	owner, _, _ := strings.Cut(es[0].Key, "/")
	return owner
}

// seedEndUsers stores n more end users of the owner of the end users s has (endUsersOwner)
// as a build before the per-owner count stored them: their records, and no count (any
// count the owner had is deleted), in one transaction. It returns the owner.
func seedEndUsers(tb testing.TB, s *Server, n int) string {
	tb.Helper()
	ctx := context.Background()
	owner := endUsersOwner(tb, s)
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	err := s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		if err := tx.Delete(ctx, store.EndUserCounts, owner); err != nil {
			return err
		}
		for i := range n {
			id := fmt.Sprintf("seed-%06d", i)
			e := endUser{EndUserID: id, Object: "end_user", CreatedAt: created.Add(time.Duration(i) * time.Second), FirstSeen: true}
			if err := store.PutJSON(ctx, tx, store.EndUsers, owner+"/"+id, storedEndUser{endUser: e, Owner: owner}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return owner
}

// BenchmarkNewEndUserWithMany measures making one new end user of a key that has n
// already (1,000 and 50,000), on a bbolt file as deployed: by POST /api/v1/customers and
// by the first chat completion naming it (OpenAI's user; scripted upstream on loopback).
// records/op is the store records read per new end user (Gets found plus entries listed).
//
//	go test ./server -run '^$' -bench BenchmarkNewEndUserWithMany -benchtime 200x -count 3
func BenchmarkNewEndUserWithMany(b *testing.B) {
	for _, n := range []int{1000, 50000} {
		bd, err := boltstore.OpenDriver(filepath.Join(b.TempDir(), "sy.db"), boltstore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { bd.Close() })
		d := &readCountingDriver{Driver: bd}
		_, s := keysServer(b, store.New(d), 0)
		benchCreate(b, s, "/api/v1/customers", `{"end_user_id":"first"}`)
		seedEndUsers(b, s, n-1)
		// One new end user first, as the earlier build's owner's first after an upgrade
		// (counted once when no count is stored yet), so the runs measure the steady state.
		benchCreate(b, s, "/api/v1/customers", `{"end_user_id":"warm"}`)
		made := 0
		b.Run(fmt.Sprintf("n=%d/create", n), func(b *testing.B) {
			d.reset()
			b.ReportAllocs()
			for b.Loop() {
				made++
				benchCreate(b, s, "/api/v1/customers", fmt.Sprintf(`{"end_user_id":"new-%d"}`, made))
			}
			b.ReportMetric(float64(d.records())/float64(b.N), "records/op")
		})
		b.Run(fmt.Sprintf("n=%d/first_request", n), func(b *testing.B) {
			d.reset()
			b.ReportAllocs()
			for b.Loop() {
				made++
				req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(
					fmt.Sprintf(`{"model":"openai/ok","messages":[{"role":"user","content":"hi"}],"user":"new-%d"}`, made)))
				req.Header.Set("Authorization", "Bearer "+testKey)
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
			b.ReportMetric(float64(d.records())/float64(b.N), "records/op")
		})
	}
}
