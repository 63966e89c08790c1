package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/litellmconfig"
	"github.com/switchyard-ai/switchyard/providers"
)

// reloadConfig reads --litellm-config or --providers-config again (serve's SIGHUP) and
// applies what it routes by without a restart: the model groups and their deployments,
// provider entries, the deployments' prices, ids and wildcards. A file that cannot be
// read or served leaves the configuration in force as it was; the error says why. What
// changed is logged, and so are the settings that changed but take effect at the next
// restart. Without either flag there is nothing to read again.
func (w *wiring) reloadConfig(ctx context.Context) error {
	switch {
	case w.cfg.LiteLLMConfig != "":
		return w.reloadLiteLLM(ctx)
	case w.cfg.ProvidersConfig != "":
		return w.reloadProviders()
	}
	w.log.Info("reload: no --litellm-config or --providers-config to read again")
	return nil
}

// reloadLiteLLM is reloadConfig for --litellm-config: the file is parsed as at start, then
// served with the stored deployments (deployments.Service.Reload swaps the routing table
// at once).
func (w *wiring) reloadLiteLLM(ctx context.Context) error {
	path := w.cfg.LiteLLMConfig
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--litellm-config: reading %s: %w; the configuration in force is kept", path, err)
	}
	lc, err := litellmconfig.Parse(b, os.LookupEnv)
	if err != nil {
		return fmt.Errorf("--litellm-config %s: %w; the configuration in force is kept", path, err)
	}
	before := w.gateway.ModelGroupsInForce()
	if err := w.stored.Reload(ctx, b); err != nil {
		return fmt.Errorf("--litellm-config %s: %w; the configuration in force is kept", path, err)
	}
	for _, warning := range lc.Warnings {
		w.log.Warn("litellm config: " + warning)
	}
	inForce := w.litellmInForce
	if inForce == nil {
		inForce = w.cfg.litellm
	}
	added, removed, changed := groupChanges(before, w.gateway.ModelGroupsInForce(), providerEntries(inForce), providerEntries(lc))
	w.litellmInForce = lc
	w.log.Info("reload: --litellm-config applied", "file", path, "model_groups_added", strings.Join(added, ","),
		"model_groups_removed", strings.Join(removed, ","), "model_groups_changed", strings.Join(changed, ","))
	if later := restartSettings(w.cfg.litellm, lc); len(later) > 0 {
		w.log.Warn("reload: these settings of --litellm-config changed but take effect at the next restart", "settings", strings.Join(later, ","))
	}
	return nil
}

