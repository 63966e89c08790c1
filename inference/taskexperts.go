package inference

import (
	"cmp"
	"context"
	"math"
	"slices"
)

// Task experts are per-model quality heads fitted on the rows of one task alone. The
// shared heads give an n-gram the same weight in every kind of prompt, so what makes a
// grade-school word problem hard for a small model (more steps, more numbers) cannot
// differ from what makes a multiple-choice question hard; an expert learns it for its own
// task, over the n-grams common in that task's texts. The estimate mixes the experts by
// the task head's probabilities, P(task | prompt), and blends the mix with the shared
// heads: q = (1−w)·heads + w·Σ_t P(t|x)·expert_t, w chosen on the validation split by log
// loss. On llmrouter9 (14 tasks, 5-fold cross-validation) they cut the log loss of the
// estimates by 4% and raised the mean score of the pick by about one point, with or without
// the cost tradeoff (BENCHMARKS.md, "Task experts").

// MinExpertRows is how many training rows a task needs for an expert of its own; the
// prompts of rarer tasks get the shared heads' estimate.
const MinExpertRows = 100

// defaultTaskExpertWeights are the expert weights w tried on the validation split when
// FitOptions.TaskExpertWeights is empty.
var defaultTaskExpertWeights = []float64{0, 0.5, 0.75, 1}

// defaultTaskExpertL2 is the experts' regularisation strength when FitOptions.TaskExpertL2
// is empty. A task has a tenth of the rows or fewer, and the experts' heads are many, so
// they want a heavier penalty on the mean loss than the shared heads' 3e-4: on llmrouter9
// the pooled validation log loss chose 3e-3 over 1e-3 in every fold of a 5-fold
// cross-validation, and held-out log loss was worse at 1e-2; one value saves a fit of
// every expert.
var defaultTaskExpertL2 = []float64{3e-3}

// minExpertDF is the fewest texts of its task an n-gram must be in for an expert to weight
// it (more when the shared heads' threshold, as a share of the rows, asks for more). On
// llmrouter9 (≈360 training rows per task) 5 instead of 2 made the trained router 10 MiB
// smaller and its fit 6 s faster for 0.2% of held-out log loss.
const minExpertDF = 5

// minExpertMix is the task probability below which an expert is not evaluated: its share
// of the mix goes to the shared heads' estimate.
const minExpertMix = 1e-3

// taskExpert is the quality heads of one task over the classes measured on its rows.
type taskExpert struct {
	lin     *SoftmaxRegression
	classes []int // expert class i is the model's class classes[i]
	// scale re-weights each weighted column (lin's row order) before the expert's input
	// is normalised again: for n-gram features the task's own IDF over the router's, so
	// that the n-grams every prompt of the task shares (its template, rare in the whole
	// data set and heavy in the router's vectors) stop drowning what sets one prompt of
	// the task apart from another. nil leaves the columns as they are.
	scale []float32
	// dims and rows, set once the expert is fitted (seal), map its weighted dimensions
	// (sorted) to their rows in lin, replacing lin's dense column index: a router holds an
	// expert per task, and a dense index costs 4 bytes per input dimension (1 MiB for the
	// n-gram embedder's 2^18) where the expert weights a few thousand.
	dims, rows []int32
}

// seal replaces the expert's dense column index with its sorted dims and rows.
func (e *taskExpert) seal() {
	e.dims = slices.Clone(e.lin.cols)
	slices.Sort(e.dims)
	e.rows = make([]int32, len(e.dims))
	for i, d := range e.dims {
		e.rows[i] = e.lin.colOf[d]
	}
	e.lin.colOf = nil
}

// row returns the row of lin that weights dimension d, or -1.
func (e *taskExpert) row(d int) int32 {
	if e.dims == nil {
		if d >= len(e.lin.colOf) {
			return -1
		}
		return e.lin.colOf[d]
	}
	if i, ok := slices.BinarySearch(e.dims, int32(d)); ok {
		return e.rows[i]
	}
	return -1
}

