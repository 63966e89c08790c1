package inference

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/optimize"
)

// Example is one training row: a prompt and the models that answered it correctly.
type Example struct {
	// Text is the prompt.
	Text string
	// Labels are the correct models ("provider/model"); the first is the preferred one.
	Labels []string
	// Scores optionally gives each model's score in [0,1] on this prompt. When it has a
	// positive entry it is used as a soft target instead of Labels.
	Scores map[string]float64
}

// Embedder names accepted by FitOptions.Embedder.
const (
	EmbedderNGram = "ngram"
	EmbedderONNX  = "onnx"
)

// Training objectives accepted by FitOptions.Objective.
const (
	// ObjectiveSoftTargets minimises the cross-entropy between the predicted distribution
	// and a soft target spread over each row's correct models (uniformly over Labels, or
	// ∝ score^ScorePower when Scores are given).
	ObjectiveSoftTargets = "soft-targets"
	// ObjectiveAnyCorrect (the default) maximises the log of Σ_c target_c·p_c: with the
	// same soft targets, the probability mass the router puts on the row's correct models
	// (with Scores: its expected score^ScorePower, up to a constant). It may concentrate
	// on one model that is usually among the correct ones instead of spreading over all
	// of them, which is what top-1 routing wants; in effect the soft target is re-weighted
	// by the model's own belief at every step (as in EM for partial labels). The loss is
	// not convex; training starts from the uniform router.
	ObjectiveAnyCorrect = "any-correct"
)

// defaultL2Grid are the regularisation strengths tried when FitOptions.L2 is empty.
var defaultL2Grid = []float64{3e-4, 1e-4}

// FitOptions configures Fit. The zero value trains with the n-gram embedder, no cache,
// seed 0, the any-correct objective and L2 chosen from {3e-4, 1e-4} on a 20% validation
// split.
type FitOptions struct {
	// Embedder is "ngram-tfidf-v1" (or "ngram", or empty: the default) or "onnx".
	Embedder string
	// ONNXModelDir is the directory holding model.onnx and tokenizer.json, for "onnx".
	ONNXModelDir string
	// Cache, when not nil, keeps embeddings by content hash so a retrain on the same
	// texts does not recompute them.
	Cache EmbeddingCache
	// Seed fixes the validation split.
	Seed int64
	// NGram configures the n-gram embedder; the zero value means its defaults.
	NGram NGramConfig
	// L2 lists the regularisation strengths to choose from on the validation split. Empty
	// means a default grid; a single value skips the validation fits.
	L2 []float64
	// ValidationFraction is the share of usable rows held out to choose L2. 0 means 0.2.
	ValidationFraction float64
	// ScorePower shapes soft targets from Scores: target ∝ score^ScorePower. 0 means 4;
	// larger values concentrate the target on the best-scoring models.
	ScorePower float64
	// Objective is the training loss: ObjectiveAnyCorrect (the default; the best top-1 hit
	// rate in cross-validation, see BENCHMARKS.md) or ObjectiveSoftTargets.
	Objective string
	// IgnoreScores trains on Labels only even when Scores are present.
	IgnoreScores bool
	// MinDF is how many training texts must contain a feature for the classifier to give
	// it a weight. 0 means 0.1% of the usable rows, at least 2 (5 for the 4,522 usable
	// LLMRouter rows): rarer n-grams mostly memorise their texts, and dropping them made
	// training 40% faster and the model half the size at the same cross-validated hit rate.
	MinDF int
	// MaxIterations caps L-BFGS iterations per fit. 0 means 100 (on the LLMRouter data,
	// more iterations change the cross-validated hit rate by less than 0.001).
	MaxIterations int
	// Workers is the gradient parallelism. 0 means GOMAXPROCS.
	Workers int
	// Logger receives progress at debug level. nil means slog.Default().
	Logger *slog.Logger
}

// L2Trial is the validation result of one regularisation strength.
type L2Trial struct {
	L2         float64
	HitRate    float64 // share of validation rows whose top model is correct
	LogLoss    float64 // mean training loss (see FitOptions.Objective) on the validation rows
	Iterations int
}

