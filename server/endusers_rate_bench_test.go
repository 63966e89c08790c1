package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// BenchmarkEndUserWithinRate measures what a request naming an end user pays for the end
// user's requests_per_minute (endUserWithinRate: its bound, then its bucket), on the
// in-memory store and on a bbolt file; the end user has a bound no request reaches.
//
//	go test ./server -run '^$' -bench BenchmarkEndUserWithinRate -benchmem -benchtime 200000x -count 5
func BenchmarkEndUserWithinRate(b *testing.B) {
	ctx := context.Background()
	for _, backend := range []string{"memory", "bbolt"} {
		st := benchStore(b, backend)
		_, s := keysServer(b, st, 0)
		benchCreate(b, s, "/api/v1/customers", `{"end_user_id":"bench-user","requests_per_minute":1000000}`)
		es, err := st.List(ctx, store.EndUsers, store.ListOptions{})
		if err != nil || len(es) != 1 {
			b.Fatal(err, len(es))
		}
		owner := strings.TrimSuffix(es[0].Key, "/bench-user")
		b.Run(backend, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := s.endUserWithinRate(ctx, owner, "bench-user", time.Now()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
