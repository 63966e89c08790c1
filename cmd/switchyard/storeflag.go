package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// storeFlags choose the database: the embedded bbolt file under --data (one process), or a
// PostgreSQL database shared by every replica and worker.
type storeFlags struct {
	DataDir string
	URL     string
	Schema  string
}

func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.DataDir, "data", "./switchyard-data", "directory for the bbolt database file (when --store is not PostgreSQL)")
	fs.StringVar(&f.URL, "store", "", "database: empty for the bbolt file under --data (one process), or postgres://user:pass@host/db to share one PostgreSQL database between replicas and workers")
	fs.StringVar(&f.Schema, "store-schema", "", "PostgreSQL schema for Switchyard's tables (created if missing; default: the connection's search_path, normally public)")
}

// postgres reports whether the flags select PostgreSQL.
func (f *storeFlags) postgres() bool {
	return strings.HasPrefix(f.URL, "postgres://") || strings.HasPrefix(f.URL, "postgresql://")
}

// check rejects a --store value that is neither empty nor a PostgreSQL URL.
func (f *storeFlags) check() error {
	if f.URL != "" && !f.postgres() {
		return fmt.Errorf("--store %q: give a postgres:// URL, or leave it empty for the bbolt file under --data", redactURL(f.URL))
	}
	return nil
}

// open opens the selected store; where says what it is for logs (never the password).
// wrap, when not nil, wraps the driver (telemetry's timing).
func (f *storeFlags) open(ctx context.Context, wrap func(store.Driver) store.Driver) (st *store.Store, where string, err error) {
	if err := f.check(); err != nil {
		return nil, "", err
	}
	if wrap == nil {
		wrap = func(d store.Driver) store.Driver { return d }
	}
	if f.postgres() {
		d, err := pgstore.OpenDriver(ctx, f.URL, pgstore.Options{Schema: f.Schema})
		if err != nil {
			return nil, "", fmt.Errorf("--store %s: %w", redactURL(f.URL), err)
		}
		return store.New(wrap(d)), redactURL(f.URL), nil
	}
	path := filepath.Join(f.DataDir, "switchyard.db")
	d, err := boltstore.OpenDriver(path, boltstore.Options{})
	if err != nil {
		return nil, path, err
	}
	return store.New(wrap(d)), path, nil
}

// redactURL hides the password of a database URL.
func redactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return u
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		return u
	}
	return scheme + "://" + user + ":xxxxx" + rest[at:]
}
