package inference

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// syntheticExamples builds rows whose best model follows the topic of the prompt.
func syntheticExamples(n int) []Example {
	topics := []struct {
		model string
		words []string
	}{
		{"acme/mathematician", []string{"integral", "equation", "solve", "derivative", "prime", "matrix", "probability"}},
		{"acme/coder", []string{"python", "function", "compile", "golang", "bug", "stack trace", "refactor"}},
		{"acme/poet", []string{"poem", "sonnet", "rhyme", "metaphor", "haiku", "stanza", "verse"}},
	}
	out := make([]Example, 0, n)
	for i := 0; i < n; i++ {
		t := topics[i%len(topics)]
		w1, w2 := t.words[i%len(t.words)], t.words[(i/3+2)%len(t.words)]
		text := fmt.Sprintf("Please help me with this %s task: %s and %s, case %d.", t.model[5:], w1, w2, i)
		labels := []string{t.model}
		if i%7 == 0 { // some rows have two correct models
			labels = append(labels, topics[(i+1)%len(topics)].model)
		}
		out = append(out, Example{Text: text, Labels: labels})
	}
	return out
}

func TestFitPredictLearnsTopics(t *testing.T) {
	ctx := context.Background()
	train := syntheticExamples(90)
	train = append(train, Example{Text: "nobody got this right"}, Example{Text: "nor this", Labels: []string{}})
	m, rep, err := Fit(ctx, train, FitOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Skipped != 2 || rep.Used != 90 || rep.Rows != 92 || rep.Classes != 3 {
		t.Fatalf("report counts = %+v", rep)
	}
	if len(rep.Trials) != len(defaultL2Grid) || rep.ValidationRows < 15 || rep.ValidationRows > 18 || !slices.Contains(defaultL2Grid, rep.L2) {
		t.Fatalf("L2 selection not reported: %+v", rep)
	}
	if m.EmbedderName() != NGramName {
		t.Fatalf("EmbedderName = %q", m.EmbedderName())
	}
	if got := m.Classes(); !slices.Equal(got, []string{"acme/coder", "acme/mathematician", "acme/poet"}) {
		t.Fatalf("Classes = %v", got)
	}
	queries := []string{
		"solve this integral equation for me",
		"my golang function has a bug, here is the stack trace",
		"write a haiku with a metaphor about autumn",
	}
	want := []string{"acme/mathematician", "acme/coder", "acme/poet"}
	preds, err := m.Predict(ctx, queries)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range preds {
		if len(p) != 3 {
			t.Fatalf("prediction %d has %d models", i, len(p))
		}
		for j, r := range p {
			if !(r.Prob >= 0 && r.Prob <= 1) || !(r.Quality > 0 && r.Quality < 1) {
				t.Fatalf("prediction %d: scores out of range: %v", i, p)
			}
			if j > 0 && r.Prob > p[j-1].Prob {
				t.Fatalf("prediction %d not sorted: %v", i, p)
			}
		}
		if p[0].Model != want[i] {
			t.Errorf("query %q: top %v, want %s", queries[i], p, want[i])
		}
	}
}

func TestFitUsesScoresAsTargets(t *testing.T) {
	ctx := context.Background()
	// Labels say "a/x" everywhere, but scores prefer "a/y" on prompts about cats: the
	// scores must win when present.
	var ex []Example
	for i := 0; i < 40; i++ {
		if i%2 == 0 {
			ex = append(ex, Example{Text: fmt.Sprintf("a question about cats number %d", i), Labels: []string{"a/x"},
				Scores: map[string]float64{"a/x": 0.2, "a/y": 0.9}})
		} else {
			ex = append(ex, Example{Text: fmt.Sprintf("a question about rockets number %d", i), Labels: []string{"a/x"},
				Scores: map[string]float64{"a/x": 1, "a/y": 0}})
		}
	}
	m, rep, err := Fit(ctx, ex, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The report hands back the validation rows: their estimates by the heads fitted
	// without them, their observed scores, and which examples they were.
	if n := len(rep.ValidationIndices); n != 8 || len(rep.ValidationEstimates) != n || len(rep.ValidationOutcomes) != n {
		t.Fatalf("validation rows: %d indices, %d estimates, %d outcomes; want 8 (20%% of 40)",
			len(rep.ValidationIndices), len(rep.ValidationEstimates), len(rep.ValidationOutcomes))
	}
	seen := map[int]bool{}
	for k, j := range rep.ValidationIndices {
		if j < 0 || j >= len(ex) || seen[j] {
			t.Fatalf("validation index %d out of range or repeated", j)
		}
		seen[j] = true
		if o := rep.ValidationOutcomes[k]; o[0] != ex[j].Scores["a/x"] || o[1] != ex[j].Scores["a/y"] {
			t.Fatalf("validation row %d: outcomes %v, example scores %v", j, o, ex[j].Scores)
		}
		if e := rep.ValidationEstimates[k]; !(e[0] > 0 && e[0] < 1 && e[1] > 0 && e[1] < 1) {
			t.Fatalf("validation row %d: estimates %v", j, e)
		}
	}
	p, err := m.Predict(ctx, []string{"another question about cats"})
	if err != nil {
		t.Fatal(err)
	}
	if p[0][0].Model != "a/y" {
		t.Fatalf("scores ignored: %v", p[0])
	}
	m2, _, err := Fit(ctx, ex, FitOptions{IgnoreScores: true})
	if err != nil {
		t.Fatal(err)
	}
	p, _ = m2.Predict(ctx, []string{"another question about cats"})
	if p[0][0].Model != "a/x" {
		t.Fatalf("IgnoreScores: %v", p[0])
	}
}

func TestFitRejectsUnusableInput(t *testing.T) {
	ctx := context.Background()
	cases := map[string][]Example{
		"no rows":        nil,
		"all skipped":    {{Text: "a"}, {Text: "b"}, {Text: "c", Scores: map[string]float64{"p/m": 0}}},
		"one class":      {{Text: "a", Labels: []string{"p/m"}}, {Text: "b", Labels: []string{"p/m"}}},
		"score too big":  {{Text: "a", Labels: []string{"p/m"}, Scores: map[string]float64{"p/m": 2}}, {Text: "b", Labels: []string{"p/n"}}},
		"empty label":    {{Text: "a", Labels: []string{""}}, {Text: "b", Labels: []string{"p/n"}}},
		"one usable row": {{Text: "a", Labels: []string{"p/m", "p/n"}}, {Text: "b"}},
	}
	for name, ex := range cases {
		_, _, err := Fit(ctx, ex, FitOptions{})
		var ve *ValidationError
		if !errors.Is(err, ErrInvalid) || !errors.As(err, &ve) || ve.Field == "" {
			t.Errorf("%s: err = %v, want a ValidationError matching ErrInvalid", name, err)
		}
	}
	_, _, err := Fit(ctx, syntheticExamples(12), FitOptions{Embedder: "word2vec"})
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown embedder: err = %v", err)
	}
}

func TestFitStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := Fit(ctx, syntheticExamples(30), FitOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestModelRoundTripPredictsExactly(t *testing.T) {
	ctx := context.Background()
	m, _, err := Fit(ctx, syntheticExamples(60), FitOptions{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	blob, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	m2, err := LoadModel(blob, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	queries := []string{"solve the prime equation", "refactor python", "a sonnet", "", "unrelated words entirely ü 日本"}
	p1, err := m.Predict(ctx, queries)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := m2.Predict(ctx, queries)
	if err != nil {
		t.Fatal(err)
	}
	for i := range p1 {
		if !slices.Equal(p1[i], p2[i]) {
			t.Fatalf("query %d: %v after round trip, %v before", i, p2[i], p1[i])
		}
	}
	if m2.EmbedderName() != m.EmbedderName() || !slices.Equal(m2.Classes(), m.Classes()) {
		t.Fatal("metadata lost in round trip")
	}
	blob2, _ := m2.MarshalBinary()
	if string(blob2) != string(blob) {
		t.Fatal("re-serialising a loaded model changed it")
	}
	for name, bad := range map[string][]byte{"empty": nil, "foreign": []byte("{}"), "truncated": blob[:len(blob)/2]} {
		if _, err := LoadModel(bad, LoadOptions{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s blob: err = %v, want ErrInvalid", name, err)
		}
	}
}

func TestPredictTiesAreDeterministic(t *testing.T) {
	r := []Ranked{{Model: "b/z", Prob: 0.25}, {Model: "a/z", Prob: 0.25}, {Model: "c/z", Prob: 0.5}}
	sortRanked(r)
	if r[0].Model != "c/z" || r[1].Model != "a/z" || r[2].Model != "b/z" {
		t.Fatalf("sorted = %v", r)
	}
}

func TestPredictConcurrently(t *testing.T) {
	ctx := context.Background()
	m, _, err := Fit(ctx, syntheticExamples(45), FitOptions{L2: []float64{1e-3}})
	if err != nil {
		t.Fatal(err)
	}
	q := []string{"solve an integral", "python stack trace", "a haiku"}
	want, err := m.Predict(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			got, err := m.Predict(ctx, q)
			if err == nil {
				for i := range got {
					if !slices.Equal(got[i], want[i]) {
						err = fmt.Errorf("query %d: %v, want %v", i, got[i], want[i])
					}
				}
			}
			errs <- err
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// reload returns m saved and loaded again.
// textsOf returns the examples' texts, in order.
func textsOf(examples []Example) []string {
	texts := make([]string, len(examples))
	for i, ex := range examples {
		texts[i] = ex.Text
	}
	return texts
}

func reload(t *testing.T, m *Model) *Model {
	t.Helper()
	blob, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadModel(blob, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return loaded
}

// A Model not made by Fit or Load answers with ErrInvalid instead of panicking.
func TestZeroModelIsAnError(t *testing.T) {
	var m Model
	if _, err := m.Predict(context.Background(), []string{"x"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Predict: %v", err)
	}
	if _, err := m.MarshalBinary(); !errors.Is(err, ErrInvalid) {
		t.Errorf("MarshalBinary: %v", err)
	}
	if m.EmbedderName() != "" || m.Close() != nil {
		t.Error("EmbedderName/Close of a zero Model")
	}
}