// FitReport describes a Fit.
type FitReport struct {
	// Rows is the number of examples given; Used were trained on; Skipped had no correct
	// model (empty Labels and no positive Score) and could not teach a label.
	Rows, Used, Skipped int
	// Classes is the number of distinct models.
	Classes int
	// ComputedTexts were embedded; CachedTexts came from the cache.
	ComputedTexts, CachedTexts int
	// EmbeddingTime covers embedding (and IDF fitting); TrainingTime the classifier fits.
	EmbeddingTime, TrainingTime time.Duration
	// L2 is the chosen regularisation strength; Trials the validation results behind it.
	L2     float64
	Trials []L2Trial
	// ValidationRows is the size of the held-out split used to choose L2 (0 if none).
	ValidationRows int
}

// Ranked is a model and its probability.
type Ranked struct {
	Model string
	Prob  float64
}

// Model is a trained router: an embedder plus a classifier over Classes. It is safe for
// concurrent use. Call Close when done to release an ONNX runtime.
type Model struct {
	classes    []string
	embedder   stagedEmbedder
	classifier *SoftmaxRegression
	onnx       *onnxState // set for the ONNX embedder
}

// Classes returns the models the router chooses among, in class order.
func (m *Model) Classes() []string { return slices.Clone(m.classes) }

// EmbedderName returns the embedder's stable name (the router's embedding_model).
func (m *Model) EmbedderName() string { return m.embedder.Name() }

// Classifier returns the trained classification head.
func (m *Model) Classifier() Classifier { return m.classifier }

