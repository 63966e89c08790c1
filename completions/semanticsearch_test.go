package completions

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store/memstore"
)

// bruteNearest is the reference search: every entry scored with dot, the first of the
// most similar kept, nil when it is below floor.
func bruteNearest(entries []*semanticEntry, vec []float32, floor float64, now time.Time, skip map[string]bool) (*semanticEntry, float64) {
	var best *semanticEntry
	bestSim := math.Inf(-1)
	for _, e := range entries {
		if len(e.vec) != len(vec) || !now.Before(e.expires) || skip[e.answerKey] {
			continue
		}
		if sim := dot(e.vec, vec); sim > bestSim {
			best, bestSim = e, sim
		}
	}
	if best == nil || bestSim < floor {
		return nil, bestSim
	}
	return best, bestSim
}

// adversarialVectors makes n vectors of dim dimensions around q: random ones, near
// copies of q at similarities just around threshold, duplicates, tiny and huge norms,
// zero vectors, components that are not finite, and other lengths.
func adversarialVectors(rng *rand.Rand, q []float32, n int, threshold float64) [][]float32 {
	dim := len(q)
	random := func(d int) []float32 {
		v := make([]float32, d)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		if d > 0 && rng.IntN(2) == 0 { // a model's first dimensions carrying the most
			for i := range v {
				v[i] *= float32(math.Exp(-float64(i) / float64(d)))
			}
		}
		if w := normalize(v); w != nil {
			return w
		}
		return v
	}
	near := func(sim float64) []float32 {
		w := random(dim)
		// w minus its part along q, scaled to make q·v = sim
		var qq, qw float64
		for i := range q {
			qq += float64(q[i]) * float64(q[i])
			qw += float64(q[i]) * float64(w[i])
		}
		v := make([]float32, dim)
		var pn float64
		perp := make([]float64, dim)
		for i := range q {
			if qq > 0 {
				perp[i] = float64(w[i]) - qw/qq*float64(q[i])
			}
			pn += perp[i] * perp[i]
		}
		qn := math.Sqrt(qq)
		for i := range v {
			x := 0.0
			if qn > 0 {
				x = sim * float64(q[i]) / qn
			}
			if pn > 0 {
				x += math.Sqrt(max(0, 1-sim*sim)) * perp[i] / math.Sqrt(pn)
			}
			v[i] = float32(x)
			if rng.IntN(4) == 0 { // a nudge of an ulp or so
				v[i] = math.Nextafter32(v[i], float32(rng.NormFloat64()))
			}
		}
		return v
	}
	var out [][]float32
	for range n {
		var v []float32
		switch k := rng.IntN(12); {
		case k < 3:
			v = random(dim)
		case k < 6:
			v = near(threshold + (rng.Float64()-0.5)*1e-5)
		case k == 6 && len(out) > 0:
			v = append([]float32(nil), out[rng.IntN(len(out))]...) // a duplicate
		case k == 7:
			v = make([]float32, dim) // zero
		case k == 8:
			v = random(max(0, dim+rng.IntN(3)-1)) // another length
		case k == 9 && dim > 0:
			v = random(dim)
			v[rng.IntN(dim)] = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[rng.IntN(3)]
		default:
			v = near(rng.Float64()*2 - 1)
		}
		if rng.IntN(5) == 0 { // tiny and huge norms
			s := []float32{1e-38, 1e-30, 1e-20, 1e-3, 1e3, 1e10, 1e17, 1e19, 1e30}[rng.IntN(9)]
			v = append([]float32(nil), v...)
			for i := range v {
				v[i] *= s
			}
		}
		out = append(out, v)
	}
	return out
}

