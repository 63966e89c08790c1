package telemetry

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestStoreOperationHelpNamesEveryOperation: every operation the metrics' store wrapper
// times (each driver method: get, get_many, list, put, delete, update) and every outcome
// it records is listed in switchyard_store_operation_duration_seconds' help text, so an
// operator reading the scrape knows each label value.
func TestStoreOperationHelpNamesEveryOperation(t *testing.T) {
	m := New(Options{})
	d := m.Store(memstore.NewDriver())
	ctx := context.Background()
	c := store.Budgets
	_ = d.Put(ctx, c, "k", []byte("{}"))
	_, _ = d.Get(ctx, c, "k")
	_, _ = d.Get(ctx, c, "missing") // not_found
	_, _ = d.List(ctx, c, store.ListOptions{})
	_, _ = store.GetMany(ctx, d, c, []string{"k", "missing"})
	_ = d.Update(ctx, func(tx store.Tx) error { return nil })
	_ = store.UpdateLocked(ctx, d, []store.Ref{{Collection: c, Key: "k"}}, func(tx store.Tx) error { return nil })
	_ = d.Delete(ctx, c, "k")
	_ = d.Close()
	_, _ = d.Get(ctx, c, "k") // error: closed

	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var help string
	seen := map[string][]string{}
	for _, f := range fams {
		if f.GetName() != "switchyard_store_operation_duration_seconds" {
			continue
		}
		help = f.GetHelp()
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if !slices.Contains(seen[l.GetName()], l.GetValue()) {
					seen[l.GetName()] = append(seen[l.GetName()], l.GetValue())
				}
			}
		}
	}
	if len(seen["operation"]) < 6 || len(seen["outcome"]) < 3 {
		t.Fatalf("operations %v, outcomes %v timed: want every driver method and ok, not_found, error", seen["operation"], seen["outcome"])
	}
	words := strings.FieldsFunc(help, func(r rune) bool { return r == ' ' || r == ',' || r == '(' || r == ')' || r == '.' })
	for _, label := range []string{"operation", "outcome"} {
		for _, v := range seen[label] {
			if !slices.Contains(words, v) {
				t.Errorf("help %q does not list the %s %q", help, label, v)
			}
		}
	}
}
