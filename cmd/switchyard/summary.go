package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/switchyard-ai/switchyard/client"
)

func pct(v float64) string { return fmt.Sprintf("%.1f%%", v*100) }

// writeRouterSummary prints a trained router: identity, timing, and its held-out metrics
// next to the most-frequent-model baseline.
func writeRouterSummary(w io.Writer, st *client.TrainingStatus, m *client.RouterModel) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Router model\t%s\n", m.ModelID)
	fmt.Fprintf(tw, "Status\t%s (version %s)\n", m.Status, m.Version)
	fmt.Fprintf(tw, "Embedding\t%s\n", m.EmbeddingModel)
	fmt.Fprintf(tw, "Models\t%d\n", m.NumClasses)
	if tc := st.TrainingConfig; tc != nil {
		rows := fmt.Sprintf("%d", tc.Rows)
		if tc.SkippedRows > 0 {
			// Not skipped, whatever the field's name: the router learns from them that no
			// model answers such prompts (they only do not count toward the 10 rows a job needs).
			rows += fmt.Sprintf(" (%d with no correct model, learned as prompts no model answers)", tc.SkippedRows)
		}
		fmt.Fprintf(tw, "Rows\t%s\n", rows)
		fmt.Fprintf(tw, "Time\t%.1f s total (embedding %.1f s, training %.1f s)\n",
			tc.Timing.TotalTimeSeconds, tc.Timing.EmbeddingTimeSeconds, tc.Timing.TrainingTimeSeconds)
	}
	tw.Flush()
	if mt := m.Metrics; mt != nil {
		fmt.Fprintf(w, "\nHeld-out metrics (%d rows):\n", mt.HoldoutRows)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		base := "always " + mt.BaselineModel
		if mt.BaselineModel == "" {
			base = "baseline"
		}
		fmt.Fprintf(tw, "  metric\t router\t%s\n", base)
		fmt.Fprintf(tw, "  top-1 hit rate\t%7s\t%7s\n", pct(mt.Top1HitRate), pct(mt.BaselineTop1HitRate))
		fmt.Fprintf(tw, "  top-3 hit rate\t%7s\t%7s\n", pct(mt.Top3HitRate), "-")
		fmt.Fprintf(tw, "  accuracy\t%7s\t%7s\n", pct(mt.Accuracy), pct(mt.BaselineAccuracy))
		tw.Flush()
		fmt.Fprintln(w, "  (hit rate: the top model, or one of the top 3, is among the row's correct models;")
		fmt.Fprintln(w, "   accuracy: per row and model, the router's estimate (≥ ½ or not) says whether the model is correct)")
	}
	fmt.Fprintf(w, "\nPredict with: switchyard predict --model %s \"your prompt\"\n", m.ModelID)
}

// writePredictions prints, per input, the top models with their confidence.
func writePredictions(w io.Writer, inputs []string, res *client.PredictResponse, top int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "#\tinput\ttop model\tconfidence\talso\n")
	for i, p := range res.Predictions {
		var also []string
		for _, m := range p.Models {
			if m.Rank > 1 && m.Rank <= top {
				also = append(also, fmt.Sprintf("%s %.2f", m.Model, m.Confidence))
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.3f\t%s\n", i+1, shorten(inputs[i], 40), p.TopModel, p.TopProb, strings.Join(also, ", "))
	}
	tw.Flush()
}

// writeSelection prints the chosen model and the ranked candidates.
func writeSelection(w io.Writer, res *client.ModelSelectResponse) {
	fmt.Fprintf(w, "llm_label: %s\n", res.LLMLabel)
	if res.SessionID != "" {
		fmt.Fprintf(w, "session:   %s\n", res.SessionID)
	}
	if len(res.Providers) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "rank\tcandidate\tscore\tsource\n")
	for _, p := range res.Providers {
		fmt.Fprintf(tw, "%d\t%s\t%.3f\t%s\n", p.Rank, p.Label(), p.Score, p.ScoreSource)
	}
	tw.Flush()
	if n := selectionNotice(res); n != "" {
		fmt.Fprintf(w, "\nnote: %s\n", n)
	}
	if res.SessionID != "" {
		fmt.Fprintf(w, "\nRate the answer with: switchyard feedback %s %s up|down\n", res.SessionID, res.LLMLabel)
	}
}

// selectionNotice says in words what a selection's router_fallback and tradeoff_fallback
// say: what did not rank the way the request asked, and what ranked instead.
func selectionNotice(res *client.ModelSelectResponse) string {
	var notes []string
	switch res.RouterFallback {
	case "":
	case "router_deleted":
		notes = append(notes, "the preference's router model was deleted; the default router ranked")
	case "training_job_deleted":
		notes = append(notes, "the preference's training job was deleted before it trained a router; its earlier router (else the default router) ranked")
	default:
		notes = append(notes, "router_fallback "+res.RouterFallback)
	}
	switch res.TradeoffFallback {
	case "":
	case "no_latency_data":
		notes = append(notes, "tradeoff latency had no latency for any candidate (none given, reported or measured), so the quality order stands")
	case "no_price_data":
		notes = append(notes, "tradeoff cost had no price for any candidate (none given or catalogued), so the quality order stands")
	default:
		notes = append(notes, "tradeoff_fallback "+res.TradeoffFallback)
	}
	return strings.Join(notes, "; ")
}

