package inference

import (
	"context"
	"math"
	"slices"
)

// A task prior estimates a model's quality on a prompt from the kind of prompt it is: a
// softmax head predicts the prompt's task (the benchmark or workload it belongs to, from
// Example.Task) and the prior is the mean score of each model on the training rows of
// each task, weighted by those probabilities. Per-model heads see every prompt alone and
// their estimates for two models carry independent noise; a task's mean score rests on
// hundreds of rows, so blending it in steadies what the ranking and the tradeoff compare.
// On llmrouter9 (14 tasks) the blend raised the held-out mean score of the pick by about
// 2 points (BENCHMARKS.md, "Model selection").

// MinTaskRows is how many training rows must carry a task label for the task to be
// learned; rows of rarer tasks train the quality heads only.
const MinTaskRows = 10

// defaultTaskPriorWeights are the prior weights λ tried on the validation split when
// FitOptions.TaskPriorWeights is empty.
var defaultTaskPriorWeights = []float64{0, 0.25, 0.5, 0.75}

// defaultTaskL2 is the task head's regularisation when FitOptions.TaskL2 is empty. The task
// experts take the head's probabilities at their word: at 1e-4 the head was right on 92% of
// llmrouter9's held-out prompts but gave its pick 0.66 on average, and mixing the experts by
// those probabilities lost most of what they knew (log loss 0.514 against 0.484 with the
// true task); at 1e-6 it gives 0.91 and the mix 0.492. Chosen from {1e-4, 1e-5, 1e-6} by the
// head's validation log loss, 1e-6 won in all five folds of a cross-validation; one value
// saves two of the head's fits (about 6 s of a 5,608-row fit).
var defaultTaskL2 = []float64{1e-6}

// taskPriorSmoothing is the pseudo-count pulling a task's mean score towards the model's
// mean over all tasks, so a task with few rows does not swing the estimates.
const taskPriorSmoothing = 5

// taskPrior is a fitted task head with the per-task mean scores; immutable once fitted.
type taskPrior struct {
	names  []string
	head   *SoftmaxRegression
	means  []float64 // tasks × classes, row-major
	weight float64   // λ in (1−λ)·heads + λ·prior
	// experts are the task experts (nil entries: tasks without one), mixed in with weight
	// expertWeight before the prior (see taskexperts.go).
	experts      []*taskExpert
	expertWeight float64
}

// blend mixes the task experts and then the prior into the quality heads' estimates q (in
// place).
func (p *taskPrior) blend(x Vector, q []float64) {
	probs := make([]float64, len(p.names))
	p.head.Probabilities(x, probs)
	mixExperts(p.experts, p.expertWeight, x, probs, q)
	p.blendPrior(probs, q)
}

// blendPrior mixes the prior, given the task probabilities, into q (in place).
func (p *taskPrior) blendPrior(probs, q []float64) {
	if p.weight == 0 {
		return
	}
	k := len(q)
	for c := range q {
		var prior float64
		for i, pr := range probs {
			m := p.means[i*k+c]
			if math.IsNaN(m) {
				// A task the model was never measured on says nothing about it: its
				// share of the prior is the head's own estimate.
				m = q[c]
			}
			prior += pr * m
		}
		q[c] = (1-p.weight)*q[c] + p.weight*prior
	}
}

// TaskPriorTrial is the validation result of one task-prior weight.
type TaskPriorTrial struct {
	Weight float64
	// MeanScore is the mean target of the top pick on the validation rows.
	MeanScore float64
	// LogLoss is the mean per-model logistic loss of the estimates on the validation rows.
	LogLoss float64
}

// taskLabels returns the learnable task names (at least MinTaskRows rows each, sorted)
// and each row's index among them (-1 for none), or nil when fewer than two tasks qualify.
func taskLabels(tasks []string) ([]string, []int) {
	count := map[string]int{}
	for _, t := range tasks {
		if t != "" {
			count[t]++
		}
	}
	var names []string
	for t, n := range count {
		if n >= MinTaskRows {
			names = append(names, t)
		}
	}
	if len(names) < 2 {
		return nil, nil
	}
	slices.Sort(names)
	idx := make([]int, len(tasks))
	for i, t := range tasks {
		idx[i] = -1
		if j, ok := slices.BinarySearch(names, t); ok && t != "" {
			idx[i] = j
		}
	}
	return names, idx
}

