package completions

import (
	"math"
	"time"
)

// The semantic index's search is exact but does not read every vector in full: beside
// each vector it keeps a 7-bit copy (semanticCode) and scans that first, block by block,
// with a proven upper bound on the similarity the exact float32 search would compute.
// A vector whose bound falls below both the least similarity that could be a hit (the
// threshold) and the best similarity found so far cannot be the exact search's answer and
// is left; only the others are scored exactly, with the very same dot as the brute-force
// search, in the same order, so the answer (and its similarity, and which of equals wins)
// is the brute-force search's.
//
// The bound, for a query q and a vector v of n dimensions, after the first k of them:
//
//	q·v ≤ sq·sv·(q̂·v̂)[:k]          the copies' partial dot, exact in integers
//	    + ‖q‖·‖v − sv·v̂‖ + ‖q − sq·q̂‖·‖sv·v̂‖   the quantisation error (Cauchy–Schwarz)
//	    + ‖q[k:]‖·‖v[k:]‖                       what the unread dimensions can add
//	    + γ·‖q‖·‖v‖ + n·2⁻¹⁴⁹                   float32 rounding of the exact dot
//
// plus a relative margin for the float64 arithmetic of the bound itself. With a
// threshold of 0.8, a vector of no more than about 0.5 similarity is left after a third
// to a half of its dimensions (earlier still for models, like text-embedding-3, whose
// first dimensions carry the most), and reads a byte a dimension instead of four.
//
// The copies' dot is computed four products to a 64-bit multiplication (SWAR): with the
// codes offset to u = k+63 in [0, 126], lanes of 16 bits a = Σ u[i]·x^i and the query's
// reversed b = Σ w[3−j]·x^j (x = 2¹⁶) multiply to a polynomial whose x³ coefficient,
// bits 48–63 of the product, is Σ u[i]·w[i] ≤ 4·126² < 2¹⁶, and whose lower coefficients
// are below 2¹⁶ too, so that nothing carries into it.

// semanticBlock is how many dimensions the search reads between two looks at the bound
// (a multiple of 8).
const semanticBlock = 128

// semanticLevels is the largest magnitude of a quantised component.
const semanticLevels = 63

// semanticMaxNorm bounds the norm of a vector (and of a query) that the search bounds;
// beyond it, or with a component not finite, it is always scored exactly (a float32 dot
// of such vectors can overflow, and the bound would not hold).
const semanticMaxNorm = 1e18

// semanticCode is the quantised copy of an entry's vector: v ≈ scale·k, k[i] in
// [-63, 63].
type semanticCode struct {
	// words: eight components a word, byte j of word w being k[8w+j]+63 (0 past the
	// end); nil once they are copied into a scope's semanticCodes.
	words []uint64
	sums  []int64   // sums[b]: Σ (k[i]+63) over the blocks up to b
	scale float64   // max |v[i]| / 63 (0 for a zero vector)
	err   float64   // ‖v − scale·k‖
	hat   float64   // ‖scale·k‖
	norm  float64   // ‖v‖
	tail  []float64 // tail[b] = ‖v[(b+1)·semanticBlock:]‖, for each block but the last
	exact bool      // not bounded: always scored exactly
}

// newSemanticEntry is the index's entry of vec, with its quantised copy.
func newSemanticEntry(answerKey string, vec []float32, expires time.Time) *semanticEntry {
	return &semanticEntry{answerKey: answerKey, vec: vec, code: quantize(vec), expires: expires}
}

// quantize returns v's quantised copy.
func quantize(v []float32) semanticCode {
	var c semanticCode
	var maxAbs, sum float64
	for _, f := range v {
		x := float64(f)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return semanticCode{exact: true}
		}
		maxAbs = math.Max(maxAbs, math.Abs(x))
		sum += x * x
	}
	c.norm = math.Sqrt(sum)
	if c.norm > semanticMaxNorm {
		return semanticCode{exact: true}
	}
	if maxAbs > 0 {
		c.scale = maxAbs / semanticLevels
	}
	c.words = make([]uint64, (len(v)+7)/8)
	c.sums = make([]int64, (len(v)+semanticBlock-1)/semanticBlock)
	var errSum, hatSum float64
	var u int64
	for i, f := range v {
		x := float64(f)
		var k float64
		if c.scale > 0 {
			k = math.Max(-semanticLevels, math.Min(semanticLevels, math.Round(x/c.scale)))
		}
		c.words[i/8] |= uint64(k+semanticLevels) << (8 * (i % 8))
		u += int64(k + semanticLevels)
		if i%semanticBlock == semanticBlock-1 || i == len(v)-1 {
			c.sums[i/semanticBlock] = u
		}
		h := c.scale * k
		errSum += (x - h) * (x - h)
		hatSum += h * h
	}
	c.err, c.hat = math.Sqrt(errSum), math.Sqrt(hatSum)
	c.tail = suffixNorms(v)
	return c
}

