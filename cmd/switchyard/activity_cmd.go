package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

// maxActivityPageSize is the most days a page of daily activity holds (the server's bound
// on page_size).
const maxActivityPageSize = 1000

// runActivity is `switchyard activity`: LiteLLM's daily activity (/user/daily/activity, or
// /tag/daily/activity with --by tag, /team/daily/activity with --by team) of the calling
// key, per day with its per-model, per-tag, per-team or per-key breakdown.
func runActivity(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("activity", "activity [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--by model|tag|team|key] [--model M] [--tags a,b] [--teams a,b] [--exclude-teams a,b] [--api-key K] [--user U] [--page N] [--page-size N]", stderr)
	cf := addClientFlags(fs)
	from := fs.String("from", "", "first day YYYY-MM-DD, UTC (default: 29 days before --to)")
	to := fs.String("to", "", "last day YYYY-MM-DD, UTC (default today)")
	by := fs.String("by", "model", "break each day down per model or per key (/user/daily/activity), per request tag (/tag/daily/activity) or per team (/team/daily/activity: the requests of team keys only)")
	model := fs.String("model", "", "--by model or key: only this model (provider/model or the model alone)")
	tags := fs.String("tags", "", "--by tag: only these tags, comma-separated")
	teams := fs.String("teams", "", "--by team: only these teams, comma-separated team ids")
	excludeTeams := fs.String("exclude-teams", "", "--by team: not these teams, comma-separated team ids")
	apiKey := fs.String("api-key", "", "--by model or key: only this key (a virtual key's id vk_…, the key itself, or the calling key's owner id key_… for its own requests)")
	user := fs.String("user", "", "--by model or key: only this user's requests (those of the virtual keys made for it); a user's virtual key reads its own user's without it")
	page := fs.Int("page", 0, "the page of days, newest first (default 1)")
	pageSize := fs.Int("page-size", 50, fmt.Sprintf("days per page, 1 to %d (sent always: the server's default is 50 days on /user/daily/activity, 10 on the team and tag routes, as LiteLLM's)", maxActivityPageSize))
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q (switchyard activity --from 2025-06-01 --to 2025-06-30)", pos[0])
	}
	// Refused here: the client sends no page when it is not positive, which would show
	// page 1 as if the flag had been taken.
	if given := flagsGiven(fs); given["page"] && *page < 1 {
		return fmt.Errorf("--page must be 1 or more, got %d", *page)
	}
	if *pageSize < 1 || *pageSize > maxActivityPageSize {
		return fmt.Errorf("--page-size must be 1 to %d, got %d", maxActivityPageSize, *pageSize)
	}
	q := client.DailyActivityQuery{Model: *model, APIKey: *apiKey, UserID: *user, Page: *page, PageSize: *pageSize}
	if q.To, err = activityDay(*to, "--to", time.Now().UTC()); err != nil {
		return err
	}
	if q.From, err = activityDay(*from, "--from", q.To.AddDate(0, 0, -29)); err != nil {
		return err
	}
	if *tags != "" {
		q.Tags = strings.Split(*tags, ",")
	}
	if *teams != "" {
		q.TeamIDs = strings.Split(*teams, ",")
	}
	if *excludeTeams != "" {
		q.ExcludeTeamIDs = strings.Split(*excludeTeams, ",")
	}
	// The flags of the other groupings are refused before any request.
	for _, f := range []struct {
		given bool
		flag  string
		by    []string
	}{{q.Model != "", "--model", []string{"model", "key"}}, {q.Tags != nil, "--tags", []string{"tag"}}, {q.TeamIDs != nil, "--teams", []string{"team"}},
		{q.ExcludeTeamIDs != nil, "--exclude-teams", []string{"team"}}, {q.APIKey != "", "--api-key", []string{"model", "key"}},
		{q.UserID != "", "--user", []string{"model", "key"}}} {
		if f.given && !slices.Contains(f.by, *by) {
			why := ""
			if len(f.by) > 1 {
				why = " (the spend per tag or team is not kept per model, key or user)"
			}
			return fmt.Errorf("%s is for --by %s%s", f.flag, strings.Join(f.by, " or "), why)
		}
	}
	var call func(context.Context, client.DailyActivityQuery) (*client.DailyActivity, error)
	c, err := cf.client()
	if err != nil {
		return err
	}
	switch *by {
	case "model", "key":
		call = c.UserDailyActivity
	case "tag":
		call = c.TagDailyActivity
	case "team":
		call = c.TeamDailyActivity
	default:
		return fmt.Errorf("--by: model, tag, team or key, got %q", *by)
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
		lines := map[string]client.ActivityMetrics{} // the breakdown's entries by label
		switch *by {
		case "model":
			for name, e := range d.Breakdown.Models {
				lines[name] = e.Metrics
			}
		case "tag":
			for name, e := range d.Breakdown.Entities {
				lines[name] = e.Metrics
			}
		case "team":
			for id, e := range d.Breakdown.Entities {
				if alias, _ := e.Metadata["team_alias"].(string); alias != "" {
					id += " (" + alias + ")"
				}
				lines[id] = e.Metrics
			}
		case "key":
			for id, e := range d.Breakdown.APIKeys {
				if e.Metadata.KeyAlias != "" {
					id += " (" + e.Metadata.KeyAlias + ")"
				}
				lines[id] = e.Metrics
			}
		}
		names := make([]string, 0, len(lines))
		for name := range lines {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			printActivityLine(tw, "", name, lines[name])
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
// one model's, tag's, team's or key's of the day above (day empty).
func printActivityLine(w io.Writer, day, name string, m client.ActivityMetrics) {
	fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t$%.4f\n", day, name, m.APIRequests, m.FailedRequests, m.TotalTokens, m.SpendUSD)
}
