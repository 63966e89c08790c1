package inference

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"slices"
)

// modelMagic starts every serialised Model; the digit is the format version.
const modelMagic = "switchyard-router-model/1\n"

// LoadOptions configures LoadModel.
type LoadOptions struct {
	// ONNXModelDir is where the ONNX embedder's model.onnx and tokenizer.json live, for
	// models trained with it. The model file must be the one used in training (same SHA-256).
	ONNXModelDir string
}

type savedModel struct {
	Classes  []string
	Embedder string
	NGram    *savedNGram
	ONNX     *onnxState
	// Softmax is empty (Classes 0) for a quality-only model.
	Softmax savedSoftmax
	// Quality holds the quality heads; nil in models saved before they existed.
	Quality *savedSoftmax
	Ranking string
	Blend   float64
	// TaskPrior is the quality heads' task prior; nil without one.
	TaskPrior *savedTaskPrior
	// Calibration is the quality estimates' Platt scaling, (a, b) per class; nil without.
	Calibration [][2]float64
}

type savedTaskPrior struct {
	Names  []string
	Head   savedSoftmax
	Means  []float32
	Weight float64
	// Experts has one entry per task (Head.Classes 0: none) and ExpertWeight their weight;
	// both empty in routers saved before task experts.
	Experts      []savedExpert
	ExpertWeight float64
}

type savedExpert struct {
	Head    savedSoftmax
	Classes []int32
	Scale   []float32
}

type savedNGram struct {
	// Config.NoShape is ignored: Shape says it, so that routers saved before shape
	// features existed (no such field: false) load with them off.
	Config  NGramConfig
	Shape   bool
	Docs    int
	DFIndex []int32
	DF      []int32
}

type savedSoftmax struct {
	Dim, Classes int
	Cols         []int32
	W, B         []float32
	// W16 holds the weights as half-precision floats instead of W (MarshalBinaryHalf).
	W16 []uint16
}

// save returns the head in its saved form, with half-precision weights when half.
func saveLinear(c *SoftmaxRegression, half bool) savedSoftmax {
	s := savedSoftmax{Dim: c.dim, Classes: c.classes, Cols: c.cols, W: c.w, B: c.b}
	if half {
		s.W16 = make([]uint16, len(c.w))
		for i, w := range c.w {
			s.W16[i] = toHalf(w)
		}
		s.W = nil
	}
	return s
}

// MarshalBinary serialises the fitted embedder state (for n-grams: IDF, seed, dims; for
// ONNX: the model's name and SHA-256, not its weights) and the classifier. LoadModel
// restores a Model that predicts exactly the same probabilities.
func (m *Model) MarshalBinary() ([]byte, error) { return m.marshal(false) }

// MarshalBinaryHalf is MarshalBinary with the heads' weights stored as IEEE 754
// half-precision floats: about half the size, and estimates within about 1e-3 of the
// float32 model's (the learned default router ships this way inside the binary).
func (m *Model) MarshalBinaryHalf() ([]byte, error) { return m.marshal(true) }

func (m *Model) marshal(half bool) ([]byte, error) {
	if m == nil || m.embedder == nil {
		return nil, errZeroModel()
	}
	s := savedModel{Classes: m.classes, Embedder: m.embedder.Name(), ONNX: m.onnx}
	if ng, ok := m.embedder.(*NGramEmbedder); ok {
		s.NGram = &savedNGram{Config: ng.cfg, Shape: !ng.cfg.NoShape, Docs: ng.docs, DFIndex: ng.dfIndex, DF: ng.df}
	}
	if c := m.classifier; c != nil {
		s.Softmax = saveLinear(c, half)
	}
	if m.quality != nil {
		q := saveLinear(m.quality.lin, half)
		s.Quality = &q
		s.Ranking, s.Blend = m.ranking, m.blend
		s.Calibration = m.quality.Calibration()
		if p := m.quality.prior; p != nil {
			s.TaskPrior = &savedTaskPrior{Names: p.names, Weight: p.weight, Head: saveLinear(p.head, half)}
			for _, v := range p.means {
				s.TaskPrior.Means = append(s.TaskPrior.Means, float32(v))
			}
			if p.experts != nil {
				s.TaskPrior.ExpertWeight = p.expertWeight
				s.TaskPrior.Experts = make([]savedExpert, len(p.experts))
				for t, e := range p.experts {
					if e == nil {
						continue
					}
					se := savedExpert{Head: saveLinear(e.lin, half), Scale: e.scale}
					for _, c := range e.classes {
						se.Classes = append(se.Classes, int32(c))
					}
					s.TaskPrior.Experts[t] = se
				}
			}
		}
	}
	var buf bytes.Buffer
	buf.WriteString(modelMagic)
	if err := gob.NewEncoder(&buf).Encode(&s); err != nil {
		return nil, fmt.Errorf("inference: encode model: %w", err)
	}
	return buf.Bytes(), nil
}