// taskMeans returns the smoothed mean target of every class on the rows of each task, NaN
// where the class was never measured on the task.
func taskMeans(rows []int, taskOf []int, tasks, k int, qt [][]float64) []float64 {
	sum := make([]float64, tasks*k)
	n := make([]float64, tasks*k)
	gsum, gn := make([]float64, k), make([]float64, k)
	for _, j := range rows {
		for c, v := range qt[j] {
			if math.IsNaN(v) {
				continue
			}
			gsum[c] += v
			gn[c]++
			if t := taskOf[j]; t >= 0 {
				sum[t*k+c] += v
				n[t*k+c]++
			}
		}
	}
	means := make([]float64, tasks*k)
	for c := 0; c < k; c++ {
		global := 0.5
		if gn[c] > 0 {
			global = gsum[c] / gn[c]
		}
		for t := 0; t < tasks; t++ {
			if n[t*k+c] == 0 {
				// Never measured on this task (merged data sets): the prior knows
				// nothing, and blend falls back to the head there.
				means[t*k+c] = math.NaN()
				continue
			}
			means[t*k+c] = (sum[t*k+c] + taskPriorSmoothing*global) / (n[t*k+c] + taskPriorSmoothing)
		}
	}
	return means
}

// fitTaskPrior fits the task head and chooses the prior's weight on the validation rows
// (valQual holds the quality heads' validation estimates, blended in place with the chosen
// weight). It returns nil when the rows carry fewer than two learnable tasks or the chosen
// weight is 0.
func fitTaskPrior(ctx context.Context, xs []Vector, dim, minDF int, idf []float32, tasks []string, qt [][]float64,
	all, tr, val []int, valQual map[int][]float64, opts FitOptions, cfg softmaxConfig, rep *FitReport) (*taskPrior, error) {
	weights := opts.TaskPriorWeights
	if len(weights) == 0 {
		weights = defaultTaskPriorWeights
	}
	expertWeights := opts.TaskExpertWeights
	if len(expertWeights) == 0 {
		expertWeights = defaultTaskExpertWeights
	}
	names, taskOf := taskLabels(tasks)
	if names == nil || (isOff(weights) && isOff(expertWeights)) {
		return nil, nil
	}
	rep.Tasks = len(names)
	k := len(qt[0])
	labelled := func(rows []int) []int {
		var out []int
		for _, j := range rows {
			if taskOf[j] >= 0 {
				out = append(out, j)
			}
		}
		return out
	}
	ltr, lval := labelled(tr), labelled(val)
	labelledAll := labelled(all)
	targets := make(map[int][]float64, len(labelledAll))
	lx := make([]Vector, 0, len(labelledAll))
	for _, j := range labelledAll {
		t := make([]float64, len(names))
		t[taskOf[j]] = 1
		targets[j] = t
		lx = append(lx, xs[j])
	}
	// Recognising a task takes its common n-grams (templates, subject words), not rare
	// ones: weighting only n-grams in at least 1% of the labelled texts keeps the head
	// small and its fits fast.
	head := newSoftmaxShape(dim, len(names), lx, max(minDF, len(lx)/100))
	h := linearFit{lin: head, xs: xs, targets: targets, cfg: cfg}
	grid := opts.TaskL2
	if len(grid) == 0 {
		grid = defaultTaskL2
	}
	_, l2, warm, err := h.search(ctx, grid, ltr, lval, func(probs, t []float64) (float64, float64) {
		return 0, -math.Log(max(probs[argmax(t)], 1e-12))
	}, false, len(weights) > 1 || len(expertWeights) > 1 || len(valQual) > 0)
	if err != nil {
		return nil, err
	}
	rep.TaskL2 = l2
	var experts, valExperts []*taskExpert
	if !isOff(expertWeights) {
		grid := opts.TaskExpertL2
		if len(grid) == 0 {
			grid = defaultTaskExpertL2
		}
		expVal := val
		if warm == nil || len(valQual) == 0 {
			expVal = nil
		}
		share := float64(minDF) / float64(max(len(xs), 1))
		if experts, valExperts, err = fitTaskExperts(ctx, xs, dim, idf, taskOf, len(names), qt, all, tr, expVal, share, maxParams, grid, cfg, rep); err != nil {
			return nil, err
		}
	}
	weight, expertWeight := weights[0], expertWeights[0]
	if experts == nil {
		expertWeight = 0
	}
	if warm != nil && len(valQual) > 0 {
		head.setParams(warm)
		valProbs := make(map[int][]float64, len(valQual))
		for j := range valQual {
			pr := make([]float64, len(names))
			head.Probabilities(xs[j], pr)
			valProbs[j] = pr
		}
		if valExperts != nil {
			expertWeight = chooseExpertWeight(valExperts, expertWeights, xs, val, valQual, valProbs, qt, rep)
			for j, q := range valQual {
				mixExperts(valExperts, expertWeight, xs[j], valProbs[j], q)
			}
		}
		p := &taskPrior{names: names, head: head, means: taskMeans(tr, taskOf, len(names), k, qt)}
		best := -1
		for _, w := range weights {
			p.weight = w
			trial := weightTrial(w, val, valQual, qt, func(j int, e []float64) { p.blendPrior(valProbs[j], e) })
			rep.TaskPriorTrials = append(rep.TaskPriorTrials, trial)
			if best < 0 || trial.MeanScore > rep.TaskPriorTrials[best].MeanScore+1e-12 {
				best = len(rep.TaskPriorTrials) - 1
			}
		}
		weight = rep.TaskPriorTrials[best].Weight
		p.weight = weight
		for j, q := range valQual {
			p.blendPrior(valProbs[j], q)
		}
	}
	rep.TaskPriorWeight, rep.TaskExpertWeight = weight, expertWeight
	if weight == 0 && expertWeight == 0 {
		return nil, nil
	}
	if expertWeight == 0 {
		experts = nil
	}
	h.cfg.L2 = l2
	theta, err := h.fit(ctx, labelledAll, warm)
	if err != nil {
		return nil, err
	}
	head.setParams(theta)
	return &taskPrior{names: names, head: head, means: taskMeans(all, taskOf, len(names), k, qt), weight: weight,
		experts: experts, expertWeight: expertWeight}, nil
}

