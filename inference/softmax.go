package inference

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/optimize"
)

// SoftmaxName is the name of the multinomial logistic regression classifier.
const SoftmaxName = "softmax-regression-v1"

// SoftmaxRegression is a multinomial logistic regression: p = softmax(W·x + b). Only the
// input dimensions seen during training carry weights (the others would stay exactly 0
// under L2 regularisation), so a sparse hashed input of 2^18 dimensions costs memory only
// for the buckets the training texts touched.
type SoftmaxRegression struct {
	dim     int
	classes int
	// cols are the input dimensions that have weights, in weight-row order; colOf maps a
	// dimension to its row in w, or -1.
	cols  []int32
	colOf []int32
	// w is len(cols) x classes, row-major; b has one bias per class. float32 so that a
	// saved model predicts exactly what the trained one did.
	w []float32
	b []float32
}

// Name returns SoftmaxName.
func (m *SoftmaxRegression) Name() string { return SoftmaxName }

// NumClasses returns the number of classes.
func (m *SoftmaxRegression) NumClasses() int { return m.classes }

// Probabilities implements Classifier.
func (m *SoftmaxRegression) Probabilities(x Vector, out []float64) {
	m.linear(x, out)
	softmaxInPlace(out[:m.classes])
}

// linear writes the scores W·x + b into out.
func (m *SoftmaxRegression) linear(x Vector, out []float64) {
	k := m.classes
	for c := 0; c < k; c++ {
		out[c] = float64(m.b[c])
	}
	if x.Sparse() {
		for j, ix := range x.Indices {
			if int(ix) >= len(m.colOf) {
				continue
			}
			r := m.colOf[ix]
			if r < 0 {
				continue
			}
			xv := float64(x.Values[j])
			row := m.w[int(r)*k : int(r)*k+k]
			for c, wv := range row {
				out[c] += xv * float64(wv)
			}
		}
	} else {
		for d, xv := range x.Values {
			if d >= len(m.colOf) {
				break
			}
			r := m.colOf[d]
			if r < 0 || xv == 0 {
				continue
			}
			row := m.w[int(r)*k : int(r)*k+k]
			for c, wv := range row {
				out[c] += float64(xv) * float64(wv)
			}
		}
	}
}

func sigmoid(v float64) float64 {
	if v >= 0 {
		return 1 / (1 + math.Exp(-v))
	}
	e := math.Exp(v)
	return e / (1 + e)
}

func softmaxInPlace(z []float64) {
	mx := math.Inf(-1)
	for _, v := range z {
		mx = max(mx, v)
	}
	var s float64
	for i, v := range z {
		z[i] = math.Exp(v - mx)
		s += z[i]
	}
	for i := range z {
		z[i] /= s
	}
}

// softmaxConfig tunes training.
type softmaxConfig struct {
	// L2 is the regularisation strength λ in mean-loss + λ/2·‖W‖² (biases are not
	// regularised).
	L2 float64
	// MaxIterations caps L-BFGS major iterations. 0 means 100.
	MaxIterations int
	// Workers computes the gradient in parallel. 0 means GOMAXPROCS.
	Workers int
	// Logger receives one debug record per fit; nil means slog.Default().
	Logger *slog.Logger
}

// trainSet is the training data over the used columns, stored column-major (CSC): for
// each weighted feature, the rows where it is non-zero. Both gradient passes then walk the
// weight and gradient matrices sequentially and scatter into the small rows x classes
// score matrix, which stays in cache; row-major access to a weight matrix of hundreds of
// thousands of rows would miss the cache on almost every non-zero.
type trainSet struct {
	rows    int
	cols    int // number of used columns
	colPtr  []int
	rowIdx  []int32
	val     []float32
	targets []float64 // rows x classes, each row sums to 1
	// anyCorrect switches the loss from cross-entropy against the targets to
	// -log Σ_c target_c·p_c (see ObjectiveAnyCorrect).
	anyCorrect bool
	// perClass switches to one independent logistic loss per class (the quality heads):
	// target_c is the probability that class c answers the row well, NaN when unmeasured
	// (the pair then teaches nothing).
	perClass bool
	weights  []float64 // per-row weight, sums to 1
	classes  int
}

