package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/switchyard-ai/switchyard/client"
)

// orgFlags are the settings `orgs create` and `orgs update` take; set records which were
// given (update changes only those).
type orgFlags struct {
	id, name, models, budgetDuration, budgetID string
	maxBudget, softBudget                      float64
	rpm                                        int
	tpm                                        int64
	blocked                                    bool
	set                                        map[string]bool
}

// orgSettings are the names of orgFlags' flags.
var orgSettings = []string{"id", "name", "models", "max-budget-usd", "soft-budget-usd", "budget-duration", "budget-id", "rpm", "tpm", "blocked"}

func addOrgFlags(fs *flag.FlagSet) *orgFlags {
	f := &orgFlags{}
	fs.StringVar(&f.id, "id", "", "create: the organization's id (letters, digits and . _ - :); empty: the server makes a UUID; list: only the organization of this exact id")
	fs.StringVar(&f.name, "name", "", "the organization's name (LiteLLM's organization_alias); required by create; list: only the organizations whose name holds this text (case-insensitive)")
	fs.StringVar(&f.models, "models", "", "comma-separated models the organization's teams may name; empty: every model")
	fs.Float64Var(&f.maxBudget, "max-budget-usd", 0, "USD all the keys of the organization's teams together may spend (per --budget-duration when set); 0: no bound")
	fs.Float64Var(&f.softBudget, "soft-budget-usd", 0, "USD mark that sends a budget alert and never blocks; 0: none")
	fs.StringVar(&f.budgetDuration, "budget-duration", "", "period after which the organization's spend starts again from zero: 30d, 12h")
	fs.StringVar(&f.budgetID, "budget-id", "", "take the limits of a LiteLLM budget (POST /budget/new); update: \"\" takes the organization off it")
	fs.IntVar(&f.rpm, "rpm", 0, "requests per minute of all the keys of the organization's teams; 0: no bound")
	fs.Int64Var(&f.tpm, "tpm", 0, "tokens per minute of all the keys of the organization's teams; 0: no bound")
	fs.BoolVar(&f.blocked, "blocked", false, "every key of the organization's teams is refused; update: --blocked=false unblocks it")
	return f
}