// isOff says whether a weight grid turns its component off (the single weight 0).
func isOff(weights []float64) bool { return len(weights) == 1 && weights[0] == 0 }

// chooseExpertWeight returns the expert weight with the lowest validation log loss of the
// estimates (ties: the smaller weight), recording every trial in rep.
func chooseExpertWeight(experts []*taskExpert, weights []float64, xs []Vector, val []int,
	valQual, valProbs map[int][]float64, qt [][]float64, rep *FitReport) float64 {
	best := -1
	for _, w := range weights {
		trial := weightTrial(w, val, valQual, qt, func(j int, e []float64) { mixExperts(experts, w, xs[j], valProbs[j], e) })
		rep.TaskExpertTrials = append(rep.TaskExpertTrials, trial)
		if b := rep.TaskExpertTrials; best < 0 || trial.LogLoss < b[best].LogLoss-1e-12 ||
			(trial.LogLoss <= b[best].LogLoss+1e-12 && w < b[best].Weight) {
			best = len(b) - 1
		}
	}
	return rep.TaskExpertTrials[best].Weight
}

// weightTrial scores one weight on the validation rows: apply blends a copy of each row's
// estimates with it, and the trial has the mean target of the top pick and the mean
// logistic loss, over the rows with a measured model.
func weightTrial(w float64, val []int, valQual map[int][]float64, qt [][]float64, apply func(j int, e []float64)) TaskPriorTrial {
	trial := TaskPriorTrial{Weight: w}
	n := 0
	for _, j := range val {
		q, ok := valQual[j]
		if !ok {
			continue
		}
		e := slices.Clone(q)
		apply(j, e)
		// The pick among the models measured on the row: in merged data sets (OnlyScored)
		// those are the row's candidates.
		if top := argmaxMeasured(e, qt[j]); top >= 0 {
			trial.MeanScore += qt[j][top]
			n++
		}
		trial.LogLoss += logisticLoss(e, qt[j])
	}
	if n > 0 {
		trial.MeanScore /= float64(n)
		trial.LogLoss /= float64(n)
	}
	return trial
}

// argmaxMeasured returns the class with the highest estimate among those whose target is
// not NaN, or -1 when none is.
func argmaxMeasured(est, target []float64) int {
	best := -1
	for c, v := range est {
		if !math.IsNaN(target[c]) && (best < 0 || v > est[best]) {
			best = c
		}
	}
	return best
}
