package optimizer

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// One iteration searches like this (the rule is stated for users in AcceptanceRule's doc):
//
//  1. A minibatch of train rows is drawn: up to three quarters rows the best agent gets
//     wrong, the rest rows it gets right (so a candidate that breaks them shows it), at most
//     the Service's minibatch size and half the split.
//  2. The proposer sees the minibatch's failing rows (with eval.py's feedback), the recent
//     attempts with the rows they won and lost, and the Pareto pool; it returns up to
//     `candidates` prompts.
//  3. Each candidate runs on the minibatch only. One that does not beat the best agent's
//     mean on those rows stops there.
//  4. The candidate with the highest minibatch mean (ties: the shorter prompt, as the one
//     less fitted to the rows it saw) is confirmed on the rest of the train split; its
//     minibatch scores are reused, so a kept candidate costs one train-split run in all.
//  5. The acceptance rule compares the confirmed per-row scores with the best agent's.
//     A confirmed candidate that is not kept but gets right some rows the best gets wrong
//     joins the Pareto pool shown to the proposer.

// minibatch returns the sorted indices of the train rows the candidates of iteration salt
// first run on, drawn with the job's seed, and whether they are the whole split.
func (s *Service) drawMinibatch(best *candidate, seed, salt uint64) (idx []int, whole bool) {
	n := len(best.scores)
	size := min(s.minibatch, (n+1)/2)
	if size >= n || size < 1 {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return all, true
	}
	var wrong, right []int
	for i, sc := range best.scores {
		if sc < 1-1e-9 {
			wrong = append(wrong, i)
		} else {
			right = append(right, i)
		}
	}
	rng := rand.New(rand.NewPCG(seed, salt))
	rng.Shuffle(len(wrong), func(a, b int) { wrong[a], wrong[b] = wrong[b], wrong[a] })
	rng.Shuffle(len(right), func(a, b int) { right[a], right[b] = right[b], right[a] })
	nWrong := min(len(wrong), max(1, size*3/4), s.maxFailures)
	nRight := min(len(right), size-nWrong)
	nWrong = min(len(wrong), size-nRight) // few right rows: more wrong ones
	idx = append(append(idx, wrong[:nWrong]...), right[:nRight]...)
	slices.Sort(idx)
	return idx, false
}

// rowsOf returns the rows at idx, in order.
func rowsOf(rows []sandbox.Row, idx []int) []sandbox.Row {
	out := make([]sandbox.Row, len(idx))
	for k, i := range idx {
		out[k] = rows[i]
	}
	return out
}

// complement returns the indices 0..n-1 not in idx (sorted).
func complement(n int, idx []int) []int {
	in := make([]bool, n)
	for _, i := range idx {
		in[i] = true
	}
	var out []int
	for i := range n {
		if !in[i] {
			out = append(out, i)
		}
	}
	return out
}

// failingRows returns the rows at idx the best agent does not get fully right, at most max.
func failingRows(train []sandbox.Row, best *candidate, idx []int, limit int) []FailingRow {
	var out []FailingRow
	for _, i := range idx {
		if best.scores[i] >= 1-1e-9 || len(out) >= limit {
			continue
		}
		f := FailingRow{Input: train[i].Input, Expected: train[i].Answer, Predicted: best.predictions[i], Score: best.scores[i]}
		if i < len(best.feedback) {
			f.Feedback = best.feedback[i]
		}
		out = append(out, f)
	}
	return out
}

// scored is a candidate's outcome on some rows.
type scored struct {
	agent       *AgentSource
	scores      []float64 // on the minibatch rows
	predictions []string
	feedback    []string
	mean        float64 // minibatch mean
	gain        float64 // minibatch mean minus the best agent's on the same rows
	outcome     *CandidateOutcome
}

// pick returns the candidate to confirm: the highest minibatch mean among those that beat
// the best agent there, the shorter prompt on a tie; nil when none beat it.
func pick(runs []*scored) *scored {
	var best *scored
	for _, r := range runs {
		if r.gain <= 1e-9 {
			continue
		}
		if best == nil || r.mean > best.mean+1e-9 ||
			(r.mean > best.mean-1e-9 && len(r.agent.Prompt()) < len(best.agent.Prompt())) {
			best = r
		}
	}
	return best
}

// merge puts the minibatch outcome (at idx) and the rest's (at rest) back in row order.
func merge[T any](n int, idx []int, mb []T, rest []int, other []T) []T {
	out := make([]T, n)
	for k, i := range idx {
		out[i] = mb[k]
	}
	for k, i := range rest {
		out[i] = other[k]
	}
	return out
}

// subset returns v at idx.
func subset(v []float64, idx []int) []float64 {
	out := make([]float64, len(idx))
	for k, i := range idx {
		out[k] = v[i]
	}
	return out
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// paretoPool holds confirmed candidates that were not kept but score higher than the best
// agent on some rows, none dominated by another, at most MaxAlternativesShown.
type paretoPool []*candidate

// add offers c to the pool after the best agent changed or c was confirmed.
func (p paretoPool) add(c *candidate, best *candidate) paretoPool {
	all := append(slices.Clone(p), c)
	return all.refresh(best)
}

// refresh drops members that no longer win a row against best or are dominated, and keeps
// those winning the most rows.
func (p paretoPool) refresh(best *candidate) paretoPool {
	var out paretoPool
	for _, c := range p {
		if c == nil || c.agent == best.agent || rowsWon(c, best) == 0 {
			continue
		}
		dominated := false
		for _, o := range p {
			if o != c && o != nil && dominates(o, c) {
				dominated = true
				break
			}
		}
		if !dominated && !slices.ContainsFunc(out, func(x *candidate) bool { return x.agent.Prompt() == c.agent.Prompt() }) {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b *candidate) int { return cmp.Compare(rowsWon(b, best), rowsWon(a, best)) })
	if len(out) > MaxAlternativesShown {
		out = out[:MaxAlternativesShown]
	}
	return out
}

// rowsWon counts the rows where c scores higher than best.
func rowsWon(c, best *candidate) int {
	n := 0
	for i := range min(len(c.scores), len(best.scores)) {
		if c.scores[i] > best.scores[i]+1e-9 {
			n++
		}
	}
	return n
}

// dominates reports whether a scores at least b's on every row and more on one (ties on
// every row: the shorter prompt dominates).
func dominates(a, b *candidate) bool {
	more := false
	for i := range min(len(a.scores), len(b.scores)) {
		switch {
		case a.scores[i] < b.scores[i]-1e-9:
			return false
		case a.scores[i] > b.scores[i]+1e-9:
			more = true
		}
	}
	return more || len(a.agent.Prompt()) < len(b.agent.Prompt())
}

// alternatives renders the pool for the proposer.
func (p paretoPool) alternatives(train []sandbox.Row, best *candidate) []Alternative {
	var out []Alternative
	for _, c := range p {
		a := Alternative{Prompt: c.agent.Prompt(), Score: c.mean, RowsWon: rowsWon(c, best)}
		for i := range c.scores {
			if c.scores[i] > best.scores[i]+1e-9 && len(a.Examples) < 2 {
				a.Examples = append(a.Examples, strings.TrimSpace(train[i].Input))
			}
		}
		out = append(out, a)
	}
	return out
}
