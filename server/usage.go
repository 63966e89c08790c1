package server

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/switchyard-ai/switchyard/usagelog"
)

// usageRequests is the answer of GET /api/v1/usage/requests.
type usageRequests struct {
	// Data are the key's requests, newest first.
	Data []usagelog.Request `json:"data"`
	// NextBefore, when present, pages back: pass it as before.
	NextBefore int64 `json:"next_before,omitempty"`
}

// Usage plugs the gateway's recent request history and per-model spend and latency
// (package usagelog, fed as the gateway's completions.Observer) into the server:
//
//   - GET /api/v1/usage/requests?limit=N&before=ID — the key's recent requests, newest
//     first, each with its attempts (model, outcome, latency, error kind); limit 1-500
//     (default 50); before pages back with the previous page's next_before.
//
//   - GET /api/v1/usage/series?window=1h|24h&step=1m — the key's requests per model in
//     steps of step (default 1m for windows up to 1h, else 15m): count, errors, tokens,
//     USD cost, latency sum, mean and max.
//
//   - GET /spend/logs — LiteLLM's spend logs over the same history (litellmspend.go): the
//     requests in LiteLLM_SpendLogs rows, or LiteLLM's spend per day.
//
// They see only the calling key's requests. The request lists read the durable history of
// option RequestHistory when the server has one (every replica's requests, kept across
// restarts); otherwise what rec recorded in this process since it started (in memory and
// bounded). The series are always rec's.
func Usage(rec *usagelog.Recorder) Option {
	return func(s *Server) error {
		if rec == nil {
			return errors.New("server: Usage needs a *usagelog.Recorder")
		}
		tags := []string{"Usage"}
		s.Handle(Route{Method: "GET", Path: "/api/v1/usage/requests", Summary: "This key's recent completion requests with their attempts, newest first (a virtual key sees its own)",
			Query: []QueryParam{
				{Name: "limit", Description: "how many requests 1-500 (default 50)", Type: "integer", Minimum: Bound(1), Maximum: Bound(500)},
				{Name: "before", Description: "next_before of the previous page: only requests recorded before it", Type: "integer", Minimum: Bound(1), Maximum: Bound(1 << 62)},
				{Name: "tag", Description: "only the requests of one scope: key:<virtual key id> or optimize:<job id>"},
				{Name: "request_tag", Description: "only the requests that carried this tag (their tags or metadata.tags or X-Switchyard-Tags)"},
			}, Response: usageRequests{}, Tags: tags, VirtualKeys: true},
			func(w http.ResponseWriter, r *http.Request) error {
				q := r.URL.Query()
				limit, err := intQuery(q.Get("limit"), "limit", 50, 1, 500)
				if err != nil {
					return err
				}
				before, err := intQuery(q.Get("before"), "before", 0, 1, 1<<62)
				if err != nil {
					return err
				}
				tag := q.Get("tag")
				if p, _ := PrincipalFrom(r.Context()); p.Scope != nil {
					vk, _ := p.Scope.(virtualKeyScope) // the only scoped keys the route lets in
					if tag != "" && tag != vk.Tag {
						return Errorf(http.StatusForbidden, KindForbidden, "tag: a virtual key sees only its own requests (%s)", vk.Tag)
					}
					tag = vk.Tag
				}
				// One more than asked says whether there is a next page.
				reqs, err := usagelog.Take(r.Context(), s.requests(rec),
					usagelog.RequestQuery{Owner: owner(r), Tag: tag, RequestTag: q.Get("request_tag"), Before: int64(before)}, limit+1)
				if err != nil {
					return err
				}
				out := usageRequests{Data: reqs}
				if len(reqs) > limit {
					out.Data = reqs[:limit]
					out.NextBefore = reqs[limit-1].ID
				}
				writeJSON(w, http.StatusOK, out)
				return nil
			})
		s.Handle(Route{Method: "GET", Path: "/api/v1/usage/series", Summary: "This key's spend and latency per model (or per request tag) over time",
			Query: []QueryParam{
				{Name: "window", Description: "how far back: a duration such as 1h or 24h (default 1h; at most the recorder's window)"},
				{Name: "step", Description: "bucket width in whole minutes such as 1m or 15m (default 1m up to a 1h window, else 15m)"},
				{Name: "by", Description: "model (default) or tag: one series per request tag instead (spend per feature or team)", Enum: []string{"model", "tag"}},
			}, Response: usagelog.Series{}, Tags: tags},
			func(w http.ResponseWriter, r *http.Request) error {
				q := r.URL.Query()
				window, err := durationQuery(q.Get("window"), "window", time.Hour, rec.Window(), "the history kept", "1h or 24h")
				if err != nil {
					return err
				}
				defStep := time.Minute
				if window > time.Hour {
					defStep = 15 * time.Minute
				}
				step, err := durationQuery(q.Get("step"), "step", defStep, window, "the window", "5m or 15m")
				if err != nil {
					return err
				}
				switch q.Get("by") {
				case "", "model":
					writeJSON(w, http.StatusOK, rec.Series(owner(r), window, step))
				case "tag":
					writeJSON(w, http.StatusOK, rec.TagSeries(owner(r), window, step))
				default:
					return Validation(http.StatusUnprocessableEntity, "by must be model or tag, got %q", q.Get("by"))
				}
				return nil
			})
		s.litellmSpendRoutes(rec)
		s.litellmSpendV2Route(rec)
		return nil
	}
}

