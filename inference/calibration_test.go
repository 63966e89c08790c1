package inference

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// TestFitPlattUndoesOverconfidence: estimates three times too sure of themselves in
// log-odds are mapped back (slope about 1/3), and their calibration error falls.
func TestFitPlattUndoesOverconfidence(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var est, out []float64
	for range 4000 {
		p := 0.1 + 0.8*rng.Float64()
		o := 0.0
		if rng.Float64() < p {
			o = 1
		}
		est = append(est, sigmoid(3*logit(p)))
		out = append(out, o)
	}
	before := ExpectedCalibrationError(est, out)
	cal := fitPlatt(est, out)
	if cal == nil || math.Abs(cal.a-1.0/3) > 0.05 || math.Abs(cal.b) > 0.1 {
		t.Fatalf("fitted %+v, want slope about 1/3 and intercept about 0", cal)
	}
	cal.apply(est)
	if after := ExpectedCalibrationError(est, out); after > before/3 {
		t.Errorf("calibration error %.3f after scaling, %.3f before", after, before)
	}
	if fitPlatt(est[:10], out[:10]) != nil {
		t.Error("fitted a scaling on 10 pairs")
	}
}

// TestCalibrationIsSavedAndFixed: a fitted router carries its scaling through
// MarshalBinary, a fixed one is used as given, and SkipCalibration leaves none.
func TestCalibrationIsSavedAndFixed(t *testing.T) {
	ctx := context.Background()
	ex, _ := taskExamples(150)
	m, rep, err := Fit(ctx, ex, FitOptions{Seed: 1, Estimator: EstimatorQuality})
	if err != nil {
		t.Fatal(err)
	}
	a, b, ok := m.Quality().Calibration()
	if !ok || rep.Calibration != [2]float64{a, b} {
		t.Fatalf("calibration %v %v %v, report %v", a, b, ok, rep.Calibration)
	}
	blob, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadModel(blob, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if la, lb, ok := loaded.Quality().Calibration(); !ok || la != a || lb != b {
		t.Errorf("saved router's calibration %v %v %v, want %v %v", la, lb, ok, a, b)
	}
	fixed := [2]float64{0.5, 0.1}
	m2, _, err := Fit(ctx, ex, FitOptions{Seed: 1, Estimator: EstimatorQuality, Calibration: &fixed})
	if err != nil {
		t.Fatal(err)
	}
	if fa, fb, _ := m2.Quality().Calibration(); fa != 0.5 || fb != 0.1 {
		t.Errorf("fixed calibration came out as %v %v", fa, fb)
	}
	m3, _, err := Fit(ctx, ex, FitOptions{Seed: 1, Estimator: EstimatorQuality, SkipCalibration: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := m3.Quality().Calibration(); ok {
		t.Error("SkipCalibration still calibrated")
	}
	bad := [2]float64{-1, 0}
	if _, _, err := Fit(ctx, ex, FitOptions{Calibration: &bad}); err == nil {
		t.Error("a negative slope was accepted")
	}
}