// TestSemanticSearchIsTheBruteForceSearch: the bounded search finds what scoring every
// vector finds — the same hit or miss, the same entry (the first of equals), the same
// similarity — on random and adversarial vectors and queries, at every kind of floor.
func TestSemanticSearchIsTheBruteForceSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	now := time.Now()
	cases := 0
	for round := range 400 {
		dim := []int{0, 1, 3, 8, 9, 127, 128, 129, 300, 512, 1536}[rng.IntN(11)]
		threshold := []float64{0.8, 0.95, 0.5, 0.0, rng.Float64()}[rng.IntN(5)]
		q := make([]float32, dim)
		for i := range q {
			q[i] = float32(rng.NormFloat64())
		}
		if w := normalize(q); w != nil {
			q = w
		}
		vecs := adversarialVectors(rng, q, rng.IntN(120), threshold)
		switch rng.IntN(8) { // the query itself adversarial at times
		case 0:
			q = make([]float32, dim)
		case 1:
			if len(vecs) > 0 {
				q = vecs[rng.IntN(len(vecs))]
			}
		case 2:
			s := []float32{1e-30, 1e17, 1e20}[rng.IntN(3)]
			q = append([]float32(nil), q...)
			for i := range q {
				q[i] *= s
			}
		}
		var aligned []float32
		if dim >= 2 && rng.IntN(4) == 0 {
			// a vector whose quantisation error lines up with the query, so that the
			// error the bound allows for is all there: components half a step off their
			// code, and a query of their signs (or the other way round)
			half, signs := make([]float32, dim), make([]float32, dim)
			for i := range half {
				s := float32(1 - 2*rng.IntN(2))
				half[i] = (float32(rng.IntN(101)-50) + 0.49*s) / 63
				signs[i] = s
			}
			half[0], signs[0] = 1, 0 // the largest component: the scale
			if rng.IntN(2) == 0 {
				q, aligned = signs, half
			} else {
				q, aligned = half, signs
			}
			vecs = append(vecs, aligned)
		}
		var entries []*semanticEntry
		skip := map[string]bool{}
		for i, v := range vecs {
			exp := now.Add(time.Hour)
			if rng.IntN(10) == 0 {
				exp = now // expired
			}
			key := fmt.Sprint(i)
			if rng.IntN(15) == 0 {
				skip[key] = true
			}
			entries = append(entries, newSemanticEntry(key, v, exp))
		}
		floors := []float64{math.Inf(-1), threshold - 1e-6, threshold, rng.Float64()*2 - 1}
		for _, e := range entries { // floors exactly at, and an ulp around, a similarity
			if len(e.vec) == len(q) && (rng.IntN(10) == 0 || aligned != nil && &e.vec[0] == &aligned[0]) {
				s := dot(e.vec, q)
				floors = append(floors, s, math.Nextafter(s, 2), math.Nextafter(s, -2))
			}
		}
		var sq semanticQuery
		sq.prepare(q)
		var codes semanticCodes
		for _, e := range entries {
			codes.push(&e.code)
		}
		for _, floor := range floors {
			cases++
			want, wantSim := bruteNearest(entries, q, floor, now, skip)
			got, gotSim := nearestBounded(entries, &codes, &sq, floor, now, skip, nil)
			if got != want || (want != nil && math.Float64bits(gotSim) != math.Float64bits(wantSim)) {
				t.Fatalf("round %d (dim %d, %d vectors, floor %v): got %v at %v, brute force %v at %v",
					round, dim, len(entries), floor, keyOf(got), gotSim, keyOf(want), wantSim)
			}
		}
	}
	t.Logf("%d searches compared", cases)
}

func keyOf(e *semanticEntry) string {
	if e == nil {
		return "none"
	}
	return e.answerKey
}

