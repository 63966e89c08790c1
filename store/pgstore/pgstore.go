// Package pgstore is the PostgreSQL store driver: one database shared by many Switchyard
// processes (gateway replicas, job workers).
//
// Records live in one table keyed by (collection, key) with the key as bytea, so List
// returns byte order as every driver must, and prefix listing and paging are ranges on the
// primary key's index. Update runs fn in a SERIALIZABLE transaction and runs it again when
// PostgreSQL reports a serialization failure or a deadlock, so read-modify-write updates
// from any number of processes never lose a write (fn must act only through its Tx, as the
// store.Driver contract says). Writers of a record many share (a budget account) name it
// to UpdateLocked (store.RecordLocker): they then wait for each other on an advisory lock
// of the record instead of aborting each other, which under enough contention outran
// the retries (and a run again after a failure waits for the records it touched).
//
// Open applies the schema migrations embedded in the binary (migrations/NNNN_*.sql) in
// order, each once, under an advisory lock so that replicas starting together do not race;
// the applied versions are kept in switchyard_schema_migrations.
package pgstore

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/internal/nesting"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Options configure Open. The zero value is ready to use.
type Options struct {
	// Schema is the PostgreSQL schema that holds Switchyard's tables, created when missing;
	// "" uses the connection's default search_path (normally public). Several deployments
	// (or tests) may share one database through different schemas.
	Schema string
	// MaxConns caps the connection pool; 0 keeps pgxpool's default (4 or the CPU count).
	MaxConns int32
	// MaxRetries is how many times Update runs fn again after a serialization failure or a
	// deadlock; 0 means DefaultMaxRetries.
	MaxRetries int
}

// DefaultMaxRetries is Update's default number of re-runs after a serialization failure.
const DefaultMaxRetries = 20

// migrationLock is the advisory lock key held while migrations run ("SWYD").
const migrationLock = 0x53575944

// Open connects to the database at dsn (a postgres:// URL or a key=value string, as
// libpq takes), applies pending migrations and returns a Store on it.
func Open(ctx context.Context, dsn string, opts Options) (*store.Store, error) {
	d, err := OpenDriver(ctx, dsn, opts)
	if err != nil {
		return nil, err
	}
	return store.New(d), nil
}

// Driver is the PostgreSQL store.Driver. It is safe for concurrent use.
type Driver struct {
	pool    *pgxpool.Pool
	schema  string // Options.Schema, in the records' lock keys
	retries int
	closed  atomic.Bool
	// lost are the transactions whose commit got no answer, for CommitStatus.
	lost lostTxs
	// stopping ends, at Close, the goroutines ending lost sessions (endLostLater), counted
	// in background; bgMu orders their start before Close's wait.
	stopping   context.Context
	stop       context.CancelFunc
	bgMu       sync.Mutex
	background sync.WaitGroup
}

// OpenDriver connects and migrates, as Open does, and returns the driver itself.
func OpenDriver(ctx context.Context, dsn string, opts Options) (*Driver, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w: %w", store.ErrInvalid, err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if opts.Schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = opts.Schema
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: connect: %w", err)
	}
	d := &Driver{pool: pool, schema: opts.Schema, retries: opts.MaxRetries}
	d.stopping, d.stop = context.WithCancel(context.Background())
	if d.retries <= 0 {
		d.retries = DefaultMaxRetries
	}
	if err := d.migrate(ctx, opts.Schema); err != nil {
		pool.Close()
		return nil, unwritable(err)
	}
	return d, nil
}

// Pool returns the driver's connection pool, for components that share the database (the
// job queue).
func (d *Driver) Pool() *pgxpool.Pool { return d.pool }

// migration is one embedded schema change.
type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations() ([]migration, error) {
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, f := range files {
		base := strings.TrimPrefix(f, "migrations/")
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("pgstore: migration %s is not named NNNN_name.sql", base)
		}
		b, err := migrations.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// Migrations lists the embedded migrations' file names in the order they apply.
func Migrations() []string {
	ms, _ := loadMigrations()
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.name
	}
	return names
}