// LoadModel restores a Model written by MarshalBinary. A corrupt or foreign blob is an
// ErrInvalid; a missing or different ONNX model is an ErrUnavailable or ErrInvalid.
func LoadModel(data []byte, opts LoadOptions) (*Model, error) {
	return LoadModelContext(context.Background(), data, opts)
}

// LoadModelContext is LoadModel with a context for loading an ONNX runtime.
func LoadModelContext(ctx context.Context, data []byte, opts LoadOptions) (*Model, error) {
	if !bytes.HasPrefix(data, []byte(modelMagic)) {
		return nil, invalid("model", "not a serialised router model (bad header)")
	}
	var s savedModel
	if err := gob.NewDecoder(bytes.NewReader(data[len(modelMagic):])).Decode(&s); err != nil {
		return nil, invalid("model", "corrupt serialised router model: %v", err)
	}
	k := len(s.Classes)
	if k < 2 || (s.Softmax.Classes == 0 && s.Quality == nil) {
		return nil, invalid("model", "inconsistent classifier shape")
	}
	var clf *SoftmaxRegression
	dim := 0
	if s.Softmax.Classes != 0 {
		var err error
		if clf, err = loadLinear(s.Softmax, k); err != nil {
			return nil, err
		}
		dim = clf.dim
	}
	var quality *QualityHeads
	ranking := RankSoftmax
	if s.Quality != nil {
		lin, err := loadLinear(*s.Quality, k)
		if err != nil {
			return nil, err
		}
		if dim != 0 && lin.dim != dim {
			return nil, invalid("model", "inconsistent classifier shape")
		}
		dim = lin.dim
		quality = &QualityHeads{lin: lin}
		if s.Calibration != nil {
			if len(s.Calibration) != k {
				return nil, invalid("model", "inconsistent calibration")
			}
			quality.cal = make(calibration, k)
			for i, c := range s.Calibration {
				if !validPlatt(c) {
					return nil, invalid("model", "inconsistent calibration")
				}
				quality.cal[i] = platt{a: c[0], b: c[1]}
			}
		}
		if tp := s.TaskPrior; tp != nil {
			t := len(tp.Names)
			if t < 2 || len(tp.Means) != t*k || !(tp.Weight >= 0 && tp.Weight <= 1) ||
				!(tp.ExpertWeight >= 0 && tp.ExpertWeight <= 1) || tp.Weight+tp.ExpertWeight == 0 ||
				(len(tp.Experts) != 0 && len(tp.Experts) != t) || (tp.ExpertWeight > 0) != (len(tp.Experts) > 0) {
				return nil, invalid("model", "inconsistent task prior")
			}
			head, err := loadLinear(tp.Head, t)
			if err != nil {
				return nil, err
			}
			if head.dim != dim {
				return nil, invalid("model", "inconsistent task prior")
			}
			p := &taskPrior{names: slices.Clone(tp.Names), head: head, weight: tp.Weight, means: make([]float64, len(tp.Means))}
			for i, v := range tp.Means {
				p.means[i] = float64(v)
			}
			if len(tp.Experts) > 0 {
				if p.experts, err = loadExperts(tp.Experts, k, dim); err != nil {
					return nil, err
				}
				p.expertWeight = tp.ExpertWeight
			}
			quality.prior = p
		}
		switch s.Ranking {
		case RankSoftmax, RankBlend:
			if clf == nil {
				return nil, invalid("model", "ranking %q needs a softmax head", s.Ranking)
			}
		case RankQuality:
		default:
			return nil, invalid("model", "unknown ranking %q", s.Ranking)
		}
		ranking = s.Ranking
	}
	m := &Model{classes: slices.Clone(s.Classes), classifier: clf, quality: quality, ranking: ranking, blend: s.Blend, onnx: s.ONNX}
	switch {
	case s.NGram != nil:
		cfg := s.NGram.Config
		cfg.NoShape = !s.NGram.Shape
		ng, err := NewNGramEmbedder(cfg)
		if err != nil {
			return nil, err
		}
		if ng.Name() != s.Embedder || ng.cfg.Dims != dim || len(s.NGram.DF) != len(s.NGram.DFIndex) {
			return nil, invalid("model", "inconsistent n-gram embedder state")
		}
		for i, ix := range s.NGram.DFIndex {
			if ix < 0 || int(ix) >= ng.cfg.Dims || (i > 0 && ix <= s.NGram.DFIndex[i-1]) {
				return nil, invalid("model", "n-gram document frequencies out of order or range")
			}
		}
		ng.docs, ng.dfIndex, ng.df = s.NGram.Docs, s.NGram.DFIndex, s.NGram.DF
		ng.computeIDF()
		m.embedder = ng
	case s.ONNX != nil:
		if opts.ONNXModelDir == "" {
			return nil, invalid("ONNXModelDir", "is required to load a model trained with %s", s.ONNX.Name)
		}
		e, err := NewONNXEmbedder(ctx, opts.ONNXModelDir, ONNXOptions{})
		if err != nil {
			return nil, err
		}
		if e.sha != s.ONNX.SHA256 || e.dim != dim {
			e.Close()
			return nil, invalid("ONNXModelDir", "model.onnx in %s (sha256 %s) is not the one the router was trained with (%s)",
				opts.ONNXModelDir, e.sha[:12], s.ONNX.SHA256[:min(12, len(s.ONNX.SHA256))])
		}
		e.name = s.ONNX.Name
		m.embedder = e
	default:
		return nil, invalid("model", "unknown embedder %q", s.Embedder)
	}
	return m, nil
}

