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

// reloadConfig reads --litellm-config, or --providers-config and --model-groups, again
// (serve's SIGHUP) and applies what it routes by without a restart: the model groups and
// their deployments, provider entries, the deployments' prices, ids, wildcards and the
// names /v1/models lists. A file that cannot be read or served leaves the configuration
// in force as it was; the error says why. What changed is logged, and so are the settings
// that changed but take effect at the next restart. Without any of these flags there is
// nothing to read again.
func (w *wiring) reloadConfig(ctx context.Context) error {
	switch {
	case w.cfg.LiteLLMConfig != "":
		return w.reloadLiteLLM(ctx)
	case w.cfg.ProvidersConfig != "" || w.cfg.ModelGroups != "":
		return w.reloadFiles(ctx)
	}
	w.log.Info("reload: no --litellm-config, --providers-config or --model-groups to read again")
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
	} {
		if !reflect.DeepEqual(s.old, s.next) {
			out = append(out, s.name)
		}
	}
	return out
}

// reloadFiles is reloadConfig for --providers-config and --model-groups (either or both):
// both files are read and checked first, then the provider entries are registered anew,
// the model groups swapped in with the stored deployments (deployments.Service
// ReloadGroups), and last the entries the file no longer has removed; a step refused puts
// back what the steps before it changed.
func (w *wiring) reloadFiles(ctx context.Context) error {
	var groups map[string]completions.ModelGroup
	if path := w.cfg.ModelGroups; path != "" {
		var err error
		if groups, err = completions.LoadModelGroups(path); err != nil {
			return fmt.Errorf("--model-groups %s: %w; the configuration in force is kept", path, err)
		}
	}
	// The groups in force once applied: the stored deployments' and the file's.
	before := w.gateway.ModelGroupsInForce()
	next := maps.Clone(before)
	if w.cfg.ModelGroups != "" {
		for name := range w.groupsFile {
			delete(next, name)
		}
		maps.Copy(next, groups)
	}
	var plan *providersPlan
	if w.cfg.ProvidersConfig != "" {
		var err error
		if plan, err = w.planProviders(next); err != nil {
			return err
		}
		if err := w.applyProviders(plan); err != nil {
			return err
		}
	}
	if path := w.cfg.ModelGroups; path != "" {
		if err := w.stored.ReloadGroups(ctx, groups); err != nil {
			if plan != nil {
				w.restoreProviders(plan)
			}
			return fmt.Errorf("--model-groups %s: %w; the configuration in force is kept", path, err)
		}
		w.groupsFile = groups
		added, removed, changed := groupChanges(before, w.gateway.ModelGroupsInForce(), nil, nil)
		w.log.Info("reload: --model-groups applied", "file", path, "model_groups_added", strings.Join(added, ","),
			"model_groups_removed", strings.Join(removed, ","), "model_groups_changed", strings.Join(changed, ","))
	}
	if plan != nil {
		w.finishProviders(plan)
	}
	return nil
}

// providersPlan is a --providers-config read anew and checked, with its changes by name.
type providersPlan struct {
	path                    string
	fc                      *providers.FileConfig
	added, removed, changed []string
}

// planProviders reads --providers-config and builds its entries apart; a file without an
// entry one of groups (the model groups in force once the reload is applied) names is
// refused, unless the environment configures that provider.
func (w *wiring) planProviders(groups map[string]completions.ModelGroup) (*providersPlan, error) {
	path := w.cfg.ProvidersConfig
	fc, err := providers.LoadConfig(path)
	if err == nil {
		err = (&providers.Registry{}).Configure(fc, os.Getenv, w.popts)
	}
	if err != nil {
		return nil, fmt.Errorf("--providers-config %s: %w; the configuration in force is kept", path, err)
	}
	plan := &providersPlan{path: path, fc: fc}
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
	for name := range old {
		if _, ok := next[name]; ok {
			continue
		}
		if _, err := env.Lookup(name); err != nil {
			for group, g := range groups {
				// A member or a fallback: the gateway refuses a group naming an unknown
				// provider in either (SetRoutes, New).
				named := slices.Concat(g.Models, g.Fallbacks, g.ContextWindowFallbacks, g.ContentPolicyFallbacks)
				if slices.ContainsFunc(named, func(m string) bool { return strings.HasPrefix(m, name+"/") }) {
					return nil, fmt.Errorf("--providers-config %s: the provider %q it no longer has serves the model group %q; the configuration in force is kept", path, name, group)
				}
			}
		}
		plan.removed = append(plan.removed, name)
	}
	for name, pc := range next {
		prev, ok := old[name]
		a, _ := json.Marshal(prev)
		b, _ := json.Marshal(pc)
		switch {
		case !ok:
			plan.added = append(plan.added, name)
		case string(a) != string(b):
			plan.changed = append(plan.changed, name)
		}
	}
	for _, s := range [][]string{plan.added, plan.removed, plan.changed} {
		slices.Sort(s)
	}
	return plan, nil
}

// applyProviders registers the plan's entries anew (the removed ones stay until
// finishProviders) and tells the deployments service which names they take; an entry
// named as a stored deployment's own is refused before anything changes.
func (w *wiring) applyProviders(plan *providersPlan) error {
	names := make([]string, len(plan.fc.Providers))
	for i, pc := range plan.fc.Providers {
		names[i] = pc.Name
	}
	if err := w.stored.SetOtherProviders(names); err != nil {
		return fmt.Errorf("--providers-config %s: %w; the configuration in force is kept", plan.path, err)
	}
	if err := w.registry.Configure(plan.fc, os.Getenv, w.popts); err != nil {
		return fmt.Errorf("--providers-config %s: %w", plan.path, err) // built apart above: not expected
	}
	return nil
}

// restoreProviders undoes applyProviders: the entries in force before registered again,
// those the plan added removed (or their environment's preset put back).
func (w *wiring) restoreProviders(plan *providersPlan) {
	var names []string
	if w.providersFile != nil {
		if err := w.registry.Configure(w.providersFile, os.Getenv, w.popts); err != nil {
			w.log.Error("reload: registering the provider entries in force again", "err", err)
		}
		for _, pc := range w.providersFile.Providers {
			names = append(names, pc.Name)
		}
	}
	w.putBackOrRemove(plan.added)
	if err := w.stored.SetOtherProviders(names); err != nil {
		w.log.Error("reload: the provider entries in force", "err", err)
	}
}

// finishProviders removes the entries the plan's file no longer has (or puts their
// environment's preset back) and logs the reload.
func (w *wiring) finishProviders(plan *providersPlan) {
	w.putBackOrRemove(plan.removed)
	w.providersFile = plan.fc
	names := make([]string, len(plan.fc.Providers))
	for i, pc := range plan.fc.Providers {
		names[i] = pc.Name
	}
	slices.Sort(names)
	w.log.Info("reload: --providers-config applied", "file", plan.path, "providers_added", strings.Join(plan.added, ","),
		"providers_removed", strings.Join(plan.removed, ","), "providers_changed", strings.Join(plan.changed, ","),
		"providers", strings.Join(names, ","))
}

// putBackOrRemove registers the environment's preset of each name, as without a
// --providers-config, or removes the name when it is no preset.
func (w *wiring) putBackOrRemove(names []string) {
	env := providers.FromEnv(os.Getenv, w.popts)
	for _, name := range names {
		if p, err := env.Lookup(name); err == nil {
			w.registry.Register(p)
		} else {
			w.registry.Remove(name)
		}
	}
}
