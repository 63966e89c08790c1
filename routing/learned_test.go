package routing_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
)

func TestLearnedDefaultRouterIsEmbedded(t *testing.T) {
	l, err := routing.DefaultRouter()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, m := range l.Models() {
		ids[m.ID] = true
	}
	for _, want := range []string{"openai/gpt-4o", "openai/gpt-4o-mini", "openai/o1-mini", "anthropic/claude-3-5-sonnet",
		"anthropic/claude-3-haiku", "google/gemini-1.5-pro", "google/gemini-1.5-flash", "meta-llama/llama-3.1-8b-instruct",
		"meta-llama/llama-3.1-405b-instruct", "mistralai/mistral-large"} {
		if !ids[want] {
			t.Errorf("the default router has no estimates for %s", want)
		}
	}
	if tol := l.LearnedTolerance(); !(tol > 0 && tol < 0.3) {
		t.Errorf("learned tolerance %v", tol)
	}
	tasks, weight := l.Tasks()
	if !slices.Contains(tasks, "zeroeval/gsm8k") || !slices.Contains(tasks, "llmrouter9/mbpp") || !(weight > 0 && weight <= 1) {
		t.Errorf("the default router's task prior: tasks %v, weight %v", tasks, weight)
	}
	for name, want := range map[string]struct {
		id    string
		exact bool
	}{
		"openai/gpt-4o-2024-11-20":                               {"openai/gpt-4o", true},
		"gpt-4o-mini":                                            {"openai/gpt-4o-mini", true},
		"anthropic/claude-3-5-sonnet-latest":                     {"anthropic/claude-3-5-sonnet", true},
		"gemini/gemini-1.5-pro-002":                              {"google/gemini-1.5-pro", true},
		"together/meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo": {"meta-llama/llama-3.1-405b-instruct", false},
		"groq/llama-3.1-8b":                                      {"meta-llama/llama-3.1-8b-instruct", false},
	} {
		id, exact, ok := l.Match(name)
		if !ok || id != want.id || exact != want.exact {
			t.Errorf("Match(%q) = %q, %v, %v; want %q, %v", name, id, exact, ok, want.id, want.exact)
		}
	}
	if _, _, ok := l.Match("acme/brand-new-model"); ok {
		t.Error("an unknown model matched")
	}
}

// TestLearnedDefaultRouterPerPrompt checks that selection without preference_id is
// per-prompt: a competition maths problem and a greeting rank the same candidates
// differently, the response says which candidates the learned router estimated and which
// the prior did, and a cost tradeoff moves the easy prompt to a cheaper model.
func TestLearnedDefaultRouterPerPrompt(t *testing.T) {
	s, _ := newSelector(t, routing.Options{})
	cands := func() []routing.Candidate {
		c := names("openai/o1-mini", "openai/gpt-4o-mini", "google/gemma-2-9b-it", "acme/brand-new-model",
			"together/meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo")
		c[0].Price, c[1].Price, c[2].Price, c[4].Price = fp(7.5), fp(0.375), fp(0.1), fp(3.5)
		return c
	}
	hard := "Let $P(x)$ be a monic polynomial of degree 4 such that $P(1)=17$, $P(2)=34$, $P(3)=51$. Find $P(0)+P(4)$. Express your answer in simplest form."
	easy := "Janet has 3 apples and buys 2 more. How many apples does she have?"
	h := mustSelect(t, s, "", &routing.Request{Messages: userMsg(hard), LLMProviders: cands()})
	if h.LLMLabel != "openai/o1-mini" {
		t.Errorf("hard maths picked %s: %+v", h.LLMLabel, h.Providers)
	}
	src := map[string]routing.RankedProvider{}
	for _, p := range h.Providers {
		src[p.Name] = p
		if !(p.Quality > 0 && p.Quality <= 1) {
			t.Errorf("quality out of range: %+v", p)
		}
	}
	if src["openai/o1-mini"].ScoreSource != routing.SourceLearned || src["acme/brand-new-model"].ScoreSource != routing.SourceUnknown {
		t.Errorf("sources: %+v", h.Providers)
	}
	if p := src["together/meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo"]; p.ScoreSource != routing.SourceLearnedRelative || p.EstimatedFrom != "meta-llama/llama-3.1-405b-instruct" {
		t.Errorf("relative: %+v", p)
	}
	e := mustSelect(t, s, "", &routing.Request{Messages: userMsg(easy), LLMProviders: cands()})
	var qe, qh float64
	for _, p := range e.Providers {
		if p.Name == "google/gemma-2-9b-it" {
			qe = p.Quality
		}
	}
	qh = src["google/gemma-2-9b-it"].Quality
	if !(qe > qh+0.2) {
		t.Errorf("a small model's estimate should be far higher on arithmetic (%.3f) than on competition maths (%.3f)", qe, qh)
	}
	c := mustSelect(t, s, "", &routing.Request{Messages: userMsg(easy), LLMProviders: cands(), Tradeoff: "cost", TradeoffTolerance: fp(0.1)})
	if c.LLMLabel == "openai/o1-mini" {
		t.Errorf("cost tradeoff (tolerance 0.1) kept the most expensive model on an easy prompt: %+v", c.Providers)
	}
	c = mustSelect(t, s, "", &routing.Request{Messages: userMsg(hard), LLMProviders: cands(), Tradeoff: "cost", TradeoffTolerance: fp(0.1)})
	if c.LLMLabel != "openai/o1-mini" {
		t.Errorf("cost tradeoff (tolerance 0.1) gave up o1-mini on competition maths: %+v", c.Providers)
	}
}

