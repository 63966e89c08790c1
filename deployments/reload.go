package deployments

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchyard-ai/switchyard/litellmconfig"
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
	s.mu.Lock()
	old := s.file.Load()
	s.file.Store(&configFile{config: config, ids: idSet(cfg)})
	s.applied = "" // applied again whether or not the stored deployments changed
	s.mu.Unlock()
	err = s.Sync(ctx)
	if err == nil {
		return nil
	}
	s.mu.Lock()
	s.file.Store(old)
	s.applied = ""
	s.mu.Unlock()
	if rerr := s.Sync(ctx); rerr != nil {
		s.log.ErrorContext(ctx, "deployments: reload: applying the config in force again", "err", rerr)
	}
	return fmt.Errorf("deployments: reload: %w", err)
}