// suffixNorms is ‖v[(b+1)·semanticBlock:]‖ for each block b of v but the last.
func suffixNorms(v []float32) []float64 {
	blocks := (len(v) + semanticBlock - 1) / semanticBlock
	if blocks <= 1 {
		return nil
	}
	out := make([]float64, blocks-1)
	var sum float64
	for b := blocks - 1; b >= 1; b-- {
		for _, f := range v[b*semanticBlock : min(len(v), (b+1)*semanticBlock)] {
			sum += float64(f) * float64(f)
		}
		out[b-1] = math.Sqrt(sum)
	}
	return out
}

// semanticQuery is a query vector prepared for the bounded search.
type semanticQuery struct {
	vec []float32
	// even[w] and odd[w]: the codes (k+63) of word w's even and odd components in 16-bit
	// lanes, reversed (the multiplier of the SWAR dot).
	even, odd []uint64
	// corr[b]: Σ over the blocks up to b of 63²·(components) − 63·Σ (k+63), so that the
	// partial dot of the codes k is the SWAR sum − 63·Σ(vector's k+63) + corr.
	corr  []int64
	scale float64
	err   float64 // ‖vec − scale·k‖
	norm  float64
	tail  []float64 // as semanticCode.tail
	fp    float64   // bound on |fl(dot) − dot| / (‖q‖·‖v‖) of dot over len(vec) dimensions
	exact bool      // not bounded: every vector is scored exactly
}

// prepare fills in sq for vec.
func (sq *semanticQuery) prepare(vec []float32) {
	c := quantize(vec) // a short-lived copy: its fields are what the query needs
	*sq = semanticQuery{vec: vec, exact: c.exact}
	if c.exact {
		return
	}
	sq.scale, sq.err, sq.norm, sq.tail = c.scale, c.err, c.norm, c.tail
	sq.even, sq.odd = make([]uint64, len(c.words)), make([]uint64, len(c.words))
	for w, x := range c.words {
		for j := range 4 {
			sq.even[w] |= (x >> (16 * j) & 0xff) << (16 * (3 - j))
			sq.odd[w] |= (x >> (16*j + 8) & 0xff) << (16 * (3 - j))
		}
	}
	sq.corr = make([]int64, len(c.sums))
	for b := range sq.corr {
		sq.corr[b] = semanticLevels*semanticLevels*int64(min(len(vec), (b+1)*semanticBlock)) - semanticLevels*c.sums[b]
	}
	// dot sums eight lanes of up to n/8 products (plus up to seven more in the first),
	// then adds the lanes in three steps: no product goes through more than n/8 + 11
	// roundings of 2⁻²⁴ (Higham's γ).
	k := float64(len(vec)/8 + 16)
	u := 0x1p-24
	sq.fp = k * u / (1 - k*u)
}

// semanticCodes holds a scope's quantised copies, row i for entries[i], block-major:
// block b of every row, one after the other, then block b+1 — so that the first blocks,
// where most vectors are left, are read as a stream rather than a short read a vector.
// Its rows follow the entries through semanticScope's push, setAt and removeAt.
type semanticCodes struct {
	words  int        // words a row: those of the first entry with words pushed
	blocks [][]uint64 // blocks[b][i·w : (i+1)·w]: row i's words of block b (w = width(b))
	coded  []bool     // row i holds its entry's words (false: another length, or none)
}

// width is how many words a row has in block b.
func (c *semanticCodes) width(b int) int { return min(semanticBlock/8, c.words-b*semanticBlock/8) }

// push adds a row for code, taking its words.
func (c *semanticCodes) push(code *semanticCode) {
	if len(c.coded) == 0 || c.words == 0 && len(code.words) > 0 {
		// the first row, or the first with words after rows without: the rows' length
		c.words = len(code.words)
		c.blocks = make([][]uint64, (c.words+semanticBlock/8-1)/(semanticBlock/8))
		for b := range c.blocks {
			c.blocks[b] = make([]uint64, len(c.coded)*c.width(b))
		}
	}
	ok := c.words > 0 && len(code.words) == c.words
	for b := range c.blocks {
		if w := c.width(b); ok {
			c.blocks[b] = append(c.blocks[b], code.words[b*semanticBlock/8:][:w]...)
		} else {
			c.blocks[b] = append(c.blocks[b], make([]uint64, w)...)
		}
	}
	c.coded = append(c.coded, ok)
	code.words = nil
}

