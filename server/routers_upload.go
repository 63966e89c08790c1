package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/trainer"
)

// trainUploadForm documents the multipart form of POST /api/v1/routers/train/upload
// (OpenAPI only).
type trainUploadForm struct {
	File         string `json:"file" jsonschema:"required,format=binary,description=the dataset file: records (JSON array or JSONL or CSV with problem and correct_models) or Not Diamond's joint CSV"`
	Format       string `json:"format,omitempty" jsonschema:"enum=json,enum=jsonl,enum=csv,enum=notdiamond,description=how to read the file; absent: notdiamond when prompt_column is given and otherwise detected from the content as for a dataset URL; prompt_column and maximize and llm_providers are refused (422) with a records format"`
	PromptColumn string `json:"prompt_column,omitempty" jsonschema:"description=notdiamond: the column holding the prompts"`
	Maximize     bool   `json:"maximize,omitempty" jsonschema:"default=true,description=notdiamond: whether a higher score is better (true or false; also True or False as Python sends them); false for latency or cost"`
	LLMProviders string `json:"llm_providers,omitempty" jsonschema:"description=notdiamond: a JSON array of the models to route among as {provider; model} objects or provider/model strings; each needs a <provider>/<model>/score column; absent: every score column"`
	ModelPrices  string `json:"model_prices,omitempty" jsonschema:"description=a JSON object of provider/model to USD per 1M tokens (mean of input and output) for the cost/quality frontier as in POST /api/v1/routers/train"`
}

// notDiamondTrainForm documents the multipart form Not Diamond's Python SDK
// (CustomRouter.fit) sends to POST /v2/pzn/trainCustomRouter (OpenAPI only).
type notDiamondTrainForm struct {
	DatasetFile  string `json:"dataset_file" jsonschema:"required,format=binary,description=Not Diamond's joint CSV: the prompt column and per model <provider>/<model>/score (a number) and optionally <provider>/<model>/response"`
	PromptColumn string `json:"prompt_column" jsonschema:"required,description=the column holding the prompts"`
	LLMProviders string `json:"llm_providers,omitempty" jsonschema:"description=a JSON array of {provider; model}: the models to route among; each needs a <provider>/<model>/score column"`
	Maximize     string `json:"maximize,omitempty" jsonschema:"default=True,description=True when a higher score is better (the default) and False when lower is (latency)"`
	Language     string `json:"language,omitempty" jsonschema:"description=the data's language (english); accepted and not used: the router reads any language"`
	PreferenceID string `json:"preference_id,omitempty" jsonschema:"description=the preference whose router this data retrains; absent for a new one"`
	Override     string `json:"override,omitempty" jsonschema:"description=sent by Not Diamond's SDK; accepted: a retrain always replaces the preference's router once its job completes"`
	ModelPrices  string `json:"model_prices,omitempty" jsonschema:"description=a JSON object of provider/model to USD per 1M tokens (mean of input and output) for the cost/quality frontier as in POST /api/v1/routers/train"`
}

// uploadFormFields are the fields each upload route reads; any other is refused naming
// it, so that a misspelt option (maximise) is not silently left at its default.
var (
	trainUploadFields      = []string{"file", "format", "prompt_column", "maximize", "llm_providers", "model_prices"}
	notDiamondUploadFields = []string{"dataset_file", "prompt_column", "maximize", "llm_providers", "model_prices", "language", "preference_id", "override"}
)

// notDiamondTrainResponse is the answer of POST /v2/pzn/trainCustomRouter.
type notDiamondTrainResponse struct {
	// PreferenceID is what the SDK keeps and routes with (see notDiamondPreference).
	PreferenceID string `json:"preference_id" jsonschema:"description=the pref_ preference to route with: the learned default router ranks until the job completes and its router after"`
	// TrainingJobID is the training job (extension).
	TrainingJobID string           `json:"training_job_id"`
	Status        trainer.JobState `json:"status" jsonschema:"enum=queued,enum=running,enum=completed,enum=failed"`
	Version       string           `json:"version"`
}