// newSoftmaxShape decides which input dimensions get weights: those non-zero in at least
// minDF training vectors. Rows of the weight matrix are ordered by decreasing document
// frequency so that the weights of common n-grams sit together in memory, which keeps
// the sparse gradient passes cache-friendly.
func newSoftmaxShape(dim, classes int, xs []Vector, minDF int) *SoftmaxRegression {
	return newSoftmaxShapeLimit(dim, classes, xs, minDF, maxParams)
}

// newSoftmaxShapeLimit is newSoftmaxShape with at most params weights (columns × classes).
func newSoftmaxShapeLimit(dim, classes int, xs []Vector, minDF, params int) *SoftmaxRegression {
	m := &SoftmaxRegression{dim: dim, classes: classes, colOf: make([]int32, dim)}
	df := make([]int32, dim)
	for _, x := range xs {
		if x.Sparse() {
			for _, ix := range x.Indices {
				df[ix]++
			}
		} else {
			for d, v := range x.Values {
				if v != 0 {
					df[d]++
				}
			}
		}
	}
	for d := range df {
		m.colOf[d] = -1
		if int(df[d]) >= max(minDF, 1) {
			m.cols = append(m.cols, int32(d))
		}
	}
	slices.SortStableFunc(m.cols, func(a, b int32) int { return cmp.Compare(df[b], df[a]) })
	// Cap the weights: L-BFGS keeps about 20 vectors of cols × classes float64, so the
	// rarest columns beyond params/classes are dropped.
	if limit := max(1, params/max(classes, 1)); len(m.cols) > limit {
		m.cols = m.cols[:limit]
	}
	for r, d := range m.cols {
		m.colOf[d] = int32(r)
	}
	return m
}

// maxParams bounds the weights of one head (weighted columns × classes). llmrouter9 (69k
// columns × 9 models) is far below it; a 100-model router keeps its 40,000 most frequent
// n-grams.
const maxParams = 4_000_000

// compact converts vectors and targets into a trainSet for m's columns. Coordinates in
// columns m does not weight are dropped (they cannot change the scores).
func (m *SoftmaxRegression) compact(xs []Vector, targets [][]float64, rowWeights []float64) *trainSet {
	ts := &trainSet{rows: len(xs), cols: len(m.cols), classes: m.classes}
	each := func(x Vector, fn func(col int32, v float32)) {
		if x.Sparse() {
			for j, ix := range x.Indices {
				if r := m.colOf[ix]; r >= 0 {
					fn(r, x.Values[j])
				}
			}
			return
		}
		for d, v := range x.Values {
			if r := m.colOf[d]; r >= 0 && v != 0 {
				fn(r, v)
			}
		}
	}
	ts.colPtr = make([]int, ts.cols+1)
	for _, x := range xs {
		each(x, func(col int32, _ float32) { ts.colPtr[col+1]++ })
	}
	for c := 0; c < ts.cols; c++ {
		ts.colPtr[c+1] += ts.colPtr[c]
	}
	nnz := ts.colPtr[ts.cols]
	ts.rowIdx = make([]int32, nnz)
	ts.val = make([]float32, nnz)
	next := slices.Clone(ts.colPtr[:ts.cols])
	var wsum float64
	for i, x := range xs {
		each(x, func(col int32, v float32) {
			p := next[col]
			ts.rowIdx[p], ts.val[p] = int32(i), v
			next[col]++
		})
		ts.targets = append(ts.targets, targets[i]...)
		w := 1.0
		if rowWeights != nil {
			w = rowWeights[i]
		}
		ts.weights = append(ts.weights, w)
		wsum += w
	}
	for i := range ts.weights {
		ts.weights[i] /= wsum
	}
	return ts
}

// objective evaluates the regularised weighted cross-entropy and its gradient at theta
// (W then b), in parallel over column blocks.
type objective struct {
	ts      *trainSet
	l2      float64
	workers int
	z       [][]float64 // per-worker partial scores, rows x classes
	resid   []float64   // weighted residuals p - t, rows x classes
	bounds  []int       // column block of worker w: bounds[w] to bounds[w+1]
}

