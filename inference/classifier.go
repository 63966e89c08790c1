package inference

// Classifier maps an embedding to a probability distribution over a fixed list of classes.
// A trained Classifier is immutable and safe for concurrent use. SoftmaxRegression is the
// implementation today; other heads can implement the same interface.
type Classifier interface {
	// Name identifies the kind of classifier, e.g. "softmax-regression-v1".
	Name() string
	// NumClasses is the number of classes; class i is Model.Classes()[i].
	NumClasses() int
	// Probabilities writes the class probabilities of x into out, which has NumClasses
	// entries. They are non-negative and sum to 1.
	Probabilities(x Vector, out []float64)
}
