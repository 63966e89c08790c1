package deployments

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/litellmconfig"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

// configFile is a LiteLLM config file the Service serves, with the model_info.ids it
// gives its deployments.
type configFile struct {
	// config is the file's content (nil: none, Options.Groups configure the model groups).
	config []byte
	// ids are its deployments' model_info.ids.
	ids map[string]bool
}

// idSet is the set of the model_info.ids cfg's file gives its deployments.
func idSet(cfg *litellmconfig.Config) map[string]bool {
	ids := map[string]bool{}
	for _, id := range cfg.DeploymentIDs() {
		ids[id] = true
	}
	return ids
}

// Reload serves config, the config file read anew (serve's SIGHUP), in place of the one
// the Service serves: it is parsed, its provider entries are built apart, and it is
// applied with the stored deployments as Sync applies them — the provider entries
// registered, then the model groups, prices, ids and wildcards swapped in at once
// (completions.Gateway.SetRoutes), so a request is routed by the old table or the new one,
// never a mix. When any step fails (a file that does not parse, a provider entry that
// cannot be built, groups the gateway refuses) the file and the routes in force stay as
// they were and the error says why. Reload of a Service made without Options.Config is an
// error: its model groups come from elsewhere.
func (s *Service) Reload(ctx context.Context, config []byte) error {
	if s.file.Load().config == nil {
		return errors.New("deployments: reload: the service serves no config file (its model groups come from elsewhere)")
	}
	if config == nil {
		config = []byte{}
	}
	cfg, err := litellmconfig.ParseWith(config, nil, s.opts.LookupEnv)
	if err != nil {
		return fmt.Errorf("deployments: reload: %w", err)
	}
	if err := s.checkProviders(cfg); err != nil {
		return fmt.Errorf("deployments: reload: %w", err)
	}
	var old *configFile
	return s.applySwapped(ctx, "config",
		func() { old = s.file.Swap(&configFile{config: config, ids: idSet(cfg)}) },
		func() { s.file.Store(old) }, nil)
}

// applySwapped runs swap under s.mu, then verify (nil: none), then applies everything again
// (Sync, whether or not the stored deployments changed). When verify or the application
// fails it runs undo the same way and applies what was in force again (a Sync meanwhile may
// have applied the swap; a failure of that logged, naming what), and returns the error.
func (s *Service) applySwapped(ctx context.Context, what string, swap, undo func(), verify func() error) error {
	s.mu.Lock()
	swap()
	s.applied = ""
	s.mu.Unlock()
	var err error
	if verify != nil {
		err = verify()
	}
	if err == nil {
		if err = s.Sync(ctx); err == nil {
			return nil
		}
	}
	s.mu.Lock()
	undo()
	s.applied = ""
	s.mu.Unlock()
	if rerr := s.Sync(ctx); rerr != nil {
		s.log.ErrorContext(ctx, "deployments: reload: applying the "+what+" in force again", "err", rerr)
	}
	return fmt.Errorf("deployments: reload: %w", err)
}

// ErrNameTaken is returned by ReloadGroups for a model group named as a stored deployment
// is, and by SetOtherProviders for a provider named as a stored deployment's entry is.
var ErrNameTaken = errors.New("deployments: the name is taken by a stored deployment")

// ReloadGroups serves groups, the model groups configured otherwise (--model-groups read
// anew on serve's SIGHUP), in place of Options.Groups or the last ReloadGroups': they are
// applied with the stored deployments as Sync applies them, swapped in at once
// (completions.Gateway.SetRoutes), and from then on a deployment added may not take one
// of their names (and may take one of the names no longer there). A group named as a
// stored deployment is (ErrNameTaken), or groups the gateway refuses, leave the groups in
// force as they were; the error says why. ReloadGroups of a Service made with
// Options.Config is an error: its model groups are the file's (Reload).
//
// A deployment added or updated meanwhile (POST /model/new, /model/update), by this
// process or another on the store, never ends up stored under one of the new groups' names:
// the groups are swapped in only once the additions this process is storing are stored
// (nameMu); then, in one store transaction, the stored deployments are read against them
// again (one stored meanwhile puts the groups in force back: ErrNameTaken) and their names
// are recorded in the store as the reloaded groups' (reservedGroups). Every replica's
// addition reads that record in its own transaction and refuses a model_name it holds, so
// one judged after the reload — on a replica whose own groups are not reloaded yet too — is
// refused naming its model_name.
func (s *Service) ReloadGroups(ctx context.Context, groups map[string]completions.ModelGroup) error {
	if s.file.Load().config != nil {
		return errors.New("deployments: reload: the service serves a config file, whose model groups are its own")
	}
	if err := s.groupsFree(ctx, s.opts.Store, groups); err != nil {
		return fmt.Errorf("deployments: reload: %w", err)
	}
	if s.reloadChecked != nil {
		s.reloadChecked()
	}
	groups = maps.Clone(groups)
	var old *map[string]completions.ModelGroup
	var reserved bool // the store holds groups' names (undo puts the old ones back)
	return s.applySwapped(ctx, "model groups",
		func() {
			s.nameMu.Lock() // after the additions judged by the groups in force are stored
			defer s.nameMu.Unlock()
			old = s.groups.Swap(&groups)
		},
		func() {
			s.groups.Store(old)
			if reserved {
				if err := s.opts.Store.Update(ctx, func(tx store.Tx) error { return reserveGroups(ctx, tx, *old) }); err != nil {
					s.log.ErrorContext(ctx, "deployments: reload: recording the model groups in force again", "err", err)
				}
			}
		},
		func() error {
			err := s.opts.Store.Update(ctx, func(tx store.Tx) error {
				if err := s.groupsFree(ctx, tx, groups); err != nil {
					return err
				}
				return reserveGroups(ctx, tx, groups)
			})
			reserved = err == nil
			return err
		})
}

// groupsFree fails with ErrNameTaken, naming the deployment, when a stored deployment's
// model_name is one of groups' names.
func (s *Service) groupsFree(ctx context.Context, r store.Reader, groups map[string]completions.ModelGroup) error {
	recs, err := s.records(ctx, r)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if _, ok := groups[r.ModelName]; ok {
			return fmt.Errorf("%w: the model group %q is the model_name of deployment %q stored through /model/new (delete it, or rename the group)", ErrNameTaken, r.ModelName, r.ID)
		}
	}
	return nil
}

// SetOtherProviders names the providers configured otherwise (--providers-config's
// entries, read anew on serve's SIGHUP) in place of those the registry held at New: a
// deployment added or updated may not give its provider entry one of their names, and may
// take one no longer there. Built-in names (providers.Presets) are never counted. A name
// a stored deployment's provider entry has now is refused (ErrNameTaken): registering the
// file's entry would replace the deployment's; nothing changes then.
func (s *Service) SetOtherProviders(names []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := map[string]bool{}
	for _, name := range names {
		if isPreset(name) {
			continue
		}
		if slices.Contains(s.ownNames, name) {
			return fmt.Errorf("%w: the provider %q is the provider entry of a deployment stored through /model/new (delete that deployment, or rename the entry)", ErrNameTaken, name)
		}
		next[name] = true
	}
	s.foreign.Store(&next)
	return nil
}

// isPreset reports whether name is a built-in provider's (providers.Presets).
func isPreset(name string) bool {
	return slices.ContainsFunc(providers.Presets(), func(p providers.Preset) bool { return p.Name == name })
}