func newObjective(ts *trainSet, l2 float64, workers int) *objective {
	o := &objective{ts: ts, l2: l2, workers: workers, z: make([][]float64, workers), resid: make([]float64, ts.rows*ts.classes)}
	for i := range o.z {
		o.z[i] = make([]float64, ts.rows*ts.classes)
	}
	o.bounds = make([]int, workers+1)
	nnz := ts.colPtr[ts.cols]
	c := 0
	for w := 1; w < workers; w++ {
		for c < ts.cols && ts.colPtr[c] < nnz*w/workers {
			c++
		}
		o.bounds[w] = c
	}
	o.bounds[workers] = ts.cols
	return o
}

// parallel runs fn over workers contiguous blocks of columns holding about the same
// number of non-zeros.
func (o *objective) parallel(fn func(w, lo, hi int)) {
	var wg sync.WaitGroup
	for w := 0; w < o.workers; w++ {
		lo, hi := o.bounds[w], o.bounds[w+1]
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(w, lo, hi)
		}()
	}
	wg.Wait()
}

func (o *objective) eval(theta, grad []float64) float64 {
	ts := o.ts
	k := ts.classes
	nw := ts.cols * k
	// Forward: z = X W, each worker over a block of columns into its own buffer.
	o.parallel(func(w, lo, hi int) {
		z := o.z[w]
		clear(z)
		for c := lo; c < hi; c++ {
			wr := theta[c*k : c*k+k]
			rows, vals := ts.rowIdx[ts.colPtr[c]:ts.colPtr[c+1]], ts.val[ts.colPtr[c]:ts.colPtr[c+1]]
			vals = vals[:len(rows)]
			for p, i := range rows {
				xv := float64(vals[p])
				zr := z[int(i)*k:][:len(wr)]
				for j, wv := range wr {
					zr[j] += xv * wv
				}
			}
		}
	})
	// Softmax, loss and weighted residuals per row.
	var loss float64
	bias := theta[nw:]
	for i := 0; i < ts.rows; i++ {
		zr := o.resid[i*k : i*k+k]
		copy(zr, bias)
		for w := range o.workers {
			for j, v := range o.z[w][i*k : i*k+k] {
				zr[j] += v
			}
		}
		if ts.perClass {
			// Σ_c logistic loss of sigmoid(z_c) against t_c; gradient sigmoid(z_c) - t_c.
			t := ts.targets[i*k : i*k+k]
			rw := ts.weights[i]
			for j, v := range zr {
				if math.IsNaN(t[j]) {
					zr[j] = 0
					continue
				}
				// log(1+e^v) computed without overflow.
				sp := math.Max(v, 0) + math.Log1p(math.Exp(-math.Abs(v)))
				loss += rw * (sp - t[j]*v)
				zr[j] = rw * (sigmoid(v) - t[j])
			}
			continue
		}
		mx := math.Inf(-1)
		for _, v := range zr {
			mx = max(mx, v)
		}
		var s float64
		for _, v := range zr {
			s += math.Exp(v - mx)
		}
		lse := mx + math.Log(s)
		t := ts.targets[i*k : i*k+k]
		rw := ts.weights[i]
		if !ts.anyCorrect {
			// Cross-entropy against the soft target t: Σ t (lse - z); gradient p - t.
			for j, v := range zr {
				if t[j] > 0 {
					loss += rw * t[j] * (lse - v)
				}
				zr[j] = rw * (math.Exp(v-lse) - t[j])
			}
			continue
		}
		// -log Σ t p, the negative log of the expected credit; gradient p - q with
		// q ∝ t p, the target re-weighted by the model's own belief.
		var tp float64
		for j, v := range zr {
			zr[j] = math.Exp(v - lse) // now p
			tp += t[j] * zr[j]
		}
		loss -= rw * math.Log(max(tp, 1e-300))
		for j, p := range zr {
			zr[j] = rw * (p - t[j]*p/max(tp, 1e-300))
		}
	}
	// Backward: each worker writes the gradient rows of its own columns.
	o.parallel(func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			gr := grad[c*k : c*k+k]
			clear(gr)
			rows, vals := ts.rowIdx[ts.colPtr[c]:ts.colPtr[c+1]], ts.val[ts.colPtr[c]:ts.colPtr[c+1]]
			vals = vals[:len(rows)]
			for p, i := range rows {
				xv := float64(vals[p])
				rr := o.resid[int(i)*k:][:len(gr)]
				for j, r := range rr {
					gr[j] += xv * r
				}
			}
			wr := theta[c*k : c*k+k]
			for j, wv := range wr {
				gr[j] += o.l2 * wv
			}
		}
	})
	gb := grad[nw:]
	clear(gb)
	for i := 0; i < ts.rows; i++ {
		for j, r := range o.resid[i*k : i*k+k] {
			gb[j] += r
		}
	}
	var reg float64
	for _, v := range theta[:nw] {
		reg += v * v
	}
	return loss + 0.5*o.l2*reg
}

