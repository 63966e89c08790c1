package inference

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestLoadsRoutersSavedBeforeTaskPriors loads a router saved by the build of 2026-11-24
// (before task priors, calibration and half-precision weights; testdata/compat, made by
// fitting a small router with that build): stored custom routers must keep loading and
// predict exactly what they did.
func TestLoadsRoutersSavedBeforeTaskPriors(t *testing.T) {
	blob, err := os.ReadFile("testdata/compat/router-2026-11-24.bin")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/compat/router-2026-11-24.json")
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Texts       []string
		Predictions [][]Ranked
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	m, err := LoadModel(blob, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if names, _ := m.Quality().Tasks(); names != nil || m.Quality().Calibration() != nil {
		t.Errorf("an old router grew a task prior %v or a calibration %v", names, m.Quality().Calibration())
	}
	got, err := m.Predict(context.Background(), want.Texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.Predictions {
		for j, w := range want.Predictions[i] {
			g := got[i][j]
			if g.Model != w.Model || math.Abs(g.Prob-w.Prob) > 1e-12 || math.Abs(g.Quality-w.Quality) > 1e-12 {
				t.Errorf("text %d rank %d: %+v, saved router predicted %+v", i, j, g, w)
			}
		}
	}
}
