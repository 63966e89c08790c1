package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// MaxPredictInputs is the server's limit of inputs per prediction request; RouterTrainer
// splits larger sets into several requests.
const MaxPredictInputs = 500

// DefaultTrainPollInterval is how often RouterTrainer.Wait polls when given 0.
const DefaultTrainPollInterval = 10 * time.Second

// Training job states.
const (
	TrainQueued    = "queued"
	TrainRunning   = "running"
	TrainCompleted = "completed"
	TrainFailed    = "failed"
)

// TrainingJob is the answer to starting a training job.
type TrainingJob struct {
	TrainingJobID string `json:"training_job_id"`
	Status        string `json:"status"`
	Version       string `json:"version"`
}

// Timing is how long the phases of a training job took.
type Timing struct {
	TrainingTimeSeconds  float64 `json:"training_time_seconds"`
	EmbeddingTimeSeconds float64 `json:"embedding_time_seconds"`
	TotalTimeSeconds     float64 `json:"total_time_seconds"`
}

// TrainingConfig describes how a router was trained.
type TrainingConfig struct {
	Timing         Timing `json:"timing"`
	EmbeddingModel string `json:"embedding_model,omitempty"`
	Rows           int    `json:"rows"`
	// SkippedRows counts the rows with no correct model: not counted toward the 10 usable
	// rows a job needs, yet trained on (every model counts as wrong there).
	SkippedRows int      `json:"skipped_rows"`
	TrainRows   int      `json:"train_rows,omitempty"`
	HoldoutRows int      `json:"holdout_rows,omitempty"`
	Classes     []string `json:"classes,omitempty"`
}

// TrainingStatus is the state of a training job.
type TrainingStatus struct {
	TrainingJobID string `json:"training_job_id"`
	// Status is queued, running, completed or failed.
	Status string `json:"status"`
	// ModelID is set once the job completed.
	ModelID        string          `json:"model_id,omitempty"`
	CreatedAt      string          `json:"created_at,omitempty"`
	StartedAt      string          `json:"started_at,omitempty"`
	CompletedAt    string          `json:"completed_at,omitempty"`
	TrainingConfig *TrainingConfig `json:"training_config,omitempty"`
	// ErrorMessage says why a failed job failed, naming the file and row.
	ErrorMessage string `json:"error_message,omitempty"`
	// ErrorKind classifies a failed job's error: "invalid_data" (the same data fails
	// again), "fetch_failed" (its URL could not be read), "cancelled", "interrupted" or
	// "internal" (a retry may work).
	ErrorKind string `json:"error_kind,omitempty"`
	// Upload describes the dataset file of a job started by TrainUpload (nil for one on
	// URLs).
	Upload  *UploadInfo `json:"upload,omitempty"`
	Version string      `json:"version,omitempty"`
}

// UploadInfo describes a training job's uploaded dataset (never its content).
type UploadInfo struct {
	Filename string `json:"filename"`
	Bytes    int    `json:"bytes"`
	// Format is json, jsonl, csv or notdiamond.
	Format string `json:"format"`
}

// Done reports whether the job reached completed or failed.
func (s *TrainingStatus) Done() bool { return s.Status == TrainCompleted || s.Status == TrainFailed }

// Metrics are a router's scores on the held-out split, with the baseline of always
// picking the most frequent best model.
type Metrics struct {
	Top1HitRate         float64 `json:"top1_hit_rate"`
	Top3HitRate         float64 `json:"top3_hit_rate"`
	Accuracy            float64 `json:"accuracy"`
	BaselineModel       string  `json:"baseline_model,omitempty"`
	BaselineTop1HitRate float64 `json:"baseline_top1_hit_rate"`
	BaselineAccuracy    float64 `json:"baseline_accuracy"`
	HoldoutRows         int     `json:"holdout_rows"`
	// MeanScore is the mean observed score of the top pick on the held-out rows;
	// BaselineMeanScore that of always picking BaselineModel.
	MeanScore         float64 `json:"mean_score"`
	BaselineMeanScore float64 `json:"baseline_mean_score"`
	// CalibrationError is the expected calibration error of the per-model estimates.
	CalibrationError float64 `json:"calibration_error"`
	// Ranking is how the router orders models: quality, softmax or blend.
	Ranking string `json:"ranking,omitempty"`
	// Tasks is the number of task labels (the rows' optional task field) the router
	// learned; TaskPriorWeight the weight of their per-task mean scores in its estimates.
	Tasks           int     `json:"tasks,omitempty"`
	TaskPriorWeight float64 `json:"task_prior_weight,omitempty"`
	// TaskExperts is the number of tasks with per-model heads fitted on their rows alone,
	// and TaskExpertWeight their weight in the estimates (0: not used).
	TaskExperts      int     `json:"task_experts,omitempty"`
	TaskExpertWeight float64 `json:"task_expert_weight,omitempty"`
}

