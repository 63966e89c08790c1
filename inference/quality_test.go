package inference

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
)

// TestQualityHeadsEstimateEachModel checks that the quality heads estimate each model's
// chance of a good answer on its own: on "easy" prompts every model is right, on "hard"
// ones only the big model, on "poems" only the poet. A softmax over "which is best" would
// split the mass on easy prompts three ways; the estimates must all be high there.
func TestQualityHeadsEstimateEachModel(t *testing.T) {
	var ex []Example
	for i := 0; i < 60; i++ {
		ex = append(ex,
			Example{Text: fmt.Sprintf("easy greeting hello number %d", i), Labels: []string{"p/small", "p/big", "p/poet"}},
			Example{Text: fmt.Sprintf("hard proof theorem lemma %d", i), Labels: []string{"p/big"}},
			Example{Text: fmt.Sprintf("write a poem sonnet verse %d", i), Labels: []string{"p/poet", "p/big"}},
			Example{Text: fmt.Sprintf("impossible riddle nobody solves %d", i)})
	}
	m, rep, err := Fit(context.Background(), ex, FitOptions{Seed: 1, Estimator: EstimatorQuality})
	if err != nil {
		t.Fatal(err)
	}
	if m.Classifier() != nil || rep.Ranking != RankQuality || rep.Used != len(ex) {
		t.Fatalf("quality-only fit: classifier %v, report %+v", m.Classifier(), rep)
	}
	preds, err := m.Predict(context.Background(), []string{"easy greeting hello", "hard proof theorem", "write a poem sonnet", "impossible riddle nobody solves"})
	if err != nil {
		t.Fatal(err)
	}
	q := func(i int, model string) float64 {
		for _, r := range preds[i] {
			if r.Model == model {
				if r.Prob != r.Quality {
					t.Fatalf("quality ranking must report the estimate as its score: %+v", r)
				}
				return r.Quality
			}
		}
		t.Fatalf("no %s in %v", model, preds[i])
		return 0
	}
	for _, m := range []string{"p/small", "p/big", "p/poet"} {
		if e := q(0, m); e < 0.8 {
			t.Errorf("easy prompt: %s estimate %.3f, want high for every model", m, e)
		}
		if e := q(3, m); e > 0.2 {
			t.Errorf("unsolvable prompt: %s estimate %.3f, want low", m, e)
		}
	}
	if q(1, "p/big") < 0.8 || q(1, "p/small") > 0.2 || q(1, "p/poet") > 0.2 {
		t.Errorf("hard prompt estimates: %v", preds[1])
	}
	if preds[2][0].Model == "p/small" || q(2, "p/small") > 0.2 {
		t.Errorf("poem estimates: %v", preds[2])
	}
	if rep.ValidationECE > 0.15 {
		t.Errorf("validation ECE %.3f on separable data", rep.ValidationECE)
	}
}

// TestOnlyScoredLeavesOtherModelsUntaught merges two "sources" that measured different
// models: a model never measured on a topic must not be taught that it fails there.
func TestOnlyScoredLeavesOtherModelsUntaught(t *testing.T) {
	var ex []Example
	for i := 0; i < 50; i++ {
		ex = append(ex,
			Example{Text: fmt.Sprintf("chemistry question %d", i), Scores: map[string]float64{"p/a": 1, "p/b": 0}, OnlyScored: true},
			Example{Text: fmt.Sprintf("history question %d", i), Scores: map[string]float64{"p/c": 1, "p/b": 1}, OnlyScored: true})
	}
	m, _, err := Fit(context.Background(), ex, FitOptions{Seed: 2, Estimator: EstimatorQuality})
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Predict(context.Background(), []string{"chemistry question"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range p[0] {
		// p/c was never measured on chemistry: its estimate there comes from its base rate
		// (always right where measured), not from being counted wrong.
		if r.Model == "p/c" && r.Quality < 0.5 {
			t.Errorf("unmeasured model taught to fail: %+v", p[0])
		}
		if r.Model == "p/b" && r.Quality > 0.3 {
			t.Errorf("p/b fails chemistry, estimate %.3f", r.Quality)
		}
	}
}

func TestExpectedCalibrationError(t *testing.T) {
	// Perfectly calibrated bins: estimate 0.25 with 1 of 4 right, 0.75 with 3 of 4.
	est := []float64{0.25, 0.25, 0.25, 0.25, 0.75, 0.75, 0.75, 0.75, 0.5}
	out := []float64{1, 0, 0, 0, 1, 1, 1, 0, math.NaN()}
	if e := ExpectedCalibrationError(est, out); e > 1e-12 {
		t.Errorf("calibrated ECE = %v", e)
	}
	// Always 0.9 while half are right: ECE 0.4.
	if e := ExpectedCalibrationError([]float64{0.9, 0.9}, []float64{1, 0}); math.Abs(e-0.4) > 1e-12 {
		t.Errorf("overconfident ECE = %v, want 0.4", e)
	}
}

func TestFitBoundsClasses(t *testing.T) {
	var ex []Example
	for i := 0; i <= MaxClasses; i++ {
		ex = append(ex, Example{Text: fmt.Sprintf("prompt %d", i), Labels: []string{fmt.Sprintf("p/m%d", i)}})
	}
	if _, _, err := Fit(context.Background(), ex, FitOptions{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("%d classes: err = %v, want ErrInvalid", MaxClasses+1, err)
	}
}