// runOrgs is `switchyard orgs`: LiteLLM's organizations (a model list and an account over
// every team put in one) through LiteLLM's /organization routes, as `switchyard teams`.
func runOrgs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, args, err := subcommand(args, "list", "create", "show", "update", "delete", "members")
	if err != nil {
		return err
	}
	if sub == "members" {
		return runOrgMembers(ctx, args, stdout, stderr)
	}
	fs := newFlagSet("orgs", "orgs [list] [--id ID] [--name TEXT] | orgs create --name NAME [settings] | orgs show ID | orgs update ID [settings] | orgs delete ID... | orgs members ...", stderr)
	cf := addClientFlags(fs)
	of := addOrgFlags(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	of.set = flagsGiven(fs)
	c, err := cf.client()
	if err != nil {
		return err
	}
	if sub != "create" && sub != "update" {
		only := orgSettings
		if sub == "list" { // --id and --name filter the list (LiteLLM's org_id, org_alias)
			only = slices.DeleteFunc(slices.Clone(orgSettings), func(n string) bool { return n == "id" || n == "name" })
		}
		if err := flagsOnlyFor(of.set, only, "orgs create and orgs update"); err != nil {
			return err
		}
	}
	show := showRecord(stdout, cf.jsonOut, printOrg)
	switch sub {
	case "create":
		if len(pos) > 0 {
			return fmt.Errorf("unexpected argument %q (settings are flags: switchyard orgs create --id acme --name Acme --max-budget-usd 1000)", pos[0])
		}
		return show(c.CreateOrganization(ctx, &client.OrganizationRequest{OrganizationID: of.id, Alias: of.name, Models: splitModels(of.models),
			BudgetID: of.budgetID, MaxBudgetUSD: of.maxBudget, SoftBudgetUSD: of.softBudget, BudgetDuration: of.budgetDuration,
			RequestsPerMinute: of.rpm, TokensPerMinute: of.tpm, Blocked: of.blocked}))
	case "update":
		if len(pos) != 1 || of.set["id"] {
			return errors.New("give one organization id: switchyard orgs update ID --max-budget-usd 2000")
		}
		u := &client.OrganizationUpdate{
			Alias:             given(of.set, "name", &of.name),
			SoftBudgetUSD:     given(of.set, "soft-budget-usd", &of.softBudget),
			BudgetDuration:    given(of.set, "budget-duration", &of.budgetDuration),
			BudgetID:          given(of.set, "budget-id", &of.budgetID),
			RequestsPerMinute: given(of.set, "rpm", &of.rpm),
			TokensPerMinute:   given(of.set, "tpm", &of.tpm),
			Blocked:           given(of.set, "blocked", &of.blocked),
		}
		// 0 is no bound, as for teams and keys (LiteLLM's max_budget 0 would block: --blocked).
		if of.set["max-budget-usd"] {
			if of.maxBudget == 0 {
				u.RemoveMaxBudget = true
			} else {
				u.MaxBudgetUSD = &of.maxBudget
			}
		}
		if of.set["models"] {
			u.Models = splitModels(of.models)
		}
		return show(c.UpdateOrganization(ctx, pos[0], u))
	case "show":
		if len(pos) != 1 {
			return errors.New("give one organization id")
		}
		return show(c.Organization(ctx, pos[0]))
	case "delete":
		if len(pos) == 0 {
			return errors.New("give the organization id(s) to delete (their teams and the teams' virtual keys are deleted with them)")
		}
		// All or none, as the server deletes them.
		del, err := c.DeleteOrganizations(ctx, pos...)
		if err != nil {
			return err
		}
		if cf.jsonOut {
			return printJSON(stdout, orEmpty(del))
		}
		for _, o := range del {
			teams, keys := orgTeamsAndKeys(o)
			fmt.Fprintf(stdout, "deleted organization %s (%d team(s)%s, revoked %d virtual key(s)%s)\n", o.OrganizationID, len(teams), list(teams), len(keys), list(keys))
		}
		return nil
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q (switchyard orgs show ID, or orgs delete ID)", pos[0])
	}
	orgs, err := c.OrganizationsWhere(ctx, client.OrganizationFilter{ID: of.id, Alias: of.name})
	if err != nil {
		return err
	}
	if cf.jsonOut {
		return printJSON(stdout, orEmpty(orgs))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tMODELS\tSPENT\tBUDGET\tTEAMS\tMEMBERS\tBLOCKED")
	for _, o := range orgs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t$%.4f\t%s\t%d\t%d\t%v\n", o.OrganizationID, o.Alias, orgModels(o), o.SpendUSD, orgBudget(o), len(o.Teams), len(o.Members), o.Blocked)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case len(orgs) == 0 && (of.id != "" || of.name != ""):
		fmt.Fprintln(stdout, "(no organization matches --id or --name)")
	case len(orgs) == 0:
		fmt.Fprintln(stdout, "(no organizations: switchyard orgs create --id acme --name Acme --max-budget-usd 1000)")
	}
	return nil
}

// orgTeamsAndKeys are the ids of o's teams and of their virtual keys.
func orgTeamsAndKeys(o client.Organization) (teams, keys []string) {
	for _, t := range o.Teams {
		teams = append(teams, t.TeamID)
		keys = append(keys, t.Keys...)
	}
	return teams, keys
}

func orgModels(o client.Organization) string {
	return modelsOf(client.VirtualKey{Models: o.Models})
}

func orgBudget(o client.Organization) string {
	b := o.Budget
	switch {
	case b.MaxBudgetUSD == nil:
		return "-"
	case *b.MaxBudgetUSD == 0:
		return "$0 (blocked)"
	}
	var d string
	if b.BudgetDuration != nil {
		d = *b.BudgetDuration
	}
	return budgetOf(client.VirtualKey{MaxBudgetUSD: *b.MaxBudgetUSD, BudgetDuration: d})
}

