package main

import (
	"context"
	"log/slog"

	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

// wiring builds the capabilities `serve` plugs into the server.
type wiring struct {
	cfg   *serveConfig
	store *store.Store
	log   *slog.Logger
}

func (w *wiring) options(ctx context.Context) ([]server.Option, error) {
	var opts []server.Option
	return opts, nil
}
