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

// storeFlags choose the database — the embedded bbolt file under --data (one process), or
// a PostgreSQL database shared by every replica and worker, jobs included (River queue) —
// and how many jobs this process runs.
type storeFlags struct {
	DataDir string
	// URL is --store: "" for bbolt, or a postgres:// (postgresql://) URL.
	URL    string
	Schema string
	// Workers is how many training and how many optimization jobs this process runs at
	// once; with PostgreSQL 0 runs none (an HTTP-only replica).
	Workers int
	// JobStaleAfter is how long a running job's heartbeat may stay silent before its
	// worker counts as dead and the job runs again elsewhere (PostgreSQL only).
	JobStaleAfter time.Duration
}

func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.DataDir, "data", "./switchyard-data", "directory for the bbolt database file (when --store is not PostgreSQL)")
	fs.StringVar(&f.URL, "store", "", "database: empty for the bbolt file under --data (one process), or postgres://user:pass@host/db to share one PostgreSQL database between replicas and workers (jobs then run on a shared PostgreSQL queue)")
	fs.StringVar(&f.Schema, "store-schema", "", "PostgreSQL schema for Switchyard's tables (created if missing; default: the connection's search_path, normally public)")
}

// registerJobs defines the job worker flags (serve and worker; not cleanup, which runs
// no jobs).
func (f *storeFlags) registerJobs(fs *flag.FlagSet) {
	fs.IntVar(&f.Workers, "workers", 1, "training jobs, optimization jobs and batches this process runs at once (each); with a postgres --store, 0 runs none here (an HTTP-only replica) and jobs run on the other processes")
	fs.DurationVar(&f.JobStaleAfter, "job-stale-after", riverqueue.DefaultStaleAfter, "with a postgres --store: how long a running job's heartbeat may stay silent before its worker counts as dead; the job then runs again on another worker about 1.5 times this later; a slow job with a live worker is never run twice")
}

// postgres reports whether the flags select PostgreSQL.
func (f *storeFlags) postgres() bool {
	s := strings.ToLower(f.URL)
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// check validates the flags before anything is opened.
func (f *storeFlags) check() error {
	if f.URL != "" && !f.postgres() {
		return fmt.Errorf("--store %q: give a postgres:// URL, or leave it empty for the bbolt file under --data", redactURL(f.URL))
	}
	if f.Workers < 0 {
		return fmt.Errorf("--workers must be 0 or more, got %d", f.Workers)
	}
	if f.Workers == 0 && !f.postgres() {
		return errors.New("--workers must be at least 1 with the bbolt store (0, an HTTP-only replica, needs a postgres --store whose other processes run the jobs)")
	}
	if f.JobStaleAfter <= 0 {
		return errors.New("--job-stale-after must be positive")
	}
	return nil
}

// defaultPoolConns is the PostgreSQL connection pool of a process unless the --store URL
// sets pool_max_conns.
const defaultPoolConns = 16

// backend is the opened store and, for PostgreSQL, the job queue shared by every process.
type backend struct {
	store *store.Store
	// queue is nil with bbolt: the services then run jobs on their in-process pools.
	queue *riverqueue.Queue
	// bolt is the bbolt file's driver (nil with PostgreSQL), for serve's backups.
	bolt *boltstore.Driver
	// where describes the store for logs (never the password).
	where string
}

// Close closes the store.
func (b *backend) Close() error { return b.store.Close() }

// open opens the store --store names (bbolt under --data by default) and, for PostgreSQL,
// the River job queue on the same database (running River's migrations). wrap, when not
// nil, wraps the store's driver (telemetry's timing); log receives the queue's warnings.
func (f *storeFlags) open(ctx context.Context, wrap func(store.Driver) store.Driver, log *slog.Logger) (*backend, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	if wrap == nil {
		wrap = func(d store.Driver) store.Driver { return d }
	}
	if !f.postgres() {
		path := filepath.Join(f.DataDir, "switchyard.db")
		d, err := boltstore.OpenDriver(path, boltstore.Options{Logger: log})
		if err != nil {
			return &backend{where: path}, err
		}
		return &backend{store: store.New(wrap(d)), bolt: d, where: path}, nil
	}
	where := redactURL(f.URL)
	opts := pgstore.Options{Schema: f.Schema}
	if !strings.Contains(f.URL, "pool_max_conns") {
		// pgxpool's default (the CPU count, at least 4) is sized for a client; a replica
		// serves concurrent requests and the job queue holds connections of its own.
		opts.MaxConns = defaultPoolConns
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d, err := connectRetrying(ctx, storeConnectWait, storeConnectRetry, log, where, func() (*pgstore.Driver, error) {
		return pgstore.OpenDriver(ctx, f.URL, opts)
	})
	if err != nil {
		return nil, fmt.Errorf("--store %s: %w", where, err)
	}
	st := store.New(wrap(d))
	q, err := riverqueue.Open(ctx, d.Pool(), riverqueue.Options{StaleAfter: f.JobStaleAfter, Logger: log, Schema: f.Schema})
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("--store %s: job queue: %w", where, err)
	}
	return &backend{store: st, queue: q, where: where}, nil
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
