package telemetry

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestSwept: what retention sweeps deleted is counted per kind; a sweep that deleted
// nothing adds no series.
func TestSwept(t *testing.T) {
	m := New(Options{})
	m.Swept("conversations", 3)
	m.Swept("conversations", 2)
	m.Swept("spend_rollups", 0)
	if got := testutil.ToFloat64(m.swept.WithLabelValues("conversations")); got != 5 {
		t.Errorf("conversations: %v, want 5", got)
	}
	if n := testutil.CollectAndCount(m.swept); n != 1 {
		t.Errorf("%d series, want 1 (none for a sweep that deleted nothing)", n)
	}
}
