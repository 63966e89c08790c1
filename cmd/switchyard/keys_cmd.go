package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

// keyFlags are the limits `keys issue` and `keys update` take; set records which were
// given on the command line (update changes only those).
type keyFlags struct {
	name, models, budgetDuration, expires string
	guardrails, team, mcpServers, ifMatch string
	user, budgetID, org, tags             string
	maxBudget, softBudget                 float64
	maxTokens, maxRequests, tpm           int64
	rpm                                   int
	noExpiry, blocked                     bool
	set                                   map[string]bool
}

func addKeyFlags(fs *flag.FlagSet) *keyFlags {
	f := &keyFlags{}
	fs.StringVar(&f.name, "name", "", "a label for the key")
	fs.StringVar(&f.models, "models", "", "comma-separated models the key may call (provider/model, bare names, model groups); empty: every model")
	fs.Float64Var(&f.maxBudget, "max-budget-usd", 0, "USD the key may spend (per --budget-duration when set); 0: no bound")
	fs.StringVar(&f.budgetDuration, "budget-duration", "", "period after which the spend starts again from zero: 30d, 12h, 90m")
	fs.Int64Var(&f.maxTokens, "max-tokens", 0, "tokens the key may use (per period); 0: no bound")
	fs.Int64Var(&f.maxRequests, "max-requests", 0, "completion and embedding requests the key may make (per period); 0: no bound")
	fs.IntVar(&f.rpm, "rpm", 0, "POST requests per minute per server process; 0: the server's per-key bound")
	fs.Int64Var(&f.tpm, "tpm", 0, "tokens the key's answers may use per minute per server process; 0: no bound")
	fs.StringVar(&f.expires, "expires", "", "when the key stops working: RFC 3339, or a duration from now (90d, 12h)")
	fs.BoolVar(&f.noExpiry, "no-expiry", false, "update: remove the key's expiry")
	fs.StringVar(&f.guardrails, "guardrails", "", "comma-separated server guardrails (serve --guardrails) every chat request of the key runs; update: \"\" removes them")
	fs.BoolVar(&f.blocked, "blocked", false, "the key refuses every request as over its budget (LiteLLM's max_budget 0); update: --blocked=false unblocks it")
	fs.StringVar(&f.team, "team", "", "a team (POST /api/v1/teams) the key joins: it draws on the team's budget and keeps to its models and rates; update: \"\" takes it out")
	fs.StringVar(&f.tags, "tags", "", "comma-separated tags every request of the key carries (LiteLLM's key-level tags, kept as metadata tags): for tag routing, tag budgets (switchyard tags) and spend per tag; on update they replace the key's tags alone (\"\" removes them)")
	fs.StringVar(&f.org, "org", "", "an organization (switchyard orgs create) a key without --team belongs to: it draws on the organization's budget and keeps to its models and rates (beside --team it must be the team's); update: \"\" takes it out (a key taken out of its team stays in the team's organization unless --org is given)")
	fs.StringVar(&f.user, "user", "", "a user (switchyard users create) the key is made for: it also draws on the user's budget and the user lists it (kept as metadata user_id); update: \"\" takes it from its user")
	fs.StringVar(&f.budgetID, "budget-id", "", "a LiteLLM budget of the key (POST /budget/new) whose limits the key takes, now and whenever it changes (not with --max-budget-usd, --soft-budget-usd, --budget-duration or --tpm); update: --budget-id \"\" leaves it, keeping its values")
	fs.Float64Var(&f.softBudget, "soft-budget-usd", 0, "USD mark that never blocks: crossing it sends a budget alert (serve --alert-webhook); 0: none")
	fs.StringVar(&f.mcpServers, "mcp-servers", "", "comma-separated MCP servers (serve --mcp-servers) the key may use; empty: every one")
	fs.StringVar(&f.ifMatch, "if-match", "", "rotate and update: act only if the key is still at this version (the etag keys show prints); otherwise nothing changes and the server answers 412")
	return f
}

