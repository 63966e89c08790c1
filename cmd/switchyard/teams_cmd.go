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

// teamFlags are the settings `teams create` and `teams update` take; set records which
// were given (update changes only those).
type teamFlags struct {
	id, name, models, budgetDuration string
	organization, tags               string
	maxBudget                        float64
	rpm                              int
	tpm                              int64
	blocked                          bool
	set                              map[string]bool
}

func addTeamFlags(fs *flag.FlagSet) *teamFlags {
	f := &teamFlags{}
	fs.StringVar(&f.id, "id", "", "create: the team's id (letters, digits and . _ - :); empty: the server makes one")
	fs.StringVar(&f.name, "name", "", "a label for the team (LiteLLM's team_alias)")
	fs.StringVar(&f.models, "models", "", "comma-separated models the team's keys may call; empty: every model")
	fs.Float64Var(&f.maxBudget, "max-budget-usd", 0, "USD all the team's keys together may spend (per --budget-duration when set); 0: no bound")
	fs.StringVar(&f.budgetDuration, "budget-duration", "", "period after which the team's spend starts again from zero: 30d, 12h")
	fs.IntVar(&f.rpm, "rpm", 0, "requests per minute of all the team's keys together; 0: no bound")
	fs.Int64Var(&f.tpm, "tpm", 0, "tokens per minute of all the team's keys together; 0: no bound")
	fs.BoolVar(&f.blocked, "blocked", false, "every key of the team is refused; update: --blocked=false unblocks it")
	fs.StringVar(&f.tags, "tags", "", "comma-separated tags every request of the team's keys carries after the key's own (LiteLLM's team-level tags, kept as metadata tags): for tag routing, tag budgets (switchyard tags) and spend per tag; update: they replace the team's tags alone (\"\" removes them)")
	fs.StringVar(&f.organization, "organization", "", "the organization the team is in (switchyard orgs create): its models bound the team's, its account holds the team's keys' spend too; update: \"\" takes the team out")
	return f
}