// migrate applies the embedded migrations not applied yet, each in its own transaction,
// under a transaction-level advisory lock.
func (d *Driver) migrate(ctx context.Context, schema string) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	if d.migrated(ctx, ms) {
		// Nothing to apply: no lock, no DDL, so a replica also starts against a database
		// that refuses writes (a standby after a failover), answering reads, and its writes
		// ErrUnwritable until the database takes them again.
		return nil
	}
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLock)); err != nil {
		return fmt.Errorf("pgstore: migrate: lock: %w", err)
	}
	if schema != "" {
		if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize()); err != nil {
			return fmt.Errorf("pgstore: migrate: create schema %s: %w", schema, err)
		}
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS switchyard_schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	applied := map[int]bool{}
	rows, err := tx.Query(ctx, "SELECT version FROM switchyard_schema_migrations")
	if err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return fmt.Errorf("pgstore: migrate: %w", err)
		}
		applied[v] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	for _, m := range ms {
		if applied[m.version] {
			continue
		}
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return fmt.Errorf("pgstore: migration %s: %w", m.name, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO switchyard_schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
			return fmt.Errorf("pgstore: migration %s: %w", m.name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	return nil
}

// migrated reports whether every migration of ms is recorded as applied, by reading only
// (false on any error: migrate then does it the long way, under its lock).
func (d *Driver) migrated(ctx context.Context, ms []migration) bool {
	rows, err := d.pool.Query(ctx, "SELECT version FROM switchyard_schema_migrations")
	if err != nil {
		return false
	}
	applied := map[int]bool{}
	for rows.Next() {
		var v int
		if rows.Scan(&v) != nil {
			rows.Close()
			return false
		}
		applied[v] = true
	}
	rows.Close()
	if rows.Err() != nil {
		return false
	}
	for _, m := range ms {
		if !applied[m.version] {
			return false
		}
	}
	return true
}

// querier is what both the pool and a transaction offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

type notFoundError struct {
	c   store.Collection
	key string
}

func (e *notFoundError) Error() string        { return "store: " + string(e.c) + "/" + e.key + " not found" }
func (e *notFoundError) Is(target error) bool { return target == store.ErrNotFound }

func get(ctx context.Context, q querier, c store.Collection, key string) ([]byte, error) {
	var v []byte
	err := q.QueryRow(ctx, "SELECT value FROM switchyard_records WHERE collection = $1 AND key = $2", string(c), []byte(key)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &notFoundError{c, key}
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: get %s/%s: %w", c, key, err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// prefixEnd is the smallest byte string greater than every string with prefix p, or nil
// when there is none (p is all 0xff bytes).
func prefixEnd(p string) []byte {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return b[:i+1]
		}
	}
	return nil
}

func list(ctx context.Context, q querier, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	sql := "SELECT key, value FROM switchyard_records WHERE collection = $1"
	args := []any{string(c)}
	if opts.Descending {
		return listDescending(ctx, q, c, opts, sql, args)
	}
	lower, strict := opts.Prefix, false
	if opts.After != "" && opts.After >= lower {
		lower, strict = opts.After, true
	}
	if lower != "" {
		args = append(args, []byte(lower))
		op := ">="
		if strict {
			op = ">"
		}
		sql += fmt.Sprintf(" AND key %s $%d", op, len(args))
	}
	if opts.Prefix != "" {
		if end := prefixEnd(opts.Prefix); end != nil {
			args = append(args, end)
			sql += fmt.Sprintf(" AND key < $%d", len(args))
		}
	}
	sql += " ORDER BY key"
	return query(ctx, q, c, opts, sql, args)
}

// listDescending is list with opts.Descending.
func listDescending(ctx context.Context, q querier, c store.Collection, opts store.ListOptions, sql string, args []any) ([]store.Entry, error) {
	if opts.Prefix != "" {
		args = append(args, []byte(opts.Prefix))
		sql += fmt.Sprintf(" AND key >= $%d", len(args))
		if end := prefixEnd(opts.Prefix); end != nil {
			args = append(args, end)
			sql += fmt.Sprintf(" AND key < $%d", len(args))
		}
	}
	if opts.After != "" {
		args = append(args, []byte(opts.After))
		sql += fmt.Sprintf(" AND key < $%d", len(args))
	}
	sql += " ORDER BY key DESC"
	return query(ctx, q, c, opts, sql, args)
}

// query runs a listing's SQL with opts.Limit.
func query(ctx context.Context, q querier, c store.Collection, opts store.ListOptions, sql string, args []any) ([]store.Entry, error) {
	if opts.Limit > 0 {
		args = append(args, opts.Limit)
		sql += fmt.Sprintf(" LIMIT $%d", len(args))
	}
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list %s: %w", c, err)
	}
	defer rows.Close()
	var out []store.Entry
	for rows.Next() {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("pgstore: list %s: %w", c, err)
		}
		if v == nil {
			v = []byte{}
		}
		out = append(out, store.Entry{Key: string(k), Value: v})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: list %s: %w", c, err)
	}
	return out, nil
}

