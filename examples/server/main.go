// Command server embeds the Switchyard HTTP server in a program of your own, on the
// in-memory store: model selection, completions across the providers configured in the
// environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, ... and *_BASE_URL), and
// custom router training and prediction. Everything is lost when it stops; for a
// persistent server with every capability, run `switchyard serve`.
//
//	go run ./examples/server --addr 127.0.0.1:8080
//
// It prints an API key to use as SERVICE_API_KEY (or takes one from SWITCHYARD_API_KEYS).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/trainer"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	allowLocal := flag.Bool("allow-local-urls", false, "let dataset URLs point at loopback/private addresses and file://")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	err := run(ctx, config{addr: *addr, allowLocal: *allowLocal, getenv: os.Getenv, log: log}, os.Stdout, nil)
	if err != nil {
		log.Error("server", "err", err)
		os.Exit(1)
	}
}

type config struct {
	addr       string
	allowLocal bool
	getenv     func(string) string
	log        *slog.Logger
}

// run serves until ctx ends. ready, when not nil, receives the listening address and the key.
func run(ctx context.Context, cfg config, out io.Writer, ready func(addr, key string)) error {
	st := memstore.New()
	defer st.Close()

	opts, err := capabilities(ctx, cfg, st)
	if err != nil {
		return err
	}
	var keys []string
	for _, k := range strings.Split(cfg.getenv("SWITCHYARD_API_KEYS"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	srv, err := server.New(server.Config{Store: st, APIKeys: keys, Logger: cfg.log, Version: "example"}, opts...)
	if err != nil {
		return err
	}
	key := ""
	if len(keys) > 0 {
		key = keys[0]
	} else {
		// A key kept in the (in-memory) store, printed once.
		if key, err = srv.Auth().CreateKey(ctx, "examples/server"); err != nil {
			return err
		}
		fmt.Fprintf(out, "API key (export SERVICE_API_KEY=...):\n\n    %s\n\n", key)
	}

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "listening on http://%s (Ctrl-C stops)\n", ln.Addr())
	if ready != nil {
		ready(ln.Addr().String(), key)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		srv.Close(context.Background())
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return srv.Close(sctx)
}

// capabilities builds the server options: completions over the providers configured in the
// environment, custom router training and prediction, and model selection priced from the
// same catalogue, with trained routers usable as preference_id.
func capabilities(ctx context.Context, cfg config, st *store.Store) ([]server.Option, error) {
	registry := providers.FromEnv(cfg.getenv, providers.Options{Logger: cfg.log})
	catalog := providers.DefaultCatalog()
	gateway, err := completions.New(completions.Options{Providers: registry, Prices: catalog, Store: st, Logger: cfg.log})
	if err != nil {
		return nil, err
	}
	routers, err := trainer.New(st, trainer.WithFetcher(&fetch.Fetcher{AllowLocal: cfg.allowLocal}), trainer.WithLogger(cfg.log))
	if err != nil {
		return nil, err
	}
	if err := routers.Start(ctx); err != nil {
		return nil, err
	}
	selector := routing.NewSelector(routing.Options{
		Store:        st,
		Catalog:      routing.ProvidersCatalog(catalog),
		CustomModels: routing.TrainerModels(routers),
		Logger:       cfg.log,
	})
	return []server.Option{
		server.Completions(gateway),
		server.CustomRouters(routers), // the server's Close closes the trainer
		server.ModelSelection(selector),
	}, nil
}