// trainSoftmax fits W and b on ts with L-BFGS, starting from init (which may be nil) and
// returns the parameter vector.
func trainSoftmax(ctx context.Context, ts *trainSet, cfg softmaxConfig, init []float64) ([]float64, optimize.Stats, error) {
	n := ts.cols*ts.classes + ts.classes
	x0 := make([]float64, n)
	if init != nil {
		copy(x0, init)
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, ts.rows))
	iters := cfg.MaxIterations
	if iters <= 0 {
		iters = 100
	}
	obj := newObjective(ts, cfg.L2, workers)
	// Func and Grad are usually asked at the same point: evaluate once, remember it.
	var lastX, lastG []float64
	var lastF float64
	evalAt := func(x []float64) {
		if lastX != nil && equalFloats(lastX, x) {
			return
		}
		if lastX == nil {
			lastX, lastG = make([]float64, n), make([]float64, n)
		}
		copy(lastX, x)
		lastF = obj.eval(x, lastG)
	}
	prob := optimize.Problem{
		Func: func(x []float64) float64 { evalAt(x); return lastF },
		Grad: func(g, x []float64) { evalAt(x); copy(g, lastG) },
		Status: func() (optimize.Status, error) {
			if err := ctx.Err(); err != nil {
				return optimize.Failure, err
			}
			return optimize.NotTerminated, nil
		},
	}
	settings := &optimize.Settings{
		MajorIterations:   iters,
		GradientThreshold: 1e-6,
		Converger:         &optimize.FunctionConverge{Absolute: 1e-9, Relative: 1e-7, Iterations: 10},
	}
	res, err := optimize.Minimize(prob, x0, settings, &optimize.LBFGS{Store: 5})
	if cerr := ctx.Err(); cerr != nil {
		return nil, optimize.Stats{}, cerr
	}
	if res == nil {
		return nil, optimize.Stats{}, fmt.Errorf("inference: softmax training: %w", err)
	}
	if err != nil && !isBenignOptimizeErr(err) {
		return nil, res.Stats, fmt.Errorf("inference: softmax training: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	log.Debug("inference: softmax fit", "rows", ts.rows, "cols", ts.cols, "nnz", len(ts.val), "l2", cfg.L2, "iters", res.Stats.MajorIterations, "evals", res.Stats.FuncEvaluations, "grads", res.Stats.GradEvaluations, "time", res.Stats.Runtime, "status", res.Status)
	return res.X, res.Stats, nil
}

// isBenignOptimizeErr accepts line-search stalls near the optimum: the result is still
// the best point found.
func isBenignOptimizeErr(err error) bool {
	var e optimize.ErrGrad
	return errors.Is(err, optimize.ErrLinesearcherFailure) || errors.As(err, &e) || err == optimize.ErrNoProgress
}

func equalFloats(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// setParams stores theta into m as float32.
func (m *SoftmaxRegression) setParams(theta []float64) {
	nw := len(m.cols) * m.classes
	m.w = make([]float32, nw)
	for j := range m.w {
		m.w[j] = float32(theta[j])
	}
	m.b = make([]float32, m.classes)
	for c := range m.b {
		m.b[c] = float32(theta[nw+c])
	}
}
