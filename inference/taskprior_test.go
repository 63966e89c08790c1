package inference

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// taskExamples builds two tasks whose prompts share a template and whose per-row outcomes
// are coin flips with task-dependent odds: p/a answers 80% of the algebra prompts and 30%
// of the poems, p/b 35% and 75%. Each prompt also carries two words of its own, so a
// per-model head can memorise the noise of single rows; the task's mean cannot.
func taskExamples(n int) ([]Example, map[string][2]float64) {
	rng := rand.New(rand.NewPCG(3, 4))
	odds := map[string][2]float64{"algebra": {0.8, 0.35}, "poetry": {0.3, 0.75}}
	templates := map[string]string{"algebra": "solve the equation for x and simplify", "poetry": "write a short poem about the sea in rhyme"}
	var ex []Example
	for i := 0; i < n; i++ {
		for _, task := range []string{"algebra", "poetry"} {
			scores := map[string]float64{}
			for m, name := range []string{"p/a", "p/b"} {
				scores[name] = 0
				if rng.Float64() < odds[task][m] {
					scores[name] = 1
				}
			}
			ex = append(ex, Example{Text: fmt.Sprintf("%s w%dx w%dy", templates[task], rng.IntN(1000), rng.IntN(1000)),
				Scores: scores, Task: task})
		}
	}
	return ex, odds
}

// TestTaskPriorBlendsTaskMeans checks that with task labels the quality estimates draw on
// each model's mean score per task: with the prior alone (weight 1) a new prompt of a task
// gets that task's observed rates, a saved router predicts the same, and the default grid
// records a validation trial for every weight.
func TestTaskPriorBlendsTaskMeans(t *testing.T) {
	ctx := context.Background()
	ex, _ := taskExamples(150)
	mean := map[string][2]float64{}
	count := map[string]float64{}
	for _, e := range ex {
		v := mean[e.Task]
		v[0] += e.Scores["p/a"]
		v[1] += e.Scores["p/b"]
		mean[e.Task] = v
		count[e.Task]++
	}
	// Heads that memorise single rows (every n-gram weighted, little regularisation), so
	// that on a training prompt whose outcome went against its task's odds they disagree
	// with the task's mean.
	opts := FitOptions{Seed: 1, Estimator: EstimatorQuality, MinDF: 1, QualityL2: []float64{1e-6}, TaskPriorWeights: []float64{1}, TaskExpertWeights: []float64{0}, SkipCalibration: true}
	m, rep, err := Fit(ctx, ex, opts)
	if err != nil {
		t.Fatal(err)
	}
	names, w := m.Quality().Tasks()
	if !slices.Equal(names, []string{"algebra", "poetry"}) || w != 1 || rep.Tasks != 2 || rep.TaskPriorWeight != 1 {
		t.Fatalf("tasks %v weight %v report %+v", names, w, rep)
	}
	var atypical Example // an algebra row p/a failed
	for _, e := range ex {
		if e.Task == "algebra" && e.Scores["p/a"] == 0 {
			atypical = e
			break
		}
	}
	prompts := []string{atypical.Text, "write a short poem about the sea in rhyme w5001y"}
	preds, err := m.Predict(ctx, prompts)
	if err != nil {
		t.Fatal(err)
	}
	for i, task := range []string{"algebra", "poetry"} {
		for _, r := range preds[i] {
			c := map[string]int{"p/a": 0, "p/b": 1}[r.Model]
			want := mean[task][c] / count[task]
			if math.Abs(r.Quality-want) > 0.05 {
				t.Errorf("%s prompt: %s estimate %.3f, want the task's mean %.3f", task, r.Model, r.Quality, want)
			}
		}
	}
	opts.TaskPriorWeights = []float64{0}
	heads, _, err := Fit(ctx, ex, opts)
	if err != nil {
		t.Fatal(err)
	}
	hp, err := heads.Predict(ctx, prompts[:1])
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range hp[0] {
		if want := mean["algebra"][0] / count["algebra"]; r.Model == "p/a" && r.Quality > want-0.15 {
			t.Fatalf("the heads alone estimate p/a at %.3f on a row it failed (task mean %.3f): the test needs heads that memorise", r.Quality, want)
		}
	}
	loaded := reload(t, m)
	again, err := loaded.Predict(ctx, prompts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(preds[0], again[0], func(a, b Ranked) bool { return a.Model == b.Model && math.Abs(a.Quality-b.Quality) < 1e-6 }) {
		t.Errorf("saved router predicts %v, the fitted one %v", again[0], preds[0])
	}
	if n, w := loaded.Quality().Tasks(); len(n) != 2 || w != 1 {
		t.Errorf("saved router's tasks %v weight %v", n, w)
	}

	// Default grid: every weight is tried on the validation split.
	_, rep, err = Fit(ctx, ex, FitOptions{Seed: 1, Estimator: EstimatorQuality})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.TaskPriorTrials) != len(defaultTaskPriorWeights) || !slices.Contains(defaultTaskPriorWeights, rep.TaskPriorWeight) {
		t.Errorf("default grid trials %+v, chosen %v", rep.TaskPriorTrials, rep.TaskPriorWeight)
	}
}

