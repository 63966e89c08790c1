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
	// Task optionally names the kind of prompt (the benchmark or workload it comes from,
	// e.g. "gsm8k"). When at least two tasks label MinTaskRows rows each, Fit also learns
	// to recognise the task and blends each model's mean score on it into the quality
	// estimates, with a weight chosen on the validation split (FitOptions.TaskPriorWeights).
	Task string
	// OnlyScored says that only the models in Scores (and Labels) were measured on this
	// prompt: the quality heads of the other models learn nothing from it. Without it, a
	// model that appears anywhere in the examples and not in this one's Labels or Scores
	// counts as answering it wrongly. Set it when merging data sets that measured
	// different models.
	OnlyScored bool
}

// MaxClasses is the most distinct models Fit trains on. Training memory is about
// (workers + 2) × rows × classes × 8 bytes for the scores and residuals, plus the
// embeddings and the L-BFGS history (classes × weighted features × 8 bytes × 12); the
// bound keeps a router's memory linear in its rows and capped.
const MaxClasses = 100

// Estimators accepted by FitOptions.Estimator.
const (
	// EstimatorAuto (the default) trains the softmax head and the per-model quality heads
	// and ranks with whichever (or a blend) is best on the validation split.
	EstimatorAuto = ""
	// EstimatorQuality trains only the quality heads and ranks by them; it needs no row
	// with a correct model on every class and suits merged data sets (OnlyScored rows).
	EstimatorQuality = "quality"
)

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
	// Estimator is EstimatorAuto or EstimatorQuality.
	Estimator string
	// Ranking fixes the ranking (RankSoftmax, RankQuality, RankBlend with BlendWeight)
	// instead of choosing it on the validation split; empty means choose.
	Ranking     string
	BlendWeight float64
	// QualityL2 lists the regularisation strengths of the quality heads to choose from on
	// the validation split (by log loss). Empty means a default grid; one value skips the
	// search.
	QualityL2 []float64
	// TaskPriorWeights lists the weights λ of the task prior (see Example.Task) to choose
	// from on the validation split by the mean score of the top pick; the quality estimate
	// is (1−λ)·head + λ·prior. Empty means {0, 0.25, 0.5, 0.75}; one value fixes it, and
	// {0} turns the prior off. Examples without tasks ignore it.
	TaskPriorWeights []float64
	// TaskExpertWeights lists the weights w of the task experts (per-model heads fitted on
	// one task's rows, see MinExpertRows) to choose from on the validation split by log
	// loss; the heads' estimate becomes (1−w)·heads + w·Σ_t P(t|prompt)·expert_t before the
	// task prior is blended in. Empty means {0, 0.5, 0.75, 1}; one value fixes it, and {0}
	// turns the experts off. Examples without tasks ignore it.
	TaskExpertWeights []float64
	// TaskExpertL2 lists the experts' regularisation strengths (one for all of them) to
	// choose from by validation log loss; empty means 3e-3.
	TaskExpertL2 []float64
	// SkipCalibration leaves the quality estimates as the heads (and task prior) give them
	// instead of rescaling them on the validation split (Platt scaling).
	SkipCalibration bool
	// Calibration fixes the Platt scaling (a, b) of the models it names instead of fitting
	// it, e.g. to the one an earlier fit on part of the same data reported
	// (FitReport.Calibration); models it does not name keep their estimates unscaled.
	Calibration map[string][2]float64
	// TaskL2 lists the task head's regularisation strengths to choose from on the
	// validation split (by log loss); empty means 1e-6.
	TaskL2 []float64
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
	// QualityL2 is the quality heads' regularisation strength.
	QualityL2 float64
	// Ranking is how the model orders its classes (RankSoftmax, RankQuality, RankBlend),
	// chosen by the mean score of the top pick on the validation split; BlendWeight is β
	// of RankBlend.
	Ranking     string
	BlendWeight float64
	// RankingTrials are the validation results behind Ranking.
	RankingTrials []RankingTrial
	// ValidationECE is the quality heads' expected calibration error on the validation
	// split (see ExpectedCalibrationError), with the task prior when one was kept.
	ValidationECE float64
	// Tasks is the number of tasks the task head learned (0: no task prior was fitted);
	// TaskL2 its regularisation; TaskPriorWeight the chosen λ (0: the heads alone) and
	// TaskPriorTrials the validation score of every λ tried.
	Tasks           int
	TaskL2          float64
	TaskPriorWeight float64
	TaskPriorTrials []TaskPriorTrial
	// TaskExperts is the number of task experts fitted (0: none); TaskExpertL2 their
	// regularisation, TaskExpertWeight the chosen w (0: not used) and TaskExpertTrials the
	// validation results of every w tried.
	TaskExperts      int
	TaskExpertL2     float64
	TaskExpertWeight float64
	TaskExpertTrials []TaskPriorTrial
	// Calibration is each model's Platt scaling (a, b) of the quality estimates, fitted on
	// the validation split or given in FitOptions.Calibration; nil when there is none.
	Calibration map[string][2]float64
	// ValidationEstimates are the quality estimates of the validation split's rows by the
	// heads fitted without them (calibrated, with the task prior, as the fitted model
	// would give them before its final refit on every row), by class in Classes order;
	// ValidationOutcomes the rows' observed scores (NaN where a row did not measure a
	// model), and ValidationIndices their indices in the examples given to Fit. Empty when no
	// validation split was used. The trainer adds them to its held-out rows to measure the
	// tradeoff frontier on more rows.
	ValidationEstimates, ValidationOutcomes [][]float64
	ValidationIndices                       []int
}

