package inference

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"testing"
)

// expertExamples builds two tasks in which one marker word means opposite things: p/a
// answers the algebra prompts that say "alpha" and the poems that say "beta", and fails
// the others; p/b answers every second prompt at random. One linear head per model over
// the shared features cannot express "alpha helps in algebra and hurts in poetry" (its
// weight for alpha is one number); an expert per task can.
func expertExamples(n int, seed uint64) []Example {
	rng := rand.New(rand.NewPCG(seed, 9))
	templates := map[string]string{"algebra": "solve the equation for x and simplify", "poetry": "write a short poem about the sea in rhyme"}
	var ex []Example
	for i := 0; i < n; i++ {
		for _, task := range []string{"algebra", "poetry"} {
			marker := []string{"alpha", "beta"}[rng.IntN(2)]
			a := 0.0
			if (task == "algebra") == (marker == "alpha") {
				a = 1
			}
			b := float64(rng.IntN(2))
			// The marker leads and a random word parts it from the template, so that no
			// word pair or character n-gram spans both.
			ex = append(ex, Example{Text: fmt.Sprintf("%s w%dy %s w%dz", marker, rng.IntN(1000), templates[task], rng.IntN(1000)),
				Scores: map[string]float64{"p/a": a, "p/b": b}, Task: task})
		}
	}
	return ex
}

