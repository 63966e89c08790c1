package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/switchyard-ai/switchyard/client"
)

// tagFlags are the settings `tags create` and `tags update` take; set records which were
// given (update changes only those).
type tagFlags struct {
	description, budgetDuration string
	models                      string
	maxBudget, softBudget       float64
	tpm                         int64
	set                         map[string]bool
}

// tagSettings are the names of tagFlags' flags.
var tagSettings = []string{"description", "max-budget-usd", "soft-budget-usd", "budget-duration", "tpm", "models"}

func addTagFlags(fs *flag.FlagSet) *tagFlags {
	f := &tagFlags{}
	fs.StringVar(&f.description, "description", "", "what the tag stands for; update: \"\" removes it")
	fs.Float64Var(&f.maxBudget, "max-budget-usd", 0, "USD the requests naming the tag may spend together (per --budget-duration when set), across every virtual key; 0: no bound")
	fs.Float64Var(&f.softBudget, "soft-budget-usd", 0, "USD mark that sends a budget alert and never blocks; 0: none")
	fs.StringVar(&f.budgetDuration, "budget-duration", "", "period after which the tag's spend starts again from zero: 30d, 12h")
	fs.Int64Var(&f.tpm, "tpm", 0, "tokens per minute of the requests naming the tag together; 0: no bound")
	fs.StringVar(&f.models, "models", "", "comma-separated deployments (model ids or model group names) that carry the tag for tag routing (LiteLLM's tag models); update: they replace the tag's, \"\" removes them")
	return f
}

// runTags is `switchyard tags`: LiteLLM's tag budgets (/tag/new and beside it), an
// account every request naming the tag draws on.
func runTags(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, args, err := subcommand(args, "list", "create", "show", "update", "delete")
	if err != nil {
		return err
	}
	fs := newFlagSet("tags", "tags [list] | tags create TAG [settings] | tags show TAG | tags update TAG [settings] | tags delete TAG...", stderr)
	cf := addClientFlags(fs)
	tf := addTagFlags(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	tf.set = flagsGiven(fs)
	c, err := cf.client()
	if err != nil {
		return err
	}
	if sub != "create" && sub != "update" {
		if err := flagsOnlyFor(tf.set, tagSettings, "tags create and tags update"); err != nil {
			return err
		}
	}
	show := showRecord(stdout, cf.jsonOut, printTag)
	switch sub {
	case "create":
		if len(pos) != 1 {
			return errors.New("give one tag: switchyard tags create engineering --max-budget-usd 500 --budget-duration 30d")
		}
		return show(c.CreateTag(ctx, &client.TagRequest{Name: pos[0], Description: tf.description, MaxBudgetUSD: tf.maxBudget,
			SoftBudgetUSD: tf.softBudget, BudgetDuration: tf.budgetDuration, TokensPerMinute: tf.tpm, Models: splitModels(tf.models)}))
	case "update":
		if len(pos) != 1 {
			return errors.New("give one tag: switchyard tags update engineering --max-budget-usd 800")
		}
		u := &client.TagUpdate{
			Description:     given(tf.set, "description", &tf.description),
			SoftBudgetUSD:   given(tf.set, "soft-budget-usd", &tf.softBudget),
			BudgetDuration:  given(tf.set, "budget-duration", &tf.budgetDuration),
			TokensPerMinute: given(tf.set, "tpm", &tf.tpm),
		}
		if tf.set["models"] {
			u.Models = splitModels(tf.models) // --models "": none (never nil)
		}
		if tf.set["max-budget-usd"] { // 0 is no bound, as for keys, teams and organizations
			if tf.maxBudget == 0 {
				u.RemoveMaxBudget = true
			} else {
				u.MaxBudgetUSD = &tf.maxBudget
			}
		}
		return show(c.UpdateTag(ctx, pos[0], u))
	case "show":
		if len(pos) != 1 {
			return errors.New("give one tag")
		}
		return show(c.Tag(ctx, pos[0]))
	case "delete":
		if len(pos) == 0 {
			return errors.New("give the tag(s) to delete (requests naming them then draw on no tag budget)")
		}
		for _, name := range pos {
			if err := c.DeleteTag(ctx, name); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "deleted tag %s\n", name)
		}
		return nil
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q (switchyard tags show TAG, or tags delete TAG)", pos[0])
	}
	tags, err := c.Tags(ctx)
	if err != nil {
		return err
	}
	if cf.jsonOut {
		return printJSON(stdout, orEmpty(tags))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TAG\tSPENT\tBUDGET\tDESCRIPTION")
	for _, t := range tags {
		fmt.Fprintf(tw, "%s\t$%.4f\t%s\t%s\n", t.Name, t.SpendUSD, tagBudget(t), t.Description)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(tags) == 0 {
		fmt.Fprintln(stdout, "(no tag budgets: switchyard tags create engineering --max-budget-usd 500 --budget-duration 30d)")
	}
	return nil
}

func tagBudget(t client.Tag) string {
	if t.Budget == nil || t.Budget.MaxBudgetUSD == nil {
		return "-"
	}
	var d string
	if t.Budget.BudgetDuration != nil {
		d = *t.Budget.BudgetDuration
	}
	return budgetOf(client.VirtualKey{MaxBudgetUSD: *t.Budget.MaxBudgetUSD, BudgetDuration: d})
}

func printTag(w io.Writer, t *client.Tag) {
	fmt.Fprintf(w, "tag:       %s\n", t.Name)
	if t.Description != "" {
		fmt.Fprintf(w, "about:     %s\n", t.Description)
	}
	if len(t.Models) > 0 {
		fmt.Fprintf(w, "models:    %s\n", strings.Join(t.Models, ","))
	}
	fmt.Fprintf(w, "budget:    %s\n", tagBudget(*t))
	if b := t.Budget; b != nil && b.SoftBudgetUSD != nil {
		fmt.Fprintf(w, "soft:      $%g (an alert, never a block)\n", *b.SoftBudgetUSD)
	}
	if b := t.Budget; b != nil && b.TokensPerMinute != nil {
		fmt.Fprintf(w, "rate:      %d tokens per minute\n", *b.TokensPerMinute)
	}
	fmt.Fprintf(w, "spent:     $%.4f\n", t.SpendUSD)
}