// runTeams is `switchyard teams`: LiteLLM's teams (a budget, rate and model list shared by
// the virtual keys given the team) through the native API.
func runTeams(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, args, err := subcommand(args, "list", "create", "show", "update", "delete", "members")
	if err != nil {
		return err
	}
	if sub == "members" {
		return runTeamMembers(ctx, args, stdout, stderr)
	}
	fs := newFlagSet("teams", "teams [list] | teams create [settings] | teams show ID | teams update ID [settings] | teams delete ID... | teams members ...", stderr)
	cf := addClientFlags(fs)
	tf := addTeamFlags(fs)
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
		settings := []string{"id", "name", "models", "max-budget-usd", "budget-duration", "rpm", "tpm", "blocked", "organization", "tags"}
		if err := flagsOnlyFor(tf.set, settings, "teams create and teams update"); err != nil {
			return err
		}
	}
	show := showRecord(stdout, cf.jsonOut, printTeam)
	switch sub {
	case "create":
		if len(pos) > 0 {
			return fmt.Errorf("unexpected argument %q (settings are flags: switchyard teams create --id eng --max-budget-usd 100)", pos[0])
		}
		return show(c.CreateTeam(ctx, &client.TeamRequest{TeamID: tf.id, Name: tf.name, Models: splitModels(tf.models),
			MaxBudgetUSD: tf.maxBudget, BudgetDuration: tf.budgetDuration, RequestsPerMinute: tf.rpm, TokensPerMinute: tf.tpm, Blocked: tf.blocked, OrganizationID: tf.organization,
			Tags: splitModels(tf.tags)}))
	case "update":
		if len(pos) != 1 || tf.set["id"] {
			return errors.New("give one team id: switchyard teams update ID --max-budget-usd 200")
		}
		u := &client.TeamUpdate{
			Name:              given(tf.set, "name", &tf.name),
			MaxBudgetUSD:      given(tf.set, "max-budget-usd", &tf.maxBudget),
			BudgetDuration:    given(tf.set, "budget-duration", &tf.budgetDuration),
			RequestsPerMinute: given(tf.set, "rpm", &tf.rpm),
			TokensPerMinute:   given(tf.set, "tpm", &tf.tpm),
			Blocked:           given(tf.set, "blocked", &tf.blocked),
			OrganizationID:    given(tf.set, "organization", &tf.organization),
		}
		if tf.set["models"] {
			u.Models = splitModels(tf.models)
		}
		if tf.set["tags"] {
			u.Tags = splitModels(tf.tags) // --tags "": none (never nil)
		}
		return show(c.UpdateTeam(ctx, pos[0], u))
	case "show":
		if len(pos) != 1 {
			return errors.New("give one team id")
		}
		return show(c.Team(ctx, pos[0]))
	case "delete":
		if len(pos) == 0 {
			return errors.New("give the team id(s) to delete (their virtual keys are revoked with them)")
		}
		return forEachID(pos, cf.jsonOut, stdout, func(id string) (any, string, error) {
			d, err := c.DeleteTeam(ctx, id)
			if err != nil {
				return nil, "", err
			}
			return d, fmt.Sprintf("deleted team %s (revoked %d virtual key(s)%s)", d.TeamID, len(d.DeletedKeys), list(d.DeletedKeys)), nil
		})
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q (switchyard teams show ID, or teams delete ID)", pos[0])
	}
	teams, err := c.Teams(ctx)
	if err != nil {
		return err
	}
	if cf.jsonOut {
		return printJSON(stdout, orEmpty(teams))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tMODELS\tSPENT\tBUDGET\tKEYS\tBLOCKED")
	for _, t := range teams {
		fmt.Fprintf(tw, "%s\t%s\t%s\t$%.4f\t%s\t%d\t%v\n", t.TeamID, t.Name, teamModels(t), t.Spend.CostUSD, teamBudget(t), len(t.KeyIDs), t.Blocked)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(teams) == 0 {
		fmt.Fprintln(stdout, "(no teams: switchyard teams create --id eng --max-budget-usd 100)")
	}
	return nil
}

func teamModels(t client.Team) string {
	return modelsOf(client.VirtualKey{Models: t.Models})
}

func teamBudget(t client.Team) string {
	return budgetOf(client.VirtualKey{MaxBudgetUSD: t.MaxBudgetUSD, BudgetDuration: t.BudgetDuration})
}

func printTeam(w io.Writer, t *client.Team) {
	fmt.Fprintf(w, "id:        %s\n", t.TeamID)
	if t.Name != "" {
		fmt.Fprintf(w, "name:      %s\n", t.Name)
	}
	if t.OrganizationID != "" {
		fmt.Fprintf(w, "org:       %s\n", t.OrganizationID)
	}
	fmt.Fprintf(w, "models:    %s\n", teamModels(*t))
	if len(t.Tags) > 0 {
		fmt.Fprintf(w, "tags:      %s\n", strings.Join(t.Tags, ","))
	}
	fmt.Fprintf(w, "budget:    %s\n", teamBudget(*t))
	if t.RequestsPerMinute > 0 || t.TokensPerMinute > 0 {
		fmt.Fprintf(w, "rate:      %d requests, %d tokens per minute (0: none)\n", t.RequestsPerMinute, t.TokensPerMinute)
	}
	if t.Blocked {
		fmt.Fprintln(w, "blocked:   yes (every key of the team refused; teams update ID --blocked=false)")
	}
	fmt.Fprintf(w, "keys:      %s\n", strings.Join(append([]string{fmt.Sprint(len(t.KeyIDs))}, t.KeyIDs...), " "))
	fmt.Fprintf(w, "spent:     $%.4f, %d tokens, %d requests\n", t.Spend.CostUSD, t.Spend.Tokens, t.Spend.Requests)
}