// RankingTrial is the validation result of one ranking method.
type RankingTrial struct {
	Ranking     string
	BlendWeight float64
	// MeanScore is the mean target (score, or 1/0 for correct/not) of the top pick.
	MeanScore float64
	// HitRate is the share of rows whose top pick is one of the best models.
	HitRate float64
}

// Ranked is a model with its ranking score and quality estimate.
type Ranked struct {
	Model string
	// Prob is the score the model was ranked by (see Model.Ranking): the softmax
	// probability that it is the best model, its quality estimate, or their blend.
	Prob float64
	// Quality is the estimated probability that the model answers well (the quality
	// heads). For a model trained without quality heads it equals Prob.
	Quality float64
}

// Model is a trained router: an embedder plus a softmax head over Classes and per-model
// quality heads. It is safe for concurrent use. Call Close when done to release an ONNX
// runtime.
type Model struct {
	classes    []string
	embedder   stagedEmbedder
	classifier *SoftmaxRegression // nil for EstimatorQuality
	quality    *QualityHeads      // nil for models saved before the quality heads
	ranking    string
	blend      float64
	onnx       *onnxState // set for the ONNX embedder
}

// Ranking returns how Predict orders the classes (RankSoftmax, RankQuality or RankBlend)
// and the blend weight β.
func (m *Model) Ranking() (string, float64) { return m.ranking, m.blend }

// WithRanking returns a copy of m that orders its classes by ranking (RankSoftmax,
// RankQuality or RankBlend with weight beta in [0,1]); the copy shares m's weights.
// Rankings that need a head m lacks are ErrInvalid.
func (m *Model) WithRanking(ranking string, beta float64) (*Model, error) {
	switch ranking {
	case RankSoftmax, RankBlend:
		if m.classifier == nil || (ranking == RankBlend && m.quality == nil) {
			return nil, invalid("ranking", "%q needs the softmax and quality heads", ranking)
		}
		if ranking == RankBlend && !(beta >= 0 && beta <= 1) {
			return nil, invalid("beta", "must be in [0,1], got %v", beta)
		}
	case RankQuality:
		if m.quality == nil {
			return nil, invalid("ranking", "%q needs quality heads", ranking)
		}
	default:
		return nil, invalid("ranking", "unknown ranking %q", ranking)
	}
	c := *m
	c.ranking, c.blend = ranking, beta
	return &c, nil
}

// Quality returns the per-model quality heads, or nil for a model trained without them.
func (m *Model) Quality() *QualityHeads { return m.quality }

// Classes returns the models the router chooses among, in class order.
func (m *Model) Classes() []string { return slices.Clone(m.classes) }

// EmbedderName returns the embedder's stable name (the router's embedding_model).
func (m *Model) EmbedderName() string {
	if m == nil || m.embedder == nil {
		return ""
	}
	return m.embedder.Name()
}

// errZeroModel answers calls on a Model not made by Fit or Load.
func errZeroModel() error { return invalid("model", "the Model was not made by Fit or Load") }

// Classifier returns the trained softmax head, or nil for a quality-only model.
func (m *Model) Classifier() Classifier {
	if m.classifier == nil {
		return nil
	}
	return m.classifier
}