const putSQL = `INSERT INTO switchyard_records (collection, key, value) VALUES ($1, $2, $3)
		ON CONFLICT (collection, key) DO UPDATE SET value = EXCLUDED.value`

func put(ctx context.Context, q querier, c store.Collection, key string, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	if _, err := q.Exec(ctx, putSQL, string(c), []byte(key), value); err != nil {
		return fmt.Errorf("pgstore: put %s/%s: %w", c, key, err)
	}
	return nil
}

// firstWriteReturning is what a transaction's first write reads back: its id
// (txid_current, assigned by the write anyway) and its session's server process
// (pg_backend_pid), in the same round trip as the write. Should the commit's answer be
// lost, CommitStatus learns the outcome by the id, and ends by the process a session
// the server still holds open waiting for that commit (lostTxs).
const firstWriteReturning = " RETURNING txid_current(), pg_backend_pid()"

// putFirst is put as a transaction's first write, which also reads the transaction's id
// into xid and its backend's process id into pid (firstWriteReturning).
func putFirst(ctx context.Context, q querier, c store.Collection, key string, value []byte, xid *int64, pid *int32) error {
	if value == nil {
		value = []byte{}
	}
	if err := q.QueryRow(ctx, putSQL+firstWriteReturning, string(c), []byte(key), value).Scan(xid, pid); err != nil {
		return fmt.Errorf("pgstore: put %s/%s: %w", c, key, err)
	}
	return nil
}

// delFirst is del as a transaction's first write (no Put before it), which reads the
// transaction's id and backend into xid and pid as putFirst does when it deletes a row;
// one that deletes nothing writes nothing, and leaves xid 0.
func delFirst(ctx context.Context, q querier, c store.Collection, key string, xid *int64, pid *int32) error {
	err := q.QueryRow(ctx, "DELETE FROM switchyard_records WHERE collection = $1 AND key = $2"+firstWriteReturning, string(c), []byte(key)).Scan(xid, pid)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("pgstore: delete %s/%s: %w", c, key, err)
	}
	return nil
}

func del(ctx context.Context, q querier, c store.Collection, key string) error {
	if _, err := q.Exec(ctx, "DELETE FROM switchyard_records WHERE collection = $1 AND key = $2", string(c), []byte(key)); err != nil {
		return fmt.Errorf("pgstore: delete %s/%s: %w", c, key, err)
	}
	return nil
}

func (d *Driver) open() error {
	if d.closed.Load() {
		return store.ErrClosed
	}
	return nil
}

// Get implements store.Reader.
func (d *Driver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	if err := d.open(); err != nil {
		return nil, err
	}
	return get(ctx, d.pool, c, key)
}

// List implements store.Reader.
func (d *Driver) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	if err := d.open(); err != nil {
		return nil, err
	}
	return list(ctx, d.pool, c, opts)
}

// Put implements store.Writer.
func (d *Driver) Put(ctx context.Context, c store.Collection, key string, value []byte) error {
	if err := d.open(); err != nil {
		return err
	}
	if err := notNested("put"); err != nil {
		return err
	}
	return unwritable(put(ctx, d.pool, c, key, value))
}

// Delete implements store.Writer.
func (d *Driver) Delete(ctx context.Context, c store.Collection, key string) error {
	if err := d.open(); err != nil {
		return err
	}
	if err := notNested("delete"); err != nil {
		return err
	}
	return unwritable(del(ctx, d.pool, c, key))
}

