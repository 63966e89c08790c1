// Package feedbacksim simulates a user of personalized routing on public per-prompt
// evaluation data (../shared/data/routing): a stream of prompts the learned default router
// never trained on, each model-selected under a pref_ preference, with thumbs up or down
// given by whether the picked model's recorded score is at least 0.5. It backs the
// routing package's feedback test and bench/feedback.
package feedbacksim

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchyard-ai/switchyard/routing"
)

// Sources maps each source name to its file under the data directory, as
// routing/internal/buildrouter reads them.
var Sources = map[string]string{
	"llmrouter9": "llmrouter9_train.jsonl",
	"zeroeval":   "zeroeval/zeroeval_train.jsonl",
	"mmlupro":    "mmlupro/mmlupro_train.jsonl",
}

// Row is one held-out prompt with every model's recorded score.
type Row struct {
	ID, Task, Problem string
	Scores            map[string]float64
	order             [32]byte
}

// HeldOut reads source's rows that the learned default router held out
// (sha256(source+":"+id), first byte mod 5 = 0; routing/internal/buildrouter's split),
// in a fixed pseudo-random order (by that hash) so that tasks are mixed in the stream.
func HeldOut(dataDir, source string) ([]Row, error) {
	file, ok := Sources[source]
	if !ok {
		return nil, fmt.Errorf("feedbacksim: unknown source %q", source)
	}
	f, err := os.Open(filepath.Join(dataDir, file))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r struct {
			ID      string             `json:"id"`
			Task    string             `json:"task"`
			Problem string             `json:"problem"`
			Scores  map[string]float64 `json:"scores"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("feedbacksim: %s: %w", file, err)
		}
		h := sha256.Sum256([]byte(source + ":" + r.ID))
		if h[0]%5 != 0 || strings.TrimSpace(r.Problem) == "" {
			continue
		}
		out = append(out, Row{ID: r.ID, Task: r.Task, Problem: r.Problem, Scores: r.Scores, order: sha256.Sum256(h[:])})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Row) int { return bytes.Compare(a.order[:], b.order[:]) })
	return out, nil
}

// Scenario is one simulated user.
type Scenario struct {
	// Name labels the result.
	Name string
	// Candidates are the model-select candidates ("provider/model"); each is a model of
	// the data, or a key of Aliases.
	Candidates []string
	// Aliases give candidates the routers do not know the recorded outcomes of a model of
	// the data ("acme/private-model" → "openai/o1-mini-2024-09-12").
	Aliases map[string]string
	// ABEvery, when > 0, makes every ABEvery-th prompt an A/B prompt: feedback on every
	// ranked candidate (the user tried them all), not only on the pick.
	ABEvery int
	// Limit caps the stream (0: every row that measures all candidates).
	Limit int
}

// Result compares the personalized picks with the default router's over the second half of
// the stream.
type Result struct {
	Name string
	// Prompts is the stream's length; Feedbacks how many feedbacks were given.
	Prompts, Feedbacks int
	// BaselineMean and PersonalMean are the mean recorded scores of the picks over the
	// second half of the stream, without and with the preference.
	BaselineMean, PersonalMean float64
	// OracleMean is the mean of the best candidate's score per prompt (second half).
	OracleMean float64
	// BaselinePicks and PersonalPicks count, in the second half, the picks of each
	// candidate.
	BaselinePicks, PersonalPicks map[string]int
	// Half is the number of prompts in the second half.
	Half int
}

// Run plays scenario on rows against sel for owner: a new preference, then per prompt a
// selection without preference (the baseline, not stored) and one with it, then feedback.
func Run(ctx context.Context, sel *routing.Selector, owner string, rows []Row, sc Scenario) (Result, error) {
	res := Result{Name: sc.Name, BaselinePicks: map[string]int{}, PersonalPicks: map[string]int{}}
	pref, err := sel.CreatePreference(ctx, owner, routing.PreferenceRequest{Name: sc.Name})
	if err != nil {
		return res, err
	}
	outcome := func(r Row, label string) (float64, bool) {
		m := label
		if a, ok := sc.Aliases[label]; ok {
			m = a
		}
		v, ok := r.Scores[m]
		return v, ok
	}
	var stream []Row
	for _, r := range rows {
		all := true
		for _, c := range sc.Candidates {
			if _, ok := outcome(r, c); !ok {
				all = false
				break
			}
		}
		if all {
			stream = append(stream, r)
		}
		if sc.Limit > 0 && len(stream) == sc.Limit {
			break
		}
	}
	res.Prompts = len(stream)
	half := len(stream) / 2
	res.Half = len(stream) - half
	var base, pers, oracle float64
	for i, r := range stream {
		cands := make([]routing.Candidate, len(sc.Candidates))
		for j, c := range sc.Candidates {
			cands[j] = routing.Candidate{Name: c}
		}
		msgs := []routing.Message{{Role: "user", Content: r.Problem}}
		req := &routing.Request{Messages: msgs, LLMProviders: cands}
		b, err := sel.Rank(ctx, owner, req)
		if err != nil {
			return res, err
		}
		preq := &routing.Request{Messages: msgs, LLMProviders: slices.Clone(cands), PreferenceID: pref.ID}
		resp, err := sel.Select(ctx, owner, preq)
		if err != nil {
			return res, err
		}
		bl := b[0].Candidate.Name
		pl := resp.LLMLabel
		if i >= half {
			bs, _ := outcome(r, bl)
			ps, _ := outcome(r, pl)
			base += bs
			pers += ps
			best := 0.0
			for _, c := range sc.Candidates {
				v, _ := outcome(r, c)
				best = max(best, v)
			}
			oracle += best
			res.BaselinePicks[bl]++
			res.PersonalPicks[pl]++
		}
		rated := []string{pl}
		if sc.ABEvery > 0 && i%sc.ABEvery == 0 {
			rated = rated[:0]
			for _, p := range resp.Providers {
				if p.Name != "" {
					rated = append(rated, p.Name)
				} else {
					rated = append(rated, p.Provider+"/"+p.Model)
				}
			}
		}
		for _, label := range rated {
			v, _ := outcome(r, label)
			acc := 0.0
			if v >= 0.5 {
				acc = 1
			}
			fb := &routing.FeedbackRequest{SessionID: resp.SessionID, Provider: routing.Candidate{Name: label}, Feedback: routing.FeedbackMetrics{Accuracy: &acc}}
			if _, err := sel.Feedback(ctx, owner, fb); err != nil {
				return res, err
			}
			res.Feedbacks++
		}
	}
	if res.Half > 0 {
		n := float64(res.Half)
		res.BaselineMean, res.PersonalMean, res.OracleMean = base/n, pers/n, oracle/n
	}
	return res, nil
}

// SourcedScenario is a Scenario on one source's held-out rows.
type SourcedScenario struct {
	Source string
	Scenario
}

// Scenarios are the scenarios BENCHMARKS.md reports ("Personalized routing from
// feedback").
func Scenarios() []SourcedScenario {
	return []SourcedScenario{
		{"llmrouter9", Scenario{Name: "beliefs-vs-llmrouter9", Candidates: []string{
			"nvidia/llama-3.1-nemotron-51b-instruct", "meta/llama-3.1-8b-instruct", "google/gemma-2-9b-it",
			"qwen/qwen2.5-7b-instruct", "mistralai/mistral-7b-instruct-v0.3"}}},
		{"zeroeval", Scenario{Name: "beliefs-vs-zeroeval", Candidates: []string{
			"qwen/qwen2.5-7b-instruct", "meta-llama/llama-3.1-8b-instruct", "google/gemma-2-9b-it",
			"microsoft/phi-3.5-mini-instruct", "qwen/qwen2.5-72b-instruct"}}},
		{"mmlupro", Scenario{Name: "beliefs-vs-mmlupro", Limit: 1000, Candidates: []string{
			"meta-llama/llama-3.1-8b-instruct", "mistralai/mathstral-7b-v0.1", "microsoft/phi-3-mini-4k-instruct",
			"qwen/qwen1.5-72b-chat", "ai21/jamba-1.5-large"}}},
		{"zeroeval", Scenario{Name: "unknown-model-ab", ABEvery: 5, Candidates: []string{
			"openai/gpt-4o-2024-08-06", "anthropic/claude-3-5-sonnet-20240620", "openai/gpt-4o-mini-2024-07-18",
			"meta-llama/llama-3.1-70b-instruct", "acme/private-model"},
			Aliases: map[string]string{"acme/private-model": "openai/o1-mini-2024-09-12"}}},
	}
}