// TestTaskExpertsLearnPerTaskSignal checks that the task experts learn what the shared
// heads cannot (a word whose meaning depends on the task), that the validation split
// chooses to use them, and that a saved router (full and half precision) predicts as the
// fitted one did.
func TestTaskExpertsLearnPerTaskSignal(t *testing.T) {
	ctx := context.Background()
	ex := expertExamples(300, 1)
	opts := FitOptions{Seed: 1, Estimator: EstimatorQuality, TaskPriorWeights: []float64{0}, SkipCalibration: true}
	m, rep, err := Fit(ctx, ex, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.TaskExperts != 2 || rep.TaskExpertWeight == 0 || len(rep.TaskExpertTrials) != len(defaultTaskExpertWeights) {
		t.Fatalf("experts %d weight %v trials %+v", rep.TaskExperts, rep.TaskExpertWeight, rep.TaskExpertTrials)
	}
	opts.TaskExpertWeights = []float64{0}
	shared, srep, err := Fit(ctx, ex, opts)
	if err != nil {
		t.Fatal(err)
	}
	if srep.TaskExperts != 0 || shared.Quality().prior != nil {
		t.Fatalf("experts off: %d experts fitted", srep.TaskExperts)
	}
	test := expertExamples(100, 2)
	texts := textsOf(test)
	// Mean absolute error of p/a's estimate against its 0/1 outcome.
	errOf := func(m *Model) float64 {
		preds, err := m.Predict(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for i, p := range preds {
			for _, r := range p {
				if r.Model == "p/a" {
					sum += math.Abs(r.Quality - test[i].Scores["p/a"])
				}
			}
		}
		return sum / float64(len(preds))
	}
	withExperts, sharedOnly := errOf(m), errOf(shared)
	if sharedOnly < 0.4 {
		t.Fatalf("the shared heads alone err by %.3f on p/a: the test needs a signal they cannot learn", sharedOnly)
	}
	if withExperts > 0.25 {
		t.Errorf("with task experts p/a's estimates err by %.3f (shared heads alone %.3f), want ≤ 0.25", withExperts, sharedOnly)
	}
	full := reload(t, m)
	blob, err := m.MarshalBinaryHalf()
	if err != nil {
		t.Fatal(err)
	}
	half, err := LoadModel(blob, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := m.Predict(ctx, texts)
	for name, tol := range map[*Model]float64{full: 1e-9, half: 2e-3} {
		got, err := name.Predict(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			for j := range want[i] {
				if got[i][j].Model != want[i][j].Model || math.Abs(got[i][j].Quality-want[i][j].Quality) > tol {
					t.Fatalf("saved router (tolerance %g) predicts %+v, the fitted one %+v", tol, got[i], want[i])
				}
			}
		}
	}
}

// TestTaskExpertsNeedRows checks that a task with fewer than MinExpertRows training rows
// gets no expert (its prompts keep the shared heads' estimate) and that a bad weight is
// refused.
func TestTaskExpertsNeedRows(t *testing.T) {
	ctx := context.Background()
	ex := expertExamples(MinExpertRows/2, 1)
	_, rep, err := Fit(ctx, ex, FitOptions{Seed: 1, Estimator: EstimatorQuality})
	if err != nil {
		t.Fatal(err)
	}
	if rep.TaskExperts != 0 || rep.TaskExpertWeight != 0 {
		t.Errorf("%d rows per task: %d experts, weight %v", MinExpertRows/2, rep.TaskExperts, rep.TaskExpertWeight)
	}
	if _, _, err := Fit(ctx, ex, FitOptions{TaskExpertWeights: []float64{-0.1}}); err == nil {
		t.Error("expert weight -0.1 accepted")
	}
}

// TestTaskExpertsOnDenseVectors runs the experts over dense embeddings (the ONNX
// embedder's kind): no IDF re-weighting, every dimension a column, and the same per-task
// signal learned as with n-grams. Dimension 0 says the task, dimension 1 the marker; p/a
// answers when they agree.
func TestTaskExpertsOnDenseVectors(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var xs []Vector
	var qt [][]float64
	var taskOf []int
	for i := 0; i < 600; i++ {
		task, marker := i%2, rng.IntN(2)
		v := Vector{Values: []float32{float32(2*task - 1), float32(2*marker - 1), float32(rng.NormFloat64()), 1}}
		v.normalize()
		xs = append(xs, v)
		a := 0.0
		if task == marker {
			a = 1
		}
		qt = append(qt, []float64{a, float64(rng.IntN(2))})
		taskOf = append(taskOf, task)
	}
	var all, tr, val []int
	for j := range xs {
		all = append(all, j)
		if j%5 == 0 {
			val = append(val, j)
		} else {
			tr = append(tr, j)
		}
	}
	rep := &FitReport{}
	cfg := softmaxConfig{Workers: 1, Logger: slog.New(slog.DiscardHandler)}
	final, valExperts, err := fitTaskExperts(context.Background(), xs, 4, nil, taskOf, 2, qt, all, tr, val, 0, maxParams, []float64{1e-4}, cfg, rep)
	if err != nil {
		t.Fatal(err)
	}
	if rep.TaskExperts != 2 || len(valExperts) != 2 || final[0].scale != nil {
		t.Fatalf("%d experts, %d for validation, scale %v", rep.TaskExperts, len(valExperts), final[0].scale)
	}
	var wrong int
	for _, j := range val {
		q := []float64{0.5, 0.5}
		probs := []float64{0, 0}
		probs[taskOf[j]] = 1
		mixExperts(final, 1, xs[j], probs, q)
		if (q[0] > 0.5) != (qt[j][0] == 1) {
			wrong++
		}
	}
	if wrong > len(val)/20 {
		t.Errorf("experts on dense vectors got p/a wrong on %d of %d prompts", wrong, len(val))
	}
}

// TestTaskExpertsShareOneBudget checks that the experts together keep within the weight
// budget given (one head's, in Fit), keeping each task's most common features: many tasks
// must not multiply a router's size and training memory.
func TestTaskExpertsShareOneBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	var xs []Vector
	var qt [][]float64
	var taskOf []int
	for i := 0; i < 4*150; i++ {
		var v Vector
		for d := int32(0); d < 400; d++ {
			if rng.IntN(10) == 0 {
				v.Indices = append(v.Indices, d)
				v.Values = append(v.Values, 1)
			}
		}
		v.normalize()
		xs = append(xs, v)
		qt = append(qt, []float64{float64(rng.IntN(2)), float64(rng.IntN(2)), float64(rng.IntN(2))})
		taskOf = append(taskOf, i%4)
	}
	all := make([]int, len(xs))
	for j := range all {
		all[j] = j
	}
	const budget = 600
	rep := &FitReport{}
	cfg := softmaxConfig{Workers: 1, MaxIterations: 5, Logger: slog.New(slog.DiscardHandler)}
	final, _, err := fitTaskExperts(context.Background(), xs, 400, nil, taskOf, 4, qt, all, all, nil, 0, budget, []float64{1e-3}, cfg, rep)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, e := range final {
		if e == nil {
			t.Fatal("a task with 150 rows got no expert")
		}
		total += len(e.lin.cols) * e.lin.classes
		if len(e.lin.cols) == 0 {
			t.Error("an expert kept no feature")
		}
	}
	if rep.TaskExperts != 4 || total > budget {
		t.Errorf("%d experts hold %d weights, budget %d", rep.TaskExperts, total, budget)
	}
}
