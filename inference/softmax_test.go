package inference

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSoftmaxGradientMatchesFiniteDifferences checks the analytic gradient of both
// objectives, sparse and dense inputs, against central differences.
func TestSoftmaxGradientMatchesFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const dim, k, rows = 12, 4, 9
	xs := make([]Vector, rows)
	targets := make([][]float64, rows)
	for i := range xs {
		if i%2 == 0 {
			xs[i] = Vector{Indices: []int32{int32(i % dim), int32(dim - 1)}, Values: []float32{float32(rng.NormFloat64()), 0.5}}
		} else {
			v := make([]float32, dim)
			for d := range v {
				v[d] = float32(rng.NormFloat64())
			}
			xs[i] = Vector{Values: v}
		}
		tg := make([]float64, k)
		tg[i%k], tg[(i+1)%k] = 0.7, 0.3
		targets[i] = tg
	}
	for _, anyCorrect := range []bool{false, true} {
		m := newSoftmaxShape(dim, k, xs, 1)
		ts := m.compact(xs, targets, nil)
		ts.anyCorrect = anyCorrect
		obj := newObjective(ts, 0.05, 2)
		n := ts.cols*k + k
		theta := make([]float64, n)
		for j := range theta {
			theta[j] = rng.NormFloat64() * 0.3
		}
		grad := make([]float64, n)
		obj.eval(theta, grad)
		scratch := make([]float64, n)
		for j := range theta {
			const h = 1e-6
			orig := theta[j]
			theta[j] = orig + h
			fp := obj.eval(theta, scratch)
			theta[j] = orig - h
			fm := obj.eval(theta, scratch)
			theta[j] = orig
			num := (fp - fm) / (2 * h)
			if math.Abs(num-grad[j]) > 1e-6*max(1, math.Abs(num)) {
				t.Fatalf("anyCorrect=%v param %d: analytic %v, numeric %v", anyCorrect, j, grad[j], num)
			}
		}
	}
}

// TestObjectives shows the difference between the two objectives on identical prompts:
// "a" is right with "b" 5 times and with "c" 5 times, "d" alone 6 times. Soft targets give
// d 6/16 and a only 5/16, so they rank d first; any-correct moves the mass of b and c onto
// a, which is right in 10 of 16 rows.
func TestObjectives(t *testing.T) {
	ctx := context.Background()
	var ex []Example
	for i := 0; i < 5; i++ {
		ex = append(ex, Example{Text: "same prompt", Labels: []string{"p/a", "p/b"}},
			Example{Text: "same prompt", Labels: []string{"p/a", "p/c"}})
	}
	for i := 0; i < 6; i++ {
		ex = append(ex, Example{Text: "same prompt", Labels: []string{"p/d"}})
	}
	for obj, want := range map[string][]string{
		ObjectiveSoftTargets: {"p/d"},
		ObjectiveAnyCorrect:  {"p/a"},
	} {
		m, _, err := Fit(ctx, ex, FitOptions{Objective: obj, L2: []float64{1e-4}, Ranking: RankSoftmax})
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Predict(ctx, []string{"same prompt"})
		if err != nil {
			t.Fatal(err)
		}
		top := p[0][0].Model
		ok := false
		for _, w := range want {
			ok = ok || top == w
		}
		if !ok {
			t.Errorf("%s: top %v, want one of %v", obj, p[0], want)
		}
	}
	if _, _, err := Fit(ctx, ex, FitOptions{Objective: "hinge"}); err == nil {
		t.Error("unknown objective accepted")
	}
}

// TestWeightsAreCapped: a head never gets more than maxParams weights; the most frequent
// columns are the ones kept.
func TestWeightsAreCapped(t *testing.T) {
	xs := []Vector{
		{Indices: []int32{0, 1, 2, 3, 4}, Values: []float32{1, 1, 1, 1, 1}},
		{Indices: []int32{1, 2, 3}, Values: []float32{1, 1, 1}},
		{Indices: []int32{2, 3}, Values: []float32{1, 1}},
	}
	m := newSoftmaxShape(8, maxParams/2, xs, 1)
	if len(m.cols) != 2 || m.cols[0] != 2 || m.cols[1] != 3 || m.colOf[0] != -1 || m.colOf[1] != -1 || m.colOf[4] != -1 {
		t.Fatalf("cols %v colOf %v, want the two most frequent (2, 3)", m.cols, m.colOf)
	}
	if all := newSoftmaxShape(8, 3, xs, 1); len(all.cols) != 5 {
		t.Fatalf("uncapped head kept %d columns, want 5", len(all.cols))
	}
}