// TestLearnedDefaultRouterOnHeldOutData routes the llmrouter9 prompts the default router
// never saw (the builder's held-out split) through the selector with the 9 models and their
// prices as candidates: the pick must beat the single best model, and the cost tradeoff
// must stay within 2 points of it at under half its price. Skips without the shared data set.
func TestLearnedDefaultRouterOnHeldOutData(t *testing.T) {
	prices := map[string]float64{"google/gemma-2-9b-it": 0.1, "nvidia/llama-3.1-nemotron-51b-instruct": 0.9,
		"nvidia/llama-3.3-nemotron-super-49b-v1": 0.9, "nvidia/llama3-chatqa-1.5-70b": 0.9}
	s, _ := newSelector(t, routing.Options{})
	var n, single, pick, cost, costPrice float64
	eachHeldOutRow(t, "llmrouter9", "../../shared/data/routing/llmrouter9_train.jsonl", func(problem string, scores map[string]float64) {
		var cands []routing.Candidate
		for m := range scores {
			p, ok := prices[m]
			if !ok {
				p = 0.2
			}
			cands = append(cands, routing.Candidate{Name: m, Price: fp(p)})
		}
		msgs := userMsg(problem)
		a := mustSelect(t, s, "", &routing.Request{Messages: msgs, LLMProviders: cands})
		b := mustSelect(t, s, "", &routing.Request{Messages: msgs, LLMProviders: cands, Tradeoff: "cost"})
		n++
		single += scores["nvidia/llama-3.1-nemotron-51b-instruct"]
		pick += scores[a.LLMLabel]
		cost += scores[b.LLMLabel]
		costPrice += prices[b.LLMLabel]
		if _, ok := prices[b.LLMLabel]; !ok {
			costPrice += 0.2
		}
	})
	if n < 1000 {
		t.Fatalf("only %v held-out rows", n)
	}
	single, pick, cost, costPrice = single/n, pick/n, cost/n, costPrice/n
	t.Logf("held-out %v rows: single best %.3f, default pick %.3f, cost tradeoff %.3f at price %.3f", n, single, pick, cost, costPrice)
	if pick < single+0.01 {
		t.Errorf("default pick %.3f does not beat the single best model %.3f", pick, single)
	}
	// The goal for the default router on each source, measured here on llmrouter9
	// with the embedded router: with tradeoff cost (its default tolerance) within 2 points
	// of the best single candidate at under half its price (0.627 at 0.33; BENCHMARKS.md).
	if cost < single-0.02 || costPrice >= 0.45 {
		t.Errorf("cost tradeoff %.3f at %.3f: want at least %.3f below 0.45 (half the single best's price 0.9)", cost, costPrice, single-0.02)
	}
}

