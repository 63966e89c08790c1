package inference

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestLoadsRoutersSavedByEarlierBuilds loads routers saved by earlier builds
// (testdata/compat, each made by fitting a small router with that build): stored custom
// routers must keep loading and predict exactly what they did. Add a fixture whenever the
// saved format changes.
//   - 2026-11-24: before task priors, calibration and half-precision weights.
//   - 2026-11-25: with a task prior (3 tasks) and per-model calibration, saved in full and
//     in half precision, before shape features (so it must load with them off).
func TestLoadsRoutersSavedByEarlierBuilds(t *testing.T) {
	for _, fx := range []struct {
		bin, json  string
		half       bool // predictions of the half-precision blob (half_predictions)
		tasks      int
		calibrated bool
	}{
		{"router-2026-11-24.bin", "router-2026-11-24.json", false, 0, false},
		{"router-2026-11-25.bin", "router-2026-11-25.json", false, 3, true},
		{"router-2026-11-25-half.bin", "router-2026-11-25.json", true, 3, true},
	} {
		t.Run(fx.bin, func(t *testing.T) {
			blob, err := os.ReadFile("testdata/compat/" + fx.bin)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile("testdata/compat/" + fx.json)
			if err != nil {
				t.Fatal(err)
			}
			var want struct {
				Texts           []string
				Predictions     [][]Ranked
				HalfPredictions [][]Ranked `json:"half_predictions"`
			}
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			if fx.half {
				want.Predictions = want.HalfPredictions
			}
			m, err := LoadModel(blob, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			names, _ := m.Quality().Tasks()
			if len(names) != fx.tasks || (m.Quality().Calibration() != nil) != fx.calibrated {
				t.Errorf("loaded with tasks %v and calibration %v, saved with %d tasks, calibrated %v",
					names, m.Quality().Calibration(), fx.tasks, fx.calibrated)
			}
			got, err := m.Predict(context.Background(), want.Texts)
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Predictions) != len(want.Texts) {
				t.Fatalf("fixture has %d predictions for %d texts", len(want.Predictions), len(want.Texts))
			}
			for i := range want.Predictions {
				for j, w := range want.Predictions[i] {
					g := got[i][j]
					if g.Model != w.Model || math.Abs(g.Prob-w.Prob) > 1e-12 || math.Abs(g.Quality-w.Quality) > 1e-12 {
						t.Errorf("text %d rank %d: %+v, saved router predicted %+v", i, j, g, w)
					}
				}
			}
		})
	}
}