// FrontierPoint is what one tradeoff tolerance keeps and costs on the rows the trainer
// measured it on (its held-out split and its evaluation fit's validation split).
type FrontierPoint struct {
	Tolerance float64 `json:"tolerance"`
	MeanScore float64 `json:"mean_score"`
	// MeanPrice is nil when no model price was known.
	MeanPrice *float64 `json:"mean_price"`
	Changed   float64  `json:"changed"`
	// LossStdErr is the standard error of the score given up against tolerance 0.
	LossStdErr float64 `json:"loss_stderr"`
	Rows       int     `json:"rows"`
}

// Tradeoff is a router's measured cost/quality frontier and its default tolerance.
type Tradeoff struct {
	DefaultTolerance float64            `json:"default_tolerance"`
	MaxQualityLoss   float64            `json:"max_quality_loss"`
	PriceUnit        string             `json:"price_unit"`
	Prices           map[string]float64 `json:"prices"`
	Frontier         []FrontierPoint    `json:"frontier"`
}

// RouterModel is the details of a trained router.
type RouterModel struct {
	ModelID        string   `json:"model_id"`
	Version        string   `json:"version"`
	Status         string   `json:"status"`
	EmbeddingModel string   `json:"embedding_model"`
	NumClasses     int      `json:"num_classes"`
	Classes        []string `json:"classes,omitempty"`
	CreatedAt      string   `json:"created_at"`
	LastUsedAt     string   `json:"last_used_at,omitempty"`
	ArchivedAt     string   `json:"archived_at,omitempty"`
	TrainingJobID  string   `json:"training_job_id,omitempty"`
	Metrics        *Metrics `json:"metrics,omitempty"`
	// Tradeoff is the measured frontier (Switchyard extension).
	Tradeoff *Tradeoff `json:"tradeoff,omitempty"`
}

// RankedModel is one model of a prediction, rank 1 being the best.
type RankedModel struct {
	Model      string  `json:"model"`
	Confidence float64 `json:"confidence"`
	Rank       int     `json:"rank"`
}

// Prediction is the router's answer for one input.
type Prediction struct {
	TopModel string        `json:"top_model"`
	TopProb  float64       `json:"top_prob"`
	Models   []RankedModel `json:"models"`
}

// PredictResponse holds one prediction per input, in input order.
type PredictResponse struct {
	Predictions []Prediction `json:"predictions"`
	Version     string       `json:"version"`
}

// RouterTrainer trains custom routers and predicts with them. It remembers the latest
// training job id (from Train) and model id (from a completed Status), so Status, Wait,
// Model and Predict need no explicit id. It is safe for concurrent use.
type RouterTrainer struct {
	c       *Client
	mu      sync.Mutex
	jobID   string
	modelID string
}

// RouterTrainer returns a trainer bound to the client.
func (c *Client) RouterTrainer() *RouterTrainer { return &RouterTrainer{c: c} }

// JobID returns the remembered training job id ("" before Train or UseJob).
func (t *RouterTrainer) JobID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.jobID
}

// ModelID returns the remembered model id ("" before a job completed or UseModel).
func (t *RouterTrainer) ModelID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.modelID
}

// UseJob makes id the remembered training job.
func (t *RouterTrainer) UseJob(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.jobID = id
}

// UseModel makes id the remembered router model (e.g. one trained earlier).
func (t *RouterTrainer) UseModel(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.modelID = id
}

// Train starts a training job from dataset file URLs (JSON, JSONL or CSV) and remembers
// its id. When the server refuses the job (an *Error: 422, 429, 503, ...) the remembered
// job and model ids stay as they were: no new job exists, so Status, Wait, Model and
// Predict keep following the earlier one.
func (t *RouterTrainer) Train(ctx context.Context, dataURLs ...string) (*TrainingJob, error) {
	return t.TrainWithPrices(ctx, nil, dataURLs...)
}