// TestTaskPriorOffWithoutTasks checks when no prior is fitted: weight 0, rows without
// tasks, or tasks with fewer than MinTaskRows rows; and that a bad weight is refused.
func TestTaskPriorOffWithoutTasks(t *testing.T) {
	ctx := context.Background()
	ex, _ := taskExamples(60)
	cases := map[string]func([]Example) ([]Example, FitOptions){
		"weight 0": func(e []Example) ([]Example, FitOptions) {
			return e, FitOptions{TaskPriorWeights: []float64{0}, TaskExpertWeights: []float64{0}}
		},
		"no tasks": func(e []Example) ([]Example, FitOptions) {
			for i := range e {
				e[i].Task = ""
			}
			return e, FitOptions{}
		},
		"rare tasks": func(e []Example) ([]Example, FitOptions) {
			for i := range e {
				e[i].Task = fmt.Sprintf("t%d", i%(len(e)/(MinTaskRows-1)+1))
			}
			return e, FitOptions{}
		},
	}
	for name, mk := range cases {
		e, opts := mk(slices.Clone(ex))
		opts.Seed, opts.Estimator = 1, EstimatorQuality
		m, rep, err := Fit(ctx, e, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n, w := m.Quality().Tasks(); n != nil || w != 0 || rep.Tasks != 0 {
			t.Errorf("%s: tasks %v weight %v report tasks %d", name, n, w, rep.Tasks)
		}
	}
	_, _, err := Fit(ctx, ex, FitOptions{TaskPriorWeights: []float64{1.5}})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "TaskPriorWeights") {
		t.Errorf("weight 1.5: %v", err)
	}
}

// TestTaskPriorIgnoresUnmeasuredTasks merges data sets that measured different models: p/c
// was only measured on algebra. The prior must not speak for p/c on poems (its mean there
// is unknown, not p/c's overall mean), so a prompt recognised as a poem keeps p/c's head
// estimate, while p/a, measured on both, gets its poetry mean.
func TestTaskPriorIgnoresUnmeasuredTasks(t *testing.T) {
	qt := [][]float64{{1, 1}, {1, 0}, {0, math.NaN()}, {0, math.NaN()}}
	taskOf := []int{0, 0, 1, 1} // algebra, algebra, poetry, poetry
	means := taskMeans([]int{0, 1, 2, 3}, taskOf, 2, 2, qt)
	if !math.IsNaN(means[1*2+1]) || math.IsNaN(means[0*2+1]) {
		t.Fatalf("means %v: p/c must be unknown on poetry only", means)
	}
	// A task head that is sure every prompt is poetry (bias only).
	head := &SoftmaxRegression{dim: 1, classes: 2, b: []float32{-50, 50}, colOf: []int32{-1}}
	p := &taskPrior{names: []string{"algebra", "poetry"}, head: head, means: means, weight: 1}
	q := []float64{0.7, 0.42}
	p.blend(Vector{Values: []float32{0}}, q)
	if math.Abs(q[1]-0.42) > 1e-9 {
		t.Errorf("p/c on a poem: %.4f, want its head's 0.42 (the prior knows nothing of p/c there)", q[1])
	}
	if want := means[1*2+0]; math.Abs(q[0]-want) > 1e-9 {
		t.Errorf("p/a on a poem: %.4f, want its poetry mean %.4f", q[0], want)
	}
}
