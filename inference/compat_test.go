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
//   - 2026-11-25-experts: with shape features, a task prior and task experts (2 tasks),
//     full and half precision; written by TestWriteCompatFixture.
func TestLoadsRoutersSavedByEarlierBuilds(t *testing.T) {
	for _, fx := range []struct {
		bin, json  string
		half       bool // predictions of the half-precision blob (half_predictions)
		tasks      int
		calibrated bool
		experts    int
	}{
		{"router-2026-11-24.bin", "router-2026-11-24.json", false, 0, false, 0},
		{"router-2026-11-25.bin", "router-2026-11-25.json", false, 3, true, 0},
		{"router-2026-11-25-half.bin", "router-2026-11-25.json", true, 3, true, 0},
		{"router-2026-11-25-experts.bin", "router-2026-11-25-experts.json", false, 2, true, 2},
		{"router-2026-11-25-experts-half.bin", "router-2026-11-25-experts.json", true, 2, true, 2},
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
			experts, _ := m.Quality().TaskExperts()
			if len(names) != fx.tasks || (m.Quality().Calibration() != nil) != fx.calibrated || experts != fx.experts {
				t.Errorf("loaded with tasks %v, %d experts and calibration %v, saved with %d tasks, %d experts, calibrated %v",
					names, experts, m.Quality().Calibration(), fx.tasks, fx.experts, fx.calibrated)
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

// TestWriteCompatFixture writes testdata/compat/router-<SWITCHYARD_WRITE_COMPAT>.{bin,json}
// and its half-precision twin with this build, when that variable is set: a small router
// with every part the saved format holds (task prior, task experts, calibration).
func TestWriteCompatFixture(t *testing.T) {
	name := os.Getenv("SWITCHYARD_WRITE_COMPAT")
	if name == "" {
		t.Skip("set SWITCHYARD_WRITE_COMPAT=<date> to write a fixture")
	}
	ctx := context.Background()
	m, _, err := Fit(ctx, expertExamples(150, 5), FitOptions{Seed: 1, Estimator: EstimatorQuality,
		TaskPriorWeights: []float64{0.5}, TaskExpertWeights: []float64{0.75}})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"alpha w1y solve the equation for x and simplify w2z", "beta w3y write a short poem about the sea in rhyme w4z",
		"alpha w5y write a short poem w6z", "an unrelated prompt"}
	full, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	half, err := m.MarshalBinaryHalf()
	if err != nil {
		t.Fatal(err)
	}
	predict := func(blob []byte) [][]Ranked {
		lm, err := LoadModel(blob, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := lm.Predict(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	out, err := json.MarshalIndent(map[string]any{"Texts": texts, "Predictions": predict(full), "half_predictions": predict(half)}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	base := "testdata/compat/router-" + name
	for path, data := range map[string][]byte{base + ".bin": full, base + "-half.bin": half, base + ".json": out} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
