package server

import (
	"os"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// testStoreEnv names the environment variable that picks the store of the server tests
// (testServer and keysServer without one, and every test that makes its own through
// newTestStore or newTestDriver; the *Memstore and *Postgres tests pin theirs): unset or
// "memstore" an in-memory store, "bbolt" a bbolt file, "postgres" a fresh schema of the
// database SWITCHYARD_TEST_POSTGRES names (the test skips without it). Any server test then runs on that backend, e.g.
//
//	SWITCHYARD_TEST_SERVER_STORE=postgres go test -run 'EndUser|Customer' ./server/
const testStoreEnv = "SWITCHYARD_TEST_SERVER_STORE"

// newTestStore returns the store of a test server made without one, as testStoreEnv says,
// closed when t ends.
func newTestStore(t testing.TB) *store.Store {
	t.Helper()
	return store.New(newTestDriver(t))
}

// newTestDriver returns the driver testStoreEnv names (memstore when unset), closed when t
// ends, for tests that wrap the driver (read counters, hooks) before making their store.
func newTestDriver(t testing.TB) store.Driver {
	t.Helper()
	name := os.Getenv(testStoreEnv)
	if name == "" || name == "memstore" {
		return memstore.NewDriver()
	}
	tt, ok := t.(*testing.T)
	if !ok {
		t.Fatalf("%s=%s: only tests, not benchmarks, run on another store", testStoreEnv, name)
	}
	for _, b := range drivertest.Backends() {
		if b.Name == name {
			return b.Open(tt)
		}
	}
	t.Fatalf("%s=%q: want memstore, bbolt or postgres", testStoreEnv, name)
	return nil
}
