package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

// wiring builds the capabilities `serve` plugs into the server.
type wiring struct {
	cfg   *serveConfig
	store *store.Store
	log   *slog.Logger

	registry *providers.Registry
	catalog  *providers.Catalog
	gateway  *completions.Gateway
}

func (w *wiring) options(ctx context.Context) ([]server.Option, error) {
	var err error
	popts := providers.Options{Logger: w.log}
	if w.cfg.ProvidersConfig != "" {
		w.registry, err = providers.FromConfigFile(w.cfg.ProvidersConfig, os.Getenv, popts)
		if err != nil {
			return nil, fmt.Errorf("--providers-config: %w", err)
		}
	} else {
		w.registry = providers.FromEnv(os.Getenv, popts)
	}
	if w.cfg.PricesFile != "" {
		w.catalog, err = providers.LoadCatalog(w.cfg.PricesFile)
		if err != nil {
			return nil, fmt.Errorf("--prices-file: %w", err)
		}
	} else {
		w.catalog = providers.DefaultCatalog()
	}
	w.gateway, err = completions.New(completions.Options{
		Providers: w.registry,
		Prices:    w.catalog,
		Store:     w.store,
		Logger:    w.log,
	})
	if err != nil {
		return nil, err
	}
	selector := routing.NewSelector(routing.Options{
		Store:   w.store,
		Catalog: routing.ProvidersCatalog(w.catalog),
		Logger:  w.log,
	})
	return []server.Option{
		server.Completions(w.gateway),
		server.ModelSelection(selector),
	}, nil
}
