package inference

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

func TestHalfRoundTrip(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want float32
	}{
		{0, 0}, {1, 1}, {-2.5, -2.5}, {65504, 65504}, {1e6, float32(math.Inf(1))},
		{6.103515625e-05, 6.103515625e-05},             // smallest normal
		{5.960464477539063e-08, 5.960464477539063e-08}, // smallest subnormal
		{1e-9, 0}, {1.0009765625, 1.0009765625}, {1.00048828125, 1}, // a tie rounds to even
	} {
		if got := fromHalf(toHalf(c.in)); got != c.want {
			t.Errorf("half(%g) = %g, want %g", c.in, got, c.want)
		}
	}
	if !math.IsNaN(float64(fromHalf(toHalf(float32(math.NaN()))))) {
		t.Error("NaN lost")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		f := float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(8)-5)))
		g := fromHalf(toHalf(f))
		if math.Abs(float64(f)) > 6.2e-5 && math.Abs(float64(g-f)) > math.Abs(float64(f))/2048 {
			t.Fatalf("half(%g) = %g: relative error above 2^-11", f, g)
		}
	}
}

// TestMarshalBinaryHalf: a router saved with half-precision weights saves two bytes per
// weight and estimates within 1e-3 of the float32 router.
func TestMarshalBinaryHalf(t *testing.T) {
	ctx := context.Background()
	ex, _ := taskExamples(150)
	m, _, err := Fit(ctx, ex, FitOptions{Seed: 1, Estimator: EstimatorQuality})
	if err != nil {
		t.Fatal(err)
	}
	full, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	half, err := m.MarshalBinaryHalf()
	if err != nil {
		t.Fatal(err)
	}
	weights := len(m.quality.lin.w)
	if p := m.quality.prior; p != nil {
		weights += len(p.head.w)
	}
	if saved := len(full) - len(half); saved < weights*2*9/10 {
		t.Errorf("half-precision blob %d bytes, float32 %d: saved %d bytes of %d weights", len(half), len(full), saved, weights)
	}
	loaded, err := LoadModel(half, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{ex[0].Text, ex[1].Text, "solve the equation for x w1x", "write a short poem about the sea"}
	a, _ := m.Predict(ctx, texts)
	b, _ := loaded.Predict(ctx, texts)
	for i := range a {
		for j := range a[i] {
			if a[i][j].Model != b[i][j].Model && math.Abs(a[i][j].Quality-b[i][j].Quality) > 1e-3 {
				t.Errorf("text %d: order %v vs %v", i, a[i], b[i])
			}
		}
		for _, r := range a[i] {
			for _, s := range b[i] {
				if r.Model == s.Model && math.Abs(r.Quality-s.Quality) > 1e-3 {
					t.Errorf("text %d %s: %.5f float32, %.5f half", i, r.Model, r.Quality, s.Quality)
				}
			}
		}
	}
}
