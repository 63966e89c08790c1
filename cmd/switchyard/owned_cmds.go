package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

// listFlags are the filters every listing command takes.
type listFlags struct {
	status       string
	since, until string
	limit        int
	all          bool
	cursor       string
}

// defaultListLimit is the page size of the list commands.
const defaultListLimit = 20

func addListFlags(fs *flag.FlagSet, states string) *listFlags {
	f := &listFlags{}
	if states != "" {
		fs.StringVar(&f.status, "status", "", "keep these states, comma-separated ("+states+")")
	}
	fs.StringVar(&f.since, "since", "", "created at or after: a duration back from now (24h, 7d) or an RFC 3339 time")
	fs.StringVar(&f.until, "until", "", "created before: a duration back from now or an RFC 3339 time")
	fs.IntVar(&f.limit, "limit", defaultListLimit, "page size (1-100)")
	fs.BoolVar(&f.all, "all", false, "walk every page instead of the first")
	fs.StringVar(&f.cursor, "cursor", "", "continue from a previous page's next cursor")
	return f
}

// parseSince reads "7d", "36h", "90m" (back from now) or an RFC 3339 time.
func parseSince(name, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if n, ok := strings.CutSuffix(v, "d"); ok {
		var days int
		if _, err := fmt.Sscanf(n, "%d", &days); err == nil && fmt.Sprint(days) == n && days >= 0 {
			return now.AddDate(0, 0, -days), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--%s %q: give a duration back from now (24h, 7d) or an RFC 3339 time", name, v)
}

func (f *listFlags) options(now time.Time) (*client.ListOptions, error) {
	if f.limit < 1 || f.limit > 100 {
		return nil, fmt.Errorf("--limit must be 1-100, got %d", f.limit)
	}
	o := &client.ListOptions{Limit: f.limit, Cursor: f.cursor}
	if f.status != "" {
		o.Status = strings.Split(f.status, ",")
	}
	var err error
	if o.CreatedAfter, err = parseSince("since", f.since, now); err != nil {
		return nil, err
	}
	if o.CreatedBefore, err = parseSince("until", f.until, now); err != nil {
		return nil, err
	}
	return o, nil
}

// listed fetches one page, or every page with --all, and returns the records with the
// cursor of the next page ("" when none is left or --all walked them all).
func listed[T any](ctx context.Context, f *listFlags, list func(context.Context, *client.ListOptions) (*client.Page[T], error)) ([]T, string, error) {
	opts, err := f.options(time.Now())
	if err != nil {
		return nil, "", err
	}
	if !f.all {
		p, err := list(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return p.Data, p.NextCursor, nil
	}
	var out []T
	for v, err := range client.All(ctx, opts, list) {
		if err != nil {
			return nil, "", err
		}
		out = append(out, v)
	}
	return out, "", nil
}

// subcommand splits "list|delete|show" off args; a first argument that is a flag (or
// nothing) means list.
func subcommand(args []string, allowed ...string) (string, []string, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return "list", args, nil
	}
	for _, a := range allowed {
		if args[0] == a {
			return a, args[1:], nil
		}
	}
	return "", nil, fmt.Errorf("unknown subcommand %q (want %s)", args[0], strings.Join(allowed, ", "))
}

// ownedCommand is the parsed command line of jobs, models and conversations.
type ownedCommand struct {
	sub string   // list, show or delete
	pos []string // the ids after the flags
	cf  *clientFlags
	lf  *listFlags
	c   *client.Client
}

// parseOwned splits off the subcommand (one of subs), parses the client and list flags
// (states names the -status values, "" for none; extra adds a command's own flags) and
// builds the client.
func parseOwned(name, usage, states string, args []string, stderr io.Writer, extra func(*flag.FlagSet), subs ...string) (*ownedCommand, error) {
	sub, args, err := subcommand(args, subs...)
	if err != nil {
		return nil, err
	}
	fs := newFlagSet(name, usage, stderr)
	oc := &ownedCommand{sub: sub, cf: addClientFlags(fs)}
	if extra != nil {
		extra(fs)
	}
	oc.lf = addListFlags(fs, states)
	if oc.pos, err = parseInterleaved(fs, args); err != nil {
		return nil, err
	}
	if oc.c, err = oc.cf.client(); err != nil {
		return nil, err
	}
	return oc, nil
}

func shortTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.Local().Format("2006-01-02 15:04")
}

// moreHint prints the command that reads the next page: the same filters (a relative
// --since or --until as the time it stood for, so the page boundaries hold) and the cursor.
func moreHint(w io.Writer, cmd string, f *listFlags, next string) {
	if next == "" {
		return
	}
	args := []string{cmd}
	if f.status != "" {
		args = append(args, "--status", f.status)
	}
	now := time.Now()
	for _, b := range []struct{ name, v string }{{"since", f.since}, {"until", f.until}} {
		if b.v == "" {
			continue
		}
		if t, err := parseSince(b.name, b.v, now); err == nil && !t.IsZero() {
			args = append(args, "--"+b.name, t.UTC().Format(time.RFC3339))
		}
	}
	if f.limit != defaultListLimit {
		args = append(args, "--limit", strconv.Itoa(f.limit))
	}
	fmt.Fprintf(w, "\nmore: switchyard %s --cursor %s   (or --all)\n", strings.Join(args, " "), next)
}

// deleteEach deletes each id and prints one line per deletion.
func deleteEach(ctx context.Context, ids []string, jsonOut bool, stdout io.Writer, del func(context.Context, string) (*client.Deletion, error)) error {
	if len(ids) == 0 {
		return errors.New("give the id(s) to delete")
	}
	var errs []error
	for _, id := range ids {
		d, err := del(ctx, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id, err))
			continue
		}
		if jsonOut {
			if err := printJSON(stdout, d); err != nil {
				return err
			}
			continue
		}
		line := "deleted " + d.Object + " " + d.ID
		switch {
		case d.Cancelled:
			line += " (cancelled first)"
		case d.Artifacts > 0:
			line += fmt.Sprintf(" (with %d agent file(s))", d.Artifacts)
		case d.Messages > 0:
			line += fmt.Sprintf(" (%d messages)", d.Messages)
		}
		fmt.Fprintln(stdout, line)
	}
	return errors.Join(errs...)
}

