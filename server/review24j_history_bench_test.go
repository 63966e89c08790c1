package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// historyReadCounter counts the request history records read (Gets of store.RequestLog).
type historyReadCounter struct {
	store.Driver
	reads atomic.Int64
}

func (d *historyReadCounter) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	if c == store.RequestLog {
		d.reads.Add(1)
	}
	return d.Driver.Get(ctx, c, key)
}

// historyFixture is a server whose durable request history holds n requests of testKey's
// owner spread evenly over days days up to now, made by keys virtual keys (key:vk_bench_i,
// one in ten failed; the i-th answered with x-request-id req_i and response id resp-i); get
// answers a GET as testKey.
type historyFixture struct {
	s     *Server
	d     *historyReadCounter
	now   time.Time
	close func()
}

func newHistoryFixture(tb testing.TB, st store.Driver, n, days, keys int) *historyFixture {
	tb.Helper()
	ctx := context.Background()
	d := &historyReadCounter{Driver: st}
	sst := store.New(d)
	h := usagelog.NewHistory(sst, usagelog.HistoryOptions{Queue: n + 1})
	who := ownerOf(keyRefHash(testKey))
	now := time.Now().UTC()
	step := time.Duration(days) * 24 * time.Hour / time.Duration(n)
	for i := range n {
		rec := completions.RequestRecord{Owner: who, Tag: fmt.Sprintf("key:vk_bench_%d", i%keys), Operation: "chat", Outcome: completions.RequestOK,
			Model: "openai/gpt-4o", Start: now.Add(-time.Duration(n-i) * step), Latency: 20 * time.Millisecond,
			Attempts: []completions.Attempt{{Model: "openai/gpt-4o", Outcome: "ok"}}, Tags: []string{"feature:search"},
			ModelGroup: "smart", APIBase: "https://api.openai.com/v1", ResponseID: fmt.Sprintf("resp-%d", i),
			RequestID: fmt.Sprintf("req_%d", i)}
		if i%10 == 0 {
			rec.Outcome = completions.RequestFailed
		}
		h.ObserveRequest(ctx, rec)
	}
	if err := h.Flush(ctx); err != nil {
		tb.Fatal(err)
	}
	// The store of a gateway upgraded more than a day ago: the lookup index migration ran
	// both its runs (every request written here has its lookup entries already).
	for _, at := range []time.Time{now.Add(-48 * time.Hour), now.Add(-24 * time.Hour)} {
		if err := store.MigrationRan(ctx, sst, "request_log_lookup_index", at); err != nil {
			tb.Fatal(err)
		}
	}
	rec := usagelog.New(usagelog.Options{})
	s := testServer(tb, Config{Store: sst}, nil)
	for _, o := range []Option{Usage(rec), RequestHistory(h)} {
		if err := o(s); err != nil {
			tb.Fatal(err)
		}
	}
	return &historyFixture{s: s, d: d, now: now, close: func() { s.Close(ctx) }}
}

// get answers GET path as testKey, failing unless 200; it returns the records read.
func (f *historyFixture) get(tb testing.TB, path string) int64 {
	before := f.d.reads.Load()
	f.getBody(tb, path)
	return f.d.reads.Load() - before
}

var benchHistory *historyFixture

// BenchmarkReview24jHistoryListing: the request history's common pages on bbolt holding
// 100,000 requests of one owner over 10 days (10 virtual keys): reads/op is how many
// stored requests a page read.
func BenchmarkReview24jHistoryListing(b *testing.B) {
	if benchHistory == nil {
		dir, err := os.MkdirTemp("", "review24j-bench")
		if err != nil {
			b.Fatal(err)
		}
		drv, err := boltstore.OpenDriver(filepath.Join(dir, "switchyard.db"), boltstore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		benchHistory = newHistoryFixture(b, drv, 100_000, 10, 10)
	}
	f := benchHistory
	day := "start_date=" + f.now.Add(-24*time.Hour).Format(time.DateTime) + "&end_date=" + f.now.Format(time.DateTime)
	day = urlSpaces(day)
	for _, c := range []struct{ name, path string }{
		{"usage_requests_first_page", "/api/v1/usage/requests?limit=50"},
		{"spend_logs_v2_last_day_first_page", "/spend/logs/v2?" + day},
		{"spend_logs_v2_last_day_key", "/spend/logs/v2?" + day + "&api_key=vk_bench_3"},
		{"spend_logs_v2_last_day_key_page_10", "/spend/logs/v2?" + day + "&api_key=vk_bench_3&page=10"},
		{"spend_logs_last_day_key", "/spend/logs?" + day + "&api_key=vk_bench_3&summarize=false"},
		{"spend_logs_v2_last_day_failures", "/spend/logs/v2?" + day + "&status_filter=failure"},
	} {
		b.Run(c.name, func(b *testing.B) {
			var reads int64
			n := 0
			for b.Loop() {
				reads += f.get(b, c.path)
				n++
			}
			b.ReportMetric(float64(reads)/float64(n), "reads/op")
		})
	}
}

func urlSpaces(s string) string {
	out := []byte(s)
	for i, c := range out {
		if c == ' ' {
			out[i] = '+'
		}
	}
	return string(out)
}