// input returns x restricted to the expert's columns, re-weighted and normalised, indexed
// by input dimension (before seal, for training) or by lin's row (after seal: see
// estimates).
func (e *taskExpert) input(x Vector) Vector {
	var out Vector
	add := func(d int, v float32) {
		if v == 0 {
			return
		}
		r := e.row(d)
		if r < 0 {
			return
		}
		if e.scale != nil {
			v *= e.scale[r]
		}
		if e.dims != nil {
			out.Indices = append(out.Indices, r)
		} else {
			out.Indices = append(out.Indices, int32(d))
		}
		out.Values = append(out.Values, v)
	}
	switch {
	case x.Sparse() && e.dims != nil:
		// Both lists are sorted (an embedder's sparse vectors are): walk them together,
		// galloping through the expert's dimensions from the last match.
		lo := 0
		for j, d := range x.Indices {
			if j > 0 && d < x.Indices[j-1] {
				lo = 0 // not sorted after all: search from the start
			}
			step := 1
			for lo+step < len(e.dims) && e.dims[lo+step] < d {
				step *= 2
			}
			i, ok := slices.BinarySearch(e.dims[lo:min(lo+step+1, len(e.dims))], d)
			lo += i
			if ok && x.Values[j] != 0 {
				r := e.rows[lo]
				v := x.Values[j]
				if e.scale != nil {
					v *= e.scale[r]
				}
				out.Indices = append(out.Indices, r)
				out.Values = append(out.Values, v)
			}
		}
	case x.Sparse():
		for j, d := range x.Indices {
			add(int(d), x.Values[j])
		}
	default:
		for d, v := range x.Values {
			add(d, v)
		}
	}
	if out.Indices == nil {
		out.Indices = []int32{}
	}
	out.normalize()
	return out
}

// estimates writes the expert's estimates into out (by model class; classes the expert
// does not know are left alone). buf has at least len(e.classes) entries.
func (e *taskExpert) estimates(x Vector, out, buf []float64) {
	in := e.input(x)
	if e.dims == nil {
		e.lin.linear(in, buf)
	} else {
		k := e.lin.classes
		for c := 0; c < k; c++ {
			buf[c] = float64(e.lin.b[c])
		}
		for j, r := range in.Indices {
			xv := float64(in.Values[j])
			for c, wv := range e.lin.w[int(r)*k : int(r)*k+k] {
				buf[c] += xv * float64(wv)
			}
		}
	}
	for i, c := range e.classes {
		out[c] = sigmoid(buf[i])
	}
}

// taskIDFScale returns, for each weighted column of lin, the smoothed IDF of its
// dimension among rows over idf (the router's IDF of that dimension).
func taskIDFScale(lin *SoftmaxRegression, xs []Vector, rows []int, idf []float32) []float32 {
	df := make([]int, len(lin.cols))
	for _, j := range rows {
		x := xs[j]
		for k, d := range x.Indices {
			if x.Values[k] != 0 {
				if r := lin.colOf[d]; r >= 0 {
					df[r]++
				}
			}
		}
	}
	n := float64(len(rows))
	scale := make([]float32, len(lin.cols))
	for r, d := range lin.cols {
		own := math.Log((1+n)/(1+float64(df[r]))) + 1
		scale[r] = float32(own / float64(idf[d]))
	}
	return scale
}

// mixExperts blends the experts, weighted by the task probabilities probs, into the shared
// heads' estimates q (in place). experts[t] is nil for a task without one.
func mixExperts(experts []*taskExpert, w float64, x Vector, probs, q []float64) {
	if w == 0 {
		return
	}
	k := len(q)
	scratch := make([]float64, 4*k)
	mix, mass, est, buf := scratch[:k], scratch[k:2*k], scratch[2*k:3*k], scratch[3*k:] // mass: the share of each class's mix the experts gave
	for t, e := range experts {
		if e == nil || probs[t] < minExpertMix {
			continue
		}
		if len(buf) < len(e.classes) {
			buf = make([]float64, len(e.classes))
		}
		e.estimates(x, est, buf)
		for _, c := range e.classes {
			mix[c] += probs[t] * est[c]
			mass[c] += probs[t]
		}
	}
	for c := range q {
		m := mix[c] + (1-mass[c])*q[c]
		q[c] = (1-w)*q[c] + w*m
	}
}

