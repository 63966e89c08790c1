package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/switchyard-ai/switchyard/client"
)

// printLogprobs prints an answer's tokens with their log probabilities (`switchyard chat
// --logprobs`): one line per token, quoted so that spaces and newlines show, its natural
// log probability and the probability it stands for, then the likeliest tokens at its
// position (--top-logprobs) with theirs. A refusal's tokens follow under their own heading.
func printLogprobs(w io.Writer, lp *client.Logprobs) {
	if lp == nil || len(lp.Content)+len(lp.Refusal) == 0 {
		fmt.Fprintln(w, "logprobs: none (the model gave no log probabilities)")
		return
	}
	for _, part := range []struct {
		name   string
		tokens []client.TokenLogprob
	}{{"logprobs", lp.Content}, {"refusal logprobs", lp.Refusal}} {
		if len(part.tokens) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s (%d tokens):\n", part.name, len(part.tokens))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, t := range part.tokens {
			fmt.Fprintf(tw, "  %q\t%.4f\t%s", t.Token, t.Logprob, probability(t.Logprob))
			if len(t.TopLogprobs) > 0 {
				alts := make([]string, len(t.TopLogprobs))
				for i, a := range t.TopLogprobs {
					alts[i] = fmt.Sprintf("%q %.4f (%s)", a.Token, a.Logprob, probability(a.Logprob))
				}
				fmt.Fprintf(tw, "\ttop: %s", strings.Join(alts, ", "))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
}

// probability is the probability a natural log probability stands for, as a percentage.
func probability(logprob float64) string {
	return fmt.Sprintf("%.2f%%", 100*math.Exp(logprob))
}