// unwritable marks err with store.ErrUnwritable when PostgreSQL refused the write for
// want of space (disk_full, 53100: the volume or a managed database's storage is full) or
// because the session is read-only (read_only_sql_transaction, 25006: a standby reached
// after a failover, or default_transaction_read_only set on the database or its role), so
// the server answers 503 with Retry-After, as for a full disk under the bbolt file; both
// clear without a restart of this process.
func unwritable(err error) error {
	var pe *pgconn.PgError
	if err == nil || errors.Is(err, store.ErrUnwritable) || !errors.As(err, &pe) || (pe.Code != "53100" && pe.Code != "25006") {
		return err
	}
	return fmt.Errorf("%w: %w", store.ErrUnwritable, err)
}

// retryable reports a failure PostgreSQL resolves by running the transaction again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// retryPause is how long Update waits before it runs a transaction again: a random 1 to
// 8 ms, drawn with intN (rand.IntN), so that the transactions of replicas that collided on
// one record (a budget account every request writes) do not run again in step and collide
// again, as a fixed sequence of pauses had them do.
func retryPause(intN func(n int) int) time.Duration {
	return time.Duration(1+intN(8)) * time.Millisecond
}

// Update implements store.Driver: fn runs in one SERIALIZABLE transaction, again (up to
// Options.MaxRetries times, after a short randomised pause: retryPause) when PostgreSQL
// aborts it as a serialization failure or a deadlock. A run again first takes the locks
// of the records the aborted run read or wrote (as UpdateLocked names them), so it waits
// for the transactions of UpdateLocked on those records rather than losing to them again.
func (d *Driver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return d.UpdateLocked(ctx, nil, fn)
}