// uploadRoutes registers the training routes that take the dataset in the request:
//
//   - POST /api/v1/routers/train/upload (multipart: file, and optionally format,
//     prompt_column, maximize, llm_providers, model_prices) — 202 Training job;
//   - POST /v2/pzn/trainCustomRouter — what Not Diamond's Python SDK
//     (CustomRouter.fit) sends: dataset_file, prompt_column, llm_providers, maximize,
//     language, preference_id — 200 {"preference_id", "training_job_id", …}.
//
// The server's body limit (serve --max-body-bytes) bounds the form; the trainer bounds the
// file as it bounds a URL's (trainer.Service.MaxUploadBytes).
func (s *Server) uploadRoutes(svc *trainer.Service, tags []string) {
	s.Handle(Route{Method: "POST", Path: "/api/v1/routers/train/upload", Summary: "Start training a custom router from a dataset file sent with the request",
		Request: trainUploadForm{}, RequestContentType: "multipart/form-data", Response: trainer.Job{}, Status: http.StatusAccepted, Tags: tags,
		Errors: map[int]string{
			400: "the body is not a multipart form with one file in the field file",
			413: "the form is over the server's body limit (serve --max-body-bytes) or the file is over the dataset size limit (the fetcher's limit for a dataset URL); the message names file",
			422: "validation error naming the field: file (a row that breaks a rule: the message names its line and column; fewer than 10 usable rows); format; prompt_column; maximize; llm_providers; model_prices",
			429: "this key has its limit of training jobs queued or running (Retry-After)",
			503: "the training queue is full; retry later",
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			job, err := submitUploadedTraining(r, svc, uploadFields{file: "file", status: http.StatusUnprocessableEntity, fields: trainUploadFields})
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusAccepted, job)
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/v2/pzn/trainCustomRouter", Summary: "Train a custom router from Not Diamond's joint CSV (Not Diamond's CustomRouter.fit)",
		Request: notDiamondTrainForm{}, RequestContentType: "multipart/form-data", Response: notDiamondTrainResponse{}, Tags: tags,
		Errors: map[int]string{
			400: "a bad field named in the message: dataset_file missing or a row that breaks a rule (its line and column) or fewer than 10 usable rows; prompt_column; llm_providers (a listed model without its score column); maximize; preference_id (not a preference of this key or deleted while the job was being queued: nothing is queued)",
			413: "the form is over the server's body limit (serve --max-body-bytes) or dataset_file is over the dataset size limit (the fetcher's limit for a dataset URL); the message names dataset_file",
			429: "this key has its limit of training jobs queued or running (Retry-After)",
			503: "the training queue is full; retry later",
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			var requested string
			var bound *routing.Preference
			var binding *routing.TrainingBinding
			// The preference to retrain is checked before a job is queued for it, and bound
			// to the job in the transaction that queues it.
			check := func(values map[string][]string) (func(context.Context, store.Tx, string) error, error) {
				if vs := values["preference_id"]; len(vs) > 0 {
					requested = strings.TrimSpace(vs[0])
				}
				if requested == "None" {
					requested = "" // what Python's requests sends for preference_id=None
				}
				return s.notDiamondBinding(r.Context(), owner(r), requested, svc, &bound, &binding)
			}
			job, err := submitUploadedTraining(r, svc, uploadFields{file: "dataset_file", status: http.StatusBadRequest, notDiamond: true, check: check, fields: notDiamondUploadFields})
			if err != nil && bound != nil {
				// The bind may have committed with a job the trainer then could not queue and
				// deleted (queue full or down): the preference goes back to its earlier router.
				if uerr := binding.Unbind(context.WithoutCancel(r.Context()), bound.RouterTrainingJobID); uerr != nil {
					s.log.WarnContext(r.Context(), "trainCustomRouter: could not unbind the preference from a job that was not queued",
						"preference_id", bound.ID, "training_job_id", bound.RouterTrainingJobID, "error", uerr)
				}
			}
			if errors.Is(err, routing.ErrNotFound) {
				// deleted between the check and the transaction: nothing was queued
				return Validation(http.StatusBadRequest, "preference_id: no preference %q of this key (it was deleted while the job was being queued; nothing was queued)", requested)
			}
			if err != nil {
				return err
			}
			pref := ""
			if bound != nil {
				pref = bound.ID
			} else if pref, err = s.notDiamondPreference(r.Context(), owner(r), requested, job); err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, notDiamondTrainResponse{PreferenceID: pref, TrainingJobID: job.TrainingJobID, Status: job.Status, Version: job.Version})
			return nil
		})
}

