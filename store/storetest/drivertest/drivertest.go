// Package drivertest gives tests outside the store packages every store driver to run on:
// memstore, bbolt and, when SWITCHYARD_TEST_POSTGRES names a database, PostgreSQL. A test
// that checks how a capability uses the store (an index kept with its records, a sweep
// that reads only what expired) runs once per backend with ForEach, so a driver's
// difference (transactions run again on PostgreSQL, byte order of keys) shows there
// rather than in production.
package drivertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// PostgresEnv names the environment variable that holds the test database's address
// (scripts/pg-test-cluster.sh start prints it; scripts/test.sh sets it).
const PostgresEnv = "SWITCHYARD_TEST_POSTGRES"

// Backend is one store driver a test runs on.
type Backend struct {
	// Name names the backend in subtest names: memstore, bbolt or postgres.
	Name string
	// Open returns a fresh, empty driver, closed when t ends. The postgres backend skips t
	// when PostgresEnv is not set.
	Open func(t *testing.T) store.Driver
	// Replica returns a driver for another process sharing d's database, closed when t
	// ends: on PostgreSQL a second connection pool on d's schema; the single-process
	// backends (memstore, bbolt) return d itself.
	Replica func(t *testing.T, d store.Driver) store.Driver
}

// Backends returns the backends every store-using test should pass.
func Backends() []Backend {
	return []Backend{
		{Name: "memstore", Open: func(*testing.T) store.Driver { return memstore.NewDriver() }, Replica: itself},
		{Name: "bbolt", Open: openBolt, Replica: itself},
		{Name: "postgres", Open: openPostgres, Replica: postgresReplica},
	}
}

// ForEach runs f as a subtest per backend, with a fresh driver each.
func ForEach(t *testing.T, f func(t *testing.T, d store.Driver)) {
	t.Helper()
	for _, b := range Backends() {
		t.Run(b.Name, func(t *testing.T) { f(t, b.Open(t)) })
	}
}

// PostgresDSN returns the test database's address, or skips t saying how to get one.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(PostgresEnv)
	if dsn == "" {
		t.Skip(PostgresEnv + " is not set: scripts/pg-test-cluster.sh start starts a throwaway PostgreSQL cluster and prints it, scripts/test.sh sets it (needs the Debian package postgresql)")
	}
	return dsn
}

var schemas atomic.Int64

// FreshSchema names a PostgreSQL schema no other test of this process uses.
func FreshSchema(prefix string) string {
	return fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), schemas.Add(1))
}

func openBolt(t *testing.T) store.Driver {
	t.Helper()
	// NoSync: a test's thousands of small commits need not each reach the disk.
	d, err := boltstore.OpenDriver(filepath.Join(t.TempDir(), "switchyard.db"), boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// itself is Replica of a backend one process holds.
func itself(_ *testing.T, d store.Driver) store.Driver { return d }

// pgSchemas maps the drivers openPostgres opened to their schemas, for postgresReplica.
var pgSchemas sync.Map

func openPostgres(t *testing.T) store.Driver {
	t.Helper()
	return openPostgresSchema(t, FreshSchema("drivertest"))
}

func openPostgresSchema(t *testing.T, schema string) store.Driver {
	t.Helper()
	d, err := pgstore.OpenDriver(context.Background(), PostgresDSN(t), pgstore.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	pgSchemas.Store(d, schema)
	t.Cleanup(func() {
		d.Close()
		pgSchemas.Delete(d)
	})
	return d
}

func postgresReplica(t *testing.T, d store.Driver) store.Driver {
	t.Helper()
	schema, ok := pgSchemas.Load(d)
	if !ok {
		t.Fatalf("drivertest: %T is not a driver the postgres backend opened", d)
	}
	return openPostgresSchema(t, schema.(string))
}