// expertRows says which tasks have at least MinExpertRows labelled rows among tr.
func expertRows(tr []int, taskOf []int, tasks int) []bool {
	n := make([]int, tasks)
	for _, j := range tr {
		if t := taskOf[j]; t >= 0 {
			n[t]++
		}
	}
	has := make([]bool, tasks)
	for t := range n {
		has[t] = n[t] >= MinExpertRows
	}
	return has
}

// newTaskExpert shapes the expert of task t over the classes measured on its rows (a
// class whose targets are all NaN there gets none) and the features in minDF of its
// texts (the most common of them when more than params weights would be needed), with the
// task's IDF when idf (the router's n-gram IDF) is given, or returns nil when fewer than
// two classes were measured.
func newTaskExpert(xs []Vector, dim int, rows []int, qt [][]float64, minDF, params int, idf []float32) *taskExpert {
	k := len(qt[rows[0]])
	var classes []int
	for c := 0; c < k; c++ {
		for _, j := range rows {
			if !math.IsNaN(qt[j][c]) {
				classes = append(classes, c)
				break
			}
		}
	}
	if len(classes) < 2 {
		return nil
	}
	txs := make([]Vector, len(rows))
	for i, j := range rows {
		txs[i] = xs[j]
	}
	e := &taskExpert{lin: newSoftmaxShapeLimit(dim, len(classes), txs, minDF, params), classes: classes}
	if idf != nil && txs[0].Sparse() {
		e.scale = taskIDFScale(e.lin, xs, rows, idf)
	}
	return e
}

// fit prepares the fit of an expert on its rows: its inputs and its rows' quality targets
// restricted to its classes, indexed by the rows' position in rows (so an expert holds
// only its own task's inputs); local maps rows of xs to those positions.
func (e *taskExpert) fit(xs []Vector, rows []int, qt [][]float64, cfg softmaxConfig) (h *linearFit, local func([]int) []int) {
	targets := make(map[int][]float64, len(rows))
	in := make([]Vector, len(rows))
	pos := make(map[int]int, len(rows))
	for i, j := range rows {
		pos[j] = i
		in[i] = e.input(xs[j])
		t := make([]float64, len(e.classes))
		for c, mc := range e.classes {
			t[c] = qt[j][mc]
		}
		targets[i] = t
	}
	local = func(rs []int) []int {
		out := make([]int, len(rs))
		for i, j := range rs {
			out[i] = pos[j]
		}
		return out
	}
	return &linearFit{lin: e.lin, xs: in, targets: targets, perClass: true, cfg: cfg}, local
}