func printOrg(w io.Writer, o *client.Organization) {
	fmt.Fprintf(w, "id:        %s\n", o.OrganizationID)
	fmt.Fprintf(w, "name:      %s\n", o.Alias)
	fmt.Fprintf(w, "models:    %s\n", orgModels(*o))
	fmt.Fprintf(w, "budget:    %s\n", orgBudget(*o))
	if o.BudgetID != "" {
		fmt.Fprintf(w, "budget id: %s (its limits are the organization's)\n", o.BudgetID)
	}
	if b := o.Budget; b.SoftBudgetUSD != nil {
		fmt.Fprintf(w, "soft:      $%g (an alert, never a block)\n", *b.SoftBudgetUSD)
	}
	if b := o.Budget; b.RequestsPerMinute != nil || b.TokensPerMinute != nil {
		var rpm, tpm int64
		if b.RequestsPerMinute != nil {
			rpm = int64(*b.RequestsPerMinute)
		}
		if b.TokensPerMinute != nil {
			tpm = *b.TokensPerMinute
		}
		fmt.Fprintf(w, "rate:      %d requests, %d tokens per minute (0: none)\n", rpm, tpm)
	}
	if o.Blocked {
		fmt.Fprintln(w, "blocked:   yes (every key of its teams refused; orgs update ID --blocked=false)")
	}
	teams, keys := orgTeamsAndKeys(*o)
	fmt.Fprintf(w, "teams:     %s\n", strings.Join(append([]string{fmt.Sprint(len(teams))}, teams...), " "))
	fmt.Fprintf(w, "keys:      %d\n", len(keys))
	members := make([]string, 0, len(o.Members))
	for _, m := range o.Members {
		members = append(members, m.UserID+"("+m.Role+")")
	}
	fmt.Fprintf(w, "members:   %s\n", strings.Join(append([]string{fmt.Sprint(len(members))}, members...), " "))
	fmt.Fprintf(w, "spent:     $%.4f\n", o.SpendUSD)
}

// orgMemberSubs are the subcommands of `switchyard orgs members`.
var orgMemberSubs = []string{"list", "add", "update", "remove"}

