package routing

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"testing"
)

// unmeasured returns a copy of l that has measured none of the models ids: candidates
// naming them are scored by the prior, as a model the evaluation data lacks is.
func unmeasured(l *LearnedRouter, ids ...string) *LearnedRouter {
	c := *l
	c.byKey = maps.Clone(l.byKey)
	maps.DeleteFunc(c.byKey, func(_, id string) bool { return slices.Contains(ids, id) })
	return &c
}

// TestPriorFiguresOnHeldOutData measures what the built-in figures are worth for a request
// naming only models the learned router has not measured (today: GPT-5, Claude 4.x,
// Gemini 2.5, ...). On the held-out rows of each source, the candidates are that source's
// priced models with both a published MMLU-Pro and a GPQA figure, hidden from the router;
// they are ranked by their published MMLU-Pro figures, by the MMLU-Pro estimated from
// their GPQA figures (how GPT-5 or Claude Sonnet 4.5 are ranked), and, for comparison, by
// the router that measured them and by nothing (the expected score of a pick at random,
// which is what request order gives when no figure is known). Figures in BENCHMARKS.md.
func TestPriorFiguresOnHeldOutData(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short: ranks every held-out row of two sources")
	}
	l, err := DefaultRouter()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("defaultrouter/router.json")
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Classes []struct {
			ID         string   `json:"id"`
			MeasuredAs []string `json:"measured_as"`
			Sources    []string `json:"sources"`
			Price      *float64 `json:"price"`
		} `json:"classes"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, src := range []struct{ name, file string }{
		{"mmlupro", "../../shared/data/routing/mmlupro/mmlupro_train.jsonl"},
		{"zeroeval", "../../shared/data/routing/zeroeval/zeroeval_train.jsonl"},
	} {
		t.Run(src.name, func(t *testing.T) {
			type cand struct {
				id         string
				measuredAs []string
				price      float64
				b          Benchmark
			}
			var cands []cand
			var ids []string
			for _, c := range meta.Classes {
				b, ok := LookupBenchmark(c.ID)
				if c.Price != nil && slices.Contains(c.Sources, src.name) && ok && b.GPQA > 0 && !b.FromGPQA {
					cands = append(cands, cand{c.ID, c.MeasuredAs, *c.Price, b})
					ids = append(ids, c.ID)
				}
			}
			hidden := unmeasured(l, ids...)
			// 0 measured, 1 published MMLU-Pro, 2 MMLU-Pro from GPQA, 3 at random
			var score, price [4]float64
			var rows float64
			f, err := os.Open(src.file)
			if os.IsNotExist(err) {
				t.Skipf("skipping: %s is absent (the shared data set lives next to the repository)", src.file)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 64<<20)
			for sc.Scan() {
				var r struct {
					ID      string             `json:"id"`
					Problem string             `json:"problem"`
					Scores  map[string]float64 `json:"scores"`
				}
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					t.Fatal(err)
				}
				if h := sha256.Sum256([]byte(src.name + ":" + r.ID)); h[0]%5 != 0 {
					continue
				}
				outcome, cost := map[string]float64{}, map[string]float64{}
				var variants [3][]Candidate
				for _, c := range cands {
					var sum, n float64
					for _, m := range c.measuredAs {
						if v, ok := r.Scores[m]; ok {
							sum, n = sum+v, n+1
						}
					}
					if n == 0 {
						continue
					}
					outcome[c.id], cost[c.id] = sum/n, c.price
					p := c.price
					variants[0] = append(variants[0], Candidate{Name: c.id, Price: &p})
					variants[1] = append(variants[1], Candidate{Name: c.id, Price: &p})
					variants[2] = append(variants[2], Candidate{Name: c.id, Price: &p, Attributes: map[string]any{"quality": GPQAToMMLUPro(c.b.GPQA)}})
				}
				if len(outcome) < 2 {
					continue
				}
				rows++
				conv := NewConversation([]Message{{Role: "user", Content: r.Problem}}, 0, 0)
				for k, offered := range variants {
					router := hidden
					if k == 0 {
						router = l
					}
					ranked, err := router.Rank(ctx, conv, offered)
					if err != nil {
						t.Fatal(err)
					}
					if k > 0 && ranked[0].Source == SourceLearned {
						t.Fatalf("%s was not hidden from the router", ranked[0].Candidate.Name)
					}
					pick := ranked[0].Candidate.Name
					score[k], price[k] = score[k]+outcome[pick], price[k]+cost[pick]
				}
				for id := range outcome {
					score[3] += outcome[id] / float64(len(outcome))
					price[3] += cost[id] / float64(len(outcome))
				}
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
			if rows < 400 {
				t.Fatalf("only %v held-out rows", rows)
			}
			for k, name := range []string{"measured by the router", "published MMLU-Pro figures", "MMLU-Pro from GPQA", "at random"} {
				t.Logf("%s, %v rows, %d candidates %v: pick by %s: mean score %.3f at price %.2f", src.name, rows, len(cands), ids, name, score[k]/rows, price[k]/rows)
			}
			if score[1] < score[3]+0.02*rows || score[2] < score[3]+0.02*rows {
				t.Errorf("picks by figure (%.3f published, %.3f from GPQA) not clearly above a pick at random (%.3f)", score[1]/rows, score[2]/rows, score[3]/rows)
			}
		})
	}
}
