package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

// runActivity is `switchyard activity`: LiteLLM's daily activity (/user/daily/activity, or
// /tag/daily/activity with --by tag) of the calling key, per day with its per-model or
// per-tag breakdown.
func runActivity(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("activity", "activity [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--by model|tag] [--model M] [--tags a,b] [--page N] [--page-size N]", stderr)
	cf := addClientFlags(fs)
	from := fs.String("from", "", "first day YYYY-MM-DD, UTC (default: 29 days before --to)")
	to := fs.String("to", "", "last day YYYY-MM-DD, UTC (default today)")
	by := fs.String("by", "model", "break each day down per model (/user/daily/activity) or per request tag (/tag/daily/activity)")
	model := fs.String("model", "", "--by model: only this model (provider/model or the model alone)")
	tags := fs.String("tags", "", "--by tag: only these tags, comma-separated")
	page := fs.Int("page", 0, "the page of days, newest first (default 1)")
	pageSize := fs.Int("page-size", 0, "days per page, 1 to 1000 (default 50)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q (switchyard activity --from 2025-06-01 --to 2025-06-30)", pos[0])
	}
	q := client.DailyActivityQuery{Model: *model, Page: *page, PageSize: *pageSize}
	if q.To, err = activityDay(*to, "--to", time.Now().UTC()); err != nil {
		return err
	}
	if q.From, err = activityDay(*from, "--from", q.To.AddDate(0, 0, -29)); err != nil {
		return err
	}
	if *tags != "" {
		q.Tags = strings.Split(*tags, ",")
	}
	var call func(context.Context, client.DailyActivityQuery) (*client.DailyActivity, error)
	c, err := cf.client()
	if err != nil {
		return err
	}
	switch *by {
	case "model":
		if q.Tags != nil {
			return errors.New("--tags is for --by tag")
		}
		call = c.UserDailyActivity
	case "tag":
		if q.Model != "" {
			return errors.New("--model is for --by model (the spend per tag is not kept per model)")
		}
		call = c.TagDailyActivity
	default:
		return fmt.Errorf("--by: model or tag, got %q", *by)
	}
	a, err := call(ctx, q)
	if err != nil {
		return err
	}
	if cf.jsonOut {
		return printJSON(stdout, a)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "DAY\t%s\tREQUESTS\tFAILED\tTOKENS\tSPENT\n", strings.ToUpper(*by))
	for _, d := range a.Results {
		printActivityLine(tw, d.Date, "", d.Metrics)
		entries := d.Breakdown.Models
		if *by == "tag" {
			entries = d.Breakdown.Entities
		}
		names := make([]string, 0, len(entries))
		for name := range entries {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			printActivityLine(tw, "", name, entries[name].Metrics)
		}
	}
	m := a.Metadata
	printActivityLine(tw, "total", "", client.ActivityMetrics{SpendUSD: m.TotalSpendUSD, TotalTokens: m.TotalTokens,
		APIRequests: m.TotalAPIRequests, FailedRequests: m.TotalFailedRequests})
	if err := tw.Flush(); err != nil {
		return err
	}
	if m.HasMore {
		fmt.Fprintf(stdout, "(page %d of %d: --page %d for older days)\n", m.Page, m.TotalPages, m.Page+1)
	}
	return nil
}

// activityDay parses a --from or --to day (def when empty).
func activityDay(v, flag string, def time.Time) (time.Time, error) {
	if v == "" {
		return def, nil
	}
	d, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return d, fmt.Errorf("%s: a day YYYY-MM-DD, got %q", flag, v)
	}
	return d, nil
}

// printActivityLine writes one row of the activity table: a day's totals (name empty) or
// one model's or tag's of the day above (day empty).
func printActivityLine(w io.Writer, day, name string, m client.ActivityMetrics) {
	fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t$%.4f\n", day, name, m.APIRequests, m.FailedRequests, m.TotalTokens, m.SpendUSD)
}
