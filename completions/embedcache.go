package completions

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// CachePartial is the CacheStatus result of an embeddings request some of whose inputs
// came from the cache (the others were sent to the model).
const CachePartial = "partial"

// embedCache is an embeddings request's part in the response cache: each input is cached
// on its own, so a batch that repeats some earlier inputs sends only the new ones.
type embedCache struct {
	keys   []string // per input; nil when the request cannot be cached
	ctl    CacheControl
	bypass bool
	// vectors are the cached vectors (nil where missed); model is the model that made them
	// (one: see lookupEmbeddings); saved is what the hits cost when they were made, oldest
	// when the oldest of them was.
	vectors [][]float32
	model   string
	hits    int
	saved   float64
	oldest  time.Time
	age     time.Duration
	// tokens are the hits' input tokens: each its share of the call that made it, by
	// length (an estimate where that call had several inputs).
	tokens int
}

// embedCacheKeys returns the key of each input of req, or nil when the request cannot be
// cached (no cache, opt-in not asked, or no-cache with no-store). The key covers the
// caller, the namespace, the models as resolved, the dimensions and the user, and the input.
func (g *Gateway) embedCacheKeys(scope Scope, req *EmbeddingsRequest, targets []target) []string {
	if g.opts.Cache.Driver == nil {
		return nil
	}
	c := req.Cache
	if g.opts.Cache.OptIn && (c == nil || !c.Use) || c != nil && c.NoCache && c.NoStore {
		return nil
	}
	type keyed struct {
		V          int      `json:"v"`
		Op         string   `json:"op"`
		Owner      string   `json:"owner"`
		Namespace  string   `json:"ns,omitempty"`
		Models     []string `json:"models"`
		Dimensions *int     `json:"dimensions,omitempty"`
		User       string   `json:"user,omitempty"`
		Text       *string  `json:"text,omitempty"`
		Tokens     []int    `json:"tokens,omitempty"`
	}
	k := keyed{V: 1, Op: OperationEmbeddings, Owner: scope.Owner, Models: targetNames(targets), Dimensions: req.Dimensions, User: req.User}
	if c != nil {
		k.Namespace = c.Namespace
	}
	n := len(req.Input.Texts) + len(req.Input.Tokens)
	keys := make([]string, 0, n)
	for i := range n {
		k.Text, k.Tokens = nil, nil
		if i < len(req.Input.Texts) {
			k.Text = &req.Input.Texts[i]
		} else {
			k.Tokens = req.Input.Tokens[i-len(req.Input.Texts)]
		}
		b, err := json.Marshal(k)
		if err != nil {
			return nil
		}
		sum := sha256.Sum256(b)
		keys = append(keys, cacheKeyPrefix(scope.Owner, k.Namespace)+hex.EncodeToString(sum[:]))
	}
	return keys
}

// lookupEmbeddings fills ec with the cached vectors of its inputs (a driver failure is a
// miss, logged). Vectors of different models are never mixed in one answer: with a model
// group of several members (whichever answers, its vectors are kept under the group's
// keys) the cache answers only when every input is cached by one member, and otherwise
// every input goes to the model.
func (g *Gateway) lookupEmbeddings(ctx context.Context, ec *embedCache, targets []target) {
	if ec.keys == nil || ec.bypass {
		return
	}
	now := g.opts.Now()
	ec.vectors = make([][]float32, len(ec.keys))
	for i, k := range ec.keys {
		v, stored, err := g.opts.Cache.Driver.Get(ctx, k, now)
		if err != nil {
			if !errors.Is(err, ErrCacheMiss) {
				g.log.WarnContext(ctx, "completions: reading the response cache", "err", err)
				break
			}
			continue
		}
		if ec.ctl.MaxAge > 0 && now.Sub(stored) > time.Duration(ec.ctl.MaxAge*float64(time.Second)) {
			continue
		}
		cv, ok := decodeCachedVector(v)
		if !ok || ec.model != "" && cv.model != ec.model {
			continue
		}
		ec.vectors[i], ec.model = cv.vec, cv.model
		ec.hits++
		ec.saved += cv.cost
		ec.tokens += cv.tokens
		if ec.oldest.IsZero() || stored.Before(ec.oldest) {
			ec.oldest = stored
		}
	}
	single := len(targets) == 1 && ec.model == targets[0].name
	if ec.hits > 0 && !single && ec.hits < len(ec.keys) {
		*ec = embedCache{keys: ec.keys, ctl: ec.ctl} // a group's partial hit: every input to the model
	}
	if ec.hits > 0 {
		ec.age = now.Sub(ec.oldest)
	}
}