// runJobs is `switchyard jobs`: list training and optimization jobs, or delete some.
func runJobs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var kind *string
	oc, err := parseOwned("jobs", "jobs [list] [--type training|optimization] [filters] | jobs delete ID...",
		"queued, running, completed, failed; optimization also interrupted", args, stderr,
		func(fs *flag.FlagSet) { kind = fs.String("type", "all", "training, optimization or all") }, "list", "delete")
	if err != nil {
		return err
	}
	sub, pos, cf, lf, c := oc.sub, oc.pos, oc.cf, oc.lf, oc.c
	if sub == "delete" {
		return deleteEach(ctx, pos, cf.jsonOut, stdout, func(ctx context.Context, id string) (*client.Deletion, error) {
			if strings.HasPrefix(id, "opt_") {
				return c.DeleteOptimizationJob(ctx, id)
			}
			return c.DeleteTrainingJob(ctx, id)
		})
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q (to delete: switchyard jobs delete ID)", pos[0])
	}
	if *kind != "all" && *kind != "training" && *kind != "optimization" {
		return fmt.Errorf("--type %q: want training, optimization or all", *kind)
	}
	if *kind == "all" && lf.cursor != "" {
		return errors.New("--cursor needs --type training or --type optimization (each listing has its own cursor)")
	}
	var train []client.TrainingStatus
	var opt []client.OptimizationStatus
	var nextTrain, nextOpt string
	// With --type all, a server that runs only one kind of job (404 on the other's
	// listing route) is not an error.
	absent := func(err error, what string) error {
		var ae *client.Error
		if *kind == "all" && errors.As(err, &ae) && ae.Status == http.StatusNotFound {
			fmt.Fprintf(stderr, "(this server does not run %s jobs)\n", what)
			return nil
		}
		return err
	}
	// Training jobs have no "interrupted" state: with --type all it filters only the
	// optimization listing, and a status list of only that skips the training one.
	trainLF := lf
	if *kind == "all" && lf.status != "" {
		var keep []string
		for _, s := range strings.Split(lf.status, ",") {
			if strings.TrimSpace(s) != "interrupted" {
				keep = append(keep, s)
			}
		}
		cp := *lf
		cp.status = strings.Join(keep, ",")
		trainLF = &cp
	}
	if *kind != "optimization" && (trainLF.status != "" || lf.status == "") {
		if train, nextTrain, err = listed(ctx, trainLF, c.ListTrainingJobs); absent(err, "training") != nil {
			return err
		}
	}
	if *kind != "training" {
		if opt, nextOpt, err = listed(ctx, lf, c.ListOptimizationJobs); absent(err, "optimization") != nil {
			return err
		}
	}
	if cf.jsonOut {
		out := map[string]any{}
		if *kind != "optimization" {
			out["training"] = client.Page[client.TrainingStatus]{Data: orEmpty(train), NextCursor: nextTrain}
		}
		if *kind != "training" {
			out["optimization"] = client.Page[client.OptimizationStatus]{Data: orEmpty(opt), NextCursor: nextOpt}
		}
		return printJSON(stdout, out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTYPE\tSTATUS\tCREATED\tDETAIL")
	for _, j := range train {
		detail := j.ModelID
		if j.ErrorMessage != "" {
			detail = truncate(j.ErrorMessage, 60)
		}
		fmt.Fprintf(tw, "%s\ttraining\t%s\t%s\t%s\n", j.TrainingJobID, j.Status, shortTime(j.CreatedAt), detail)
	}
	for _, j := range opt {
		detail := strings.Join(j.TargetModels, ",")
		if j.BestScore != nil {
			detail += fmt.Sprintf("  best %.3f", *j.BestScore)
		}
		if j.ErrorMessage != "" {
			detail += "  " + truncate(j.ErrorMessage, 50)
		}
		fmt.Fprintf(tw, "%s\toptimization\t%s\t%s\t%s\n", j.JobID, j.Status, shortTime(j.CreatedAt), detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(train)+len(opt) == 0 {
		fmt.Fprintln(stdout, "(no jobs)")
	}
	moreHint(stdout, "jobs --type training", trainLF, nextTrain)
	moreHint(stdout, "jobs --type optimization", lf, nextOpt)
	return nil
}

// runModels is `switchyard models`: list router models, show one, or delete some.
func runModels(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	oc, err := parseOwned("models", "models [list] [filters] | models show ID | models delete ID...",
		"active, archived", args, stderr, nil, "list", "show", "delete")
	if err != nil {
		return err
	}
	sub, pos, cf, lf, c := oc.sub, oc.pos, oc.cf, oc.lf, oc.c
	switch sub {
	case "delete":
		return deleteEach(ctx, pos, cf.jsonOut, stdout, c.DeleteRouterModel)
	case "show":
		if len(pos) != 1 {
			return errors.New("give one model id")
		}
		tr := c.RouterTrainer()
		tr.UseModel(pos[0])
		m, err := tr.Model(ctx)
		if err != nil {
			return err
		}
		if cf.jsonOut {
			return printJSON(stdout, m)
		}
		printModel(stdout, m)
		return nil
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q (switchyard models show ID, or models delete ID)", pos[0])
	}
	models, next, err := listed(ctx, lf, c.ListRouterModels)
	if err != nil {
		return err
	}
	if cf.jsonOut {
		return printJSON(stdout, client.Page[client.RouterModel]{Data: orEmpty(models), NextCursor: next})
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL_ID\tSTATUS\tCLASSES\tTOP-1\tACCURACY\tCREATED\tLAST USED")
	for _, m := range models {
		top1, acc := "-", "-"
		if m.Metrics != nil {
			top1, acc = fmt.Sprintf("%.3f", m.Metrics.Top1HitRate), fmt.Sprintf("%.3f", m.Metrics.Accuracy)
		}
		used := "never"
		if m.LastUsedAt != "" {
			used = shortTime(m.LastUsedAt)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", m.ModelID, m.Status, m.NumClasses, top1, acc, shortTime(m.CreatedAt), used)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(models) == 0 {
		fmt.Fprintln(stdout, "(no router models)")
	}
	moreHint(stdout, "models", lf, next)
	return nil
}

func printModel(w io.Writer, m *client.RouterModel) {
	fmt.Fprintf(w, "model_id:   %s\nstatus:     %s\ncreated:    %s\n", m.ModelID, m.Status, shortTime(m.CreatedAt))
	if m.LastUsedAt != "" {
		fmt.Fprintf(w, "last used:  %s\n", shortTime(m.LastUsedAt))
	}
	fmt.Fprintf(w, "job:        %s\nembedding:  %s\nclasses:    %s\n", m.TrainingJobID, m.EmbeddingModel, strings.Join(m.Classes, ", "))
	if mt := m.Metrics; mt != nil {
		fmt.Fprintf(w, "held-out:   top-1 %.3f  top-3 %.3f  accuracy %.3f  mean score %.3f  (baseline %s: top-1 %.3f)\n",
			mt.Top1HitRate, mt.Top3HitRate, mt.Accuracy, mt.MeanScore, mt.BaselineModel, mt.BaselineTop1HitRate)
	}
}

// runConversations is `switchyard conversations`: list them, show one's messages, or
// delete some.
func runConversations(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	oc, err := parseOwned("conversations", "conversations [list] [filters] | conversations show ID | conversations delete ID...",
		"", args, stderr, nil, "list", "show", "delete")
	if err != nil {
		return err
	}
	sub, pos, cf, lf, c := oc.sub, oc.pos, oc.cf, oc.lf, oc.c
	switch sub {
	case "delete":
		return deleteEach(ctx, pos, cf.jsonOut, stdout, c.DeleteConversation)
	case "show":
		if len(pos) != 1 {
			return errors.New("give one conversation id")
		}
		var msgs []client.ConversationMessage
		for m, err := range client.All(ctx, &client.ListOptions{Limit: 100}, func(ctx context.Context, o *client.ListOptions) (*client.Page[client.ConversationMessage], error) {
			return c.ConversationMessages(ctx, pos[0], o)
		}) {
			if err != nil {
				return err
			}
			msgs = append(msgs, m)
		}
		if cf.jsonOut {
			return printJSON(stdout, orEmpty(msgs))
		}
		for _, m := range msgs {
			who := m.Role
			if m.Model != "" {
				who += " (" + m.Model + ")"
			}
			var text []string
			for _, b := range m.Content {
				text = append(text, b.Text)
			}
			fmt.Fprintf(stdout, "%s:\n%s\n\n", who, strings.Join(text, ""))
		}
		return nil
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q (switchyard conversations show ID, or conversations delete ID)", pos[0])
	}
	convs, next, err := listed(ctx, lf, c.ListConversations)
	if err != nil {
		return err
	}
	if cf.jsonOut {
		return printJSON(stdout, client.Page[client.Conversation]{Data: orEmpty(convs), NextCursor: next})
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tMESSAGES\tUPDATED\tTITLE")
	for _, cv := range convs {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", cv.ID, cv.MessageCount, cv.UpdatedAt.Local().Format("2006-01-02 15:04"), cv.Title)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(convs) == 0 {
		fmt.Fprintln(stdout, "(no conversations)")
	}
	moreHint(stdout, "conversations", lf, next)
	return nil
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// truncate cuts s to n characters with an ellipsis, on one line.
func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