// writeOptimizationSummary prints, per target model: baseline → best on train and test,
// kept/run, the agent URL, and a text chart of the score per iteration.
func writeOptimizationSummary(w io.Writer, st *client.OptimizationStatus, res *client.OptimizationResults) {
	fmt.Fprintf(w, "Optimization %s: %s\n", res.JobID, res.Status)
	switch {
	case res.ErrorMessage != "":
		fmt.Fprintf(w, "  %s\n", res.ErrorMessage)
	case st != nil && st.ErrorMessage != "":
		fmt.Fprintf(w, "  %s\n", st.ErrorMessage)
	}
	for _, r := range res.Results {
		fmt.Fprintf(w, "\n%s (%s)", r.Model, r.Optimizer)
		if !r.Complete {
			fmt.Fprint(w, " — stopped early, best so far")
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		if r.Metric != "" {
			fmt.Fprintf(tw, "  metric\t%s  (mean per row, 0-1)\n", r.Metric)
		}
		trainRows, heldOut := "", "held-out 30%"
		if r.TrainRows > 0 && r.TestRows > 0 {
			trainRows = fmt.Sprintf(", %d rows", r.TrainRows)
			heldOut = fmt.Sprintf("held-out %d rows", r.TestRows)
			if r.HeldOut == "valset" {
				heldOut += " of valset.json" // not drawn by the seed
			} else if r.Seed != nil {
				heldOut += fmt.Sprintf(", seed %d", *r.Seed)
			}
		}
		if r.BaselineScore != nil && r.TrainScore != nil {
			fmt.Fprintf(tw, "  train score\t%.3f → %.3f  (%s, baseline → best%s)\n", *r.BaselineScore, *r.TrainScore, signed(*r.TrainScore-*r.BaselineScore), trainRows)
		} else {
			fmt.Fprintf(tw, "  train score\tnot measured (the job ended before its baseline)\n")
		}
		switch {
		case r.TestScore != nil && r.OriginalTestScore != nil:
			fmt.Fprintf(tw, "  test score\t%.3f → %.3f  (%s, %s)\n", *r.OriginalTestScore, *r.TestScore, signed(*r.TestScore-*r.OriginalTestScore), heldOut)
		case r.TestScore != nil:
			fmt.Fprintf(tw, "  test score\t%.3f  (%s)\n", *r.TestScore, heldOut)
		case !r.Complete:
			// A cancel (or a crash after one) stops before the held-out runs.
			fmt.Fprintf(tw, "  test score\t-  (not scored: the job stopped before the held-out split was run; the train score is the best so far)\n")
		default:
			fmt.Fprintf(tw, "  test score\t-  (not scored)\n")
		}
		fmt.Fprintf(tw, "  iterations\t%d kept of %d run\n", r.IterationsKept, r.IterationsRun)
		if r.Tokens > 0 || r.CostUSD > 0 {
			fmt.Fprintf(tw, "  spent\t%d tokens, $%.4f\n", r.Tokens, r.CostUSD)
		}
		if r.AgentCodeURL != "" {
			fmt.Fprintf(tw, "  agent code\t%s\n", r.AgentCodeURL)
		}
		tw.Flush()
		if len(r.History) > 0 {
			fmt.Fprintln(w, "\n  score per iteration (train):")
			writeScoreChart(w, r.History, 30)
		}
		if r.OptimizedPrompt != "" && r.OptimizedPrompt != r.OriginalPrompt {
			fmt.Fprintf(w, "\n  optimized prompt:\n%s\n", indent(r.OptimizedPrompt, "    "))
		}
	}
}

// writeScoreChart draws one bar per iteration, scaled to width for a score of 1.
func writeScoreChart(w io.Writer, hist []client.IterationRecord, width int) {
	for _, h := range hist {
		if h.TrainScore == nil {
			// No candidate reached the whole train split: its minibatch said no.
			fmt.Fprintf(w, "  %3d │%s   —   discarded: %s\n", h.Iteration, strings.Repeat(" ", width), shorten(h.Note, 40))
			continue
		}
		n := int(*h.TrainScore*float64(width) + 0.5)
		n = max(0, min(n, width))
		mark := "discarded"
		switch {
		case h.Iteration == 0:
			mark = "baseline"
		case h.Kept:
			mark = "kept"
		}
		if h.Note != "" && !h.Kept && h.Iteration != 0 {
			mark += ": " + shorten(h.Note, 40)
		}
		fmt.Fprintf(w, "  %3d │%s%s %.3f %s\n", h.Iteration, strings.Repeat("█", n), strings.Repeat(" ", width-n), *h.TrainScore, mark)
	}
}

func signed(d float64) string {
	if d >= 0 {
		return fmt.Sprintf("+%.3f", d)
	}
	return fmt.Sprintf("%.3f", d)
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}
