package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/litellmconfig"
)

// loadLiteLLM reads --litellm-config into c.litellm and applies what it sets that a flag
// given on the command line or in the environment did not: the per-call timeout
// (--attempt-timeout), the circuit breakers (--breaker-failures, --breaker-cooldown) and
// the retries. Its deployments' own prices are applied to the price catalogue by the
// wiring, over --prices-file's. It refuses --providers-config and --model-groups
// beside it (which would configure the same names twice). Its warnings are logged.
func (c *serveConfig) loadLiteLLM(fs *flag.FlagSet, log *slog.Logger) error {
	if c.LiteLLMConfig == "" {
		return nil
	}
	var both []string
	if c.ProvidersConfig != "" {
		both = append(both, "--providers-config")
	}
	if c.ModelGroups != "" {
		both = append(both, "--model-groups")
	}
	if len(both) > 0 {
		return fmt.Errorf("--litellm-config configures providers and model groups itself; give it without %s (switchyard litellm-config check %s prints what it configures)",
			strings.Join(both, " and "), c.LiteLLMConfig)
	}
	lc, err := litellmconfig.Load(c.LiteLLMConfig, os.LookupEnv)
	if err != nil {
		return fmt.Errorf("--litellm-config: %w", err)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if lc.Timeout > 0 {
		if given["attempt-timeout"] {
			log.Info("litellm config: its timeout gives way to --attempt-timeout", "timeout", lc.Timeout.String(), "attempt_timeout", c.Faults.Attempt.String())
		} else {
			c.Faults.Attempt = lc.Timeout
		}
	}
	for _, f := range []struct {
		flag string
		set  bool
		to   func()
		from any
	}{
		{"breaker-failures", lc.Breaker.Failures != 0, func() { c.Faults.BreakerFailures = lc.Breaker.Failures }, lc.Breaker.Failures},
		{"breaker-cooldown", lc.Breaker.Cooldown > 0, func() { c.Faults.BreakerCooldown = lc.Breaker.Cooldown }, lc.Breaker.Cooldown},
	} {
		switch {
		case !f.set:
		case given[f.flag]:
			log.Info("litellm config: its "+f.flag+" gives way to the flag's", "litellm_config", f.from, "flag", fs.Lookup(f.flag).Value.String())
		default:
			f.to()
		}
	}
	if lc.NumRetries != nil {
		c.maxRetries = *lc.NumRetries
		if c.maxRetries == 0 {
			c.maxRetries = -1 // completions.Options: 0 is the default (2), negative none
		}
	}
	for _, f := range []struct {
		flag string
		set  bool
		to   func()
	}{
		{"max-budget-usd", lc.MaxBudget > 0, func() { c.MaxBudgetUSD = lc.MaxBudget }},
		{"budget-duration", lc.BudgetDuration != "", func() { c.BudgetDuration = lc.BudgetDuration }},
	} {
		switch {
		case !f.set:
		case given[f.flag]:
			log.Info("litellm config: its " + f.flag + " gives way to the flag's")
		default:
			f.to()
		}
	}
	if lc.Prometheus {
		if given["litellm-metrics"] {
			log.Info("litellm config: its prometheus callback gives way to --litellm-metrics", "litellm_metrics", c.Telemetry.LiteLLM)
		} else {
			c.Telemetry.LiteLLM = true
		}
	}
	for _, w := range lc.Warnings {
		log.Warn("litellm config: " + w)
	}
	log.Info("litellm config", "file", c.LiteLLMConfig, "model_groups", strings.Join(lc.Summary(), ","), "providers", len(lc.Providers.Providers),
		"master_key", lc.MasterKey != "", "reject_clientside_metadata_tags", lc.RejectClientTags)
	c.litellm = lc
	return nil
}

// runLiteLLMConfig is `switchyard litellm-config check FILE`: what serve --litellm-config
// FILE would configure — the provider entries, the model groups, the settings and the
// warnings — as JSON on stdout, or the error naming the value at fault.
func runLiteLLMConfig(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("litellm-config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: switchyard litellm-config check FILE\n\n"+
			"Prints what serve --litellm-config FILE configures: the provider entries (--providers-config's\n"+
			"shape), the model groups (--model-groups' shape), the settings it takes (retries, timeout,\n"+
			"breaker, the deployments' own prices by provider/model) and its warnings.\n"+
			"os.environ/ values are read from this environment; keys are never printed.")
	}
	if err := fs.Parse(args); err != nil {
		return asUsageError(err)
	}
	if fs.NArg() != 2 || fs.Arg(0) != "check" {
		fs.Usage()
		return &usageError{err: errors.New("want: litellm-config check FILE"), printed: true}
	}
	lc, err := litellmconfig.Load(fs.Arg(1), os.LookupEnv)
	if err != nil {
		return err
	}
	for i := range lc.Providers.Providers {
		if lc.Providers.Providers[i].APIKey != "" {
			lc.Providers.Providers[i].APIKey = "(set in the file)"
		}
	}
	out := struct {
		Providers       any      `json:"providers"`
		ModelGroups     any      `json:"model_groups"`
		MasterKey       bool     `json:"master_key"`
		RejectTags      bool     `json:"reject_clientside_metadata_tags,omitempty"`
		NumRetries      *int     `json:"num_retries,omitempty"`
		Timeout         string   `json:"attempt_timeout,omitempty"`
		BreakerFailures int      `json:"breaker_failures,omitempty"`
		BreakerCooldown string   `json:"breaker_cooldown,omitempty"`
		Prices          any      `json:"prices,omitempty"`
		Passthrough     []string `json:"passthrough,omitempty"`
		Wildcards       any      `json:"wildcards,omitempty"`
		Warnings        []string `json:"warnings"`
	}{Providers: lc.Providers.Providers, ModelGroups: lc.ModelGroups, MasterKey: lc.MasterKey != "", RejectTags: lc.RejectClientTags, NumRetries: lc.NumRetries,
		BreakerFailures: lc.Breaker.Failures, Passthrough: lc.Passthrough, Warnings: lc.Warnings}
	if len(lc.Wildcards) > 0 {
		out.Wildcards = lc.Wildcards
	}
	if lc.Timeout > 0 {
		out.Timeout = lc.Timeout.Round(time.Millisecond).String()
	}
	if lc.Breaker.Cooldown > 0 {
		out.BreakerCooldown = lc.Breaker.Cooldown.Round(time.Millisecond).String()
	}
	if len(lc.Prices) > 0 {
		out.Prices = lc.Prices
	}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
