package trainer

import (
	"time"

	"github.com/switchyard-ai/switchyard/inference"
)

// JobState is a training job's state.
type JobState string

// Training job states: queued → running → completed | failed.
const (
	StateQueued    JobState = "queued"
	StateRunning   JobState = "running"
	StateCompleted JobState = "completed"
	StateFailed    JobState = "failed"
)

// ModelState is a router model's lifecycle state.
type ModelState string

// Router model states: active models answer predictions; a model unused for a year is
// archived (predictions answer ErrArchived, a 404); Cleanup later removes archived models.
const (
	ModelActive   ModelState = "active"
	ModelArchived ModelState = "archived"
)

// Job is what Submit returns: the wire "Training job".
type Job struct {
	TrainingJobID string   `json:"training_job_id"`
	Status        JobState `json:"status" jsonschema:"enum=queued,enum=running,enum=completed,enum=failed"`
	Version       string   `json:"version"`
}

// Timing is training_config.timing, in seconds.
type Timing struct {
	// TrainingTimeSeconds covers the classifier fits (held-out evaluation and final).
	TrainingTimeSeconds float64 `json:"training_time_seconds"`
	// EmbeddingTimeSeconds covers embedding the texts (and fitting the embedder).
	EmbeddingTimeSeconds float64 `json:"embedding_time_seconds"`
	// TotalTimeSeconds is the whole job from start to end, fetching and parsing included.
	TotalTimeSeconds float64 `json:"total_time_seconds"`
}

// TrainingConfig is the training_config of a job status.
type TrainingConfig struct {
	Timing Timing `json:"timing"`
	// EmbeddingModel names the embedder.
	EmbeddingModel string `json:"embedding_model,omitempty"`
	// Rows is the number of records read from all files; SkippedRows had no correct model:
	// they are not among the MinRows usable rows a job needs, but the router still learns
	// from them (every model counts as wrong there).
	Rows        int `json:"rows"`
	SkippedRows int `json:"skipped_rows"`
	// TrainRows and HoldoutRows are the sizes of the evaluation split.
	TrainRows   int `json:"train_rows,omitempty"`
	HoldoutRows int `json:"holdout_rows,omitempty"`
	// Classes are the models the router chooses among.
	Classes []string `json:"classes,omitempty"`
	// HoldoutFraction and Seed describe the evaluation split.
	HoldoutFraction float64 `json:"holdout_fraction,omitempty"`
	Seed            int64   `json:"seed"`
	// L2 is the regularisation strength chosen for the final model.
	L2 float64 `json:"l2,omitempty"`
}

// JobStatus is the wire "Training job status".
type JobStatus struct {
	TrainingJobID  string          `json:"training_job_id"`
	Status         JobState        `json:"status" jsonschema:"enum=queued,enum=running,enum=completed,enum=failed"`
	ModelID        string          `json:"model_id,omitempty"`
	CreatedAt      string          `json:"created_at,omitempty" jsonschema:"format=date-time"`
	StartedAt      string          `json:"started_at,omitempty" jsonschema:"format=date-time"`
	CompletedAt    string          `json:"completed_at,omitempty" jsonschema:"format=date-time"`
	TrainingConfig *TrainingConfig `json:"training_config,omitempty"`
	ErrorMessage   string          `json:"error_message,omitempty"`
	// Upload (extension) describes the dataset uploaded with the request (SubmitUpload):
	// its name, size and format, never its content; absent for a job on dataset URLs.
	Upload *UploadInfo `json:"upload,omitempty"`
	// ErrorKind classifies a failed job's error (extension): invalid_data, fetch_failed,
	// cancelled, interrupted or internal (the ErrorKind constants); empty unless failed.
	ErrorKind string `json:"error_kind,omitempty" jsonschema:"enum=invalid_data,enum=fetch_failed,enum=cancelled,enum=interrupted,enum=internal"`
	Version   string `json:"version"`
}

