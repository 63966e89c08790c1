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
func (f *storeFlags) open(ctx context.Context) (st *store.Store, where string, err error) {
	if err := f.check(); err != nil {
		return nil, "", err
	}
	if f.postgres() {
		st, err := pgstore.Open(ctx, f.URL, pgstore.Options{Schema: f.Schema})
		if err != nil {
			return nil, "", fmt.Errorf("--store %s: %w", redactURL(f.URL), err)
		}
		return st, redactURL(f.URL), nil
	}
	path := filepath.Join(f.DataDir, "switchyard.db")
	st, err = boltstore.Open(path, boltstore.Options{})
	return st, path, err
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
