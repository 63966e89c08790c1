// Package inference trains and runs custom routers: it embeds prompts, fits a classifier
// that predicts which LLM answers best, and ranks models for new prompts.
//
// The high-level API is [Fit], [Model.Predict], [Model.MarshalBinary] and [LoadModel].
// Underneath are two small interfaces: [Embedder] (the pure-Go hashed n-gram TF-IDF
// [NGramEmbedder], the default, and the ONNX sentence-embedding [ONNXEmbedder] running on
// hugot's pure-Go backend) and [Classifier] (a multinomial logistic regression,
// [SoftmaxRegression], trained with gonum's L-BFGS). An [EmbeddingCache] such as
// [StoreCache] keeps embeddings by content hash so that retraining on the same texts does
// not recompute them.
//
// Besides the softmax head, a router has per-model quality heads ([QualityHeads]): for
// every model, the probability that it answers a prompt well, calibrated per model on a
// validation split. When training rows carry task labels ([Example.Task]), a task head
// learns to recognise the task and the estimates also draw on each model's mean score per
// task (the task prior) and on task experts: per-model heads fitted on one task's rows
// alone, mixed by the task head's probabilities (see [FitOptions.TaskExpertWeights]).
//
// Errors match [ErrInvalid] (bad input; a [*ValidationError] names the field) or
// [ErrUnavailable] (a backend cannot be loaded), or are the context's error.
package inference
