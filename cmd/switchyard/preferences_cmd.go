package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/switchyard-ai/switchyard/client"
)

// runPreferences is `switchyard preferences`: create, list, show, rename and delete the
// preferences (pref_...) that personalize model selection from feedback (Not Diamond's
// create_preference_id and the preference dashboard).
func runPreferences(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const usage = "preferences [list] | preferences create [--name NAME] [--router-model ID] | preferences show ID | preferences rename ID NAME | preferences delete ID..."
	fs := newFlagSet("preferences", usage, stderr)
	cf := addClientFlags(fs)
	name := fs.String("name", "", "with create: a label for the preference")
	routerModel := fs.String("router-model", "", "with create: a trained router model (rm_...) to personalize instead of the default router")
	limit := fs.Int("limit", 0, "with list: page size (1-100; default the server's, 20)")
	cursor := fs.String("cursor", "", "with list: continue from a previous page's next cursor")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	sub := "list"
	if len(pos) > 0 {
		sub, pos = pos[0], pos[1:]
	}
	if (*name != "" || *routerModel != "") && sub != "create" {
		return fmt.Errorf("--name and --router-model go with preferences create, not %s", sub)
	}
	if (*limit != 0 || *cursor != "") && sub != "list" {
		return fmt.Errorf("--limit and --cursor go with preferences list, not %s", sub)
	}
	if *limit != 0 && (*limit < 1 || *limit > 100) {
		return &usageError{err: fmt.Errorf("--limit must be 1-100 (got %d)", *limit)}
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	switch sub {
	case "create":
		if len(pos) > 0 {
			return fmt.Errorf("unexpected argument %q (give the name with --name)", pos[0])
		}
		return showRecord(stdout, cf.jsonOut, printPreference)(c.CreatePreference(ctx, &client.CreatePreferenceRequest{Name: *name, RouterModelID: *routerModel}))
	case "show":
		if len(pos) != 1 {
			return errors.New("give one preference id")
		}
		return showRecord(stdout, cf.jsonOut, printPreference)(c.Preference(ctx, pos[0]))
	case "rename":
		if len(pos) != 2 {
			return errors.New("give the preference id and its new name")
		}
		return showRecord(stdout, cf.jsonOut, printPreference)(c.RenamePreference(ctx, pos[0], pos[1]))
	case "delete":
		if len(pos) == 0 {
			return errors.New("give the id(s) to delete")
		}
		return forEachID(pos, cf.jsonOut, stdout, func(id string) (any, string, error) {
			if err := c.DeletePreference(ctx, id); err != nil {
				return nil, "", err
			}
			return map[string]any{"preference_id": id, "deleted": true}, "deleted preference " + id, nil
		})
	case "list":
		if len(pos) > 0 {
			return fmt.Errorf("unexpected argument %q (switchyard preferences show ID)", pos[0])
		}
		page, err := c.ListPreferences(ctx, *cursor, *limit)
		if err != nil {
			return err
		}
		if cf.jsonOut {
			return printJSON(stdout, page)
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PREFERENCE_ID\tNAME\tROUTER\tFEEDBACK\tCREATED")
		for _, p := range page.Data {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", p.PreferenceID, orDash(p.Name), preferenceRouter(&p), p.FeedbackCount, p.CreatedAt.UTC().Format("2006-01-02 15:04"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(page.Data) == 0 {
			fmt.Fprintln(stdout, "(no preferences)")
		}
		if page.NextCursor != "" {
			fmt.Fprintf(stdout, "more: switchyard preferences list --cursor %s\n", page.NextCursor)
		}
		return nil
	}
	return &usageError{err: fmt.Errorf("unknown subcommand %q (list, create, show, rename, delete)", sub)}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// preferenceRouter names what a preference ranks with: its trained router, the training
// job it waits for, or the server's default router; and, when the router it follows is
// gone (router_fallback), says so and what ranks instead.
func preferenceRouter(p *client.Preference) string {
	switch p.RouterFallback {
	case "router_deleted":
		id := p.RouterModelID
		if id == "" {
			id = "the router of " + p.RouterTrainingJobID
		}
		return id + " (deleted; the default router ranks)"
	case "training_job_deleted":
		return p.RouterTrainingJobID + " (deleted before it trained; " + orDefault(p.PreviousRouterModelID) + " ranks)"
	}
	switch {
	case p.RouterModelID != "":
		return p.RouterModelID
	case p.RouterTrainingJobID != "":
		return p.RouterTrainingJobID + " (training)"
	}
	return "default"
}

// orDefault names a router model, or the default router for "".
func orDefault(id string) string {
	if id == "" {
		return "the default router"
	}
	return id
}

func printPreference(w io.Writer, p *client.Preference) {
	fmt.Fprintf(w, "preference_id: %s\nname:          %s\nrouter:        %s\ncreated:       %s\nfeedback:      %d\n",
		p.PreferenceID, orDash(p.Name), preferenceRouter(p), p.CreatedAt.UTC().Format("2006-01-02 15:04"), p.FeedbackCount)
	if len(p.Models) == 0 {
		fmt.Fprintf(w, "\nSelect with it: switchyard select --preference-id %s -m provider/model -m ... --prompt TEXT\n", p.PreferenceID)
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tfeedback\tthumbs up\texpected\tadjustment")
	for _, m := range p.Models {
		model := m.Model
		if m.IsCustom {
			model += " (custom)"
		}
		fmt.Fprintf(tw, "%s\t%g\t%g\t%.2f\t%+.3f\n", model, m.Feedback, m.Successes, m.Expected, m.Adjustment)
	}
	tw.Flush()
}

// runFeedback is `switchyard feedback SESSION CANDIDATE up|down`: a thumbs up or down on
// one ranked candidate of a model selection session (Not Diamond's report_feedback).
func runFeedback(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("feedback", "feedback SESSION_ID CANDIDATE up|down  (CANDIDATE as the request named it: provider/model or a name; up|down also 1|0)", stderr)
	cf := addClientFlags(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 3 {
		return &usageError{err: errors.New("give the session id (from switchyard select), the candidate and up or down")}
	}
	var accuracy float64
	switch strings.ToLower(pos[2]) {
	case "up", "1", "good":
		accuracy = 1
	case "down", "0", "bad":
		accuracy = 0
	default:
		return &usageError{err: fmt.Errorf("the feedback must be up or down (1 or 0), got %q", pos[2])}
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	return showRecord(stdout, cf.jsonOut, func(w io.Writer, r *client.FeedbackResponse) {
		verdict := "down"
		if r.Feedback.Accuracy == 1 {
			verdict = "up"
		}
		fmt.Fprintf(w, "feedback %s on %s (session %s)", verdict, r.Provider, r.SessionID)
		switch {
		case r.Personalized:
			fmt.Fprintf(w, ": preference %s has learned from %d feedback(s)", r.PreferenceID, r.FeedbackCount)
		default:
			fmt.Fprint(w, ": recorded with the session (it was selected without a pref_ preference, so no routing learns from it)")
		}
		if r.Replaced {
			fmt.Fprint(w, "; it replaces the earlier feedback on that candidate")
		}
		fmt.Fprintln(w)
	})(c.Feedback(ctx, &client.FeedbackRequest{SessionID: pos[0], Provider: candidate(pos[1]), Feedback: client.FeedbackAccuracy{Accuracy: accuracy}}))
}

// candidate turns a command-line candidate into the selection request's shape:
// "provider/model" (split at the first slash) or a name.
func candidate(s string) client.Provider {
	if p, m, ok := strings.Cut(s, "/"); ok {
		return client.Provider{Provider: p, Model: m}
	}
	return client.Provider{Name: s}
}
