package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// historyServer is a replica over st: the gateway over the scripted OpenAI upstream (its
// base URL carrying credentials, which no answer may show), a model group "pair", the usage
// routes reading the durable request history.
func historyServer(t *testing.T, st *store.Store, upstream string) *Server {
	t.Helper()
	u, _ := url.Parse(upstream)
	u.User = url.UserPassword("admin", "hunter2secret")
	rec := usagelog.New(usagelog.Options{})
	h := usagelog.NewHistory(st, usagelog.HistoryOptions{})
	g, err := completions.New(completions.Options{Providers: providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: u.String() + "/v1", APIKey: "sk-up"})),
		Store: st, Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond},
		Observer:    completions.JoinObservers(rec, h),
		ModelGroups: map[string]completions.ModelGroup{"pair": {Models: []string{"openai/ok"}}}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey, completionsOtherKey}}, nil)
	for _, o := range []Option{Completions(g), Usage(rec), RequestHistory(h)} {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// serve is s on an HTTP test server.
func serve(t *testing.T, s *Server) string {
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs.URL
}

// spendLogsPageT is a /spend/logs/v2 answer as the tests read it.
type spendLogsPageT struct {
	Data       []spendLogRowT `json:"data"`
	Total      int            `json:"total"`
	Page       int            `json:"page"`
	PageSize   int            `json:"page_size"`
	TotalPages int            `json:"total_pages"`
}

// TestRequestHistoryDurableAndShared: two servers over one store (each replica's own
// gateway and history) list each other's requests on /spend/logs and
// /api/v1/usage/requests, with the model group asked for, the end user and the upstream's
// base URL without its credentials; a virtual key sees only its own; a server started
// after both closed still lists them all; /spend/logs/v2 pages them.
func TestRequestHistoryDurableAndShared(t *testing.T) {
	ups := httptest.NewServer(&fakeOpenAIUpstream{})
	t.Cleanup(ups.Close)
	for _, b := range drivertest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			d := b.Open(t)
			st1, st2 := store.New(d), store.New(b.Replica(t, d))
			s1, s2 := historyServer(t, st1, ups.URL), historyServer(t, st2, ups.URL)
			url1, url2 := serve(t, s1), serve(t, s2)
			vk := litellmGenerate(t, s1, `{"key_alias":"alpha","user_id":"ann@example.com"}`)
			ans := chatOK(t, url1, vk.Key, "pair", `"user":"end-user-7",`)
			chatOK(t, url2, testKey, "openai/ok", "")
			// Each replica's writer commits in the background: a replica sees the other's
			// requests once they are written.
			for _, s := range []*Server{s1, s2} {
				if err := s.history.Flush(context.Background()); err != nil {
					t.Fatal(err)
				}
			}

			for _, s := range []*Server{s1, s2} {
				rows := spendLogs(t, s, testKey, "")
				if len(rows) != 2 {
					t.Fatalf("%d rows, want both replicas' requests: %+v", len(rows), rows)
				}
				row := rows[1]
				if row.RequestID != ans.ID || row.APIKey != vk.Token {
					t.Fatalf("the virtual key's request (older): %+v", row)
				}
				if row.ModelGroup == nil || *row.ModelGroup != "pair" || row.EndUser == nil || *row.EndUser != "end-user-7" {
					t.Fatalf("model_group %v end_user %v", row.ModelGroup, row.EndUser)
				}
				if rows[0].ModelGroup == nil || *rows[0].ModelGroup != "openai/ok" || rows[0].EndUser != nil {
					t.Fatalf("the operator's request: model_group %v end_user %v", rows[0].ModelGroup, rows[0].EndUser)
				}
				r := do(t, s, "GET", "/api/v1/usage/requests", testKey, "")
				var got struct {
					Data []usagelog.Request `json:"data"`
				}
				if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &got) != nil || len(got.Data) != 2 {
					t.Fatalf("usage requests: %d %s", r.status, r.raw)
				}
			}
			raw := do(t, s2, "GET", "/spend/logs", testKey, "").raw
			var base []struct {
				APIBase *string `json:"api_base"`
			}
			if err := json.Unmarshal([]byte(raw), &base); err != nil || len(base) != 2 || base[0].APIBase == nil ||
				*base[0].APIBase != ups.URL+"/v1" || strings.Contains(raw, "hunter2secret") || strings.Contains(raw, "admin@") {
				t.Fatalf("api_base must be the upstream without its credentials (%s): %s", ups.URL, raw)
			}
			if own := spendLogs(t, s2, vk.Key, ""); len(own) != 1 || own[0].RequestID != ans.ID {
				t.Fatalf("the virtual key on the other replica sees %+v, want its own request", own)
			}

			// Both replicas stop (their queues written); a new one lists what they served.
			for _, s := range []*Server{s1, s2} {
				if err := s.Close(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			s3 := historyServer(t, st1, ups.URL)
			url3 := serve(t, s3)
			if rows := spendLogs(t, s3, testKey, ""); len(rows) != 2 || rows[1].RequestID != ans.ID {
				t.Fatalf("after the restart: %+v", rows)
			}

			// /spend/logs/v2: 2 + 5 requests, one of which failed, in pages of 3.
			for range 4 {
				chatOK(t, url3, testKey, "openai/ok", "")
			}
			if code, body := chatStatus(t, url3, testKey, "openai/down"); code == http.StatusOK {
				t.Fatalf("openai/down answered: %s", body)
			}
			all := spendLogs(t, s3, testKey, "")
			now := time.Now().UTC()
			window := "start_date=" + url.QueryEscape(now.Add(-time.Hour).Format(time.DateTime)) + "&end_date=" + url.QueryEscape(now.Add(time.Hour).Format(time.DateTime))
			var pages []spendLogRowT
			for p := 1; p <= 3; p++ {
				pg := spendLogsV2(t, s3, testKey, window+"&page_size=3&page="+string(rune('0'+p)))
				if pg.Total != 7 || pg.TotalPages != 3 || pg.Page != p || pg.PageSize != 3 || len(pg.Data) != min(3, 7-3*(p-1)) {
					t.Fatalf("page %d: total %d pages %d page %d size %d rows %d", p, pg.Total, pg.TotalPages, pg.Page, pg.PageSize, len(pg.Data))
				}
				pages = append(pages, pg.Data...)
			}
			for i := range all {
				if pages[i].RequestID != all[i].RequestID {
					t.Fatalf("row %d of the pages is %s, of the listing %s", i, pages[i].RequestID, all[i].RequestID)
				}
			}
			if pg := spendLogsV2(t, s3, testKey, window+"&status_filter=failure"); pg.Total != 1 || pg.Data[0].Status != "failure" || pg.TotalPages != 1 {
				t.Fatalf("status_filter=failure: %+v", pg)
			}
			if pg := spendLogsV2(t, s3, testKey, window+"&page=9"); pg.Total != 7 || len(pg.Data) != 0 {
				t.Fatalf("past the last page: %+v", pg)
			}
			if pg := spendLogsV2(t, s3, vk.Key, window); pg.Total != 1 || pg.Data[0].RequestID != ans.ID {
				t.Fatalf("the virtual key's v2: %+v", pg)
			}
			if pg := spendLogsV2(t, s3, testKey, window+"&api_key="+vk.Token); pg.Total != 1 {
				t.Fatalf("api_key: %+v", pg)
			}
			past := "start_date=" + url.QueryEscape(now.Add(-3*time.Hour).Format(time.DateTime)) + "&end_date=" + url.QueryEscape(now.Add(-2*time.Hour).Format(time.DateTime))
			if pg := spendLogsV2(t, s3, testKey, past); pg.Total != 0 || pg.TotalPages != 0 || len(pg.Data) != 0 {
				t.Fatalf("an empty window: %+v", pg)
			}
			for q, param := range map[string]string{
				"":                             "start_date",
				window + "&page_size=101":      "page_size",
				window + "&page=0":             "page",
				window + "&status_filter=ok":   "status_filter",
				window + "&summarize=false":    "summarize",
				"start_date=2024-01-01":        "end_date",
				window + "&api_key=" + "vk_no": "",
			} {
				r := do(t, s3, "GET", "/spend/logs/v2?"+q, testKey, "")
				if param == "" {
					if r.status != http.StatusOK {
						t.Fatalf("%s: %d %s", q, r.status, r.raw)
					}
					continue
				}
				if r.status != http.StatusBadRequest || !strings.Contains(r.raw, param) {
					t.Fatalf("%s: %d %s, want a 400 naming %s", q, r.status, r.raw, param)
				}
			}
			if r := do(t, s3, "GET", "/spend/logs/v2?"+window+"&api_key="+url.QueryEscape(testKey), vk.Key, ""); r.status != http.StatusForbidden {
				t.Fatalf("a virtual key naming another key: %d %s", r.status, r.raw)
			}
		})
	}
}

// spendLogsV2 reads GET /spend/logs/v2?query as key and fails unless it answers 200.
func spendLogsV2(t *testing.T, s *Server, key, query string) spendLogsPageT {
	t.Helper()
	r := do(t, s, "GET", "/spend/logs/v2?"+query, key, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /spend/logs/v2?%s: %d %s", query, r.status, r.raw)
	}
	var p spendLogsPageT
	if err := json.Unmarshal([]byte(r.raw), &p); err != nil {
		t.Fatalf("GET /spend/logs/v2?%s: %v: %s", query, err, r.raw)
	}
	return p
}
