package server

import (
	"net/http"
	"testing"
	"time"
)

// TestReview30sDailyActivityPageFarPastTheEnd: a page so large that (page-1)*page_size
// overflows an int was sliced with a negative start and the handler panicked (a 500); a
// page past the last answers no days, as a page just past it does.
func TestReview30sDailyActivityPageFarPastTheEnd(t *testing.T) {
	hs, s, setNow := dailyActivityServer(t)
	setNow(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	chatOK(t, hs.URL, testKey, "openai/ok", "")
	for _, page := range []string{"2", "4611686018427387905", "9223372036854775807"} {
		for _, path := range []string{"/user/daily/activity", "/tag/daily/activity", "/team/daily/activity"} {
			q := path + "?start_date=2026-03-01&end_date=2026-03-02&page_size=50&page=" + page
			r := do(t, s, "GET", q, testKey, "")
			if r.status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", q, r.status, r.raw)
			}
			a := dailyActivityAnswer(t, s, testKey, q)
			if len(a.Results) != 0 || a.Metadata.HasMore || a.Metadata.TotalPages != 1 {
				t.Fatalf("GET %s: %+v", q, a)
			}
		}
	}
}
