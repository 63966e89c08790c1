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

// memberFlags are the settings `teams members add` and `teams members update` take; set
// records which were given (update changes only those).
type memberFlags struct {
	role      string
	maxBudget float64
	blocked   bool
	set       map[string]bool
}

func addMemberFlags(fs *flag.FlagSet) *memberFlags {
	f := &memberFlags{}
	fs.StringVar(&f.role, "role", "", "admin or user (the default): a label; update: \"\" sets the default")
	fs.Float64Var(&f.maxBudget, "max-budget-usd", 0, "USD the user's keys of the team may spend together; 0: no bound")
	fs.BoolVar(&f.blocked, "blocked", false, "the user's keys of the team are refused; update: --blocked=false unblocks them")
	return f
}

// teamMemberSubs are the subcommands of `switchyard teams members`.
var teamMemberSubs = []string{"list", "add", "update", "remove"}

// unknownMemberSub is the refusal of word, read as a subcommand of `teams members`: a usage
// error naming the valid ones (and the TEAM shorthand).
func unknownMemberSub(word string) error {
	return &usageError{err: fmt.Errorf("teams members: unknown subcommand %q (want %s, or one TEAM alone to list its members)", word, strings.Join(teamMemberSubs, ", "))}
}

// runTeamMembers is `switchyard teams members`: the users of a team (a role, and a budget
// and block of the user's keys of the team) through the native API, as `switchyard users`.
//
// A first word that is no subcommand is a team only as `teams members TEAM` (one word, the
// documented shorthand of `teams members list TEAM`): with more words beside it, it is an
// unknown subcommand (a typo of add, update or remove), refused before any request; alone
// and naming no team, the 404 also names the subcommands (a typo of list).
func runTeamMembers(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	subs := teamMemberSubs
	args, shorthand := membersShorthand(args, subs) // teams members TEAM
	sub, args, err := subcommand(args, subs...)
	if err != nil {
		return fmt.Errorf("teams members: %w", err)
	}
	fs := newFlagSet("teams members", "teams members [list] TEAM | teams members add TEAM USER [settings] | teams members update TEAM USER [settings] | teams members remove TEAM USER...", stderr)
	cf := addClientFlags(fs)
	mf := addMemberFlags(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	mf.set = flagsGiven(fs)
	if shorthand != "" && len(pos) != 1 {
		return unknownMemberSub(shorthand)
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	if sub != "add" && sub != "update" {
		if err := flagsOnlyFor(mf.set, []string{"role", "max-budget-usd", "blocked"}, "teams members add and teams members update"); err != nil {
			return err
		}
	}
	show := showRecord(stdout, cf.jsonOut, printTeamMember)
	switch sub {
	case "add":
		if len(pos) != 2 {
			return errors.New("give the team and the user: switchyard teams members add eng ann --role admin")
		}
		return show(c.AddTeamMember(ctx, pos[0], &client.TeamMemberRequest{UserID: pos[1], Role: mf.role, MaxBudgetUSD: mf.maxBudget, Blocked: mf.blocked}))
	case "update":
		if len(pos) != 2 {
			return errors.New("give the team and the user: switchyard teams members update eng ann --max-budget-usd 10")
		}
		return show(c.UpdateTeamMember(ctx, pos[0], pos[1], &client.TeamMemberUpdate{
			Role:         given(mf.set, "role", &mf.role),
			MaxBudgetUSD: given(mf.set, "max-budget-usd", &mf.maxBudget),
			Blocked:      given(mf.set, "blocked", &mf.blocked),
		}))
	case "remove":
		if len(pos) < 2 {
			return errors.New("give the team and the user(s) to remove: switchyard teams members remove eng ann")
		}
		return forEachID(pos[1:], cf.jsonOut, stdout, func(user string) (any, string, error) {
			if err := c.RemoveTeamMember(ctx, pos[0], user); err != nil {
				return nil, "", err
			}
			return memberRemoval{TeamID: pos[0], UserID: user, Object: "team_member", Deleted: true}, fmt.Sprintf("removed user %s from team %s", user, pos[0]), nil
		})
	}
	if len(pos) != 1 {
		return errors.New("give one team: switchyard teams members list eng")
	}
	members, err := c.TeamMembers(ctx, pos[0])
	if shorthand != "" && errors.Is(err, client.ErrNotFound) {
		return fmt.Errorf("%w; %q is not a subcommand either (want %s)", err, shorthand, strings.Join(subs, ", "))
	}
	if err != nil {
		return err
	}
	if cf.jsonOut {
		return printJSON(stdout, orEmpty(members))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "USER\tROLE\tSPENT\tBUDGET\tREQUESTS\tBLOCKED")
	for _, m := range members {
		fmt.Fprintf(tw, "%s\t%s\t$%.4f\t%s\t%d\t%v\n", m.UserID, m.Role, m.Spend.CostUSD, memberBudget(m), m.Spend.Requests, m.Blocked)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(members) == 0 {
		fmt.Fprintf(stdout, "(no members: switchyard teams members add %s ann)\n", pos[0])
	}
	return nil
}

// memberRemoval is what teams members remove --json prints for each user removed: the
// server's answer to DELETE /api/v1/teams/{team_id}/members/{user_id}.
type memberRemoval struct {
	TeamID  string `json:"team_id"`
	UserID  string `json:"user_id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

func memberBudget(m client.TeamMember) string {
	return budgetOf(client.VirtualKey{MaxBudgetUSD: m.MaxBudgetUSD})
}

func printTeamMember(w io.Writer, m *client.TeamMember) {
	fmt.Fprintf(w, "team:      %s\n", m.TeamID)
	fmt.Fprintf(w, "user:      %s\n", m.UserID)
	fmt.Fprintf(w, "role:      %s\n", m.Role)
	fmt.Fprintf(w, "budget:    %s\n", memberBudget(*m))
	if m.Blocked {
		fmt.Fprintln(w, "blocked:   yes (the user's keys of the team refused; teams members update TEAM USER --blocked=false)")
	}
	fmt.Fprintf(w, "spent:     $%.4f, %d tokens, %d requests\n", m.Spend.CostUSD, m.Spend.Tokens, m.Spend.Requests)
}

// membersShorthand reads `… members X`, X no subcommand, as `… members list X`, the
// documented shorthand: it returns the arguments to parse and X ("" when not taken).
func membersShorthand(args, subs []string) ([]string, string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && !slices.Contains(subs, args[0]) {
		return append([]string{"list"}, args...), args[0]
	}
	return args, ""
}
