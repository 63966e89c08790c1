package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// readJSON answers GET path as testKey into out, failing unless 200; it returns the
// request history records read.
func (f *historyFixture) readJSON(t *testing.T, path string, out any) int64 {
	t.Helper()
	before := f.d.reads.Load()
	if err := json.Unmarshal(f.getBody(t, path), out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return f.d.reads.Load() - before
}

// A lookup by request id in a history of 10,000 requests (on every driver) reads the
// requests it names, not the retention window: by the answer's id (chatcmpl-…), by the
// caller's x-request-id and by the history's own id, on /spend/logs and /spend/logs/v2,
// and a virtual key's lookup of another key's request finds nothing.
func TestReview25bRequestIDLookupReadsItsRequest(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		f := newHistoryFixture(t, d, 10_000, 10, 10)
		defer f.close()
		var rows []litellmSpendLog
		reads := f.readJSON(t, "/spend/logs?request_id=chatcmpl-resp-1234", &rows)
		t.Logf("request_id=chatcmpl-resp-1234: %d records read", reads)
		if len(rows) != 1 || rows[0].RequestID != "chatcmpl-resp-1234" || rows[0].APIKey != "vk_bench_4" {
			t.Fatalf("rows %+v, want the one request answered as chatcmpl-resp-1234", rows)
		}
		if reads > 2 {
			t.Errorf("a lookup by response id read %d records of 10,000, want at most 2", reads)
		}
		sw, _ := rows[0].Metadata["switchyard"].(map[string]any)
		id := fmt.Sprint(int64(sw["id"].(float64)))

		for _, q := range []string{"req_1234", "resp-1234", id} {
			rows = nil
			reads = f.readJSON(t, "/spend/logs?request_id="+q, &rows)
			t.Logf("request_id=%s: %d records read", q, reads)
			if len(rows) != 1 || rows[0].RequestID != "chatcmpl-resp-1234" {
				t.Fatalf("request_id=%s: rows %+v, want the request answered as chatcmpl-resp-1234", q, rows)
			}
			if reads > 2 {
				t.Errorf("request_id=%s: read %d records of 10,000, want at most 2", q, reads)
			}
		}
		for _, q := range []string{"req_10000", "chatcmpl-req_1234", "msg_nothing", "1"} {
			rows = nil
			reads = f.readJSON(t, "/spend/logs?request_id="+q, &rows)
			if len(rows) != 0 {
				t.Fatalf("request_id=%s: rows %+v, want none", q, rows)
			}
			if reads > 2 {
				t.Errorf("request_id=%s (none): read %d records of 10,000, want at most 2", q, reads)
			}
		}

		// /spend/logs/v2 over the whole history, with the key's and the status's filters.
		all := url.Values{"start_date": {f.now.Add(-11 * 24 * time.Hour).Format(time.DateTime)}, "end_date": {f.now.Add(time.Hour).Format(time.DateTime)}}
		for _, c := range []struct {
			extra string
			want  int
		}{{"", 1}, {"&api_key=vk_bench_4", 1}, {"&api_key=vk_bench_3", 0}, {"&status_filter=success", 1}, {"&status_filter=failure", 0}} {
			var page litellmSpendLogsPage
			reads = f.readJSON(t, "/spend/logs/v2?"+all.Encode()+"&request_id=req_1234"+c.extra, &page)
			if page.Total != c.want || len(page.Data) != c.want {
				t.Fatalf("v2 request_id=req_1234%s: total %d, %d rows, want %d", c.extra, page.Total, len(page.Data), c.want)
			}
			if reads > 2 {
				t.Errorf("v2 request_id=req_1234%s: read %d records of 10,000, want at most 2", c.extra, reads)
			}
		}
	})
}

// status_filter pages (on every driver) read their page, not the window, and count the
// same rows as before: success and failure add up to all, and each page holds only its
// status.
func TestReview25bStatusFilterReadsItsPage(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		f := newHistoryFixture(t, d, 10_000, 10, 10)
		defer f.close()
		day := url.Values{"start_date": {f.now.Add(-24 * time.Hour).Format(time.DateTime)}, "end_date": {f.now.Format(time.DateTime)}}.Encode()
		var all litellmSpendLogsPage
		f.readJSON(t, "/spend/logs/v2?"+day, &all)
		totals := map[string]int{}
		for _, status := range []string{"success", "failure"} {
			for _, extra := range []string{"", "&api_key=vk_bench_0", "&api_key=vk_bench_3"} {
				for _, pg := range []int{1, 3} {
					var page litellmSpendLogsPage
					path := fmt.Sprintf("/spend/logs/v2?%s&status_filter=%s%s&page=%d", day, status, extra, pg)
					reads := f.readJSON(t, path, &page)
					t.Logf("%s: total %d, %d records read", path, page.Total, reads)
					if reads > 51 {
						t.Errorf("%s read %d records, want at most the page and one more (51)", path, reads)
					}
					for _, row := range page.Data {
						if row.Status != status {
							t.Fatalf("%s: a %s row", path, row.Status)
						}
					}
					if extra == "" && pg == 1 {
						totals[status] = page.Total
					}
				}
			}
		}
		if totals["failure"] == 0 || totals["success"]+totals["failure"] != all.Total {
			t.Fatalf("status totals %v, want failures and together the %d of the day", totals, all.Total)
		}
	})
}

// GET /spend/logs without dates answers at most spendLogsMaxRows rows, the newest, and
// says it cut them (LiteLLM's x-litellm-spend-logs-truncated), reading about as many
// requests as it answers (a page of the history reads its 100 records and the next one);
// a history within the bound is answered whole without it.
func TestReview25bSpendLogsTruncated(t *testing.T) {
	f := newHistoryFixture(t, memstore.NewDriver(), spendLogsMaxRows+20, 10, 10)
	defer f.close()
	for _, c := range []struct {
		path      string
		want      int
		truncated bool
	}{
		{"/spend/logs", spendLogsMaxRows, true},
		{"/spend/logs?api_key=vk_bench_3", (spendLogsMaxRows + 20) / 10, false},
	} {
		before := f.d.reads.Load()
		req := httptest.NewRequest("GET", c.path, nil)
		req.Header.Set("Authorization", "Bearer "+testKey)
		w := httptest.NewRecorder()
		f.s.ServeHTTP(w, req)
		reads := f.d.reads.Load() - before
		var rows []litellmSpendLog
		if err := json.Unmarshal(w.Body.Bytes(), &rows); w.Code != http.StatusOK || err != nil {
			t.Fatalf("%s: %d %v", c.path, w.Code, err)
		}
		if len(rows) != c.want {
			t.Fatalf("%s: %d rows, want %d", c.path, len(rows), c.want)
		}
		if got := w.Header().Get("X-Litellm-Spend-Logs-Truncated") == "true"; got != c.truncated {
			t.Fatalf("%s: truncated header %v, want %v", c.path, got, c.truncated)
		}
		if reads > int64(c.want)*101/100+101 {
			t.Fatalf("%s: read %d requests for %d rows", c.path, reads, c.want)
		}
		for i := 1; i < len(rows); i++ {
			if rows[i].StartTime.After(rows[i-1].StartTime) {
				t.Fatalf("%s: rows not newest first at %d", c.path, i)
			}
		}
		if c.truncated && !rows[0].StartTime.After(f.now.Add(-time.Hour)) {
			t.Fatalf("%s: the first row (%v) is not the newest request", c.path, rows[0].StartTime)
		}
	}
}
