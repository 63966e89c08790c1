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

// userFlags are the settings `users create` and `users update` take; set records which
// were given (update changes only those).
type userFlags struct {
	id, email, alias, role, models, budgetDuration, teams string
	maxBudget                                             float64
	tpm                                                   int64
	blocked                                               bool
	set                                                   map[string]bool
}

func addUserFlags(fs *flag.FlagSet) *userFlags {
	f := &userFlags{}
	fs.StringVar(&f.id, "id", "", "create: the user's id (letters, digits and . _ - : @ +); empty: the server makes one")
	fs.StringVar(&f.email, "email", "", "the user's e-mail address (one user each)")
	fs.StringVar(&f.alias, "alias", "", "a label for the user")
	fs.StringVar(&f.role, "role", "", "proxy_admin, proxy_admin_viewer, internal_user (the default) or internal_user_viewer: a label")
	fs.StringVar(&f.models, "models", "", "comma-separated models the user's keys may call; empty: every model")
	fs.Float64Var(&f.maxBudget, "max-budget-usd", 0, "USD all the user's keys together may spend (per --budget-duration when set); 0: no bound")
	fs.StringVar(&f.budgetDuration, "budget-duration", "", "period after which the user's spend starts again from zero: 30d, 12h")
	fs.Int64Var(&f.tpm, "tpm", 0, "tokens per minute of all the user's keys together; 0: no bound")
	fs.BoolVar(&f.blocked, "blocked", false, "every key of the user is refused; update: --blocked=false unblocks it")
	fs.StringVar(&f.teams, "teams", "", "create: comma-separated teams the user joins with role user")
	return f
}

// runUsers is `switchyard users`: LiteLLM's internal users (a budget, token rate and
// model list shared by the virtual keys made for them) through the native API.
func runUsers(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, args, err := subcommand(args, "list", "create", "show", "update", "delete")
	if err != nil {
		return err
	}
	fs := newFlagSet("users", "users [list] | users create [settings] | users show ID | users update ID [settings] | users delete ID...", stderr)
	cf := addClientFlags(fs)
	uf := addUserFlags(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	uf.set = flagsGiven(fs)
	c, err := cf.client()
	if err != nil {
		return err
	}
	if sub != "create" && sub != "update" {
		settings := []string{"id", "email", "alias", "role", "models", "max-budget-usd", "budget-duration", "tpm", "blocked", "teams"}
		if err := flagsOnlyFor(uf.set, settings, "users create and users update"); err != nil {
			return err
		}
	}
	show := showRecord(stdout, cf.jsonOut, printUser)
	switch sub {
	case "create":
		if len(pos) > 0 {
			return fmt.Errorf("unexpected argument %q (settings are flags: switchyard users create --id ann --email ann@example.com)", pos[0])
		}
		return show(c.CreateUser(ctx, &client.UserRequest{UserID: uf.id, Email: uf.email, Alias: uf.alias, Role: uf.role,
			Models: splitModels(uf.models), MaxBudgetUSD: uf.maxBudget, BudgetDuration: uf.budgetDuration, TokensPerMinute: uf.tpm,
			Blocked: uf.blocked, Teams: splitModels(uf.teams)}))
	case "update":
		if len(pos) != 1 || uf.set["id"] {
			return errors.New("give one user id: switchyard users update ID --max-budget-usd 20")
		}
		if uf.set["teams"] {
			return errors.New("--teams is for users create (a user's teams change through the team's members)")
		}
		u := &client.UserUpdate{
			Email:           given(uf.set, "email", &uf.email),
			Alias:           given(uf.set, "alias", &uf.alias),
			Role:            given(uf.set, "role", &uf.role),
			MaxBudgetUSD:    given(uf.set, "max-budget-usd", &uf.maxBudget),
			BudgetDuration:  given(uf.set, "budget-duration", &uf.budgetDuration),
			TokensPerMinute: given(uf.set, "tpm", &uf.tpm),
			Blocked:         given(uf.set, "blocked", &uf.blocked),
		}
		if uf.set["models"] {
			u.Models = splitModels(uf.models)
		}
		return show(c.UpdateUser(ctx, pos[0], u))
	case "show":
		if len(pos) != 1 {
			return errors.New("give one user id")
		}
		return show(c.User(ctx, pos[0]))
	case "delete":
		if len(pos) == 0 {
			return errors.New("give the user id(s) to delete (their virtual keys are revoked with them)")
		}
		return forEachID(pos, cf.jsonOut, stdout, func(id string) (any, string, error) {
			d, err := c.DeleteUser(ctx, id)
			if err != nil {
				return nil, "", err
			}
			return d, fmt.Sprintf("deleted user %s (revoked %d virtual key(s)%s)", d.UserID, len(d.DeletedKeys), list(d.DeletedKeys)), nil
		})
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q (switchyard users show ID, or users delete ID)", pos[0])
	}
	users, err := c.Users(ctx)
	if err != nil {
		return err
	}
	if cf.jsonOut {
		return printJSON(stdout, orEmpty(users))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tEMAIL\tROLE\tMODELS\tSPENT\tBUDGET\tTEAMS\tKEYS\tBLOCKED")
	for _, u := range users {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t$%.4f\t%s\t%s\t%d\t%v\n", u.UserID, u.Email, u.Role, userModels(u), u.Spend.CostUSD, userBudget(u),
			strings.Join(u.Teams, ","), len(u.KeyIDs), u.Blocked)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(users) == 0 {
		fmt.Fprintln(stdout, "(no users: switchyard users create --id ann --email ann@example.com --max-budget-usd 20)")
	}
	return nil
}

func userModels(u client.User) string {
	return modelsOf(client.VirtualKey{Models: u.Models})
}

func userBudget(u client.User) string {
	return budgetOf(client.VirtualKey{MaxBudgetUSD: u.MaxBudgetUSD, BudgetDuration: u.BudgetDuration})
}

func printUser(w io.Writer, u *client.User) {
	fmt.Fprintf(w, "id:        %s\n", u.UserID)
	if u.Email != "" {
		fmt.Fprintf(w, "email:     %s\n", u.Email)
	}
	if u.Alias != "" {
		fmt.Fprintf(w, "alias:     %s\n", u.Alias)
	}
	fmt.Fprintf(w, "role:      %s\n", u.Role)
	fmt.Fprintf(w, "models:    %s\n", userModels(*u))
	fmt.Fprintf(w, "budget:    %s\n", userBudget(*u))
	if u.TokensPerMinute > 0 {
		fmt.Fprintf(w, "rate:      %d tokens per minute\n", u.TokensPerMinute)
	}
	if u.Blocked {
		fmt.Fprintln(w, "blocked:   yes (every key of the user refused; users update ID --blocked=false)")
	}
	fmt.Fprintf(w, "teams:     %s\n", strings.Join(append([]string{fmt.Sprint(len(u.Teams))}, u.Teams...), " "))
	fmt.Fprintf(w, "keys:      %s\n", strings.Join(append([]string{fmt.Sprint(len(u.KeyIDs))}, u.KeyIDs...), " "))
	fmt.Fprintf(w, "spent:     $%.4f, %d tokens, %d requests\n", u.Spend.CostUSD, u.Spend.Tokens, u.Spend.Requests)
}