// Metrics are a router's scores on the held-out split.
type Metrics struct {
	// Top1HitRate is the share of held-out rows whose top model is among correct_models.
	Top1HitRate float64 `json:"top1_hit_rate"`
	// Top3HitRate is the share where any of the top 3 models is.
	Top3HitRate float64 `json:"top3_hit_rate"`
	// Accuracy is the multi-label accuracy of the per-model quality estimates: over every
	// (held-out row, model) pair with a correct_models list, the share where the estimate is
	// on the right side of ½ (≥ ½ for a model that answered the row correctly, < ½ for one
	// that did not). It says how well the router knows which models can answer a prompt, not
	// only which one to pick (that is Top1HitRate). BaselineAccuracy predicts each model
	// correct when it was correct on at least half of the training rows.
	Accuracy float64 `json:"accuracy" jsonschema:"description=multi-label accuracy of the per-model quality estimates: over every held-out (row; model) pair the share where the estimate is on the right side of ½ (at least ½ for a model correct on the row; below ½ otherwise). The pick itself is measured by top1_hit_rate"`
	// BaselineModel is the model most often correct in the training split; the baseline
	// always picks it. A useful router beats BaselineTop1HitRate.
	BaselineModel       string  `json:"baseline_model"`
	BaselineTop1HitRate float64 `json:"baseline_top1_hit_rate"`
	BaselineAccuracy    float64 `json:"baseline_accuracy" jsonschema:"description=accuracy of predicting each model correct when it was correct on at least half of the training rows"`
	// HoldoutRows is the number of rows scored.
	HoldoutRows int `json:"holdout_rows"`
	// MeanScore is the mean observed score of the top pick on the held-out rows (a row's
	// score for the model, else 1 for a correct model and 0 otherwise), rows without a
	// correct model included.
	MeanScore float64 `json:"mean_score"`
	// BaselineMeanScore is MeanScore of always picking BaselineModel.
	BaselineMeanScore float64 `json:"baseline_mean_score"`
	// CalibrationError is the expected calibration error of the per-model quality
	// estimates on the held-out rows (10 bins; 0 is perfect).
	CalibrationError float64 `json:"calibration_error"`
	// Ranking is how the router orders models: "quality" (its per-model estimates),
	// "softmax" or "blend", chosen on its validation split.
	Ranking string `json:"ranking,omitempty"`
	// Tasks is the number of task labels (the rows' optional task field) with enough rows
	// to learn; TaskPriorWeight is the weight the validation split chose for their per-task
	// mean scores in the estimates (0: the per-model heads alone).
	Tasks           int     `json:"tasks,omitempty" jsonschema:"description=number of task labels (the rows' optional task field) the router learned per-task mean scores from"`
	TaskPriorWeight float64 `json:"task_prior_weight,omitempty" jsonschema:"description=weight of the per-task mean scores in the quality estimates (estimate = (1 - w) × per-model head + w × task prior) chosen on the validation split; 0 or absent: the heads alone"`
	// TaskExperts is the number of tasks with per-model heads of their own (task experts,
	// fitted on that task's rows alone) and TaskExpertWeight their weight in the estimates,
	// chosen on the validation split (0: not used).
	TaskExperts      int     `json:"task_experts,omitempty" jsonschema:"description=number of tasks with per-model heads fitted on that task's rows alone (task experts) used in the estimates"`
	TaskExpertWeight float64 `json:"task_expert_weight,omitempty" jsonschema:"description=weight of the task experts in the estimates (head = (1 - w) × shared head + w × experts mixed by the task probabilities) chosen on the validation split by log loss; 0 or absent: not used"`
}

// TradeoffDetails describe what a router's cost tradeoff buys, measured with every model of
// the router as a candidate on the held-out rows and on the validation split of the fit that
// scored them (rows its heads were fitted without): about 36% of the rows, so that the
// one-point rule reads a loss measured on more than a few hundred rows.
type TradeoffDetails struct {
	// DefaultTolerance is the tolerance model selection uses with this router when a
	// request sets tradeoff without tradeoff_tolerance: the largest one whose mean score on
	// the frontier's rows stays within MaxQualityLoss of the no-tradeoff score.
	DefaultTolerance float64 `json:"default_tolerance"`
	// MaxQualityLoss is the quality the default tolerance may give up (0.01: one point).
	MaxQualityLoss float64 `json:"max_quality_loss"`
	// PriceUnit names the unit of Prices and of the frontier's mean_price.
	PriceUnit string `json:"price_unit"`
	// Prices are the model prices the frontier was measured with; models without a known
	// price are absent (they are never preferred as cheaper).
	Prices map[string]float64 `json:"prices"`
	// Frontier lists, per tolerance, the mean score and mean price of the picks on those
	// rows, and the standard error of the score given up against no tradeoff.
	Frontier []inference.FrontierPoint `json:"frontier"`
}

// ModelDetails is the wire "Router model details".
type ModelDetails struct {
	ModelID        string     `json:"model_id"`
	Version        string     `json:"version"`
	Status         ModelState `json:"status" jsonschema:"enum=active,enum=archived"`
	EmbeddingModel string     `json:"embedding_model"`
	NumClasses     int        `json:"num_classes"`
	Classes        []string   `json:"classes"`
	CreatedAt      string     `json:"created_at" jsonschema:"format=date-time"`
	LastUsedAt     string     `json:"last_used_at,omitempty" jsonschema:"format=date-time"`
	ArchivedAt     string     `json:"archived_at,omitempty" jsonschema:"format=date-time"`
	TrainingJobID  string     `json:"training_job_id"`
	Metrics        *Metrics   `json:"metrics,omitempty"`
	// Tradeoff is the measured cost/quality frontier and the default tolerance.
	Tradeoff *TradeoffDetails `json:"tradeoff,omitempty"`
}

// RankedModel is one entry of a prediction's ranked list.
type RankedModel struct {
	Model      string  `json:"model"`
	Confidence float64 `json:"confidence"`
	Rank       int     `json:"rank"`
}