// UpdateLocked implements store.RecordLocker: Update, each run of fn made while this
// session holds a PostgreSQL advisory lock per record of locks (keyed by a hash of the
// schema, collection and key), taken in one order by every process before the
// transaction starts and released after it ends. A transaction that waited for such a
// lock starts after the one that held it committed, so transactions naming one record
// never overlap and never abort each other: under contention they wait, in turn, instead
// of running again up to MaxRetries times and failing. Their other records are as
// Update's (a serialization failure there still runs fn again).
//
// Called from inside fn of another Update or UpdateLocked of a pgstore driver of this
// process (any: two may share a database) on the same goroutine (which store.Driver
// forbids), it returns an error matching store.ErrNested at once, as Put and Delete do
// there: waiting would be for ever, on the advisory lock of a record the outer run holds
// (one it names, or at a run again one it touched) or on a row it wrote, while the outer
// run waits for it to return. Inside another kind of driver's function it goes on, unless
// a pgstore Update is running its function on another goroutine at the time
// (store/internal/nesting cannot tell the two apart then).
func (d *Driver) UpdateLocked(ctx context.Context, locks []store.Ref, fn func(tx store.Tx) error) error {
	if err := d.open(); err != nil {
		return err
	}
	if err := notNested("update"); err != nil {
		return err
	}
	ids := d.lockIDs(locks, nil)
	for attempt := 0; ; attempt++ {
		touched, err := d.runTx(ctx, ids, fn)
		if err == nil || !retryable(err) || attempt >= d.retries {
			return unwritable(err)
		}
		// The run lost to another transaction on a record it touched: the next waits for
		// the lockers of those records, so it does not lose to them again.
		ids = d.lockIDs(locks, touched)
		pause := retryPause(rand.IntN)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}

// nested marks the functions of every pgstore Driver's Updates, one Marker for all: two
// drivers of the process may be on one database (and schema), where a write of one waits
// for the rows and advisory locks the other's transaction holds.
var nested nesting.Marker

// notNested returns an error matching store.ErrNested when the calling goroutine is inside
// an Update's function of a pgstore Driver (store/internal/nesting): a write (what: update,
// put, delete) on a connection of its own there would wait for ever on a row or an
// advisory lock the Update's transaction holds.
func notNested(what string) error {
	if nested.Inside() {
		return fmt.Errorf("pgstore: %s: %w", what, store.ErrNested)
	}
	return nil
}

// lockID is the key of a record's advisory lock: PostgreSQL's two-int4 form, whose key
// space is apart from the single-bigint one (migrationLock, River's locks).
type lockID struct{ hi, lo int32 }

// maxLocks bounds the locks a run again takes of the records its aborted run touched
// (those named to UpdateLocked always count).
const maxLocks = 64

// lockIDs returns the advisory locks of the records of locks and then of touched (as
// many as maxLocks allows), in ascending order without repeats: every session takes its
// locks in that order, so two sessions never each wait for a lock the other holds.
func (d *Driver) lockIDs(locks, touched []store.Ref) []lockID {
	if len(locks)+len(touched) == 0 {
		return nil
	}
	ids := make([]lockID, 0, len(locks)+len(touched))
	for _, r := range locks {
		ids = append(ids, d.lockOf(r))
	}
	for _, r := range touched {
		if len(ids) >= max(maxLocks, len(locks)) {
			break
		}
		ids = append(ids, d.lockOf(r))
	}
	slices.SortFunc(ids, func(a, b lockID) int { return cmp.Or(cmp.Compare(a.hi, b.hi), cmp.Compare(a.lo, b.lo)) })
	return slices.Compact(ids)
}

// lockOf is the advisory lock of record r in this driver's schema (another schema's
// record of the same name is another lock; a collision of two records' hashes only makes
// their writers wait for each other).
func (d *Driver) lockOf(r store.Ref) lockID {
	h := fnv.New64a()
	h.Write([]byte(d.schema))
	h.Write([]byte{0})
	h.Write([]byte(r.Collection))
	h.Write([]byte{0})
	h.Write([]byte(r.Key))
	sum := h.Sum64()
	return lockID{hi: int32(sum >> 32), lo: int32(sum)}
}

// unlockTimeout bounds the release of a run's advisory locks when it could not go with
// its commit, made apart from the caller's context (a connection that cannot release
// them is closed, which does).
const unlockTimeout = 5 * time.Second

// advisorySQL is a statement running fn (pg_advisory_lock or pg_advisory_unlock) on
// each of ids, in ids' order, its keys written as literals: it goes in one simple-protocol
// message with the statements that begin or commit the transaction.
func advisorySQL(fn string, ids []lockID) string {
	var sql strings.Builder
	sql.WriteString("SELECT ")
	for i, id := range ids {
		if i > 0 {
			sql.WriteString(", ")
		}
		fmt.Fprintf(&sql, "%s(%d, %d)", fn, id.hi, id.lo)
	}
	return sql.String()
}

// runTx runs fn once in a SERIALIZABLE transaction and returns the records fn read or
// wrote when it failed.
func (d *Driver) runTx(ctx context.Context, ids []lockID, fn func(tx store.Tx) error) (touched []store.Ref, err error) {
	if len(ids) > 0 {
		return d.runLocked(ctx, ids, fn)
	}
	tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
	if err != nil {
		return nil, fmt.Errorf("pgstore: begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	t := &pgTx{tx: tx}
	if err := nested.Run(fn, t); err != nil {
		return t.touched, err
	}
	if err := tx.Commit(ctx); err != nil {
		return t.touched, d.commitError(err, t)
	}
	return nil, nil
}

// commitError is the error of a commit that failed: one the server answered (a
// serialization failure, a full disk; its transaction rolled back) as it is, else (the
// connection broke or the context ended before the answer came) marked with
// store.ErrCommitUnknown, the transaction maybe committed: a *store.CommitUnknownError
// naming the transaction when its id is known (xid, read by its first Put), for
// CommitStatus.
func commitError(err error, xid int64) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) || errors.Is(err, pgx.ErrTxCommitRollback) {
		return fmt.Errorf("pgstore: commit: %w", err)
	}
	if xid != 0 {
		return fmt.Errorf("pgstore: commit: %w", &store.CommitUnknownError{Token: strconv.FormatInt(xid, 10), Err: err})
	}
	return fmt.Errorf("pgstore: commit: %w: %w", store.ErrCommitUnknown, err)
}

// commitError is the package's commitError for t's commit, which also remembers t's
// transaction and session as lost (lostTxs) when the commit got no answer.
func (d *Driver) commitError(err error, t *pgTx) error {
	err = commitError(err, t.xid)
	if cu := (*store.CommitUnknownError)(nil); errors.As(err, &cu) && t.pid != 0 {
		d.lost.add(t.xid, t.pid)
		d.endLostLater(t.xid, t.pid)
	}
	return err
}

// CommitStatus implements store.CommitChecker: whether the transaction token names (the
// id of an Update's transaction whose commit got no answer: a *store.CommitUnknownError's
// Token) committed, by PostgreSQL's txid_status. One still running is an error matching
// store.ErrCommitUnknown; one too old to tell (txid_status NULL: its commit log is gone)
// or an id the database has not reached yet (after a failover to a standby that never saw
// it) one matching store.ErrInvalid, as the database will never tell it.
//
// A transaction still running whose commit this driver sent on a session it has lost
// (the connection cut between them: the server never got the COMMIT, and holds the
// session open, idle in the transaction, until its TCP keepalive finds the client gone,
// two hours by default) is ended here (and by the driver itself soon after the loss,
// endLostLater, as the session holds the rows it wrote and UpdateLocked's advisory locks,
// which every other writer of those records waits for): its session's server process, read with its id at
// its first write, is terminated (pg_terminate_backend) when it is still that
// transaction's and still idle in it, and the answer, asked again, is then known at once
// (aborted; committed had the COMMIT reached it after all). A session busy (the COMMIT
// being processed) is left alone; one the driver's role may not terminate leaves the
// answer to the keepalive, as before.
func (d *Driver) CommitStatus(ctx context.Context, token string) (bool, error) {
	if err := d.open(); err != nil {
		return false, err
	}
	xid, err := strconv.ParseInt(token, 10, 64)
	if err != nil || xid <= 0 {
		return false, fmt.Errorf("pgstore: commit status: %w: %q names no transaction", store.ErrInvalid, token)
	}
	committed, err := d.txidStatus(ctx, xid)
	if err == nil || errors.Is(err, store.ErrInvalid) {
		d.lost.forget(xid) // told, or never will be
	}
	if !errors.Is(err, store.ErrCommitUnknown) {
		return committed, err
	}
	pid, ok := d.lost.pid(xid)
	if !ok {
		return false, err
	}
	ended, terr := d.endLostSession(ctx, xid, pid)
	if terr != nil || !ended {
		return false, errors.Join(err, terr)
	}
	// The server process ends its transaction (aborting it) as it exits, a moment after
	// the signal: ask until it has (or, past endedWait, leave it to the next question).
	ctx, cancel := context.WithTimeout(ctx, endedWait)
	defer cancel()
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		committed, err = d.txidStatus(ctx, xid)
		if err == nil || errors.Is(err, store.ErrInvalid) {
			d.lost.forget(xid)
		}
		if !errors.Is(err, store.ErrCommitUnknown) {
			return committed, err
		}
		select {
		case <-ctx.Done():
			return false, errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// endedWait bounds how long CommitStatus waits for a lost session it terminated to end.
const endedWait = 5 * time.Second

// txidStatus is txid_status(xid) as CommitStatus answers it.
func (d *Driver) txidStatus(ctx context.Context, xid int64) (bool, error) {
	return txidStatusOn(ctx, d.pool, xid)
}

// txidStatusOn is txidStatus asked on q (the pool, or a connection of its own).
func txidStatusOn(ctx context.Context, q querier, xid int64) (bool, error) {
	var status *string
	if err := q.QueryRow(ctx, "SELECT txid_status($1)", xid).Scan(&status); err != nil {
		if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "22023" {
			// "transaction ID … is in the future": the id is not this database's (a
			// failover to a standby that never saw it). Asked again later, once the
			// database's ids pass it, it would name another transaction.
			return false, fmt.Errorf("pgstore: commit status: %w: transaction %d is not this database's: %w", store.ErrInvalid, xid, err)
		}
		return false, fmt.Errorf("pgstore: commit status of transaction %d: %w", xid, err)
	}
	switch {
	case status == nil:
		// "Too old" (its commit log truncated away, or an id naming no transaction): the
		// answer is gone for good, asking again would never tell.
		return false, fmt.Errorf("pgstore: commit status of transaction %d: %w: too old to tell, never will", xid, store.ErrInvalid)
	case *status == "committed":
		return true, nil
	case *status == "aborted":
		return false, nil
	default:
		return false, fmt.Errorf("pgstore: commit status of transaction %d: %w: %s", xid, store.ErrCommitUnknown, *status)
	}
}

// runLocked is runTx holding the session advisory locks ids: taken before the
// transaction begins (in the message that begins it), so that its snapshot sees the
// commits of the transactions that held them, and released in the message that commits
// it, so a hot record's writers wait no round trip longer than their transactions.
func (d *Driver) runLocked(ctx context.Context, ids []lockID, fn func(tx store.Tx) error) (touched []store.Ref, err error) {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("pgstore: begin: %w", err)
	}
	held := true // the locks, until released or the session closed
	defer func() {
		if held && !conn.Conn().IsClosed() {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
			if _, err := conn.Exec(uctx, advisorySQL("pg_advisory_unlock", ids)); err != nil {
				conn.Conn().Close(uctx) // ending the session releases them
			}
			cancel()
		}
		conn.Release() // a closed connection leaves the pool
	}()
	// The locks are taken in a transaction of their own (they outlive it), so that the
	// SERIALIZABLE one begins, and takes its snapshot, once they are held.
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{BeginQuery: "BEGIN; " + advisorySQL("pg_advisory_lock", ids) + "; COMMIT; BEGIN ISOLATION LEVEL SERIALIZABLE"})
	if err != nil {
		// Some locks may be held and a transaction open: ending the session ends both.
		conn.Conn().Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("pgstore: lock and begin: %w", err)
	}
	t := &pgTx{tx: tx}
	if err := nested.Run(fn, t); err != nil {
		tx.Rollback(context.WithoutCancel(ctx))
		return t.touched, err
	}
	// The commit and the locks' release in one message; when the commit fails the rest is
	// skipped (the deferred release then runs), and pgx's Tx is not used again.
	rs, err := conn.Conn().PgConn().Exec(ctx, "COMMIT; "+advisorySQL("pg_advisory_unlock", ids)).ReadAll()
	if len(rs) == 2 && rs[1].Err == nil {
		held = false
	}
	switch {
	case len(rs) > 0 && rs[0].Err != nil:
		err = rs[0].Err
	case len(rs) > 0 && rs[0].CommandTag.String() == "ROLLBACK":
		err = pgx.ErrTxCommitRollback // a statement of fn failed and fn went on
	case len(rs) > 0:
		return nil, nil // committed (an error of the release alone is the deferred release's)
	}
	if conn.Conn().PgConn().TxStatus() != 'I' {
		conn.Conn().Close(context.WithoutCancel(ctx)) // the commit's outcome unknown: as pgx's Commit
	}
	return t.touched, d.commitError(err, t)
}

// Close closes the pool. Later calls return store.ErrClosed.
func (d *Driver) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	d.bgMu.Lock() // no endLostLater starts after this
	d.bgMu.Unlock()
	d.stop()
	d.background.Wait()
	d.pool.Close()
	return nil
}