// Close releases the embedder's resources (the ONNX runtime session, if any).
func (m *Model) Close() error {
	if c, ok := m.embedder.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// Predict ranks the classes for each text, best first; equal probabilities are ordered
// by model name. Texts are embedded in batches.
func (m *Model) Predict(ctx context.Context, texts []string) ([][]Ranked, error) {
	raw, _, err := rawCached(ctx, m.embedder, nil, texts)
	if err != nil {
		return nil, err
	}
	vecs := m.embedder.finish(raw)
	out := make([][]Ranked, len(texts))
	probs := make([]float64, len(m.classes))
	for i, v := range vecs {
		if i%embedBatchSize == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		m.classifier.Probabilities(v, probs)
		r := make([]Ranked, len(m.classes))
		for c, name := range m.classes {
			r[c] = Ranked{Model: name, Prob: probs[c]}
		}
		sortRanked(r)
		out[i] = r
	}
	return out, nil
}

func sortRanked(r []Ranked) {
	slices.SortFunc(r, func(a, b Ranked) int {
		if c := cmp.Compare(b.Prob, a.Prob); c != 0 {
			return c
		}
		return strings.Compare(a.Model, b.Model)
	})
}

// newEmbedder builds the unfitted embedder opts asks for.
func newEmbedder(ctx context.Context, opts FitOptions) (stagedEmbedder, *onnxState, error) {
	switch opts.Embedder {
	case "", EmbedderNGram, NGramName:
		e, err := NewNGramEmbedder(opts.NGram)
		return e, nil, err
	case EmbedderONNX:
		if opts.ONNXModelDir == "" {
			return nil, nil, invalid("ONNXModelDir", "is required with the onnx embedder")
		}
		e, err := NewONNXEmbedder(ctx, opts.ONNXModelDir, ONNXOptions{})
		if err != nil {
			return nil, nil, err
		}
		return e, e.state(), nil
	default:
		return nil, nil, invalid("Embedder", "unknown embedder %q (want %q or %q)", opts.Embedder, NGramName, EmbedderONNX)
	}
}

// Fit trains a router on examples. Rows without a correct model are skipped and counted.
// It fails with ErrInvalid when fewer than 2 usable rows or 2 classes remain.
func Fit(ctx context.Context, examples []Example, opts FitOptions) (*Model, *FitReport, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	for _, l := range opts.L2 {
		if !(l >= 0) || math.IsInf(l, 0) {
			return nil, nil, invalid("L2", "must be finite and >= 0, got %v", l)
		}
	}
	switch opts.Objective {
	case "", ObjectiveSoftTargets, ObjectiveAnyCorrect:
	default:
		return nil, nil, invalid("Objective", "unknown objective %q (want %q or %q)", opts.Objective, ObjectiveSoftTargets, ObjectiveAnyCorrect)
	}
	if opts.ValidationFraction < 0 || opts.ValidationFraction >= 1 {
		return nil, nil, invalid("ValidationFraction", "must be in [0,1), got %v", opts.ValidationFraction)
	}
	rep := &FitReport{Rows: len(examples)}
	classes, targets, used, err := buildTargets(examples, opts)
	if err != nil {
		return nil, nil, err
	}
	rep.Used, rep.Skipped, rep.Classes = len(used), len(examples)-len(used), len(classes)
	if len(used) < 2 {
		return nil, rep, invalid("examples", "need at least 2 rows with a correct model, got %d (%d skipped)", len(used), rep.Skipped)
	}
	if len(classes) < 2 {
		return nil, rep, invalid("examples", "need at least 2 distinct models, got %d", len(classes))
	}

	emb, onnx, err := newEmbedder(ctx, opts)
	if err != nil {
		return nil, rep, err
	}
	closeOnErr := func() {
		if c, ok := emb.(interface{ Close() error }); ok {
			c.Close()
		}
	}
	start := time.Now()
	texts := make([]string, len(used))
	for i, r := range used {
		texts[i] = examples[r].Text
	}
	raw, st, err := rawCached(ctx, emb, opts.Cache, texts)
	if err != nil {
		closeOnErr()
		return nil, rep, err
	}
	rep.ComputedTexts, rep.CachedTexts = st.computed, st.cached
	if ng, ok := emb.(*NGramEmbedder); ok {
		ng.fitCounts(raw)
	}
	xs := emb.finish(raw)
	rep.EmbeddingTime = time.Since(start)

	start = time.Now()
	clf, err := fitSoftmax(ctx, xs, emb.Dim(), targets, opts, rep, log)
	rep.TrainingTime = time.Since(start)
	if err != nil {
		closeOnErr()
		return nil, rep, err
	}
	log.Debug("inference: router fitted", "rows", rep.Rows, "used", rep.Used, "skipped", rep.Skipped,
		"classes", rep.Classes, "l2", rep.L2, "embedding", rep.EmbeddingTime, "training", rep.TrainingTime)
	return &Model{classes: classes, embedder: emb, classifier: clf, onnx: onnx}, rep, nil
}

// buildTargets returns the sorted class list, one soft target row per usable example and
// the indices of the usable examples.
func buildTargets(examples []Example, opts FitOptions) ([]string, [][]float64, []int, error) {
	power := opts.ScorePower
	if power == 0 {
		power = 4
	}
	if power < 0 || math.IsNaN(power) || math.IsInf(power, 0) {
		return nil, nil, nil, invalid("ScorePower", "must be finite and >= 0, got %v", power)
	}
	set := map[string]bool{}
	for i, ex := range examples {
		for j, l := range ex.Labels {
			if l == "" {
				return nil, nil, nil, invalid(fmt.Sprintf("examples[%d].labels[%d]", i, j), "must not be empty")
			}
			set[l] = true
		}
		for m, s := range ex.Scores {
			if m == "" {
				return nil, nil, nil, invalid(fmt.Sprintf("examples[%d].scores", i), "has an empty model name")
			}
			if math.IsNaN(s) || s < 0 || s > 1 {
				return nil, nil, nil, invalid(fmt.Sprintf("examples[%d].scores[%q]", i, m), "must be a number in [0,1], got %v", s)
			}
			set[m] = true
		}
	}
	classes := make([]string, 0, len(set))
	for c := range set {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	index := make(map[string]int, len(classes))
	for i, c := range classes {
		index[c] = i
	}
	var targets [][]float64
	var used []int
	for i, ex := range examples {
		t := make([]float64, len(classes))
		var sum float64
		if !opts.IgnoreScores {
			for m, s := range ex.Scores {
				if s > 0 {
					v := math.Pow(s, power)
					t[index[m]] += v
					sum += v
				}
			}
		}
		if sum == 0 {
			for _, l := range ex.Labels {
				if t[index[l]] == 0 {
					t[index[l]] = 1
					sum++
				}
			}
		}
		if sum == 0 {
			continue
		}
		for c := range t {
			t[c] /= sum
		}
		targets = append(targets, t)
		used = append(used, i)
	}
	return classes, targets, used, nil
}

// fitSoftmax chooses L2 on a validation split and fits the final classifier on all rows.
func fitSoftmax(ctx context.Context, xs []Vector, dim int, targets [][]float64,
	opts FitOptions, rep *FitReport, log *slog.Logger) (*SoftmaxRegression, error) {
	k := len(targets[0])
	anyCorrect := opts.Objective != ObjectiveSoftTargets
	minDF := opts.MinDF
	if minDF == 0 {
		minDF = max(2, (len(xs)+999)/1000)
	}
	clf := newSoftmaxShape(dim, k, xs, minDF)
	grid := opts.L2
	if len(grid) == 0 {
		grid = defaultL2Grid
	}
	cfg := softmaxConfig{MaxIterations: opts.MaxIterations, Workers: opts.Workers, Logger: log}
	frac := opts.ValidationFraction
	if frac == 0 {
		frac = 0.2
	}
	nVal := int(math.Round(frac * float64(len(xs))))
	chosen := grid[0]
	var warm []float64
	if len(grid) > 1 && nVal >= 1 && len(xs)-nVal >= 2 {
		perm := rand.New(rand.NewPCG(uint64(opts.Seed), 0x7a11)).Perm(len(xs))
		valIdx, trIdx := perm[:nVal], perm[nVal:]
		slices.Sort(valIdx)
		slices.Sort(trIdx)
		pick := func(idx []int) ([]Vector, [][]float64) {
			v, t := make([]Vector, len(idx)), make([][]float64, len(idx))
			for i, j := range idx {
				v[i], t[i] = xs[j], targets[j]
			}
			return v, t
		}
		trX, trT := pick(trIdx)
		ts := clf.compact(trX, trT, nil)
		ts.anyCorrect = anyCorrect
		// Strongest regularisation first, each fit warm-started from the previous one.
		order := slices.Clone(grid)
		slices.SortFunc(order, func(a, b float64) int { return cmp.Compare(b, a) })
		var theta, bestTheta []float64
		best := -1
		probs := make([]float64, k)
		for _, l2 := range order {
			cfg.L2 = l2
			var err error
			var stats optimize.Stats
			theta, stats, err = trainSoftmax(ctx, ts, cfg, theta)
			if err != nil {
				return nil, err
			}
			clf.setParams(theta)
			tr := L2Trial{L2: l2, Iterations: stats.MajorIterations}
			for _, j := range valIdx {
				clf.Probabilities(xs[j], probs)
				top := argmax(probs)
				if targets[j][top] > 0 && isCorrect(top, targets[j]) {
					tr.HitRate++
				}
				tr.LogLoss += rowLoss(anyCorrect, targets[j], probs)
			}
			tr.HitRate /= float64(len(valIdx))
			tr.LogLoss /= float64(len(valIdx))
			rep.Trials = append(rep.Trials, tr)
			log.Debug("inference: l2 trial", "l2", l2, "hit_rate", tr.HitRate, "log_loss", tr.LogLoss)
			if best < 0 || tr.HitRate > rep.Trials[best].HitRate ||
				(tr.HitRate == rep.Trials[best].HitRate && tr.LogLoss < rep.Trials[best].LogLoss) {
				best = len(rep.Trials) - 1
				bestTheta = slices.Clone(theta)
			}
		}
		chosen = rep.Trials[best].L2
		rep.ValidationRows = nVal
		warm = bestTheta
	}
	rep.L2 = chosen
	cfg.L2 = chosen
	// The final fit on all rows starts from the chosen validation fit: same columns, same
	// L2, most of the way there.
	ts := clf.compact(xs, targets, nil)
	ts.anyCorrect = anyCorrect
	theta, _, err := trainSoftmax(ctx, ts, cfg, warm)
	if err != nil {
		return nil, err
	}
	clf.setParams(theta)
	return clf, nil
}

// isCorrect reports whether class top is one of the row's correct models: those with the
// largest target (all labels alike, or the best-scoring models).
func isCorrect(top int, target []float64) bool {
	mx := 0.0
	for _, t := range target {
		mx = max(mx, t)
	}
	return target[top] == mx
}

// rowLoss is one row's training loss (see trainSet.anyCorrect) at probabilities probs.
func rowLoss(anyCorrect bool, target, probs []float64) float64 {
	var loss, tp float64
	for c, t := range target {
		if t > 0 {
			loss -= t * math.Log(max(probs[c], 1e-300))
			tp += t * probs[c]
		}
	}
	if anyCorrect {
		return -math.Log(max(tp, 1e-300))
	}
	return loss
}

func argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
