package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/switchyard-ai/switchyard/client"
)

// customerFlags are the settings `customers create` and `customers update` take; set
// records which were given (update changes only those).
type customerFlags struct {
	alias, models, budgetDuration, budgetID string
	modelMaxBudget                          string
	maxBudget, softBudget                   float64
	tpm                                     int64
	rpm                                     int
	blocked                                 bool
	set                                     map[string]bool
}

func addCustomerFlags(fs *flag.FlagSet) *customerFlags {
	f := &customerFlags{}
	fs.StringVar(&f.alias, "alias", "", "a label for the end user")
	fs.StringVar(&f.models, "models", "", "comma-separated models the end user's requests may call; empty: every model")
	fs.Float64Var(&f.maxBudget, "max-budget-usd", 0, "USD the end user's requests may spend across every key (per --budget-duration when set); 0: no bound")
	fs.Float64Var(&f.softBudget, "soft-budget-usd", 0, "USD past which a budget alert is sent (never blocks); 0: none")
	fs.StringVar(&f.budgetDuration, "budget-duration", "", "period after which the end user's spend starts again from zero: 30d, 12h")
	fs.BoolVar(&f.blocked, "blocked", false, "every request naming the end user is refused; update: --blocked=false unblocks it")
	fs.Int64Var(&f.tpm, "tpm", 0, "tokens the end user's answers may use per minute across every key; 0: no bound")
	fs.IntVar(&f.rpm, "rpm", 0, "requests naming the end user it may make per minute across every key (one more is a 429); 0: no bound")
	fs.StringVar(&f.modelMaxBudget, "model-max-budget", "", "USD budgets of single models across every key, comma-separated MODEL=USD or MODEL=USD/PERIOD (gpt-4o=10/30d,openai/gpt-4o-mini=2): a spent model's requests are refused; update: replaces them all, \"\" removes them")
	fs.StringVar(&f.budgetID, "budget-id", "", "a LiteLLM budget of the key (POST /budget/new) whose limits the end user takes, now and whenever it changes (not with --max-budget-usd, --soft-budget-usd, --budget-duration, --tpm, --rpm or --model-max-budget); update: --budget-id \"\" leaves it, keeping its values")
	return f
}

// runCustomers is `switchyard customers`: the end users (LiteLLM's customers) an app names
// in its requests, with their spend, budgets and blocks, through the native API.
func runCustomers(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, args, err := subcommand(args, "list", "create", "show", "update", "block", "unblock", "delete")
	if err != nil {
		return err
	}
	fs := newFlagSet("customers", "customers [list] | customers create ID [settings] | customers show ID | customers update ID [settings] | customers block ID... | customers unblock ID... | customers delete ID...", stderr)
	cf := addClientFlags(fs)
	uf := addCustomerFlags(fs)
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
		settings := []string{"alias", "models", "max-budget-usd", "soft-budget-usd", "budget-duration", "blocked", "tpm", "rpm", "model-max-budget", "budget-id"}
		if err := flagsOnlyFor(uf.set, settings, "customers create and customers update"); err != nil {
			return err
		}
	}
	show := showRecord(stdout, cf.jsonOut, printCustomer)
	switch sub {
	case "create":
		if len(pos) != 1 {
			return errors.New("give the end user's id, as the app names it in its requests: switchyard customers create alice --max-budget-usd 5")
		}
		modelBudgets, err := parseModelBudgets(uf.modelMaxBudget)
		if err != nil {
			return err
		}
		return show(c.CreateCustomer(ctx, &client.CustomerRequest{EndUserID: pos[0], Alias: uf.alias, Models: splitModels(uf.models),
			MaxBudgetUSD: uf.maxBudget, SoftBudgetUSD: uf.softBudget, BudgetDuration: uf.budgetDuration, Blocked: uf.blocked,
			TokensPerMinute: uf.tpm, RequestsPerMinute: uf.rpm, ModelMaxBudget: modelBudgets, BudgetID: uf.budgetID}))
	case "update":
		if len(pos) != 1 {
			return errors.New("give one end user id: switchyard customers update alice --max-budget-usd 10")
		}
		u, err := uf.update()
		if err != nil {
			return err
		}
		return show(c.UpdateCustomer(ctx, pos[0], u))
	case "show":
		if len(pos) != 1 {
			return errors.New("give one end user id")
		}
		return show(c.Customer(ctx, pos[0]))
	case "block", "unblock", "delete":
		if len(pos) == 0 {
			return fmt.Errorf("give the end user id(s) to %s", sub)
		}
		blocked := sub == "block"
		return forEachID(pos, cf.jsonOut, stdout, func(id string) (any, string, error) {
			if sub == "delete" {
				if err := c.DeleteCustomer(ctx, id); err != nil {
					return nil, "", err
				}
				// With --json: the server's answer to DELETE /api/v1/customers/{id}.
				return customerDeletion{EndUserID: id, Object: "end_user", Deleted: true}, "deleted end user " + id, nil
			}
			u, err := c.UpdateCustomer(ctx, id, &client.CustomerUpdate{Blocked: &blocked})
			if err != nil {
				return nil, "", err
			}
			return u, fmt.Sprintf("%sed end user %s", sub, u.EndUserID), nil
		})
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q (switchyard customers show ID, or customers delete ID)", pos[0])
	}
	users, err := c.Customers(ctx)
	if err != nil {
		return err
	}
	if cf.jsonOut {
		return printJSON(stdout, orEmpty(users))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tALIAS\tMODELS\tSPENT\tBUDGET\tREQUESTS\tBLOCKED")
	for _, u := range users {
		fmt.Fprintf(tw, "%s\t%s\t%s\t$%.4f\t%s\t%d\t%v\n", u.EndUserID, u.Alias, customerModels(u), u.Spend.CostUSD, customerBudget(u), u.Spend.Requests, u.Blocked)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(users) == 0 {
		fmt.Fprintln(stdout, "(no end users: a request naming one in user, or switchyard customers create alice --max-budget-usd 5, makes one)")
	}
	return nil
}

// customerDeletion is what customers delete --json prints for each end user deleted.
type customerDeletion struct {
	EndUserID string `json:"end_user_id"`
	Object    string `json:"object"`
	Deleted   bool   `json:"deleted"`
}

// update is the CustomerUpdate of the settings given.
func (f *customerFlags) update() (*client.CustomerUpdate, error) {
	u := &client.CustomerUpdate{
		Alias:             given(f.set, "alias", &f.alias),
		MaxBudgetUSD:      given(f.set, "max-budget-usd", &f.maxBudget),
		SoftBudgetUSD:     given(f.set, "soft-budget-usd", &f.softBudget),
		BudgetDuration:    given(f.set, "budget-duration", &f.budgetDuration),
		Blocked:           given(f.set, "blocked", &f.blocked),
		TokensPerMinute:   given(f.set, "tpm", &f.tpm),
		RequestsPerMinute: given(f.set, "rpm", &f.rpm),
		BudgetID:          given(f.set, "budget-id", &f.budgetID),
	}
	if f.set["models"] {
		u.Models = splitModels(f.models)
	}
	if f.set["model-max-budget"] {
		m, err := parseModelBudgets(f.modelMaxBudget)
		if err != nil {
			return nil, err
		}
		u.ModelMaxBudget = m
		if u.ModelMaxBudget == nil {
			u.ModelMaxBudget = map[string]client.ModelBudget{} // "" removes them
		}
	}
	return u, nil
}

// parseModelBudgets reads --model-max-budget: comma-separated MODEL=USD or
// MODEL=USD/PERIOD (nil for ""). The server checks the models and periods.
func parseModelBudgets(s string) (map[string]client.ModelBudget, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]client.ModelBudget{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		i := strings.LastIndex(part, "=")
		if i <= 0 {
			return nil, fmt.Errorf("--model-max-budget: %q is not MODEL=USD or MODEL=USD/PERIOD (gpt-4o=10/30d)", part)
		}
		model, value := strings.TrimSpace(part[:i]), part[i+1:]
		usd, period, _ := strings.Cut(value, "/")
		n, err := strconv.ParseFloat(strings.TrimSpace(usd), 64)
		if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, fmt.Errorf("--model-max-budget: %s: %q is not a USD amount of at least 0", model, usd)
		}
		if _, dup := out[model]; dup {
			return nil, fmt.Errorf("--model-max-budget: %s is given twice", model)
		}
		out[model] = client.ModelBudget{MaxBudgetUSD: n, BudgetDuration: strings.TrimSpace(period)}
	}
	return out, nil
}