// Close releases the embedder's resources (the ONNX runtime session, if any).
func (m *Model) Close() error {
	if m == nil {
		return nil
	}
	if c, ok := m.embedder.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// Predict ranks the classes for each text, best first; equal scores are ordered by model
// name. Texts are embedded in batches.
func (m *Model) Predict(ctx context.Context, texts []string) ([][]Ranked, error) {
	out, _, err := m.predict(ctx, texts, false)
	return out, err
}

// PredictTasks is Predict that also returns, for each text, the task head's probabilities
// of the tasks named by Quality().Tasks() (in that order), from the same embedding. The
// task probabilities are nil for a router without a task head.
func (m *Model) PredictTasks(ctx context.Context, texts []string) ([][]Ranked, [][]float64, error) {
	return m.predict(ctx, texts, true)
}

func (m *Model) predict(ctx context.Context, texts []string, withTasks bool) ([][]Ranked, [][]float64, error) {
	if m == nil || m.embedder == nil {
		return nil, nil, errZeroModel()
	}
	raw, _, err := rawCached(ctx, m.embedder, nil, texts)
	if err != nil {
		return nil, nil, err
	}
	vecs := m.embedder.finish(raw)
	out := make([][]Ranked, len(texts))
	var tasks [][]float64
	if withTasks && m.quality != nil && m.quality.prior != nil {
		tasks = make([][]float64, len(texts))
	}
	k := len(m.classes)
	probs, qual, score := make([]float64, k), make([]float64, k), make([]float64, k)
	for i, v := range vecs {
		if i%embedBatchSize == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		m.scores(v, probs, qual, score)
		r := make([]Ranked, k)
		for c, name := range m.classes {
			r[c] = Ranked{Model: name, Prob: score[c], Quality: qual[c]}
		}
		sortRanked(r)
		out[i] = r
		if tasks != nil {
			tasks[i] = make([]float64, len(m.quality.prior.names))
			m.quality.prior.head.Probabilities(v, tasks[i])
		}
	}
	return out, tasks, nil
}

// scores writes the softmax probabilities, the quality estimates and the ranking scores of
// x (probs is left untouched without a softmax head; qual copies probs without quality
// heads).
func (m *Model) scores(x Vector, probs, qual, score []float64) {
	if m.classifier != nil {
		m.classifier.Probabilities(x, probs)
	}
	if m.quality == nil {
		copy(qual, probs)
		copy(score, probs)
		return
	}
	m.quality.Estimates(x, qual)
	rankScores(m.ranking, m.blend, probs, qual, score)
}

// rankScores combines softmax probabilities and quality estimates into ranking scores.
func rankScores(ranking string, beta float64, probs, qual, score []float64) {
	switch ranking {
	case RankSoftmax:
		copy(score, probs)
	case RankBlend:
		for c := range score {
			score[c] = (1-beta)*qual[c] + beta*probs[c]
		}
	default:
		copy(score, qual)
	}
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

// Fit trains a router on examples: the softmax head on the rows with a correct model,
// the per-model quality heads on every row, and the ranking (see FitReport.Ranking) on a
// validation split. It fails with ErrInvalid when fewer than 2 usable rows or 2 classes
// remain.
func Fit(ctx context.Context, examples []Example, opts FitOptions) (*Model, *FitReport, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	for _, w := range opts.TaskPriorWeights {
		if !(w >= 0 && w <= 1) {
			return nil, nil, invalid("TaskPriorWeights", "must be in [0,1], got %v", w)
		}
	}
	for _, w := range opts.TaskExpertWeights {
		if !(w >= 0 && w <= 1) {
			return nil, nil, invalid("TaskExpertWeights", "must be in [0,1], got %v", w)
		}
	}
	for m, c := range opts.Calibration {
		if !validPlatt(c) {
			return nil, nil, invalid("Calibration", "%s needs a finite slope > 0 and a finite intercept, got %v", m, c)
		}
	}
	for _, grid := range [][]float64{opts.L2, opts.QualityL2, opts.TaskL2, opts.TaskExpertL2} {
		for _, l := range grid {
			if !(l >= 0) || math.IsInf(l, 0) {
				return nil, nil, invalid("L2", "must be finite and >= 0, got %v", l)
			}
		}
	}
	switch opts.Objective {
	case "", ObjectiveSoftTargets, ObjectiveAnyCorrect:
	default:
		return nil, nil, invalid("Objective", "unknown objective %q (want %q or %q)", opts.Objective, ObjectiveSoftTargets, ObjectiveAnyCorrect)
	}
	switch opts.Estimator {
	case EstimatorAuto, EstimatorQuality:
	default:
		return nil, nil, invalid("Estimator", "unknown estimator %q (want %q or %q)", opts.Estimator, EstimatorAuto, EstimatorQuality)
	}
	if opts.ValidationFraction < 0 || opts.ValidationFraction >= 1 {
		return nil, nil, invalid("ValidationFraction", "must be in [0,1), got %v", opts.ValidationFraction)
	}
	withSoftmax := opts.Estimator != EstimatorQuality
	switch opts.Ranking {
	case "", RankQuality:
	case RankSoftmax, RankBlend:
		if !withSoftmax {
			return nil, nil, invalid("Ranking", "%q needs the softmax head, which EstimatorQuality does not train", opts.Ranking)
		}
		if !(opts.BlendWeight >= 0 && opts.BlendWeight <= 1) {
			return nil, nil, invalid("BlendWeight", "must be in [0,1], got %v", opts.BlendWeight)
		}
	default:
		return nil, nil, invalid("Ranking", "unknown ranking %q", opts.Ranking)
	}
	rep := &FitReport{Rows: len(examples)}
	classes, targets, used, err := buildTargets(examples, opts)
	if err != nil {
		return nil, nil, err
	}
	rep.Used, rep.Skipped, rep.Classes = len(used), len(examples)-len(used), len(classes)
	if !withSoftmax {
		rep.Used, rep.Skipped = len(examples), 0
	}
	if rep.Used < 2 {
		return nil, rep, invalid("examples", "need at least 2 rows with a correct model, got %d (%d skipped)", len(used), rep.Skipped)
	}
	if len(classes) < 2 {
		return nil, rep, invalid("examples", "need at least 2 distinct models, got %d", len(classes))
	}
	if len(classes) > MaxClasses {
		return nil, rep, invalid("examples", "name %d distinct models; at most %d are allowed", len(classes), MaxClasses)
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
	texts := make([]string, len(examples))
	tasks := make([]string, len(examples))
	for i, ex := range examples {
		texts[i], tasks[i] = ex.Text, ex.Task
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
	m := &Model{classes: classes, embedder: emb, onnx: onnx, ranking: RankQuality}
	err = fitHeads(ctx, m, xs, emb.Dim(), targets, used, qualityTargets(examples, classes, opts.IgnoreScores), tasks, withSoftmax, opts, rep, log)
	rep.TrainingTime = time.Since(start)
	if err != nil {
		closeOnErr()
		return nil, rep, err
	}
	rep.Ranking, rep.BlendWeight = m.ranking, m.blend
	log.Debug("inference: router fitted", "rows", rep.Rows, "used", rep.Used, "skipped", rep.Skipped,
		"classes", rep.Classes, "l2", rep.L2, "quality_l2", rep.QualityL2, "ranking", rep.Ranking,
		"ece", rep.ValidationECE, "embedding", rep.EmbeddingTime, "training", rep.TrainingTime)
	return m, rep, nil
}

// blendGrid are the weights β of the softmax head tried for RankBlend.
var blendGrid = []float64{0.1, 0.25, 0.5}

// rankingMargin is how much higher the validation mean score of the softmax head or a
// blend must be for it to replace the quality heads' ranking. The validation split also
// chose the softmax head's L2 by its hit rate, which flatters the softmax there: in 5-fold
// cross-validation on llmrouter9 the validation split preferred a blend by 0.5-1.5 points
// in every fold while the quality heads had the best held-out mean score (0.648 against
// 0.637 for the softmax; BENCHMARKS.md). The quality heads are also what the tradeoff reads.
const rankingMargin = 0.02

// fitHeads fits the softmax head (when withSoftmax) on the rows in used and the quality
// heads on every row, chooses their regularisation and the ranking on one validation
// split, then refits both on all rows.
func fitHeads(ctx context.Context, m *Model, xs []Vector, dim int, targets [][]float64, used []int,
	qt [][]float64, tasks []string, withSoftmax bool, opts FitOptions, rep *FitReport, log *slog.Logger) error {
	frac := opts.ValidationFraction
	if frac == 0 {
		frac = 0.2
	}
	nVal := int(math.Round(frac * float64(len(xs))))
	if len(xs)-nVal < 2 {
		nVal = 0
	}
	isVal := make([]bool, len(xs))
	for _, j := range rand.New(rand.NewPCG(uint64(opts.Seed), 0x7a11)).Perm(len(xs))[:nVal] {
		isVal[j] = true
	}
	split := func(idx []int) (tr, val []int) {
		for _, j := range idx {
			if isVal[j] {
				val = append(val, j)
			} else {
				tr = append(tr, j)
			}
		}
		return tr, val
	}
	all := make([]int, len(xs))
	for i := range all {
		all[i] = i
	}
	cfg := softmaxConfig{MaxIterations: opts.MaxIterations, Workers: opts.Workers, Logger: log}
	k := len(m.classes)
	// The ranking is chosen on the validation split unless the caller fixed it.
	chooseRank := withSoftmax && opts.Ranking == ""
	if opts.Ranking != "" {
		m.ranking, m.blend = opts.Ranking, opts.BlendWeight
	}

	// Softmax head.
	var valProbs map[int][]float64
	if withSoftmax {
		minDF := opts.MinDF
		if minDF == 0 {
			minDF = max(2, (len(used)+999)/1000)
		}
		usedX := make([]Vector, len(used))
		for i, j := range used {
			usedX[i] = xs[j]
		}
		clf := newSoftmaxShape(dim, k, usedX, minDF)
		anyCorrect := opts.Objective != ObjectiveSoftTargets
		grid := opts.L2
		if len(grid) == 0 {
			grid = defaultL2Grid
		}
		byRow := make(map[int][]float64, len(used))
		for i, j := range used {
			byRow[j] = targets[i]
		}
		tr, val := split(used)
		h := linearFit{lin: clf, xs: xs, targets: byRow, anyCorrect: anyCorrect, cfg: cfg}
		trials, chosen, warm, err := h.search(ctx, grid, tr, val, func(probs []float64, t []float64) (float64, float64) {
			top := argmax(probs)
			hit := 0.0
			if t[top] > 0 && isCorrect(top, t) {
				hit = 1
			}
			return hit, rowLoss(anyCorrect, t, probs)
		}, true, chooseRank)
		if err != nil {
			return err
		}
		for _, tr := range trials {
			rep.Trials = append(rep.Trials, L2Trial{L2: tr.l2, HitRate: tr.hit, LogLoss: tr.loss, Iterations: tr.iters})
		}
		rep.L2 = chosen
		if warm != nil {
			rep.ValidationRows = len(val)
			clf.setParams(warm)
			valProbs = make(map[int][]float64, len(val))
			for _, j := range val {
				p := make([]float64, k)
				clf.Probabilities(xs[j], p)
				valProbs[j] = p
			}
		}
		cfg.L2 = chosen
		theta, err := h.fit(ctx, used, warm)
		if err != nil {
			return err
		}
		clf.setParams(theta)
		m.classifier = clf
	}

	// Quality heads, on every row.
	minDF := opts.MinDF
	if minDF == 0 {
		minDF = max(2, (len(xs)+999)/1000)
	}
	lin := newSoftmaxShape(dim, k, xs, minDF)
	byRow := make(map[int][]float64, len(xs))
	for i := range xs {
		byRow[i] = qt[i]
	}
	grid := opts.QualityL2
	if len(grid) == 0 {
		grid = defaultQualityL2Grid
	}
	tr, val := split(all)
	names, _ := taskLabels(tasks)
	wantPrior := names != nil && !(isOff(opts.TaskPriorWeights) && isOff(opts.TaskExpertWeights))
	// The prior's and the experts' weights are chosen on the validation estimates unless
	// they are fixed.
	choosePrior := wantPrior && (len(opts.TaskPriorWeights) != 1 || len(opts.TaskExpertWeights) != 1)
	h := linearFit{lin: lin, xs: xs, targets: byRow, perClass: true, cfg: cfg}
	_, chosen, warm, err := h.search(ctx, grid, tr, val, func(est, t []float64) (float64, float64) {
		return 0, logisticLoss(est, t)
	}, false, chooseRank || len(grid) > 1 || choosePrior || (!opts.SkipCalibration && opts.Calibration == nil))
	if err != nil {
		return err
	}
	rep.QualityL2 = chosen
	q := &QualityHeads{lin: lin}
	var valQual map[int][]float64
	if warm != nil {
		lin.setParams(warm)
		valQual = make(map[int][]float64, len(val))
		for _, j := range val {
			e := make([]float64, k)
			q.Estimates(xs[j], e)
			valQual[j] = e
		}
	}
	if wantPrior {
		// Fitted before the ranking is chosen: the prior changes the estimates it compares.
		var idf []float32 // the task experts re-weight n-grams by their task's IDF
		if ng, ok := m.embedder.(*NGramEmbedder); ok {
			idf = ng.idf
		}
		prior, err := fitTaskPrior(ctx, xs, dim, minDF, idf, tasks, qt, all, tr, val, valQual, opts, cfg, rep)
		if err != nil {
			return err
		}
		q.prior = prior
	}
	var valRows, valOut [][]float64
	var valIdx []int
	for _, j := range val {
		if e, ok := valQual[j]; ok {
			valRows, valOut = append(valRows, e), append(valOut, qt[j])
			valIdx = append(valIdx, j)
		}
	}
	switch {
	case opts.SkipCalibration:
	case opts.Calibration != nil:
		q.cal = make(calibration, k)
		for c, name := range m.classes {
			q.cal[c] = platt{a: 1}
			if ab, ok := opts.Calibration[name]; ok {
				q.cal[c] = platt{a: ab[0], b: ab[1]}
			}
		}
	case valQual != nil:
		q.cal = fitCalibration(valRows, valOut, k)
	}
	if q.cal != nil {
		rep.Calibration = make(map[string][2]float64, k)
		for c, name := range m.classes {
			rep.Calibration[name] = [2]float64{q.cal[c].a, q.cal[c].b}
		}
		for _, e := range valRows {
			q.cal.apply(e) // valQual shares these rows: the ranking below sees them scaled
		}
	}
	if valQual != nil {
		rep.ValidationEstimates, rep.ValidationOutcomes, rep.ValidationIndices = valRows, valOut, valIdx
		var ests, outs []float64
		for i, e := range valRows {
			ests, outs = append(ests, e...), append(outs, valOut[i]...)
		}
		rep.ValidationECE = ExpectedCalibrationError(ests, outs)
		if chooseRank && valProbs != nil {
			m.ranking, m.blend = chooseRanking(val, valProbs, valQual, qt, rep)
		}
	}
	h.cfg.L2 = chosen
	theta, err := h.fit(ctx, all, warm)
	if err != nil {
		return err
	}
	lin.setParams(theta)
	m.quality = q
	return nil
}

// defaultQualityL2Grid are the quality heads' regularisation strengths tried when
// FitOptions.QualityL2 is empty.
var defaultQualityL2Grid = []float64{1e-3, 3e-4}

// chooseRanking picks the ranking whose top pick has the highest mean target on the
// validation rows that have a softmax prediction (ties: the quality heads, then the
// lighter blend).
func chooseRanking(val []int, probs, qual map[int][]float64, qt [][]float64, rep *FitReport) (string, float64) {
	type cand struct {
		name string
		beta float64
	}
	cands := []cand{{RankQuality, 0}}
	for _, b := range blendGrid {
		cands = append(cands, cand{RankBlend, b})
	}
	cands = append(cands, cand{RankSoftmax, 1})
	best := -1
	for _, c := range cands {
		tr := RankingTrial{Ranking: c.name, BlendWeight: c.beta}
		n := 0
		for _, j := range val {
			p, ok := probs[j]
			if !ok {
				continue
			}
			score := make([]float64, len(p))
			rankScores(c.name, c.beta, p, qual[j], score)
			top := argmax(score)
			t := qt[j]
			if math.IsNaN(t[top]) {
				continue
			}
			n++
			tr.MeanScore += t[top]
			mx := 0.0
			for _, v := range t {
				if !math.IsNaN(v) {
					mx = max(mx, v)
				}
			}
			if mx > 0 && t[top] == mx {
				tr.HitRate++
			}
		}
		if n > 0 {
			tr.MeanScore /= float64(n)
			tr.HitRate /= float64(n)
		}
		rep.RankingTrials = append(rep.RankingTrials, tr)
		margin := rankingMargin
		if best < 0 || rep.RankingTrials[best].Ranking != RankQuality {
			margin = 1e-12
		}
		if best < 0 || tr.MeanScore > rep.RankingTrials[best].MeanScore+margin {
			best = len(rep.RankingTrials) - 1
		}
	}
	b := rep.RankingTrials[best]
	return b.Ranking, b.BlendWeight
}

// linearFit fits one linear head (softmax or per-class logistic) on rows of xs.
type linearFit struct {
	lin        *SoftmaxRegression
	xs         []Vector
	targets    map[int][]float64
	anyCorrect bool
	perClass   bool
	cfg        softmaxConfig
}

type linearTrial struct {
	l2         float64
	hit, loss  float64
	iters      int
	thetaAfter []float64
}

func (h *linearFit) set(rows []int) *trainSet {
	xs := make([]Vector, len(rows))
	ts := make([][]float64, len(rows))
	for i, j := range rows {
		xs[i], ts[i] = h.xs[j], h.targets[j]
	}
	set := h.lin.compact(xs, ts, nil)
	set.anyCorrect, set.perClass = h.anyCorrect, h.perClass
	return set
}

// init starts the logistic heads at each class's base rate (the softmax at uniform).
func (h *linearFit) init(set *trainSet) []float64 {
	k := set.classes
	theta := make([]float64, set.cols*k+k)
	if !h.perClass {
		return theta
	}
	for c := 0; c < k; c++ {
		var sum, n float64
		for i := 0; i < set.rows; i++ {
			if t := set.targets[i*k+c]; !math.IsNaN(t) {
				sum += t
				n++
			}
		}
		rate := 0.5
		if n > 0 {
			rate = min(max(sum/n, 1e-3), 1-1e-3)
		}
		theta[set.cols*k+c] = math.Log(rate / (1 - rate))
	}
	return theta
}

// fit trains on rows from warm (nil: the base-rate start) with h.cfg.
func (h *linearFit) fit(ctx context.Context, rows []int, warm []float64) ([]float64, error) {
	set := h.set(rows)
	if warm == nil {
		warm = h.init(set)
	}
	theta, _, err := trainSoftmax(ctx, set, h.cfg, warm)
	return theta, err
}

// search fits each L2 of grid on tr (strongest first, warm-started) and scores it on val
// with rowScore (hit, loss); the best trial has the highest hit rate (byHit) or the lowest
// loss. Without validation rows, or with one L2 and !needVal, it returns grid[0] and no
// warm start.
func (h *linearFit) search(ctx context.Context, grid []float64, tr, val []int,
	rowScore func(out, target []float64) (float64, float64), byHit, needVal bool) ([]linearTrial, float64, []float64, error) {
	if (len(grid) < 2 && !needVal) || len(val) == 0 || len(tr) < 2 {
		return nil, grid[0], nil, nil
	}
	set := h.set(tr)
	order := slices.Clone(grid)
	slices.SortFunc(order, func(a, b float64) int { return cmp.Compare(b, a) })
	var trials []linearTrial
	var theta []float64
	best := -1
	out := make([]float64, h.lin.classes)
	cfg := h.cfg
	for _, l2 := range order {
		cfg.L2 = l2
		if theta == nil {
			theta = h.init(set)
		}
		var stats optimize.Stats
		var err error
		theta, stats, err = trainSoftmax(ctx, set, cfg, theta)
		if err != nil {
			return nil, 0, nil, err
		}
		h.lin.setParams(theta)
		t := linearTrial{l2: l2, iters: stats.MajorIterations}
		for _, j := range val {
			if h.perClass {
				(&QualityHeads{lin: h.lin}).Estimates(h.xs[j], out)
			} else {
				h.lin.Probabilities(h.xs[j], out)
			}
			hit, loss := rowScore(out, h.targets[j])
			t.hit += hit
			t.loss += loss
		}
		t.hit /= float64(len(val))
		t.loss /= float64(len(val))
		t.thetaAfter = slices.Clone(theta)
		trials = append(trials, t)
		h.cfg.Logger.Debug("inference: l2 trial", "per_class", h.perClass, "l2", l2, "hit_rate", t.hit, "log_loss", t.loss)
		b := func() bool {
			if best < 0 {
				return true
			}
			bt := trials[best]
			if byHit && t.hit != bt.hit {
				return t.hit > bt.hit
			}
			return t.loss < bt.loss
		}()
		if b {
			best = len(trials) - 1
		}
	}
	return trials, trials[best].l2, trials[best].thetaAfter, nil
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
