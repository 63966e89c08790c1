package inference

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestShapeFeatures(t *testing.T) {
	e, _ := NewNGramEmbedder(NGramConfig{})
	bare, _ := NewNGramEmbedder(NGramConfig{NoShape: true})
	shape := func(text string) map[int32]float32 {
		with, _ := e.termFrequencies(text, nil)
		without, _ := bare.termFrequencies(text, nil)
		out := map[int32]float32{}
		for k, ix := range with.Indices {
			out[ix] = with.Values[k]
		}
		for k, ix := range without.Indices {
			if out[ix] -= without.Values[k]; out[ix] < 1e-6 {
				delete(out, ix)
			}
		}
		return out
	}
	short := shape("What is 2+2?")
	if len(short) != 8 {
		t.Fatalf("%d shape features, want 8: %v", len(short), short)
	}
	for ix, v := range short {
		if math.Abs(float64(v)-(1+math.Log(shapeWeight))) > 1e-5 {
			t.Fatalf("shape feature %d weighs %v, want 1+ln %d", ix, v, shapeWeight)
		}
	}
	// Same words, one the prompt's length doubled many times over: the length features
	// move, the share of digits and the question count's bucket do not.
	long := shape(strings.Repeat("What is 2+2? ", 40))
	same := 0
	for ix := range short {
		if _, ok := long[ix]; ok {
			same++
		}
	}
	if same == len(short) || same == 0 {
		t.Fatalf("%d of %d shape features shared by a short and a 40 times longer text", same, len(short))
	}
	if got := shape("  \n\t "); len(got) != 0 {
		t.Fatalf("blank text has shape features %v", got)
	}
	// Code blocks are marked: fenced or indented.
	plain := shape("print the sum of a and b")
	for _, code := range []string{"print the sum of a and b\n```\nprint(a+b)\n```", "print the sum of a and b:\n    print(a+b)"} {
		if n := len(shape(code)); n != 8 {
			t.Fatalf("%d shape features for %q", n, code)
		}
		differs := 0
		for ix := range shape(code) {
			if _, ok := plain[ix]; !ok {
				differs++
			}
		}
		if differs == 0 {
			t.Fatalf("no shape feature tells %q from plain text", code)
		}
	}
}

// A model that answers short and long prompts well and middling ones badly, with the same
// vocabulary in all: a linear head on the n-grams alone cannot see the difference (it can
// read a text's length from the mass of its normalised vector, but only monotonically),
// the shape features can.
func TestShapeFeaturesLearnLength(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 7))
	vocab := make([]string, 300)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dq", i)
	}
	text := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	var train, test []Example
	for i := range 600 {
		middling := i%2 == 1
		n := 4 + rng.IntN(6)
		switch {
		case middling:
			n = 30 + rng.IntN(30)
		case i%4 == 2:
			n = 150 + rng.IntN(50)
		}
		ex := Example{Text: text(n), Scores: map[string]float64{"ends-model": 1, "steady": 0.5}}
		if middling {
			ex.Scores["ends-model"] = 0
		}
		if i < 400 {
			train = append(train, ex)
		} else {
			test = append(test, ex)
		}
	}
	accuracy := func(cfg NGramConfig) float64 {
		m, _, err := Fit(ctx, train, FitOptions{Estimator: EstimatorQuality, NGram: cfg, SkipCalibration: true})
		if err != nil {
			t.Fatal(err)
		}
		texts := textsOf(test)
		preds, err := m.Predict(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		right := 0
		for i, p := range preds {
			endsWins := p[0].Model == "ends-model"
			if endsWins == (test[i].Scores["ends-model"] == 1) {
				right++
			}
		}
		return float64(right) / float64(len(test))
	}
	with, without := accuracy(NGramConfig{}), accuracy(NGramConfig{NoShape: true})
	t.Logf("held-out accuracy: %.3f with shape features, %.3f without", with, without)
	if with < 0.95 || with < without+0.05 {
		t.Fatalf("shape features do not tell middling prompts from short and long ones: %.3f with, %.3f without", with, without)
	}
}