// notDiamondBinding refuses a trainCustomRouter request naming a preference_id that is not
// one of the caller's preferences (400, as the route's other refusals) and otherwise
// returns the step that binds that preference to the job inside the transaction queueing
// it (trainer.JobOptions.InTx), setting *bound and *binding (whose Unbind undoes a bind
// whose job the trainer could not queue after all): a preference deleted meanwhile refuses the
// job and nothing is queued. "" (a new router, created after the job is queued), a server
// without model selection, and a trainer on another store than the selector's (bound
// after the job is queued, as a new one) get no step.
func (s *Server) notDiamondBinding(ctx context.Context, owner, requested string, svc *trainer.Service, bound **routing.Preference, binding **routing.TrainingBinding) (func(context.Context, store.Tx, string) error, error) {
	if requested == "" || s.selector == nil {
		return nil, nil
	}
	if !strings.HasPrefix(requested, routing.PreferencePrefix) {
		return nil, Validation(http.StatusBadRequest, "preference_id: %q is not a preference id (pref_…); leave it out to train a new router", requested)
	}
	b, err := s.selector.PrepareTrainingBinding(ctx, owner, requested)
	if errors.Is(err, routing.ErrNotFound) {
		return nil, Validation(http.StatusBadRequest, "preference_id: no preference %q of this key", requested)
	}
	if err != nil || svc.Store() != s.selector.Store() {
		return nil, err
	}
	*binding = b
	return func(ctx context.Context, tx store.Tx, jobID string) error {
		p, err := b.Bind(ctx, tx, jobID)
		*bound = p
		return err
	}, nil
}

// notDiamondPreference is where a Not Diamond training request meets preferences when the
// job was not bound in its own transaction (notDiamondBinding): the job's router becomes
// the base router of the requested preference (a retrain) or of a new one, whose id the
// SDK routes with; until the job completes that preference ranks with the learned default
// router. Without model selection the answer is the job's id.
func (s *Server) notDiamondPreference(ctx context.Context, owner, requested string, job trainer.Job) (string, error) {
	if s.selector == nil {
		return job.TrainingJobID, nil
	}
	p, err := s.selector.BindTrainingJob(ctx, owner, requested, "", job.TrainingJobID)
	if err != nil {
		return "", err
	}
	return p.ID, nil
}

// uploadFields says how a training route names and refuses its fields.
type uploadFields struct {
	file       string   // the file's form field
	status     int      // the status of a refused field
	notDiamond bool     // the file is always Not Diamond's joint CSV
	fields     []string // the form fields the route reads (file and values); others are refused
	// check, when set, runs on the parsed form's values before the job is submitted; its
	// error refuses the request, and the step it returns, if any, runs in the transaction
	// that queues the job (trainer.JobOptions.InTx).
	check func(values map[string][]string) (func(context.Context, store.Tx, string) error, error)
}