// pgTx is the store.Tx of one run of an Update function.
type pgTx struct {
	tx pgx.Tx
	// touched are the records the run read or wrote (by key), for the locks of a run again.
	touched []store.Ref
	// xid is the transaction's id, read by its first write (0: none yet), and pid its
	// session's server process.
	xid int64
	pid int32
}

func (t *pgTx) touch(c store.Collection, key string) {
	if len(t.touched) < maxLocks {
		t.touched = append(t.touched, store.Ref{Collection: c, Key: key})
	}
}

func (t *pgTx) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	t.touch(c, key)
	return get(ctx, t.tx, c, key)
}

func (t *pgTx) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	return list(ctx, t.tx, c, opts)
}

func (t *pgTx) Put(ctx context.Context, c store.Collection, key string, value []byte) error {
	t.touch(c, key)
	if t.xid == 0 {
		return putFirst(ctx, t.tx, c, key, value, &t.xid, &t.pid)
	}
	return put(ctx, t.tx, c, key, value)
}

func (t *pgTx) Delete(ctx context.Context, c store.Collection, key string) error {
	t.touch(c, key)
	if t.xid == 0 {
		return delFirst(ctx, t.tx, c, key, &t.xid, &t.pid)
	}
	return del(ctx, t.tx, c, key)
}

// PgxTx returns the PostgreSQL transaction behind tx, a store.Tx that a Store on this
// driver passed to an Update function (wrappers with an Unwrap() store.Tx method are
// looked through), so that other writes to the same database — a job queue's insert —
// commit or roll back with the Update. ok is false for another driver's transaction.
func PgxTx(tx store.Tx) (ptx pgx.Tx, ok bool) {
	for tx != nil {
		if t, isPg := tx.(*pgTx); isPg {
			return t.tx, true
		}
		u, canUnwrap := tx.(interface{ Unwrap() store.Tx })
		if !canUnwrap {
			return nil, false
		}
		tx = u.Unwrap()
	}
	return nil, false
}