// TrainWithPrices is Train with model prices ("provider/model" → USD per 1M tokens, mean of
// input and output) for the cost/quality frontier the job measures (model_prices, a
// Switchyard extension); models not listed are priced from the server's catalogue.
func (t *RouterTrainer) TrainWithPrices(ctx context.Context, prices map[string]float64, dataURLs ...string) (*TrainingJob, error) {
	if dataURLs == nil {
		dataURLs = []string{}
	}
	var job TrainingJob
	body := map[string]any{"Data_URLs": dataURLs}
	if prices != nil {
		body["model_prices"] = prices
	}
	if err := t.c.do(ctx, http.MethodPost, "/api/v1/routers/train", nil, body, &job); err != nil {
		return nil, err
	}
	t.UseJob(job.TrainingJobID)
	return &job, nil
}

// Formats of an uploaded training dataset (UploadOptions.Format).
const (
	// FormatNotDiamond is Not Diamond's joint CSV: a prompt column (UploadOptions
	// .PromptColumn) and per model "<provider>/<model>/score" and optionally
	// "<provider>/<model>/response" columns, the file notdiamond's CustomRouter.fit uploads.
	FormatNotDiamond = "notdiamond"
)

// UploadOptions are TrainUpload's optional settings; the zero value reads a records file
// (JSON array, JSONL or CSV with problem and correct_models) detected from its content.
type UploadOptions struct {
	// Format is "json", "jsonl", "csv" or FormatNotDiamond; "" detects a records file, or
	// reads Not Diamond's joint CSV when PromptColumn is set.
	Format string
	// PromptColumn names the prompt column of Not Diamond's joint CSV.
	PromptColumn string
	// Minimize says lower scores are better (latency, cost): Not Diamond's maximize=False.
	Minimize bool
	// LLMProviders ("provider/model") are the models to route among; each needs a
	// "<model>/score" column. Empty: every score column's model. PromptColumn, Minimize
	// and LLMProviders with a records file are refused (a 422 naming the option).
	LLMProviders []string
	// ModelPrices prices the models as TrainWithPrices does.
	ModelPrices map[string]float64
}

// TrainUpload starts a training job on a dataset file sent with the request (POST
// /api/v1/routers/train/upload, a multipart form streamed as it is sent: content is read a
// chunk at a time, never held whole) rather than fetched from a URL, and remembers its id.
// opts may be nil. Cancelling ctx stops the upload; when TrainUpload returns, content is no
// longer read. A failed upload is retried only when content is an io.Seeker that can seek
// (an *os.File of a regular file; one on a pipe is sent once).
// The server reads the file at once: a row that breaks a rule is a 422 *Error naming its
// line and column, and a file over the server's body limit a 413. filename "" sends
// "dataset.csv" (the format is still detected from the content, or taken from opts).
func (t *RouterTrainer) TrainUpload(ctx context.Context, filename string, content io.Reader, opts *UploadOptions) (*TrainingJob, error) {
	if opts == nil {
		opts = &UploadOptions{}
	}
	var fields [][2]string
	if opts.Format != "" {
		fields = append(fields, [2]string{"format", opts.Format})
	}
	fields, err := jointCSVFields(fields, opts.PromptColumn, opts.Minimize, opts.LLMProviders, opts.ModelPrices)
	if err != nil {
		return nil, fmt.Errorf("client: TrainUpload: %w", err)
	}
	if filename == "" {
		filename = "dataset.csv" // as the Python client's: a part without a file name is no file to the server
	}
	var job TrainingJob
	if err := t.c.postForm(ctx, "/api/v1/routers/train/upload", fields, filename, content, &job); err != nil {
		return nil, err
	}
	t.UseJob(job.TrainingJobID)
	return &job, nil
}