// TestSemanticSearchRescoresFewVectors: on random unit vectors of 1,536 dimensions the
// bounded search scores exactly none of them for a miss at the default threshold, and
// few when it looks for the nearest whatever its similarity; a near copy of the query is
// found.
func TestSemanticSearchRescoresFewVectors(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	vector := func() []float32 {
		v := make([]float32, 1536)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return normalize(v)
	}
	now := time.Now()
	var entries []*semanticEntry
	for i := range 3000 {
		entries = append(entries, newSemanticEntry(fmt.Sprint(i), vector(), now.Add(time.Hour)))
	}
	q := vector()
	var sq semanticQuery
	sq.prepare(q)
	var codes semanticCodes
	for _, e := range entries {
		codes.push(&e.code)
	}
	var st searchStats
	if e, _ := nearestBounded(entries, &codes, &sq, DefaultSimilarityThreshold-1e-6, now, nil, &st); e != nil || st.scanned != 3000 || st.rescored != 0 {
		t.Fatalf("a miss: found %v, scanned %d, rescored %d; want none, 3000, 0", keyOf(e), st.scanned, st.rescored)
	}
	if st.blocks > 3000*12/2 { // 12 blocks of 128 dimensions a vector
		t.Fatalf("a miss read %d blocks of 3000 vectors' copies; want at most half of them", st.blocks)
	}
	t.Logf("a miss read %.2f blocks of 12 a vector", float64(st.blocks)/3000)
	st = searchStats{}
	if e, _ := nearestBounded(entries, &codes, &sq, math.Inf(-1), now, nil, &st); e == nil || st.rescored > 3000/20 {
		t.Fatalf("the nearest: found %v, rescored %d of %d; want at most 5%%", keyOf(e), st.rescored, st.scanned)
	}
	near := append([]float32(nil), q...)
	for i := range near {
		near[i] += float32(rng.NormFloat64()) * 0.005
	}
	entries[1234] = newSemanticEntry("near", normalize(near), now.Add(time.Hour))
	codes.set(1234, &entries[1234].code)
	st = searchStats{}
	if e, sim := nearestBounded(entries, &codes, &sq, DefaultSimilarityThreshold-1e-6, now, nil, &st); e == nil || e.answerKey != "near" || st.rescored > 3000/100 {
		t.Fatalf("a hit: found %v at %v, rescored %d; want near, at most 1%%", keyOf(e), sim, st.rescored)
	}
}

// checkCodes fails unless s's quantised copies are its entries' and its search is the
// brute-force search's.
func checkCodes(t *testing.T, rng *rand.Rand, s *semanticScope, now time.Time, step string) {
	t.Helper()
	s.mu.RLock()
	entries := slices.Clone(s.entries)
	c := &s.codes
	if len(c.coded) != len(entries) {
		s.mu.RUnlock()
		t.Fatalf("%s: %d rows of codes for %d entries", step, len(c.coded), len(entries))
	}
	for i, e := range entries {
		want := quantize(e.vec)
		if len(want.words) != c.words || want.exact {
			continue
		}
		if !c.coded[i] {
			s.mu.RUnlock()
			t.Fatalf("%s: entry %d (%s) has no codes", step, i, e.answerKey)
		}
		for b, block := range c.blocks {
			w := c.width(b)
			if !slices.Equal(block[i*w:(i+1)*w], want.words[b*semanticBlock/8:][:w]) {
				s.mu.RUnlock()
				t.Fatalf("%s: entry %d (%s): block %d of its codes is not its vector's", step, i, e.answerKey, b)
			}
		}
	}
	s.mu.RUnlock()
	for range 5 {
		q := entries[0].vec
		if rng.IntN(2) == 0 || len(q) == 0 {
			q = make([]float32, 200)
			for i := range q {
				q[i] = float32(rng.NormFloat64())
			}
			q = normalize(q)
		}
		for _, floor := range []float64{math.Inf(-1), 0.8 - 1e-6} {
			want, wantSim := bruteNearest(entries, q, floor, now, nil)
			if got, gotSim := s.nearestExcept(q, now, nil, floor); got != want || want != nil && gotSim != wantSim {
				t.Fatalf("%s: found %v at %v, brute force %v at %v", step, keyOf(got), gotSim, keyOf(want), wantSim)
			}
		}
	}
}

