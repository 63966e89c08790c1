package inference

import "math"

// platt is a Platt scaling of one model's quality estimates, q' = σ(a·logit(q) + b).
type platt struct{ a, b float64 }

// calibration rescales the quality estimates, one Platt map per model, fitted on the
// validation split after the task prior is blended in. Per-model heads trained with weak
// regularisation and a blend of two estimators are often too sure of themselves, and each
// model's head errs in its own direction; rescaling each model's log-odds makes an estimate
// of 0.7 come true about 70% of the time for every model, so that the tolerance of a
// tradeoff compares like with like. A model with too few validation pairs for its own map
// gets the map fitted on all pairs.
type calibration []platt

func (c calibration) apply(q []float64) {
	for i, v := range q {
		q[i] = sigmoid(c[i].a*logit(v) + c[i].b)
	}
}

// fitCalibration fits one map per class on rows of estimates and outcomes (k classes
// each), or returns nil when even the pooled pairs are too few.
func fitCalibration(est, out [][]float64, k int) calibration {
	var all, allOut []float64
	for i := range est {
		all = append(all, est[i]...)
		allOut = append(allOut, out[i]...)
	}
	shared := fitPlatt(all, allOut)
	if shared == nil {
		return nil
	}
	cal := make(calibration, k)
	for c := 0; c < k; c++ {
		var e, o []float64
		for i := range est {
			e = append(e, est[i][c])
			o = append(o, out[i][c])
		}
		if p := fitPlatt(e, o); p != nil {
			cal[c] = *p
		} else {
			cal[c] = *shared
		}
	}
	return cal
}

// validPlatt says whether (a, b) is a usable map: a finite positive slope (a map must not
// reverse or flatten the estimates) and a finite intercept.
func validPlatt(c [2]float64) bool {
	return c[0] > 0 && !math.IsInf(c[0], 0) && !math.IsNaN(c[1]) && !math.IsInf(c[1], 0)
}

func logit(v float64) float64 {
	v = min(max(v, 1e-6), 1-1e-6)
	return math.Log(v / (1 - v))
}

// fitPlatt minimises the log loss of σ(a·logit(e)+b) against the outcomes (fractional
// scores allowed, NaN skipped) by Newton's method, with a weak pull towards the identity
// (a=1, b=0) so that a handful of rows cannot produce an extreme map. It returns nil when
// there are too few pairs to fit.
func fitPlatt(est, out []float64) *platt {
	var xs, ts []float64
	for i, e := range est {
		if !math.IsNaN(out[i]) && !math.IsNaN(e) {
			xs = append(xs, logit(e))
			ts = append(ts, out[i])
		}
	}
	if len(xs) < 50 {
		return nil
	}
	const ridge = 1.0 // in units of one observation
	loss := func(a, b float64) float64 {
		l := ridge / 2 * ((a-1)*(a-1) + b*b)
		for i, x := range xs {
			z := a*x + b
			// log(1+e^z) − t·z, stable for large |z|.
			l += math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z))) - ts[i]*z
		}
		return l
	}
	a, b := 1.0, 0.0
	cur := loss(a, b)
	for iter := 0; iter < 100; iter++ {
		ga, gb := ridge*(a-1), ridge*b
		haa, hab, hbb := ridge, 0.0, ridge
		for i, x := range xs {
			p := sigmoid(a*x + b)
			r := p - ts[i]
			w := p * (1 - p)
			ga += r * x
			gb += r
			haa += w * x * x
			hab += w * x
			hbb += w
		}
		det := haa*hbb - hab*hab
		if !(det > 0) {
			break
		}
		da := (hbb*ga - hab*gb) / det
		db := (haa*gb - hab*ga) / det
		// Damped Newton: halve the step until the loss falls.
		step := 1.0
		for ; step > 1e-6; step /= 2 {
			if l := loss(a-step*da, b-step*db); l < cur {
				a, b, cur = a-step*da, b-step*db, l
				break
			}
		}
		if step <= 1e-6 || (math.Abs(step*da) < 1e-9 && math.Abs(step*db) < 1e-9) {
			break
		}
	}
	if math.IsNaN(a) || math.IsNaN(b) || a <= 0 {
		return nil
	}
	return &platt{a: a, b: b}
}