// status is the CacheStatus of an embeddings answer (nil when the cache took no part).
func (ec *embedCache) status() *CacheStatus {
	switch {
	case ec.keys == nil:
		return nil
	case ec.bypass:
		return &CacheStatus{Result: CacheBypass}
	case ec.hits == len(ec.keys):
		return &CacheStatus{Result: CacheHit, Hits: ec.hits, SavedUSD: ec.saved, AgeSeconds: int64(ec.age / time.Second)}
	case ec.hits > 0:
		return &CacheStatus{Result: CachePartial, Hits: ec.hits, SavedUSD: ec.saved, AgeSeconds: int64(ec.age / time.Second)}
	}
	return &CacheStatus{Result: CacheMiss}
}

// misses returns the request for the inputs the cache did not have, and their indexes.
func (ec *embedCache) misses(preq *providers.EmbeddingRequest) (*providers.EmbeddingRequest, []int) {
	if ec.hits == 0 {
		idx := make([]int, len(preq.Input)+len(preq.Tokens))
		for i := range idx {
			idx[i] = i
		}
		return preq, idx
	}
	r := *preq
	r.Input, r.Tokens = nil, nil
	var idx []int
	for i, v := range ec.vectors {
		if v != nil {
			continue
		}
		idx = append(idx, i)
		if i < len(preq.Input) {
			r.Input = append(r.Input, preq.Input[i])
		} else {
			r.Tokens = append(r.Tokens, preq.Tokens[i-len(preq.Input)])
		}
	}
	return &r, idx
}

// storeEmbeddings keeps the vectors model made for the inputs at idx, in the background;
// the call's cost and tokens are shared among them by their length.
func (g *Gateway) storeEmbeddings(ec *embedCache, preq *providers.EmbeddingRequest, idx []int, model string, vectors [][]float32, cost float64, tokens int) {
	if ec.keys == nil || ec.ctl.NoStore || len(vectors) != len(idx) {
		return
	}
	size := func(i int) int {
		if i < len(preq.Input) {
			return len(preq.Input[i])
		}
		return len(preq.Tokens[i-len(preq.Input)]) * 4
	}
	total := 0
	for _, i := range idx {
		total += size(i)
	}
	entries := make([]cacheEntry, 0, len(idx))
	for j, i := range idx {
		cv := cachedVector{vec: vectors[j], model: model}
		if total > 0 {
			part := float64(size(i)) / float64(total)
			cv.cost, cv.tokens = cost*part, int(math.Round(float64(tokens)*part))
		}
		v := encodeCachedVector(cv)
		if len(v) <= g.opts.Cache.MaxEntryBytes {
			entries = append(entries, cacheEntry{key: ec.keys[i], v: v})
		}
	}
	g.writeCache(ec.ctl, entries...)
}

// cachedVector is what the cache keeps of one input's embedding: the vector, the model
// that made it, and its share of that call's cost and tokens.
type cachedVector struct {
	vec    []float32
	model  string
	cost   float64
	tokens int
}

// A cached vector is stored as a version byte, the cost (float64), the tokens (uint32),
// the length of the model's name (uint16) and the name, then the vector's float32s, all
// little-endian.
const (
	cachedVectorVersion = 2
	cachedVectorHeader  = 15
)

func encodeCachedVector(cv cachedVector) []byte {
	name := cv.model[:min(len(cv.model), math.MaxUint16)]
	b := make([]byte, cachedVectorHeader, cachedVectorHeader+len(name)+4*len(cv.vec))
	b[0] = cachedVectorVersion
	binary.LittleEndian.PutUint64(b[1:], math.Float64bits(cv.cost))
	binary.LittleEndian.PutUint32(b[9:], uint32(min(max(cv.tokens, 0), math.MaxUint32)))
	binary.LittleEndian.PutUint16(b[13:], uint16(len(name)))
	b = append(b, name...)
	for _, f := range cv.vec {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

func decodeCachedVector(b []byte) (cachedVector, bool) {
	if len(b) < cachedVectorHeader || b[0] != cachedVectorVersion {
		return cachedVector{}, false
	}
	cv := cachedVector{cost: math.Float64frombits(binary.LittleEndian.Uint64(b[1:])), tokens: int(binary.LittleEndian.Uint32(b[9:]))}
	n := int(binary.LittleEndian.Uint16(b[13:]))
	if len(b) < cachedVectorHeader+n || (len(b)-cachedVectorHeader-n)%4 != 0 {
		return cachedVector{}, false
	}
	cv.model, b = string(b[cachedVectorHeader:cachedVectorHeader+n]), b[cachedVectorHeader+n:]
	cv.vec = make([]float32, len(b)/4)
	for i := range cv.vec {
		cv.vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return cv, true
}
