package inference

import (
	"math"
	"testing"
)

func TestTradeoffPick(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name    string
		quality []float64
		cost    []float64
		tol     float64
		want    int
	}{
		{"no tolerance: the best", []float64{0.5, 0.9, 0.8}, []float64{1, 3, 2}, 0, 1},
		{"cheapest within tolerance", []float64{0.5, 0.9, 0.8}, []float64{1, 3, 2}, 0.1, 2},
		{"wide tolerance: the cheapest", []float64{0.5, 0.9, 0.8}, []float64{1, 3, 2}, 0.5, 0},
		{"unknown cost never preferred", []float64{0.85, 0.9, 0.8}, []float64{nan, 3, 2}, 0.1, 2},
		{"equal costs: the higher estimate", []float64{0.8, 0.9, 0.85}, []float64{2, 3, 2}, 0.1, 2},
		{"no known cost: the best", []float64{0.8, 0.9}, []float64{nan, nan}, 0.5, 1},
		{"no options", nil, nil, 0.1, -1},
	} {
		if got := TradeoffPick(tc.quality, tc.cost, tc.tol); got != tc.want {
			t.Errorf("%s: picked %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestFrontierAndChooseTolerance(t *testing.T) {
	nan := math.NaN()
	// Option 0 is dear (1), option 1 cheap (0.1).
	est := [][]float64{{0.9, 0.85}, {0.8, 0.78}, {0.7, 0.5}, {0.6, 0.59}}
	out := [][]float64{{1, 1}, {1, 0}, {0, 1}, {nan, 1}}
	fr := Frontier(est, out, []float64{1, 0.1}, []float64{0, 0.03, 0.1})
	want := []struct {
		score, price, changed, stderr float64
		rows                          int
	}{
		// Tolerance 0 picks option 0 everywhere; row 3 is unmeasured there and left out.
		{2.0 / 3, 1, 0, 0, 3},
		// 0.03 moves rows 1 and 3 to option 1: row 1 loses a point, row 3 has no base
		// outcome (no loss measured); losses 0, 1, 0 have standard error 1/3.
		{0.5, 0.55, 0.5, 1.0 / 3, 4},
		{0.5, 0.325, 0.75, 1.0 / 3, 4},
	}
	for i, w := range want {
		fp := fr[i]
		if fp.Rows != w.rows || math.Abs(fp.MeanScore-w.score) > 1e-9 || fp.MeanPrice == nil ||
			math.Abs(*fp.MeanPrice-w.price) > 1e-9 || math.Abs(fp.Changed-w.changed) > 1e-9 ||
			math.Abs(fp.LossStdErr-w.stderr) > 1e-9 {
			t.Errorf("point %d: %+v (price %v), want %+v", i, fp, fp.MeanPrice, w)
		}
	}
	if got := ChooseTolerance(fr, 0.2, 0.07); got != 0.1 {
		t.Errorf("loss 0.2 allowed: chose %v, want 0.1", got)
	}
	if got := ChooseTolerance(fr, 0.1, 0.07); got != 0 {
		t.Errorf("loss 0.1 allowed: chose %v, want 0", got)
	}
	// The largest tolerance within the loss wins even past one that is not.
	p := 1.0
	bumpy := []FrontierPoint{{Tolerance: 0, MeanScore: 0.7, MeanPrice: &p}, {Tolerance: 0.01, MeanScore: 0.65, MeanPrice: &p},
		{Tolerance: 0.02, MeanScore: 0.695, MeanPrice: &p}, {Tolerance: 0.03, MeanScore: 0.6, MeanPrice: &p}}
	if got := ChooseTolerance(bumpy, 0.01, 0.07); got != 0.02 {
		t.Errorf("bumpy frontier: chose %v, want 0.02", got)
	}
	unpriced := Frontier(est, out, []float64{nan, nan}, []float64{0, 0.1})
	if unpriced[0].MeanPrice != nil {
		t.Errorf("no prices: mean price %v", *unpriced[0].MeanPrice)
	}
	if got := ChooseTolerance(unpriced, 0.01, 0.07); got != 0.07 {
		t.Errorf("no prices: chose %v, want the fallback 0.07", got)
	}
}