// intQuery parses an optional integer query parameter within [lo, hi].
func intQuery(v, name string, def, lo, hi int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, Validation(http.StatusUnprocessableEntity, "%s must be an integer %d-%d, got %q", name, lo, hi, v)
	}
	return n, nil
}

// durationQuery parses an optional duration query parameter of whole minutes, at least one
// and at most hi (bound says what hi is); example is a valid value for the message.
func durationQuery(v, name string, def, hi time.Duration, bound, example string) (time.Duration, error) {
	if v == "" {
		return min(def, hi), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Minute || d > hi || d%time.Minute != 0 {
		return 0, Validation(http.StatusUnprocessableEntity, "%s must be whole minutes from 1m to %s (%s; e.g. %s), got %q",
			name, shortDuration(hi), bound, example, v)
	}
	return d, nil
}

// shortDuration writes 24h0m0s as 24h.
func shortDuration(d time.Duration) string {
	if d%time.Hour == 0 {
		return strconv.Itoa(int(d/time.Hour)) + "h"
	}
	if d%time.Minute == 0 {
		return strconv.Itoa(int(d/time.Minute)) + "m"
	}
	return d.String()
}

// RequestHistory makes the request lists (GET /api/v1/usage/requests, /spend/logs,
// /spend/logs/v2) read h, the request history kept in the store, instead of Usage's
// in-memory Recorder: they then list every replica's requests and keep them across
// restarts. h should also be the gateway's Observer (with the Recorder, which still feeds
// the series); it is closed, writing what is queued, when the server closes.
func RequestHistory(h *usagelog.History) Option {
	return func(s *Server) error {
		if h == nil {
			return errors.New("server: RequestHistory needs a *usagelog.History")
		}
		s.history = h
		s.OnClose(h.Close)
		return nil
	}
}

// requests is the request history the lists read: the store's (RequestHistory), else rec.
func (s *Server) requests(rec *usagelog.Recorder) usagelog.RequestSource {
	if s.history != nil {
		return s.history
	}
	return rec
}

// spendAnswer is the answer of GET /api/v1/usage/spend.
type spendAnswer struct {
	From string `json:"from"`
	To   string `json:"to"`
	By   string `json:"by"`
	// Data are the days' totals, by day then costliest first.
	Data []usagelog.SpendRow `json:"data"`
}

// Spend plugs the durable daily spend (usagelog.Rollup, fed as a completions.Observer) into
// the server: GET /api/v1/usage/spend?from=YYYY-MM-DD&to=YYYY-MM-DD&by=tag|model answers the
// calling key's totals per day and request tag (or model), from the store, so they outlive
// restarts and add up every replica's; the rollup is written once more at Close. GET
// /global/spend/logs answers the same spend per day over the last 30 days in LiteLLM's
// shape (litellmspend.go), and GET /user/daily/activity, /team/daily/activity and
// /tag/daily/activity LiteLLM's daily activity (litellmdailyactivity.go).
func Spend(r *usagelog.Rollup) Option {
	return func(s *Server) error {
		if r == nil {
			return errors.New("server: Spend needs a *usagelog.Rollup")
		}
		s.OnClose(r.Close)
		s.spend = r
		s.Handle(Route{Method: "GET", Path: "/api/v1/usage/spend", Summary: "This key's spend per day and request tag (or model), kept in the store",
			Query: []QueryParam{
				{Name: "from", Description: "first day YYYY-MM-DD in UTC (default: the 30 days ending on to)"},
				{Name: "to", Description: "last day YYYY-MM-DD in UTC (default today); at most 365 days after from (366 days in all)"},
				{Name: "by", Description: "tag (default) or model", Enum: []string{usagelog.SpendByTag, usagelog.SpendByModel}},
			}, Response: spendAnswer{}, Tags: []string{"Usage"}},
			func(w http.ResponseWriter, req *http.Request) error {
				q := req.URL.Query()
				to, err := dayQuery(q.Get("to"), "to", time.Now().UTC())
				if err != nil {
					return err
				}
				from, err := dayQuery(q.Get("from"), "from", to.AddDate(0, 0, -29))
				if err != nil {
					return err
				}
				if from.After(to) || to.Sub(from) >= usagelog.MaxSpendDays*24*time.Hour {
					return Validation(http.StatusUnprocessableEntity, "from must be on or before to and at most %d days before it", usagelog.MaxSpendDays-1)
				}
				by := q.Get("by")
				if by == "" {
					by = usagelog.SpendByTag
				}
				if by != usagelog.SpendByTag && by != usagelog.SpendByModel {
					return Validation(http.StatusUnprocessableEntity, "by must be tag or model, got %q", by)
				}
				rows, err := r.Spend(req.Context(), owner(req), from, to, by)
				if err != nil {
					return err
				}
				writeJSON(w, http.StatusOK, spendAnswer{From: from.Format(time.DateOnly), To: to.Format(time.DateOnly), By: by, Data: rows})
				return nil
			})
		s.litellmGlobalSpendRoutes(r)
		s.litellmDailyActivityRoutes(r)
		return nil
	}
}

// dayQuery parses an optional YYYY-MM-DD query parameter (UTC).
func dayQuery(v, name string, def time.Time) (time.Time, error) {
	if v == "" {
		return def.Truncate(24 * time.Hour), nil
	}
	d, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, Validation(http.StatusUnprocessableEntity, "%s must be a day YYYY-MM-DD, got %q", name, v)
	}
	return d, nil
}