// TestSemanticCodesFollowTheEntries: every way a vector enters or leaves a scope — an
// insert, one beyond MaxVectors or MaxTotalVectors, a replacement of the same answer, an
// answer found gone, expiry, the vectors listed from the driver (a restart, a replica's
// writes), a vector of another length or not finite — leaves each entry's quantised copy
// in its row and the search the brute-force search.
func TestSemanticCodesFollowTheEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	vec := func() []float32 {
		v := make([]float32, 200) // two blocks, the second short
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return normalize(v)
	}
	now := time.Now()
	var x semanticIndex
	const max, maxTotal = 8, 20
	prefixes := []string{"a.", "b.", "c."}
	check := func(step string) {
		for _, p := range prefixes {
			if s := x.get(p); s != nil && len(s.entries) > 0 {
				checkCodes(t, rng, s, now, step+" "+p)
			}
		}
	}
	for i := range 300 {
		p := prefixes[rng.IntN(3)]
		key := fmt.Sprintf("%s%d", p, rng.IntN(30)) // answers come again: replacements
		ttl := time.Duration(1+rng.IntN(120)) * time.Minute
		switch k := rng.IntN(10); {
		case k < 5:
			v := vec()
			if rng.IntN(15) == 0 {
				v = vec()[:150] // another length
			} else if rng.IntN(15) == 0 {
				v[3] = float32(math.NaN())
			}
			x.add(p, newSemanticEntry(key, v, now.Add(ttl)), now, max, maxTotal)
		case k < 7: // listed from the driver: new vectors, and known ones that expire later
			var listed []*semanticEntry
			for range rng.IntN(6) {
				listed = append(listed, newSemanticEntry(fmt.Sprintf("%s%d", p, rng.IntN(30)), vec(), now.Add(ttl)))
			}
			x.refreshed(p, listed, now, max, maxTotal)
		case k == 7: // an answer found gone
			if s := x.get(p); s != nil {
				s.forget(key)
			}
		case k == 8: // time passes: expired vectors go at the next sweep or refresh
			now = now.Add(time.Duration(rng.IntN(40)) * time.Minute)
			x.refreshed(p, nil, now, max, maxTotal)
		default:
			if rng.IntN(10) == 0 {
				x.purged(p)
			}
		}
		check(fmt.Sprintf("step %d", i))
	}
}

// TestSemanticCodesOfVectorsReadBackAfterARestart: the vectors a restarted Gateway (or
// another replica) reads back from a StoreCache get their quantised copies too.
func TestSemanticCodesOfVectorsReadBackAfterARestart(t *testing.T) {
	st := memstore.New()
	e := newEmbeddingChatFake("e")
	e.on("chat", step{text: "Paris"}, step{text: "Rome"})
	first := newSemanticHarness(t, NewStoreCache(st), e)
	alice := Scope{Owner: "alice"}
	first.ask(t, alice, chat("What is the capital of France?", "e/chat"))
	first.ask(t, alice, chat("Which river flows through Rome?", "e/chat"))
	if err := first.g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	second := newSemanticHarness(t, NewStoreCache(st), e)
	if r := second.ask(t, alice, chat("Tell me France's capital city.", "e/chat")); r.Cache == nil || !r.Cache.Semantic {
		t.Fatalf("after a restart: %+v", r.Cache)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	second.g.semantic.mu.Lock()
	scopes := maps.Clone(second.g.semantic.scopes)
	second.g.semantic.mu.Unlock()
	rows := 0
	for p, s := range scopes {
		checkCodes(t, rng, s, time.Now(), "read back "+p)
		s.mu.RLock()
		for _, ok := range s.codes.coded {
			if ok {
				rows++
			}
		}
		s.mu.RUnlock()
	}
	if rows != 2 {
		t.Fatalf("%d vectors read back with their quantised copies; want 2", rows)
	}
}
