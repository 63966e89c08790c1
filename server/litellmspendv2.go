package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/switchyard-ai/switchyard/usagelog"
)

// LiteLLM's admin UI pages its request log with GET /spend/logs/v2 (the paginated
// successor of /spend/logs/ui): start_date and end_date are required, the rows are
// filtered as /spend/logs filters them and by status, and the answer is one page of them,
// newest first, with the total count.

// litellmSpendLogsPage is the answer of GET /spend/logs/v2.
type litellmSpendLogsPage struct {
	Data       []litellmSpendLog `json:"data" jsonschema:"description=The page's rows newest first (LiteLLM_SpendLogs rows as /spend/logs answers them)"`
	Total      int               `json:"total" jsonschema:"description=How many rows match in all"`
	Page       int               `json:"page"`
	PageSize   int               `json:"page_size"`
	TotalPages int               `json:"total_pages" jsonschema:"description=ceil(total / page_size); 0 when none matches"`
}

// Page sizes of /spend/logs/v2, as LiteLLM's.
const (
	spendLogsV2DefaultPageSize = 50
	spendLogsV2MaxPageSize     = 100
)

// litellmSpendV2Params are the query parameters /spend/logs/v2 takes.
var litellmSpendV2Params = []string{"api_key", "user_id", "request_id", "team_id", "start_date", "end_date", "status_filter", "page", "page_size"}

// litellmSpendV2Route registers GET /spend/logs/v2 over the request history.
func (s *Server) litellmSpendV2Route(rec *usagelog.Recorder) {
	s.Handle(Route{Method: "GET", Path: "/spend/logs/v2", Summary: "LiteLLM's paginated spend logs: one page of this key's requests between start_date and end_date in LiteLLM_SpendLogs rows newest first, with the total (a virtual key sees its own)",
		Tags: []string{"LiteLLM compatibility", "Usage"}, VirtualKeys: true, Response: litellmSpendLogsPage{},
		Query: []QueryParam{
			{Name: "start_date", Description: "Required: only requests received from then: YYYY-MM-DD HH:MM:SS (UTC, LiteLLM's form) or YYYY-MM-DD (midnight UTC) or RFC 3339"},
			{Name: "end_date", Description: "Required: only requests received until then, inclusive: YYYY-MM-DD HH:MM:SS (UTC) or YYYY-MM-DD (the whole day UTC) or RFC 3339"},
			{Name: "api_key", Description: "Only the requests of this key, as /spend/logs takes it"},
			{Name: "user_id", Description: "Only the requests of virtual keys whose metadata.user_id is this (as the keys are now)"},
			{Name: "team_id", Description: "Only the requests of virtual keys of this team (as the keys are now)"},
			{Name: "request_id", Description: "Only this request, as /spend/logs takes it"},
			{Name: "status_filter", Description: "Only the requests of this status", Enum: []string{"success", "failure"}},
			{Name: "page", Description: "The page, from 1 (default 1)", Type: "integer", Minimum: Bound(1), Maximum: Bound(1 << 30)},
			{Name: "page_size", Description: "Rows per page 1-100 (default 50)", Type: "integer", Minimum: Bound(1), Maximum: Bound(spendLogsV2MaxPageSize)},
		},
		Errors: map[int]string{
			400: "start_date or end_date missing, or a bad or unknown parameter: the message and param name it",
			403: "a virtual key named another key in api_key (a virtual key sees only its own requests)",
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			q, page, size, err := readSpendLogsV2Query(r.URL.Query())
			if err != nil {
				return err
			}
			out, err := s.spendLogsPage(r.Context(), r, rec, q, page, size)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
}

// readSpendLogsV2Query parses and checks the query of /spend/logs/v2.
func readSpendLogsV2Query(v url.Values) (q spendLogsQuery, page, size int, err error) {
	var unknown []string
	for name, vs := range v {
		if !slices.Contains(litellmSpendV2Params, name) && slices.ContainsFunc(vs, func(s string) bool { return s != "" }) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return q, 0, 0, paramError(unknown[0], "unknown query parameter %s: /spend/logs/v2 takes %s", strings.Join(unknown, ", "), strings.Join(litellmSpendV2Params, ", "))
	}
	for _, name := range []string{"start_date", "end_date"} {
		if v.Get(name) == "" {
			return q, 0, 0, paramError(name, "%s is required (YYYY-MM-DD HH:MM:SS, UTC): start_date and end_date bound the requests listed", name)
		}
	}
	q = spendLogsQuery{apiKey: v.Get("api_key"), userID: v.Get("user_id"), requestID: v.Get("request_id"), teamID: v.Get("team_id")}
	if q.from, err = spendLogsTime(v.Get("start_date"), "start_date", false); err != nil {
		return q, 0, 0, err
	}
	if q.until, err = spendLogsTime(v.Get("end_date"), "end_date", true); err != nil {
		return q, 0, 0, err
	}
	if !q.from.Before(*q.until) {
		return q, 0, 0, paramError("end_date", "end_date: must not be before start_date, got %q and %q", v.Get("start_date"), v.Get("end_date"))
	}
	switch q.status = v.Get("status_filter"); q.status {
	case "", "success", "failure":
	default:
		return q, 0, 0, paramError("status_filter", "status_filter: must be success or failure, got %q", q.status)
	}
	if page, err = litellmQueryInt(v.Get("page"), "page", 1, 1, 1<<30); err != nil {
		return q, 0, 0, err
	}
	if size, err = litellmQueryInt(v.Get("page_size"), "page_size", spendLogsV2DefaultPageSize, 1, spendLogsV2MaxPageSize); err != nil {
		return q, 0, 0, err
	}
	return q, page, size, nil
}

// spendLogsPage is one page of the rows of q. When every request the history query
// selects is a row (no filter left to check on the rows), the history counts them and
// skips to the page without reading the requests before it (the store's history reads
// its owner index only); otherwise every matching row is read.
func (s *Server) spendLogsPage(ctx context.Context, r *http.Request, rec *usagelog.Recorder, q spendLogsQuery, page, size int) (litellmSpendLogsPage, error) {
	out := litellmSpendLogsPage{Data: []litellmSpendLog{}, Page: page, PageSize: size}
	plan, err := s.spendLogsPlan(ctx, r, q)
	if err != nil || plan.none {
		return out, err
	}
	src := s.requests(rec)
	if plan.keep == nil {
		if out.Total, err = src.Count(ctx, plan.rq); err != nil {
			return out, fmt.Errorf("server: reading the request history: %w", err)
		}
		out.TotalPages = (out.Total + size - 1) / size
		if (page-1)*size >= out.Total {
			return out, nil
		}
		rq := plan.rq
		rq.Skip, rq.Limit = (page-1)*size, size
		err = src.Each(ctx, rq, func(req usagelog.Request) bool {
			out.Data = append(out.Data, plan.row(req))
			return len(out.Data) < size
		})
		if err != nil {
			return out, fmt.Errorf("server: reading the request history: %w", err)
		}
		return out, nil
	}
	// Every matching row is read to count them; only the page's are kept.
	from := (page - 1) * size
	err = s.eachSpendLog(ctx, r, rec, q, func(row litellmSpendLog) bool {
		if out.Total >= from && len(out.Data) < size {
			out.Data = append(out.Data, row)
		}
		out.Total++
		return true
	})
	if err != nil {
		return out, err
	}
	out.TotalPages = (out.Total + size - 1) / size
	return out, nil
}
