package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store/memstore"
)

// /spend/logs/v2's common pages read a page of stored requests, not every request of the
// window: its first page of the last day, a key's own requests (api_key, or the user_id
// only that key has) and a later page of them; the totals are what /spend/logs lists.
func TestReview24jSpendLogsV2ReadsAPage(t *testing.T) {
	f := newHistoryFixture(t, memstore.NewDriver(), 2000, 2, 10)
	defer f.close()
	now := f.now.Add(time.Second)
	day := urlSpaces("start_date=" + now.Add(-24*time.Hour).Format(time.DateTime) + "&end_date=" + now.Format(time.DateTime))
	for _, c := range []struct {
		filter   string
		page     int
		wantRows int
	}{
		{"", 1, 50},
		{"&api_key=vk_bench_3", 1, 50},
		{"&api_key=vk_bench_3", 2, 50},
		{"&api_key=vk_bench_3", 3, 0}, // 100 of the key's requests in the day
		{"&api_key=vk_none", 1, 0},
	} {
		q := fmt.Sprintf("%s%s&page=%d", day, c.filter, c.page)
		reads := f.get(t, "/spend/logs/v2?"+q)
		p := f.getJSON(t, "/spend/logs/v2?"+q)
		var all []spendLogRowT
		if err := json.Unmarshal(f.getBody(t, "/spend/logs?summarize=false&"+day+c.filter), &all); err != nil {
			t.Fatal(err)
		}
		if p.Total != len(all) || len(p.Data) != c.wantRows {
			t.Fatalf("%s: total %d, %d rows; /spend/logs lists %d, want %d rows", q, p.Total, len(p.Data), len(all), c.wantRows)
		}
		if len(p.Data) > 0 && p.Data[0].RequestID != all[(c.page-1)*50].RequestID {
			t.Fatalf("%s: page starts with %s, want %s", q, p.Data[0].RequestID, all[(c.page-1)*50].RequestID)
		}
		if reads > 60 {
			t.Fatalf("%s: %d stored requests read for a page of 50 (of %d in the window)", q, reads, len(all))
		}
	}
}

// getBody answers GET path as testKey, failing unless 200, and returns the answer's body.
func (f *historyFixture) getBody(tb testing.TB, path string) []byte {
	tb.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	w := httptest.NewRecorder()
	f.s.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		tb.Fatalf("GET %s: %d %s", path, w.Code, w.Body.String())
	}
	return w.Body.Bytes()
}

func (f *historyFixture) getJSON(tb testing.TB, path string) spendLogsPageT {
	tb.Helper()
	var p spendLogsPageT
	if err := json.Unmarshal(f.getBody(tb, path), &p); err != nil {
		tb.Fatal(err)
	}
	return p
}
