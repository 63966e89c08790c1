package inference

import (
	"bufio"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// llmrouterData is the shared routing data set (see ../shared/data/README.md).
const llmrouterData = "../../shared/data/routing/llmrouter9_train.jsonl"

func loadLLMRouter(t testing.TB) []Example {
	t.Helper()
	f, err := os.Open(llmrouterData)
	if os.IsNotExist(err) {
		t.Skipf("skipping: %s is absent (the shared data set lives next to the repository)", llmrouterData)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Example
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r struct {
			Problem       string             `json:"problem"`
			CorrectModels []string           `json:"correct_models"`
			Scores        map[string]float64 `json:"scores"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %d: %v", len(out)+1, err)
		}
		out = append(out, Example{Text: r.Problem, Labels: r.CorrectModels, Scores: r.Scores})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRouterBeatsMostFrequentOnLLMRouter trains on 80% of the real data set and checks, on
// the other 20%, that the router's top-1 hit rate beats always answering with the model
// most often correct in the training part.
func TestRouterBeatsMostFrequentOnLLMRouter(t *testing.T) {
	all := loadLLMRouter(t)
	perm := rand.New(rand.NewPCG(3, 4)).Perm(len(all))
	var train, test []Example
	for i, j := range perm {
		if i%5 == 0 {
			test = append(test, all[j])
		} else {
			train = append(train, all[j])
		}
	}
	ctx := context.Background()
	m, rep, err := Fit(ctx, train, FitOptions{L2: []float64{1e-4}, MaxIterations: 60})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Skipped == 0 || rep.Classes != 9 {
		t.Fatalf("report %+v: expected skipped all-zero rows and 9 classes", rep)
	}
	count := map[string]int{}
	for _, ex := range train {
		for _, l := range ex.Labels {
			count[l]++
		}
	}
	freq := ""
	for _, c := range m.Classes() {
		if freq == "" || count[c] > count[freq] {
			freq = c
		}
	}
	texts := textsOf(test)
	preds, err := m.Predict(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	var hits, base int
	for i, ex := range test {
		if slices.Contains(ex.Labels, preds[i][0].Model) {
			hits++
		}
		if slices.Contains(ex.Labels, freq) {
			base++
		}
	}
	t.Logf("held-out top-1 hit rate: router %.3f, most frequent (%s) %.3f, %d rows",
		float64(hits)/float64(len(test)), freq, float64(base)/float64(len(test)), len(test))
	if hits <= base {
		t.Fatalf("router %d hits <= most-frequent baseline %d hits on %d rows", hits, base, len(test))
	}
}