// groupChanges names the model groups added, removed and changed (members, options, or a
// member's provider entry: its api_base or key) from before to after, each sorted; the
// provider entries are by name, as JSON, before and after.
func groupChanges(before, after map[string]completions.ModelGroup, provBefore, provAfter map[string]string) (added, removed, changed []string) {
	for name, g := range after {
		old, ok := before[name]
		switch {
		case !ok:
			added = append(added, name)
		case !reflect.DeepEqual(old, g) || slices.ContainsFunc(g.Models, func(m string) bool {
			prov, _, _ := strings.Cut(m, "/")
			return provBefore[prov] != provAfter[prov]
		}):
			changed = append(changed, name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			removed = append(removed, name)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	slices.Sort(changed)
	return added, removed, changed
}

// providerEntries are the provider entries lc configures, by name, as JSON (nil lc: none).
func providerEntries(lc *litellmconfig.Config) map[string]string {
	out := map[string]string{}
	if lc == nil {
		return out
	}
	for _, pc := range lc.Providers.Providers {
		b, _ := json.Marshal(pc)
		out[pc.Name] = string(b)
	}
	return out
}

// restartSettings names the settings of a LiteLLM config that serve reads once at start
// and that differ between running (the file it started with) and next.
func restartSettings(running, next *litellmconfig.Config) []string {
	if running == nil {
		return nil
	}
	var out []string
	for _, s := range []struct {
		name      string
		old, next any
	}{
		{"general_settings.master_key", running.MasterKey, next.MasterKey},
		{"general_settings.reject_clientside_metadata_tags", running.RejectClientTags, next.RejectClientTags},
		{"num_retries", running.NumRetries, next.NumRetries},
		{"timeout", running.Timeout, next.Timeout},
		{"litellm_settings.max_budget", running.MaxBudget, next.MaxBudget},
		{"litellm_settings.budget_duration", running.BudgetDuration, next.BudgetDuration},
		{"router_settings.allowed_fails, cooldown_time", running.Breaker, next.Breaker},
		{"litellm_settings.callbacks (prometheus)", [2]bool{running.Prometheus, running.PrometheusEndUser}, [2]bool{next.Prometheus, next.PrometheusEndUser}},
		{"litellm_settings.drop_params", running.DropParams, next.DropParams},
		{"the names /v1/models lists beside the model groups", running.Listed, next.Listed},
	} {
		if !reflect.DeepEqual(s.old, s.next) {
			out = append(out, s.name)
		}
	}
	return out
}

// reloadProviders is reloadConfig for --providers-config: the entries are built apart
// first; then each entry is registered anew, and an entry the file no longer has is
// removed (or its environment's preset put back), unless a model group in force still
// names it — then nothing changes.
func (w *wiring) reloadProviders() error {
	path := w.cfg.ProvidersConfig
	fc, err := providers.LoadConfig(path)
	if err == nil {
		err = (&providers.Registry{}).Configure(fc, os.Getenv, w.popts)
	}
	if err != nil {
		return fmt.Errorf("--providers-config %s: %w; the configuration in force is kept", path, err)
	}
	old := map[string]providers.ProviderConfig{}
	if w.providersFile != nil {
		for _, pc := range w.providersFile.Providers {
			old[pc.Name] = pc
		}
	}
	next := map[string]providers.ProviderConfig{}
	for _, pc := range fc.Providers {
		next[pc.Name] = pc
	}
	env := providers.FromEnv(os.Getenv, w.popts)
	var added, removed, changed []string
	for name := range old {
		if _, ok := next[name]; ok {
			continue
		}
		if _, err := env.Lookup(name); err != nil {
			for group, g := range w.gateway.ModelGroupsInForce() {
				// A member or a fallback: the gateway refuses a group naming an unknown
				// provider in either (SetRoutes, New).
				named := slices.Concat(g.Models, g.Fallbacks, g.ContextWindowFallbacks, g.ContentPolicyFallbacks)
				if slices.ContainsFunc(named, func(m string) bool { return strings.HasPrefix(m, name+"/") }) {
					return fmt.Errorf("--providers-config %s: the provider %q it no longer has serves the model group %q; the configuration in force is kept", path, name, group)
				}
			}
		}
		removed = append(removed, name)
	}
	for name, pc := range next {
		prev, ok := old[name]
		a, _ := json.Marshal(prev)
		b, _ := json.Marshal(pc)
		switch {
		case !ok:
			added = append(added, name)
		case string(a) != string(b):
			changed = append(changed, name)
		}
	}
	if err := w.registry.Configure(fc, os.Getenv, w.popts); err != nil {
		return fmt.Errorf("--providers-config %s: %w", path, err) // built apart above: not expected
	}
	for _, name := range removed {
		if p, err := env.Lookup(name); err == nil {
			w.registry.Register(p) // the environment's preset, as without the file
		} else {
			w.registry.Remove(name)
		}
	}
	w.providersFile = fc
	for _, s := range [][]string{added, removed, changed} {
		slices.Sort(s)
	}
	w.log.Info("reload: --providers-config applied", "file", path, "providers_added", strings.Join(added, ","),
		"providers_removed", strings.Join(removed, ","), "providers_changed", strings.Join(changed, ","),
		"providers", strings.Join(slices.Sorted(maps.Keys(next)), ","))
	return nil
}