// expiry reads --expires: an RFC 3339 time or a duration from now.
func (f *keyFlags) expiry(now time.Time) (*time.Time, error) {
	if f.expires == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339, f.expires); err == nil {
		return &t, nil
	}
	d, err := parseDays(f.expires)
	if err != nil {
		return nil, fmt.Errorf("--expires %q: want an RFC 3339 time or a duration such as 90d or 12h", f.expires)
	}
	t := now.Add(d)
	return &t, nil
}

// parseDays is time.ParseDuration with a d (days) suffix too.
func parseDays(v string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(v, "d"); ok {
		var n float64
		if _, err := fmt.Sscanf(days, "%g", &n); err != nil || n <= 0 {
			return 0, errors.New("bad number of days")
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	return time.ParseDuration(v)
}

// splitModels splits a comma-separated list (of models, or guardrails), dropping blanks;
// never nil.
func splitModels(v string) []string {
	out := []string{}
	for _, m := range strings.Split(v, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	return out
}

func runKeys(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, args, err := subcommand(args, "list", "issue", "show", "update", "rotate", "revoke")
	if err != nil {
		return err
	}
	fs := newFlagSet("keys", "keys [list] | keys issue [limits] | keys show ID|self | keys update ID [limits] [--if-match ETAG] | keys rotate ID [--if-match ETAG] | keys revoke ID...", stderr)
	cf := addClientFlags(fs)
	kf := addKeyFlags(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	kf.set = flagsGiven(fs)
	c, err := cf.client()
	if err != nil {
		return err
	}
	limitFlags := []string{"name", "models", "max-budget-usd", "budget-duration", "max-tokens", "max-requests", "rpm", "tpm", "expires", "no-expiry", "blocked", "guardrails", "team", "soft-budget-usd", "mcp-servers", "user", "budget-id", "org", "tags"}
	if sub != "issue" && sub != "update" {
		if err := flagsOnlyFor(kf.set, limitFlags, "keys issue and keys update"); err != nil {
			return err
		}
	}
	if sub != "rotate" && sub != "update" {
		if err := flagsOnlyFor(kf.set, []string{"if-match"}, "keys rotate and keys update"); err != nil {
			return err
		}
	}
	show := func(vk *client.VirtualKey) error {
		if cf.jsonOut {
			return printJSON(stdout, vk)
		}
		printKey(stdout, vk)
		return nil
	}
	// showMinted shows a key just made, then (as text) the key itself, which no later
	// answer carries, under heading.
	showMinted := func(vk *client.VirtualKey, err error, heading string) error {
		if err != nil {
			return err
		}
		if err := show(vk); err != nil {
			return err
		}
		if !cf.jsonOut {
			fmt.Fprintf(stdout, "\n%s:\n%s\n", heading, vk.Key)
		}
		return nil
	}
	switch sub {
	case "issue":
		if len(pos) > 0 {
			return fmt.Errorf("unexpected argument %q (limits are flags: switchyard keys issue --name NAME --models a,b)", pos[0])
		}
		if kf.noExpiry {
			return errors.New("--no-expiry is for keys update (a new key has no expiry unless --expires is given)")
		}
		exp, err := kf.expiry(time.Now())
		if err != nil {
			return err
		}
		vk, err := c.IssueKey(ctx, &client.KeyRequest{Tags: splitModels(kf.tags), Name: kf.name, Models: splitModels(kf.models), MaxBudgetUSD: kf.maxBudget,
			BudgetDuration: kf.budgetDuration, MaxTokens: kf.maxTokens, MaxRequests: kf.maxRequests, RequestsPerMinute: kf.rpm,
			TokensPerMinute: kf.tpm, ExpiresAt: exp, Blocked: kf.blocked, Guardrails: splitModels(kf.guardrails),
			TeamID: kf.team, SoftBudgetUSD: kf.softBudget, MCPServers: splitModels(kf.mcpServers), UserID: kf.user, BudgetID: kf.budgetID,
			OrganizationID: kf.org})
		return showMinted(vk, err, "key (shown once; the server keeps only its hash)")
	case "update":
		if len(pos) != 1 {
			return errors.New("give one key id: switchyard keys update ID --max-budget-usd 50")
		}
		u := &client.KeyUpdate{ClearExpiry: kf.noExpiry, IfMatch: kf.ifMatch,
			Name:              given(kf.set, "name", &kf.name),
			MaxBudgetUSD:      given(kf.set, "max-budget-usd", &kf.maxBudget),
			BudgetDuration:    given(kf.set, "budget-duration", &kf.budgetDuration),
			MaxTokens:         given(kf.set, "max-tokens", &kf.maxTokens),
			MaxRequests:       given(kf.set, "max-requests", &kf.maxRequests),
			RequestsPerMinute: given(kf.set, "rpm", &kf.rpm),
			TokensPerMinute:   given(kf.set, "tpm", &kf.tpm),
			Blocked:           given(kf.set, "blocked", &kf.blocked),
			TeamID:            given(kf.set, "team", &kf.team),
			OrganizationID:    given(kf.set, "org", &kf.org),
			SoftBudgetUSD:     given(kf.set, "soft-budget-usd", &kf.softBudget),
			UserID:            given(kf.set, "user", &kf.user),
			BudgetID:          given(kf.set, "budget-id", &kf.budgetID),
		}
		if kf.set["models"] {
			u.Models = splitModels(kf.models)
		}
		if kf.set["tags"] {
			u.Tags = append([]string{}, splitModels(kf.tags)...) // --tags "": none
		}
		if kf.set["guardrails"] {
			u.Guardrails = splitModels(kf.guardrails)
		}
		if kf.set["mcp-servers"] {
			u.MCPServers = splitModels(kf.mcpServers)
		}
		if kf.set["expires"] {
			if kf.noExpiry {
				return errors.New("--expires and --no-expiry together")
			}
			if u.ExpiresAt, err = kf.expiry(time.Now()); err != nil {
				return err
			}
		}
		vk, err := c.UpdateKey(ctx, pos[0], u)
		if err != nil {
			return err
		}
		return show(vk)
	case "show":
		if len(pos) != 1 {
			return errors.New("give one key id (or self)")
		}
		vk, err := c.Key(ctx, pos[0])
		if err != nil {
			return err
		}
		return show(vk)
	case "rotate":
		if len(pos) != 1 {
			return errors.New("give one key id: switchyard keys rotate ID")
		}
		vk, err := c.RotateKeyIfMatch(ctx, pos[0], kf.ifMatch)
		return showMinted(vk, err, "new key (shown once; the old one no longer works)")
	case "revoke":
		return deleteEach(ctx, pos, cf.jsonOut, stdout, c.RevokeKey)
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q (switchyard keys show ID, or keys revoke ID)", pos[0])
	}
	keys, err := c.ListKeys(ctx)
	if err != nil {
		return err
	}
	if cf.jsonOut {
		return printJSON(stdout, orEmpty(keys))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tMODELS\tSPENT\tBUDGET\tREQUESTS\tEXPIRES")
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%s\t%s\t$%.4f\t%s\t%d\t%s\n", k.ID, k.Name, modelsOf(k), k.Spend.CostUSD, budgetOf(k), k.Spend.Requests, expiresOf(k))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(keys) == 0 {
		fmt.Fprintln(stdout, "(no virtual keys: switchyard keys issue --name NAME --max-budget-usd 10)")
	}
	return nil
}

func modelsOf(k client.VirtualKey) string {
	if len(k.Models) == 0 {
		return "all"
	}
	return strings.Join(k.Models, ",")
}

func budgetOf(k client.VirtualKey) string {
	if k.MaxBudgetUSD == 0 {
		return "-"
	}
	b := fmt.Sprintf("$%g", k.MaxBudgetUSD)
	if k.BudgetDuration != "" {
		b += "/" + k.BudgetDuration
	}
	return b
}

func expiresOf(k client.VirtualKey) string {
	switch {
	case k.ExpiresAt == nil:
		return "never"
	case k.Expired:
		return "expired " + k.ExpiresAt.Local().Format("2006-01-02 15:04")
	}
	return k.ExpiresAt.Local().Format("2006-01-02 15:04")
}

func printKey(w io.Writer, k *client.VirtualKey) {
	fmt.Fprintf(w, "id:        %s\n", k.ID)
	if k.Name != "" {
		fmt.Fprintf(w, "name:      %s\n", k.Name)
	}
	fmt.Fprintf(w, "models:    %s\n", modelsOf(*k))
	fmt.Fprintf(w, "budget:    %s\n", budgetOf(*k))
	if k.MaxTokens > 0 || k.MaxRequests > 0 {
		fmt.Fprintf(w, "bounds:    %d tokens, %d requests (0: none)\n", k.MaxTokens, k.MaxRequests)
	}
	if k.RequestsPerMinute > 0 || k.TokensPerMinute > 0 {
		fmt.Fprintf(w, "rate:      %d requests, %d tokens per minute (0: none)\n", k.RequestsPerMinute, k.TokensPerMinute)
	}
	fmt.Fprintf(w, "expires:   %s\n", expiresOf(*k))
	if len(k.Guardrails) > 0 {
		fmt.Fprintf(w, "guardrails: %s\n", strings.Join(k.Guardrails, ","))
	}
	if k.TeamID != "" {
		fmt.Fprintf(w, "team:      %s\n", k.TeamID)
	}
	if len(k.Tags) > 0 {
		fmt.Fprintf(w, "tags:      %s\n", strings.Join(k.Tags, ","))
	}
	if k.OrganizationID != "" {
		fmt.Fprintf(w, "organization: %s\n", k.OrganizationID)
	}
	if k.UserID != "" {
		fmt.Fprintf(w, "user:      %s\n", k.UserID)
	}
	if k.BudgetID != "" {
		fmt.Fprintf(w, "budget id: %s (its limits: /budget/update changes them)\n", k.BudgetID)
	}
	if k.SoftBudgetUSD > 0 {
		fmt.Fprintf(w, "soft budget: $%g (alerts, never blocks)\n", k.SoftBudgetUSD)
	}
	if len(k.MCPServers) > 0 {
		fmt.Fprintf(w, "mcp servers: %s\n", strings.Join(k.MCPServers, ","))
	}
	if k.ETag != "" {
		fmt.Fprintf(w, "etag:      %s\n", k.ETag)
	}
	if k.Blocked {
		fmt.Fprintln(w, "blocked:   yes (every request refused as over budget; keys update ID --blocked=false)")
	}
	fmt.Fprintf(w, "spent:     $%.4f, %d tokens, %d requests", k.Spend.CostUSD, k.Spend.Tokens, k.Spend.Requests)
	if k.Spend.PeriodStart != nil {
		fmt.Fprintf(w, " since %s", k.Spend.PeriodStart.Local().Format("2006-01-02 15:04"))
	}
	fmt.Fprintln(w)
}

// flagsGiven are the names of the flags of fs given on the command line.
func flagsGiven(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// flagsOnlyFor refuses the first of names given (in set): those flags are for where only.
func flagsOnlyFor(set map[string]bool, names []string, where string) error {
	for _, n := range names {
		if set[n] {
			return fmt.Errorf("--%s is for %s", n, where)
		}
	}
	return nil
}

// given returns v when the flag name was given on the command line (in set), else nil: the
// fields an update changes.
func given[T any](set map[string]bool, name string, v *T) *T {
	if set[name] {
		return v
	}
	return nil
}
