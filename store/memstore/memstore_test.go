package memstore_test

import (
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{Open: func(t *testing.T) *store.Store { return memstore.New() }})
}

func BenchmarkDriver(b *testing.B) {
	storetest.Bench(b, func(*testing.B) *store.Store { return memstore.New() })
}
