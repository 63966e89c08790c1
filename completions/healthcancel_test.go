package completions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestCheckDeploymentsCancelledStartsNothing: with ctx already done, no deployment's check
// is started (each is "not run" with ctx's error), though slots are free: a select between a
// free slot and a done ctx would start about half of them.
func TestCheckDeploymentsCancelledStartsNothing(t *testing.T) {
	h := newHarness(t, nil)
	var ds []Deployment
	for i := range 40 {
		ds = append(ds, Deployment{ModelName: fmt.Sprint("m", i), Model: fmt.Sprint("a/m", i), Mode: ModeChat})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i, r := range h.g.CheckDeployments(ctx, ds, 64, 0) {
		if !errors.Is(r.Err, context.Canceled) || !strings.Contains(r.Err.Error(), "not run") || r.Deployment.Model != ds[i].Model {
			t.Errorf("%s: %v, want not run with context.Canceled", ds[i].Model, r.Err)
		}
	}
}
