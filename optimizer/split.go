package optimizer

import (
	"math/rand/v2"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// TrainFraction is the share of dataset rows the optimizer trains on; the rest is the
// held-out test split, seen only by the final scoring of the best and the original agent.
const TrainFraction = 0.7

// DefaultSeed fixes the train/test split (and the sample of failing rows shown to the
// proposer) so that a resubmitted job sees the same split.
const DefaultSeed = 42

// Where the held-out rows come from (ModelResult.HeldOut).
const (
	// HeldOutSplit: the held-out rows are the 30% of dataset.json Split draws.
	HeldOutSplit = "split"
	// HeldOutValset: they are the bundle's valset.json, and dataset.json is all train.
	HeldOutValset = "valset"
)

// heldOutOf says where bundle b's held-out rows come from.
func heldOutOf(b *Bundle) string {
	if b.Valset != nil {
		return HeldOutValset
	}
	return HeldOutSplit
}

// Split shuffles rows with a fixed seed and returns the train (70%, rounded) and test
// splits. Both are non-empty when there are at least two rows.
func Split(rows []sandbox.Row, seed uint64) (train, test []sandbox.Row) {
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	n := int(float64(len(rows))*TrainFraction + 0.5)
	if len(rows) >= 2 {
		n = min(max(n, 1), len(rows)-1)
	}
	for k, i := range idx {
		if k < n {
			train = append(train, rows[i])
		} else {
			test = append(test, rows[i])
		}
	}
	return train, test
}
