package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue/riverqueue"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// storeFlags choose where serve and worker keep their data and how many jobs they run.
type storeFlags struct {
	// Store is "" for the bbolt file in --data, or a postgres:// (postgresql://) URL: a
	// PostgreSQL database shared by every process, jobs included (River queue).
	Store string
	// Workers is how many training and how many optimization jobs this process runs at
	// once; with PostgreSQL 0 runs none (an HTTP-only replica).
	Workers int
	// JobStaleAfter is how long a running job's heartbeat may stay silent before its
	// worker counts as dead and the job runs again elsewhere (PostgreSQL only).
	JobStaleAfter time.Duration
}

// register defines the flags on fs.
func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.Store, "store", "", "where data lives: empty for the bbolt file in --data (one process), or a postgres://user@host/db URL shared by every serve and worker process (jobs then run on a shared PostgreSQL queue)")
	fs.IntVar(&f.Workers, "workers", 1, "training jobs and optimization jobs this process runs at once (each); with a postgres --store, 0 runs none here (an HTTP-only replica) and jobs run on the other processes")
	fs.DurationVar(&f.JobStaleAfter, "job-stale-after", riverqueue.DefaultStaleAfter, "with a postgres --store: how long a running job's heartbeat may stay silent before its worker counts as dead; the job then runs again on another worker about 1.5 times this later; a slow job with a live worker is never run twice")
}

// shared reports whether --store names a PostgreSQL database.
func (f *storeFlags) shared() bool {
	s := strings.ToLower(f.Store)
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// check validates the flags before anything is opened.
func (f *storeFlags) check() error {
	if f.Store != "" && !f.shared() {
		return fmt.Errorf("--store must be empty (the bbolt file in --data) or a postgres:// URL, got %q", f.Store)
	}
	if f.Workers < 0 || (f.Workers == 0 && !f.shared()) {
		return errors.New("--workers must be at least 1 with the bbolt store (0, an HTTP-only replica, needs a postgres --store whose other processes run the jobs)")
	}
	if f.JobStaleAfter <= 0 {
		return errors.New("--job-stale-after must be positive")
	}
	return nil
}

// backend is the opened store and, for PostgreSQL, the job queue shared by every process.
type backend struct {
	store *store.Store
	// queue is nil with bbolt: the services then run jobs on their in-process pools.
	queue *riverqueue.Queue
	// where describes the store for logs (never the password).
	where string
}

// openBackend opens the store --store names (bbolt in dataDir by default) and, for
// PostgreSQL, the River job queue on the same database (running River's migrations).
func openBackend(ctx context.Context, f *storeFlags, dataDir string, log *slog.Logger) (*backend, error) {
	if !f.shared() {
		path := filepath.Join(dataDir, "switchyard.db")
		st, err := boltstore.Open(path, boltstore.Options{})
		if err != nil {
			return nil, err
		}
		return &backend{store: st, where: path}, nil
	}
	d, err := pgstore.OpenDriver(ctx, f.Store, pgstore.Options{})
	if err != nil {
		return nil, fmt.Errorf("--store: %w", err)
	}
	st := store.New(d)
	q, err := riverqueue.Open(ctx, d.Pool(), riverqueue.Options{StaleAfter: f.JobStaleAfter, Logger: log})
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("--store: job queue: %w", err)
	}
	cfg := d.Pool().Config().ConnConfig
	return &backend{store: st, queue: q, where: fmt.Sprintf("postgres %s@%s/%s", cfg.User, cfg.Host, cfg.Database)}, nil
}

// Close closes the store.
func (b *backend) Close() error { return b.store.Close() }