// loadExperts restores the task experts of a router with k classes over dim features.
func loadExperts(saved []savedExpert, k, dim int) ([]*taskExpert, error) {
	out := make([]*taskExpert, len(saved))
	for t, se := range saved {
		if se.Head.Classes == 0 && len(se.Classes) == 0 {
			continue
		}
		lin, err := loadLinear(se.Head, len(se.Classes))
		if err != nil {
			return nil, err
		}
		if se.Scale != nil && len(se.Scale) != len(lin.cols) {
			return nil, invalid("model", "inconsistent task expert")
		}
		e := &taskExpert{lin: lin, classes: make([]int, len(se.Classes)), scale: se.Scale}
		for i, c := range se.Classes {
			if c < 0 || int(c) >= k || (i > 0 && c <= se.Classes[i-1]) || lin.dim != dim {
				return nil, invalid("model", "inconsistent task expert")
			}
			e.classes[i] = int(c)
		}
		e.seal()
		out[t] = e
	}
	return out, nil
}

// loadLinear restores one linear head of k classes, checking its shape.
func loadLinear(sm savedSoftmax, k int) (*SoftmaxRegression, error) {
	if len(sm.W) == 0 && len(sm.W16) > 0 {
		sm.W = make([]float32, len(sm.W16))
		for i, h := range sm.W16 {
			sm.W[i] = fromHalf(h)
		}
	}
	if sm.Classes != k || len(sm.B) != k || len(sm.W) != len(sm.Cols)*k || sm.Dim <= 0 {
		return nil, invalid("model", "inconsistent classifier shape")
	}
	clf := &SoftmaxRegression{dim: sm.Dim, classes: k, cols: sm.Cols, w: sm.W, b: sm.B, colOf: make([]int32, sm.Dim)}
	for i := range clf.colOf {
		clf.colOf[i] = -1
	}
	for r, c := range sm.Cols {
		if c < 0 || int(c) >= sm.Dim || clf.colOf[c] >= 0 {
			return nil, invalid("model", "classifier columns repeated or out of range")
		}
		clf.colOf[c] = int32(r)
	}
	return clf, nil
}