// TestLearnedDefaultRouterOnMMLUProAndZeroEval measures the embedded router on the held-out
// parts of the other two sources it was built from, through Select, with each source's
// priced models as candidates (router.json: ids, the ids the data measured them as, list
// prices). The goals: the default pick within 1 point of the best single candidate
// on both; with tradeoff cost within 2 points of it at under half its price on MMLU-Pro
// (ZeroEval misses that one: o1-mini alone solves most of its maths; BENCHMARKS.md).
func TestLearnedDefaultRouterOnMMLUProAndZeroEval(t *testing.T) {
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
	for _, src := range []struct {
		name, file string
		costGoal   bool
	}{
		{"mmlupro", "../../shared/data/routing/mmlupro/mmlupro_train.jsonl", true},
		{"zeroeval", "../../shared/data/routing/zeroeval/zeroeval_train.jsonl", false},
	} {
		t.Run(src.name, func(t *testing.T) {
			s, _ := newSelector(t, routing.Options{})
			type cand struct {
				id          string
				measuredAs  []string
				price       float64
				sum, n, hit float64
			}
			var cands []*cand
			for _, c := range meta.Classes {
				if c.Price != nil && slices.Contains(c.Sources, src.name) {
					cands = append(cands, &cand{id: c.ID, measuredAs: c.MeasuredAs, price: *c.Price})
				}
			}
			var rows, pick, cost, pickPrice, costPrice float64
			eachHeldOutRow(t, src.name, src.file, func(problem string, scores map[string]float64) {
				// A candidate's outcome on the row: the mean over the versions measured.
				outcome := map[string]float64{}
				price := map[string]float64{}
				var offered []routing.Candidate
				for _, c := range cands {
					var sum, n float64
					for _, m := range c.measuredAs {
						if v, ok := scores[m]; ok {
							sum, n = sum+v, n+1
						}
					}
					if n == 0 {
						continue
					}
					outcome[c.id], price[c.id] = sum/n, c.price
					c.sum, c.n = c.sum+sum/n, c.n+1
					offered = append(offered, routing.Candidate{Name: c.id, Price: fp(c.price)})
				}
				if len(offered) < 2 {
					return
				}
				msgs := userMsg(problem)
				a := mustSelect(t, s, "", &routing.Request{Messages: msgs, LLMProviders: offered})
				b := mustSelect(t, s, "", &routing.Request{Messages: msgs, LLMProviders: offered, Tradeoff: "cost"})
				if _, ok := outcome[a.LLMLabel]; !ok {
					t.Fatalf("picked %q, not a candidate of %v", a.LLMLabel, offered)
				}
				rows++
				pick, pickPrice = pick+outcome[a.LLMLabel], pickPrice+price[a.LLMLabel]
				cost, costPrice = cost+outcome[b.LLMLabel], costPrice+price[b.LLMLabel]
			})
			if rows < 400 {
				t.Fatalf("only %v held-out rows", rows)
			}
			best := slices.MaxFunc(cands, func(x, y *cand) int {
				switch mx, my := x.sum/max(x.n, 1), y.sum/max(y.n, 1); {
				case mx < my:
					return -1
				case mx > my:
					return 1
				}
				return 0
			})
			single := best.sum / best.n
			pick, cost, pickPrice, costPrice = pick/rows, cost/rows, pickPrice/rows, costPrice/rows
			t.Logf("%v held-out rows: best single %s %.3f at %.2f; default pick %.3f at %.2f; cost tradeoff %.3f at %.2f",
				rows, best.id, single, best.price, pick, pickPrice, cost, costPrice)
			if pick < single-0.01 {
				t.Errorf("default pick %.3f is more than 1 point below the best single candidate %s (%.3f)", pick, best.id, single)
			}
			if src.costGoal && (cost < single-0.02 || costPrice >= best.price/2) {
				t.Errorf("cost tradeoff %.3f at %.2f: want at least %.3f under %.2f (half of %s's price)", cost, costPrice, single-0.02, best.price/2, best.id)
			}
		})
	}
}

// eachHeldOutRow calls fn with the problem and scores of every row of the JSONL file that the
// default router's builder held out of source (sha256(source:id), first byte mod 5 = 0). It
// skips the test when the shared data set is absent.
func eachHeldOutRow(t *testing.T, source, file string, fn func(problem string, scores map[string]float64)) {
	t.Helper()
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		t.Skipf("skipping: %s is absent (the shared data set lives next to the repository)", file)
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
		if h := sha256.Sum256([]byte(source + ":" + r.ID)); h[0]%5 == 0 {
			fn(r.Problem, r.Scores)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
