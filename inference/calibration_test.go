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
	for i, e := range est {
		est[i] = sigmoid(cal.a*logit(e) + cal.b)
	}
	if after := ExpectedCalibrationError(est, out); after > before/3 {
		t.Errorf("calibration error %.3f after scaling, %.3f before", after, before)
	}
	if fitPlatt(est[:10], out[:10]) != nil {
		t.Error("fitted a scaling on 10 pairs")
	}
}

// TestCalibrationPerModel: one model's estimates are too sure of themselves, the other's
// too timid; each gets its own map (slope below 1 for the first, above 1 for the second),
// and a model with too few pairs of its own gets the pooled map.
func TestCalibrationPerModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	var est, out [][]float64
	for range 3000 {
		e, o := make([]float64, 3), make([]float64, 3)
		for c, sharp := range []float64{3, 1.0 / 3} {
			p := 0.1 + 0.8*rng.Float64()
			if rng.Float64() < p {
				o[c] = 1
			}
			e[c] = sigmoid(sharp * logit(p))
		}
		e[2], o[2] = 0.5, math.NaN() // never measured
		est, out = append(est, e), append(out, o)
	}
	cal := fitCalibration(est, out, 3)
	if len(cal) != 3 || math.Abs(cal[0].a-1.0/3) > 0.06 || math.Abs(cal[1].a-3) > 0.4 {
		t.Fatalf("maps %+v: want slopes about 1/3 and 3", cal)
	}
	if pooled := fitPlatt(append(column(est, 0), column(est, 1)...), append(column(out, 0), column(out, 1)...)); math.Abs(cal[2].a-pooled.a) > 1e-9 || math.Abs(cal[2].b-pooled.b) > 1e-9 {
		t.Errorf("unmeasured model's map %+v, want the pooled %+v", cal[2], *pooled)
	}
}

func column(rows [][]float64, c int) []float64 {
	var out []float64
	for _, r := range rows {
		out = append(out, r[c])
	}
	return out
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
	cal := m.Quality().Calibration()
	if len(cal) != 2 || rep.Calibration["p/a"] != cal[0] || rep.Calibration["p/b"] != cal[1] {
		t.Fatalf("calibration %v, report %v", cal, rep.Calibration)
	}
	loaded := reload(t, m)
	if lc := loaded.Quality().Calibration(); len(lc) != 2 || lc[0] != cal[0] || lc[1] != cal[1] {
		t.Errorf("saved router's calibration %v, want %v", lc, cal)
	}
	m2, _, err := Fit(ctx, ex, FitOptions{Seed: 1, Estimator: EstimatorQuality, Calibration: map[string][2]float64{"p/b": {0.5, 0.1}}})
	if err != nil {
		t.Fatal(err)
	}
	if fc := m2.Quality().Calibration(); fc[0] != [2]float64{1, 0} || fc[1] != [2]float64{0.5, 0.1} {
		t.Errorf("fixed calibration came out as %v", fc)
	}
	// As the trainer's final fit does: everything fixed, no validation split at all.
	m4, _, err := Fit(ctx, ex, FitOptions{Seed: 1, Estimator: EstimatorQuality, QualityL2: []float64{3e-4},
		TaskPriorWeights: []float64{0}, Calibration: map[string][2]float64{"p/a": {0.7, -0.2}}})
	if err != nil {
		t.Fatal(err)
	}
	if fc := m4.Quality().Calibration(); len(fc) != 2 || fc[0] != [2]float64{0.7, -0.2} {
		t.Errorf("fixed calibration without a validation split came out as %v", fc)
	}
	m3, _, err := Fit(ctx, ex, FitOptions{Seed: 1, Estimator: EstimatorQuality, SkipCalibration: true})
	if err != nil {
		t.Fatal(err)
	}
	if m3.Quality().Calibration() != nil {
		t.Error("SkipCalibration still calibrated")
	}
	if _, _, err := Fit(ctx, ex, FitOptions{Calibration: map[string][2]float64{"p/a": {-1, 0}}}); err == nil {
		t.Error("a negative slope was accepted")
	}
}