// Prediction is the ranking for one input.
type Prediction struct {
	TopModel string        `json:"top_model"`
	TopProb  float64       `json:"top_prob"`
	Models   []RankedModel `json:"models"`
}

// PredictResponse is the wire "Prediction response".
type PredictResponse struct {
	Predictions []Prediction `json:"predictions"`
	Version     string       `json:"version"`
}

// jobRecord is a job as kept in store.TrainingJobs, keyed by its id.
type jobRecord struct {
	ID       string             `json:"id"`
	Owner    string             `json:"owner"`
	DataURLs []string           `json:"data_urls"`
	Prices   map[string]float64 `json:"prices,omitempty"`
	// GuardedURLs records that the process that accepted the job refused local URLs (no
	// --allow-local-urls): the job's URLs are then fetched guarded wherever it runs. Records
	// from before it follow the running process's setting.
	GuardedURLs bool `json:"guarded_urls,omitempty"`
	// Upload, for a job on an uploaded dataset (SubmitUpload; DataURLs is then empty),
	// describes the file, whose content is in store.TrainingUploads until the job ends.
	Upload         *uploadRecord   `json:"upload,omitempty"`
	State          JobState        `json:"state"`
	ModelID        string          `json:"model_id,omitempty"`
	CreatedAt      time.Time       `json:"created_at"`
	StartedAt      time.Time       `json:"started_at,omitzero"`
	CompletedAt    time.Time       `json:"completed_at,omitzero"`
	TrainingConfig *TrainingConfig `json:"training_config,omitempty"`
	ErrorMessage   string          `json:"error_message,omitempty"`
	// ErrorKind classifies ErrorMessage (JobStatus.ErrorKind); records from before it have
	// none, and a failed one reads as internal.
	ErrorKind string `json:"error_kind,omitempty"`
	// Attempts counts starts; a job interrupted by restarts too often is failed.
	Attempts int `json:"attempts"`
	// HeartbeatAt is refreshed by the worker running the job when the queue is shared
	// (WithQueue), so another process can tell a dead worker from a slow job.
	HeartbeatAt time.Time `json:"heartbeat_at,omitzero"`
	// CancelRequested is set by Cancel of a job running in another process, so the job is
	// failed as cancelled rather than re-run if its worker dies before it stops.
	CancelRequested bool `json:"cancel_requested,omitempty"`
}

// modelRecord is a router model's metadata in store.RouterModels, keyed by its id; its
// weights (inference.Model bytes) are in store.RouterWeights under the same key.
type modelRecord struct {
	ID             string           `json:"id"`
	Owner          string           `json:"owner"`
	Version        string           `json:"version"`
	State          ModelState       `json:"state"`
	EmbeddingModel string           `json:"embedding_model"`
	Classes        []string         `json:"classes"`
	CreatedAt      time.Time        `json:"created_at"`
	LastUsedAt     time.Time        `json:"last_used_at"`
	ArchivedAt     time.Time        `json:"archived_at,omitzero"`
	TrainingJobID  string           `json:"training_job_id"`
	Metrics        *Metrics         `json:"metrics,omitempty"`
	Tradeoff       *TradeoffDetails `json:"tradeoff,omitempty"`
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func (j *jobRecord) status(version string) JobStatus {
	return JobStatus{
		TrainingJobID:  j.ID,
		Status:         j.State,
		ModelID:        j.ModelID,
		CreatedAt:      formatTime(j.CreatedAt),
		StartedAt:      formatTime(j.StartedAt),
		CompletedAt:    formatTime(j.CompletedAt),
		TrainingConfig: j.TrainingConfig,
		ErrorMessage:   j.ErrorMessage,
		Upload:         j.uploadInfo(),
		ErrorKind:      j.errorKind(),
		Version:        version,
	}
}

// uploadInfo describes the job's uploaded dataset; nil for a job on URLs.
func (j *jobRecord) uploadInfo() *UploadInfo {
	if j.Upload == nil {
		return nil
	}
	return &UploadInfo{Filename: j.Upload.Filename, Bytes: j.Upload.Bytes, Format: j.Upload.Format}
}

// errorKind is the record's ErrorKind; a failed record from before it is internal.
func (j *jobRecord) errorKind() string {
	if j.State != StateFailed {
		return ""
	}
	if j.ErrorKind == "" {
		return ErrorKindInternal
	}
	return j.ErrorKind
}

func (m *modelRecord) details() ModelDetails {
	return ModelDetails{
		ModelID:        m.ID,
		Version:        m.Version,
		Status:         m.State,
		EmbeddingModel: m.EmbeddingModel,
		NumClasses:     len(m.Classes),
		Classes:        m.Classes,
		CreatedAt:      formatTime(m.CreatedAt),
		LastUsedAt:     formatTime(m.LastUsedAt),
		ArchivedAt:     formatTime(m.ArchivedAt),
		TrainingJobID:  m.TrainingJobID,
		Metrics:        m.Metrics,
		Tradeoff:       m.Tradeoff,
	}
}