// runOrgMembers is `switchyard orgs members`: an organization's users and their roles
// (org_admin, internal_user, internal_user_viewer), as `switchyard teams members`. A user
// is named by id, or by address (a word with '@').
func runOrgMembers(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	args, shorthand := membersShorthand(args, orgMemberSubs) // orgs members ORG
	sub, args, err := subcommand(args, orgMemberSubs...)
	if err != nil {
		return fmt.Errorf("orgs members: %w", err)
	}
	fs := newFlagSet("orgs members", "orgs members [list] ORG | orgs members add ORG USER... [--role ROLE] [--max-budget-usd USD] | orgs members update ORG USER [--role ROLE] [--max-budget-usd USD] | orgs members remove ORG USER...", stderr)
	cf := addClientFlags(fs)
	var role string
	fs.StringVar(&role, "role", "", "org_admin, internal_user or internal_user_viewer (add: internal_user when not given)")
	maxBudget := fs.Float64("max-budget-usd", 0, "add and update: USD each member's keys of the organization may spend together (max_budget_in_organization; 0 blocks them). update keeps what they spent; a bound once set can be changed, not removed (as in LiteLLM): a larger one lifts it")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	set := flagsGiven(fs)
	if shorthand != "" && len(pos) != 1 {
		return &usageError{err: fmt.Errorf("orgs members: unknown subcommand %q (want %s, or one ORG alone to list its members)", shorthand, strings.Join(orgMemberSubs, ", "))}
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	if sub != "add" && sub != "update" {
		if err := flagsOnlyFor(set, []string{"role"}, "orgs members add and orgs members update"); err != nil {
			return err
		}
	}
	if sub != "add" && sub != "update" {
		if err := flagsOnlyFor(set, []string{"max-budget-usd"}, "orgs members add and orgs members update"); err != nil {
			return err
		}
	}
	switch sub {
	case "add":
		if len(pos) < 2 {
			return errors.New("give the organization and the user(s): switchyard orgs members add acme ann bob@example.com --role org_admin")
		}
		if !set["role"] {
			role = client.OrgInternalUser
		}
		reqs := make([]client.OrganizationMemberRequest, 0, len(pos)-1)
		for _, u := range pos[1:] {
			r := client.OrganizationMemberRequest{UserID: u, Role: role}
			if strings.Contains(u, "@") {
				r = client.OrganizationMemberRequest{Email: u, Role: role}
			}
			reqs = append(reqs, r)
		}
		add := c.AddOrganizationMembers
		if set["max-budget-usd"] {
			add = func(ctx context.Context, id string, members ...client.OrganizationMemberRequest) ([]client.OrganizationMember, error) {
				return c.AddOrganizationMembersWithBudget(ctx, id, *maxBudget, members...)
			}
		}
		ms, err := add(ctx, pos[0], reqs...)
		if err != nil {
			return err
		}
		if cf.jsonOut {
			return printJSON(stdout, orEmpty(ms))
		}
		for _, m := range ms {
			fmt.Fprintf(stdout, "added user %s to organization %s as %s\n", m.UserID, m.OrganizationID, m.Role)
		}
		return nil
	case "update":
		if len(pos) != 2 || (!set["role"] && !set["max-budget-usd"]) {
			return errors.New("give the organization, the user and what changes: switchyard orgs members update acme ann --role internal_user --max-budget-usd 20")
		}
		u := &client.OrganizationMembershipUpdate{Role: given(set, "role", &role), MaxBudgetUSD: given(set, "max-budget-usd", maxBudget)}
		m, err := c.UpdateOrganizationMembership(ctx, pos[0], pos[1], u)
		if err != nil {
			return err
		}
		if cf.jsonOut {
			return printJSON(stdout, m)
		}
		budget := ""
		if m.Budget != nil {
			budget = fmt.Sprintf(", its keys of the organization bounded to $%g", m.Budget.MaxBudgetUSD)
		}
		fmt.Fprintf(stdout, "user %s of organization %s is now %s%s\n", m.UserID, m.OrganizationID, m.Role, budget)
		return nil
	case "remove":
		if len(pos) < 2 {
			return errors.New("give the organization and the user(s) to remove: switchyard orgs members remove acme ann")
		}
		return forEachID(pos[1:], cf.jsonOut, stdout, func(user string) (any, string, error) {
			m, err := c.RemoveOrganizationMember(ctx, pos[0], user)
			if err != nil {
				return nil, "", err
			}
			return m, fmt.Sprintf("removed user %s from organization %s", m.UserID, pos[0]), nil
		})
	}
	if len(pos) != 1 {
		return errors.New("give one organization: switchyard orgs members list acme")
	}
	o, err := c.Organization(ctx, pos[0])
	if shorthand != "" && errors.Is(err, client.ErrNotFound) {
		return fmt.Errorf("%w; %q is not a subcommand either (want %s)", err, shorthand, strings.Join(orgMemberSubs, ", "))
	}
	if err != nil {
		return err
	}
	if cf.jsonOut {
		return printJSON(stdout, orEmpty(o.Members))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "USER\tROLE\tEMAIL\tSPEND\tBUDGET")
	for _, m := range o.Members {
		email, budget := m.Email, "-"
		if email == "" {
			email = "-"
		}
		if m.Budget != nil {
			budget = fmt.Sprintf("$%g", m.Budget.MaxBudgetUSD)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t$%.4f\t%s\n", m.UserID, m.Role, email, m.SpendUSD, budget)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(o.Members) == 0 {
		fmt.Fprintf(stdout, "(no members: switchyard orgs members add %s ann --role org_admin)\n", pos[0])
	}
	return nil
}