// jointCSVFields appends to fields the form fields of Not Diamond's joint CSV options that
// are set: prompt_column, maximize (false when minimize), llm_providers and model_prices.
func jointCSVFields(fields [][2]string, promptColumn string, minimize bool, providers []string, prices map[string]float64) ([][2]string, error) {
	if promptColumn != "" {
		fields = append(fields, [2]string{"prompt_column", promptColumn})
	}
	if minimize {
		fields = append(fields, [2]string{"maximize", "false"})
	}
	if len(providers) > 0 {
		b, err := json.Marshal(providers)
		if err != nil {
			return nil, fmt.Errorf("llm_providers: %w", err)
		}
		fields = append(fields, [2]string{"llm_providers", string(b)})
	}
	if prices != nil {
		b, err := json.Marshal(prices)
		if err != nil {
			return nil, fmt.Errorf("model_prices: %w", err)
		}
		fields = append(fields, [2]string{"model_prices", string(b)})
	}
	return fields, nil
}

// CustomRouterOptions are TrainCustomRouter's optional settings.
type CustomRouterOptions struct {
	// PreferenceID is the preference (pref_...) whose router the data retrains, as
	// returned by an earlier TrainCustomRouter; "" makes a new preference.
	PreferenceID string
	// Minimize says lower scores are better (latency, cost): Not Diamond's maximize=False.
	Minimize bool
	// LLMProviders ("provider/model") are the models to route among; each needs a
	// "<model>/score" column. Empty: every score column's model.
	LLMProviders []string
	// ModelPrices prices the models as TrainWithPrices does.
	ModelPrices map[string]float64
}

// CustomRouterJob is TrainCustomRouter's answer.
type CustomRouterJob struct {
	// PreferenceID is the preference to route with (ModelSelectRequest.PreferenceID): the
	// server's default router ranks under it until the job completes, its router after.
	// A server without model selection answers the job's id.
	PreferenceID  string `json:"preference_id"`
	TrainingJobID string `json:"training_job_id"`
	Status        string `json:"status"`
	Version       string `json:"version"`
}

// TrainCustomRouter trains the router of a preference from Not Diamond's joint CSV (a
// promptColumn and per model "<provider>/<model>/score" columns), as Not Diamond's
// CustomRouter.fit does (POST /v2/pzn/trainCustomRouter, the file in the form field
// dataset_file), and remembers the new job's id, so Wait follows it. opts may be nil.
// Without opts.PreferenceID a new preference is made for the router; with the
// PreferenceID of an earlier call its router is retrained: the earlier router keeps
// ranking until the new job completes (and for good if it fails), and the feedback the
// preference learned is kept. A bad field is a 400 *Error (ErrInvalid) naming it
// (preference_id when it is not one of this key's preferences: nothing is queued then).
// The form is streamed and retried as TrainUpload's; filename "" sends "dataset.csv".
// TrainUpload trains a router model of
// no preference instead.
func (t *RouterTrainer) TrainCustomRouter(ctx context.Context, filename string, content io.Reader, promptColumn string, opts *CustomRouterOptions) (*CustomRouterJob, error) {
	if opts == nil {
		opts = &CustomRouterOptions{}
	}
	var fields [][2]string
	if opts.PreferenceID != "" {
		fields = append(fields, [2]string{"preference_id", opts.PreferenceID})
	}
	fields, err := jointCSVFields(fields, promptColumn, opts.Minimize, opts.LLMProviders, opts.ModelPrices)
	if err != nil {
		return nil, fmt.Errorf("client: TrainCustomRouter: %w", err)
	}
	if filename == "" {
		filename = "dataset.csv" // as the Python client's: a part without a file name is no file to the server
	}
	var job CustomRouterJob
	files := []formFile{{field: "dataset_file", filename: filename, content: content}}
	if err := t.c.postMultipart(ctx, "/v2/pzn/trainCustomRouter", fields, files, &job); err != nil {
		return nil, err
	}
	t.UseJob(job.TrainingJobID)
	return &job, nil
}

// Status returns the state of the remembered training job. When it completed, its model id
// becomes the remembered model.
func (t *RouterTrainer) Status(ctx context.Context) (*TrainingStatus, error) {
	id := t.JobID()
	if id == "" {
		return nil, fmt.Errorf("client: RouterTrainer.Status: %w (call Train or UseJob first)", ErrMissingID)
	}
	var st TrainingStatus
	if err := t.c.do(ctx, http.MethodGet, "/api/v1/routers/train/status", url.Values{"task_id": {id}}, nil, &st); err != nil {
		return nil, err
	}
	if st.Status == TrainCompleted && st.ModelID != "" {
		t.mu.Lock()
		if t.jobID == id {
			t.modelID = st.ModelID
		}
		t.mu.Unlock()
	}
	return &st, nil
}