func customerModels(u client.Customer) string {
	return modelsOf(client.VirtualKey{Models: u.Models})
}

func customerBudget(u client.Customer) string {
	return budgetOf(client.VirtualKey{MaxBudgetUSD: u.MaxBudgetUSD, BudgetDuration: u.BudgetDuration})
}

func printCustomer(w io.Writer, u *client.Customer) {
	fmt.Fprintf(w, "id:        %s\n", u.EndUserID)
	if u.Alias != "" {
		fmt.Fprintf(w, "alias:     %s\n", u.Alias)
	}
	fmt.Fprintf(w, "models:    %s\n", customerModels(*u))
	fmt.Fprintf(w, "budget:    %s\n", customerBudget(*u))
	if u.SoftBudgetUSD > 0 {
		fmt.Fprintf(w, "soft:      $%g (an alert, never a refusal)\n", u.SoftBudgetUSD)
	}
	if u.TokensPerMinute > 0 {
		fmt.Fprintf(w, "tpm:       %d tokens per minute\n", u.TokensPerMinute)
	}
	if u.RequestsPerMinute > 0 {
		fmt.Fprintf(w, "rpm:       %d requests per minute\n", u.RequestsPerMinute)
	}
	for _, m := range slices.Sorted(maps.Keys(u.ModelMaxBudget)) {
		b := u.ModelMaxBudget[m]
		limit := fmt.Sprintf("$%g", b.MaxBudgetUSD)
		if b.BudgetDuration != "" {
			limit += "/" + b.BudgetDuration
		}
		fmt.Fprintf(w, "model:     %s budget %s, spent $%.4f\n", m, limit, u.Spend.Models[m].CostUSD)
	}
	if u.BudgetID != "" {
		fmt.Fprintf(w, "budget id: %s (its limits are the end user's)\n", u.BudgetID)
	}
	if u.Blocked {
		fmt.Fprintln(w, "blocked:   yes (every request naming it refused; customers unblock ID)")
	}
	if u.CreatedByRequest {
		fmt.Fprintln(w, "made by:   the first request naming it")
	}
	fmt.Fprintf(w, "spent:     $%.4f, %d tokens, %d requests\n", u.Spend.CostUSD, u.Spend.Tokens, u.Spend.Requests)
}