// fitTaskExperts fits an expert for every task with enough rows. With validation rows it
// fits them on tr first, at each L2 of the grid (strongest first, warm-started), keeps the
// L2 with the lowest pooled validation log loss (rep.TaskExpertL2) and returns the experts
// fitted on tr in valExperts, for choosing the weight; the returned experts are refitted
// on all rows (from those weights). Without validation rows they are fitted on all rows at
// the grid's strongest L2. minDFShare is the shared heads' feature threshold as a share of
// the rows, applied to each task's rows (at least minExpertDF).
func fitTaskExperts(ctx context.Context, xs []Vector, dim int, idf []float32, taskOf []int, tasks int, qt [][]float64,
	all, tr, val []int, minDFShare float64, params int, grid []float64, cfg softmaxConfig, rep *FitReport) (final, valExperts []*taskExpert, err error) {
	has := expertRows(tr, taskOf, tasks)
	if len(val) == 0 {
		has = expertRows(all, taskOf, tasks)
	}
	byTask := func(rows []int) [][]int {
		out := make([][]int, tasks)
		for _, j := range rows {
			if t := taskOf[j]; t >= 0 && has[t] {
				out[t] = append(out[t], j)
			}
		}
		return out
	}
	allRows, trRows, valRows := byTask(all), byTask(tr), byTask(val)
	// The experts share one head's budget of weights, so that a data set with many tasks
	// (or many models) keeps the router's size and training memory bounded: when their
	// features would need more, each keeps its most common ones, in proportion to its need.
	final = make([]*taskExpert, tasks)
	minDF := func(t int) int { return max(minExpertDF, int(math.Ceil(minDFShare*float64(len(allRows[t]))))) }
	need := 0
	for t := range final {
		if !has[t] {
			continue
		}
		if e := newTaskExpert(xs, dim, allRows[t], qt, minDF(t), params, idf); e != nil {
			final[t] = e
			need += len(e.lin.cols) * e.lin.classes
		}
	}
	fits := make([]*linearFit, tasks)
	for t, e := range final {
		if e == nil {
			continue
		}
		if need > params {
			share := int(float64(params) * float64(len(e.lin.cols)*e.lin.classes) / float64(need))
			e = newTaskExpert(xs, dim, allRows[t], qt, minDF(t), share, idf)
			final[t] = e
		}
		var local func([]int) []int
		fits[t], local = e.fit(xs, allRows[t], qt, cfg)
		allRows[t], trRows[t], valRows[t] = local(allRows[t]), local(trRows[t]), local(valRows[t])
		rep.TaskExperts++
	}
	if rep.TaskExperts == 0 {
		return nil, nil, nil
	}
	order := slices.Clone(grid)
	slices.SortFunc(order, func(a, b float64) int { return cmp.Compare(b, a) })
	chosen := order[0]
	warm := make([][]float64, tasks)
	if len(val) > 0 {
		// One L2 for every expert, by the pooled log loss on their own tasks' validation rows.
		best := math.Inf(1)
		theta := make([][]float64, tasks)
		for _, l2 := range order {
			var loss float64
			var n int
			for t, h := range fits {
				if h == nil || len(trRows[t]) < 2 {
					continue
				}
				set := h.set(trRows[t])
				if theta[t] == nil {
					theta[t] = h.init(set)
				}
				c := h.cfg
				c.L2 = l2
				if theta[t], _, err = trainSoftmax(ctx, set, c, theta[t]); err != nil {
					return nil, nil, err
				}
				h.lin.setParams(theta[t])
				out := make([]float64, h.lin.classes)
				for _, i := range valRows[t] {
					(&QualityHeads{lin: h.lin}).Estimates(h.xs[i], out)
					loss += logisticLoss(out, h.targets[i])
					n++
				}
			}
			if n > 0 {
				loss /= float64(n)
			}
			cfg.Logger.Debug("inference: task expert l2 trial", "l2", l2, "log_loss", loss)
			if loss < best {
				best, chosen = loss, l2
				for t := range theta {
					warm[t] = slices.Clone(theta[t])
				}
			}
		}
		valExperts = make([]*taskExpert, tasks)
		for t, e := range final {
			if e == nil || warm[t] == nil {
				continue
			}
			lin := *e.lin
			lin.setParams(warm[t])
			valExperts[t] = &taskExpert{lin: &lin, classes: e.classes, scale: e.scale}
		}
	}
	rep.TaskExpertL2 = chosen
	for t, h := range fits {
		if h == nil {
			continue
		}
		h.cfg.L2 = chosen
		theta, err := h.fit(ctx, allRows[t], warm[t])
		if err != nil {
			return nil, nil, err
		}
		final[t].lin.setParams(theta)
		final[t].seal()
	}
	return final, valExperts, nil
}