// Cancel stops the remembered training job, queued or running. It ends failed with an
// error_message saying it was cancelled (a running job a moment later; the returned status
// may still say running). A job that already ended is a 409 *Error.
func (t *RouterTrainer) Cancel(ctx context.Context) (*TrainingStatus, error) {
	id := t.JobID()
	if id == "" {
		return nil, fmt.Errorf("client: RouterTrainer.Cancel: %w (call Train or UseJob first)", ErrMissingID)
	}
	var st TrainingStatus
	if err := t.c.do(ctx, http.MethodPost, "/api/v1/routers/train/cancel", url.Values{"task_id": {id}}, nil, &st); err != nil {
		return nil, err
	}
	if st.TrainingJobID == "" {
		st.TrainingJobID = id
	}
	return &st, nil
}

// Watch polls the remembered job every pollEvery (DefaultTrainPollInterval when 0),
// yielding each status, and stops after completed or failed, on the first error, or when
// ctx ends. A status other than queued, running, completed and failed (one this client
// does not know) is yielded, then an error matching ErrUnknownState ends the watch.
func (t *RouterTrainer) Watch(ctx context.Context, pollEvery time.Duration) iter.Seq2[*TrainingStatus, error] {
	return poll(ctx, pollEvery, DefaultTrainPollInterval, t.Status, (*TrainingStatus).Done, func(s *TrainingStatus) error {
		if s.Status == TrainQueued || s.Status == TrainRunning {
			return nil
		}
		return fmt.Errorf("client: training job %s is %q: %w", s.TrainingJobID, s.Status, ErrUnknownState)
	})
}

// Wait polls the remembered job every pollEvery (DefaultTrainPollInterval when 0) until it
// completed or failed and returns its last status. A failed job is not an error of Wait:
// check Status and ErrorMessage. A state this client does not know ends the wait at once:
// the status is returned with an error matching ErrUnknownState.
func (t *RouterTrainer) Wait(ctx context.Context, pollEvery time.Duration) (*TrainingStatus, error) {
	return waitLast(t.Watch(ctx, pollEvery))
}

// Model returns the details (with metrics) of the remembered router model.
func (t *RouterTrainer) Model(ctx context.Context) (*RouterModel, error) {
	id := t.ModelID()
	if id == "" {
		return nil, fmt.Errorf("client: RouterTrainer.Model: %w (wait for a completed job or call UseModel)", ErrMissingID)
	}
	var m RouterModel
	if err := t.c.do(ctx, http.MethodGet, "/api/v1/routers/models", url.Values{"model_id": {id}}, nil, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// Predict ranks the models for each input with the remembered router. More than
// MaxPredictInputs inputs are sent as several requests, one after the other, and the
// predictions are joined in input order.
func (t *RouterTrainer) Predict(ctx context.Context, inputs []string) (*PredictResponse, error) {
	id := t.ModelID()
	if id == "" {
		return nil, fmt.Errorf("client: RouterTrainer.Predict: %w (wait for a completed job or call UseModel)", ErrMissingID)
	}
	out := &PredictResponse{Predictions: make([]Prediction, 0, len(inputs))}
	for start := 0; start < len(inputs) || start == 0; start += MaxPredictInputs {
		end := min(start+MaxPredictInputs, len(inputs))
		batch := inputs[start:end]
		if batch == nil {
			batch = []string{}
		}
		var part PredictResponse
		body := map[string]any{"model_id": id, "inputs": batch}
		if err := t.c.do(ctx, http.MethodPost, "/api/v1/routers/predict", nil, body, &part); err != nil {
			if start > 0 {
				return nil, fmt.Errorf("client: predicting inputs %d-%d: %w", start, end-1, err)
			}
			return nil, err
		}
		if len(part.Predictions) != len(batch) {
			return nil, fmt.Errorf("client: server returned %d predictions for %d inputs", len(part.Predictions), len(batch))
		}
		out.Predictions = append(out.Predictions, part.Predictions...)
		out.Version = part.Version
		if end >= len(inputs) {
			break
		}
	}
	return out, nil
}