// submitUploadedTraining reads a training route's multipart form and submits its job: the
// core of both upload routes. r.MultipartForm's values stay readable afterwards.
func submitUploadedTraining(r *http.Request, svc *trainer.Service, f uploadFields) (trainer.Job, error) {
	bad := func(status int, param, format string, args ...any) error {
		ae := Validation(status, format, args...)
		ae.Param = param
		return ae
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "multipart/form-data" {
		return trainer.Job{}, bad(http.StatusBadRequest, f.file, "the body must be a multipart/form-data form with the dataset file in the field %s (got Content-Type %q)", f.file, r.Header.Get("Content-Type"))
	}
	err := r.ParseMultipartForm(uploadFormMemory)
	if r.MultipartForm != nil {
		// Set even when err is not nil: ParseMultipartForm reports ParseForm's error (a bad
		// query string) after it parsed the form, with the file spooled to disk. The
		// handler holds a copy of the request (r.WithContext), which net/http's own clean-up
		// of the original never reaches.
		defer r.MultipartForm.RemoveAll() // the file's temporary copy; the values stay
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			ae := Errorf(http.StatusRequestEntityTooLarge, KindTooLarge, "the form is over this server's request body limit of %d bytes (serve --max-body-bytes)", mbe.Limit)
			ae.Param = f.file
			return trainer.Job{}, ae
		}
		if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
			return trainer.Job{}, Errorf(http.StatusRequestTimeout, KindRequestTimeout, "the request body did not arrive in time (the server's --body-read-timeout)")
		}
		return trainer.Job{}, bad(http.StatusBadRequest, f.file, "reading the multipart form: %v", err)
	}
	form := r.MultipartForm
	for _, names := range []map[string][]string{form.Value, fileNames(form.File)} {
		for name := range names {
			if !slices.Contains(f.fields, name) {
				return trainer.Job{}, bad(f.status, name, "unknown form field %q: the fields are %s", name, strings.Join(f.fields, ", "))
			}
		}
	}
	fhs := form.File[f.file]
	if len(fhs) != 1 {
		return trainer.Job{}, bad(http.StatusBadRequest, f.file, "%s is required: the form must carry exactly one file in the field %q, got %d", f.file, f.file, len(fhs))
	}
	data, err := readFormFile(svc, fhs[0])
	if err != nil {
		return trainer.Job{}, uploadRefusal(err, f.status, f.file)
	}
	value := func(name string) (string, bool) {
		vs, ok := form.Value[name]
		if !ok || len(vs) == 0 {
			return "", false
		}
		return strings.TrimSpace(vs[0]), true
	}
	up := trainer.Upload{Filename: fhs[0].Filename, ContentType: fhs[0].Header.Get("Content-Type"), Data: data}
	format, _ := value("format")
	prompt, hasPrompt := value("prompt_column")
	switch {
	case f.notDiamond:
		up.Format = trainer.FormatNotDiamond
	case format == "" && hasPrompt:
		up.Format = trainer.FormatNotDiamond
	default:
		up.Format = trainer.Format(strings.ToLower(format))
	}
	switch up.Format {
	case "", trainer.FormatJSON, trainer.FormatJSONL, trainer.FormatCSV:
		// The joint CSV's options mean nothing to a records file: refused rather than
		// ignored, so that a caller who meant the joint CSV learns it. (An unknown format
		// is refused by the trainer, naming format.)
		for _, name := range []string{"prompt_column", "maximize", "llm_providers"} {
			if _, ok := value(name); ok {
				return trainer.Job{}, bad(f.status, name, "%s applies only to Not Diamond's joint CSV (format=notdiamond, implied by prompt_column); this upload is read as a records file (format %s): leave %s out or send format=notdiamond", name, recordsFormatName(up.Format), name)
			}
		}
	}
	if up.Format == trainer.FormatNotDiamond {
		up.NotDiamond.PromptColumn = prompt
		if v, ok := value("maximize"); ok && v != "" {
			maximize, err := strconv.ParseBool(v)
			if err != nil {
				return trainer.Job{}, bad(f.status, "maximize", "maximize must be true or false (True or False as Python sends them), got %q", v)
			}
			up.NotDiamond.Minimize = !maximize
		}
		if v, ok := value("llm_providers"); ok && v != "" {
			models, err := parseLLMProviders(v)
			if err != nil {
				return trainer.Job{}, bad(f.status, "llm_providers", "%v", err)
			}
			up.NotDiamond.Models = models
		}
	}
	var opts trainer.JobOptions
	if f.check != nil {
		step, err := f.check(form.Value)
		if err != nil {
			return trainer.Job{}, err
		}
		opts.InTx = step
	}
	if v, ok := value("model_prices"); ok && v != "" {
		prices, err := parseModelPrices(v)
		if err != nil {
			return trainer.Job{}, bad(f.status, "model_prices", "%v", err)
		}
		opts.ModelPrices = prices
	}
	job, err := svc.SubmitUpload(r.Context(), owner(r), up, opts)
	if err != nil {
		return trainer.Job{}, uploadRefusal(err, f.status, f.file)
	}
	return job, nil
}