// set puts code's words in row i, taking them.
func (c *semanticCodes) set(i int, code *semanticCode) {
	ok := c.words > 0 && len(code.words) == c.words
	for b := range c.blocks {
		w := c.width(b)
		row := c.blocks[b][i*w : (i+1)*w]
		if ok {
			copy(row, code.words[b*semanticBlock/8:])
		} else {
			clear(row)
		}
	}
	c.coded[i] = ok
	code.words = nil
}

// moveLast moves the last row into row i and drops the last row (i may be it). A block
// left using under a quarter of its room (and more than semanticSlackRows rows' worth
// of it) is copied into one of twice its rows, so a scope's memory follows its entries
// down as well as up (what MaxTotalVectors bounds), at an amortised copy per removal.
func (c *semanticCodes) moveLast(i int) {
	last := len(c.coded) - 1
	for b := range c.blocks {
		w := c.width(b)
		copy(c.blocks[b][i*w:(i+1)*w], c.blocks[b][last*w:])
		c.blocks[b] = c.blocks[b][:last*w]
		if room := cap(c.blocks[b]); room > 4*last*w && room > semanticSlackRows*w {
			c.blocks[b] = append(make([]uint64, 0, 2*last*w), c.blocks[b]...)
		}
	}
	c.coded[i] = c.coded[last]
	c.coded = c.coded[:last]
	if room := cap(c.coded); room > 4*last && room > semanticSlackRows {
		c.coded = append(make([]bool, 0, 2*last), c.coded...)
	}
}

// semanticSlackRows is the room for rows a scope's slab may keep beyond a quarter use.
const semanticSlackRows = 64

// searchStats counts what a search did, for tests.
type searchStats struct {
	scanned, rescored int
	blocks            int // blocks of quantised copies read
}

// nearestBounded is the entry of entries most similar to the query (the first of equals),
// not expired by now nor in skip, and its similarity, when that is at least floor; nil
// when there is none. It is what a brute-force scan scoring every entry with dot finds.
func nearestBounded(entries []*semanticEntry, codes *semanticCodes, sq *semanticQuery, floor float64, now time.Time, skip map[string]bool, st *searchStats) (*semanticEntry, float64) {
	var best *semanticEntry
	bestSim := math.Inf(-1)
	n := len(sq.vec)
	abs := float64(n+16) * 0x1p-149
	bounded := !sq.exact && codes.words == len(sq.even) && len(codes.coded) == len(entries)
	for i, e := range entries {
		if len(e.vec) != n || !now.Before(e.expires) || skip[e.answerKey] {
			continue
		}
		if st != nil {
			st.scanned++
		}
		c := &e.code
		if bounded && !c.exact && codes.coded[i] {
			cut := math.Max(floor, bestSim)
			// what the bound adds beyond the partial dot, but for the unread dimensions
			slack := sq.norm*c.err + sq.err*c.hat + sq.fp*sq.norm*c.norm + abs
			sc := sq.scale * c.scale
			var p uint64
			left := false
			for b, block := range codes.blocks {
				w, lo := codes.width(b), b*semanticBlock/8
				p += dotCodes(block[i*w:(i+1)*w], sq.even[lo:lo+w], sq.odd[lo:lo+w])
				if st != nil {
					st.blocks++
				}
				part := sc * float64(int64(p)-semanticLevels*c.sums[b]+sq.corr[b])
				rest := slack
				if b < len(c.tail) {
					rest += sq.tail[b] * c.tail[b]
				}
				if ub := part + rest + 1e-9*(math.Abs(part)+rest); ub < cut {
					left = true
					break
				}
			}
			if left {
				continue
			}
		}
		if st != nil {
			st.rescored++
		}
		if sim := dot(e.vec, sq.vec); sim > bestSim {
			best, bestSim = e, sim
		}
	}
	if best == nil || bestSim < floor {
		return nil, bestSim
	}
	return best, bestSim
}

// dotCodes is Σ u[i]·w[i] over the components of words (codes u) and of the query's even
// and odd words (codes w, reversed in 16-bit lanes): four products a multiplication, each
// group of four summed in bits 48–63 (see the comment at the top of this file).
func dotCodes(words, even, odd []uint64) uint64 {
	even, odd = even[:len(words)], odd[:len(words)]
	const lanes = 0x00ff00ff00ff00ff
	var s0, s1 uint64
	for i, v := range words {
		s0 += (v & lanes) * even[i] >> 48
		s1 += (v >> 8 & lanes) * odd[i] >> 48
	}
	return s0 + s1
}