// fileNames is the names of a form's file fields.
func fileNames(files map[string][]*multipart.FileHeader) map[string][]string {
	out := make(map[string][]string, len(files))
	for name := range files {
		out[name] = nil
	}
	return out
}

// recordsFormatName names a records upload's format in messages ("detected" when the form
// did not say).
func recordsFormatName(f trainer.Format) string {
	if f == "" {
		return "detected from the content"
	}
	return string(f)
}

// readFormFile reads an uploaded form file within the trainer's upload limit
// (trainer.Service.ReadUpload): a larger file is refused after limit+1 bytes, never held
// whole.
func readFormFile(svc *trainer.Service, fh *multipart.FileHeader) ([]byte, error) {
	file, err := fh.Open()
	if err != nil {
		return nil, fmt.Errorf("server: open the uploaded file: %w", err)
	}
	defer file.Close()
	return svc.ReadUpload(file, fh.Filename)
}

// parseLLMProviders reads llm_providers: a JSON array of {"provider", "model"} objects (as
// Not Diamond's SDKs send them; other keys are ignored) or "provider/model" strings.
func parseLLMProviders(v string) ([]string, error) {
	var items []json.RawMessage
	if err := json.Unmarshal([]byte(v), &items); err != nil {
		return nil, errors.New(`llm_providers must be a JSON array of {"provider": …, "model": …} objects`)
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		var name string
		if json.Unmarshal(it, &name) == nil {
			out = append(out, strings.TrimSpace(name))
			continue
		}
		var p struct {
			Provider string `json:"provider"`
			Model    string `json:"model"`
		}
		if err := json.Unmarshal(it, &p); err != nil || strings.TrimSpace(p.Provider) == "" || strings.TrimSpace(p.Model) == "" {
			return nil, fmt.Errorf(`llm_providers[%d] must be an object with the strings provider and model (or a "provider/model" string), got %s`, i, it)
		}
		out = append(out, strings.TrimSpace(p.Provider)+"/"+strings.TrimSpace(p.Model))
	}
	if len(out) == 0 {
		return nil, errors.New("llm_providers is empty: list the models to route among, or leave it out to use every score column")
	}
	return out, nil
}

// parseModelPrices reads model_prices: a JSON object of "provider/model" to a number.
func parseModelPrices(v string) (map[string]float64, error) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(v), &obj); err != nil {
		return nil, errors.New("model_prices must be a JSON object mapping provider/model to a price in USD per 1M tokens")
	}
	out := make(map[string]float64, len(obj))
	for m, x := range obj {
		p, ok := x.(float64)
		if !ok {
			return nil, fmt.Errorf("model_prices[%q] must be a number, got %s", m, jsonKind(x))
		}
		out[m] = p
	}
	return out, nil
}

// uploadRefusal answers the trainer's *ValidationError about an upload with status (413
// for a file over the upload limit, trainer.ErrTooLarge), naming the route's file field
// where the trainer says upload.
func uploadRefusal(err error, status int, fileField string) error {
	var ve *trainer.ValidationError
	if !errors.Is(err, trainer.ErrInvalid) || !errors.As(err, &ve) {
		return err
	}
	field := ve.Field
	if field == "upload" {
		field = fileField
	}
	msg := ve.Message
	if field != "" && !strings.HasPrefix(msg, field) {
		msg = field + ": " + msg
	}
	if errors.Is(err, trainer.ErrTooLarge) {
		ae := Errorf(http.StatusRequestEntityTooLarge, KindTooLarge, "%s", msg)
		ae.Param = field
		return ae
	}
	ae := Validation(status, "%s", msg)
	ae.Param = field
	return ae
}
