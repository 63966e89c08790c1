package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"

	"github.com/switchyard-ai/switchyard/trainer"
)

// trainRequest is the body of POST /api/v1/routers/train.
type trainRequest struct {
	// DataURLs are the URLs of the dataset files (JSON array of records, JSONL, or CSV with
	// header problem,correct_models); several files are combined.
	DataURLs []string `json:"Data_URLs" jsonschema:"required,minItems=1,maxItems=100"`
	// ModelPrices (extension) prices the dataset's models, "provider/model" → USD per 1M
	// tokens (mean of input and output), for the cost/quality frontier measured on the
	// trained router (its model details' tradeoff); models not listed are priced from the
	// price catalogue.
	ModelPrices map[string]float64 `json:"model_prices,omitempty"`
}

// predictRequest is the body of POST /api/v1/routers/predict (the spec's Prediction request).
type predictRequest struct {
	// ModelID is the trained router model.
	ModelID string `json:"model_id" jsonschema:"required"`
	// Inputs are the texts to route, 1 to 500 non-empty strings.
	Inputs []string `json:"inputs" jsonschema:"required,minItems=1,maxItems=500"`
}

// trainingJobErrors are the failures of the operations on one training job.
var trainingJobErrors = map[int]string{
	http.StatusNotFound:            "no training job with that task_id for this key",
	http.StatusUnprocessableEntity: "task_id missing",
}

// withError is errs with one more status (errs is left as it is).
func withError(errs map[int]string, status int, desc string) map[int]string {
	out := maps.Clone(errs)
	out[status] = desc
	return out
}

// CustomRouters plugs custom router training and prediction (package trainer) into the
// server:
//
//   - POST /api/v1/routers/train {"Data_URLs": [...]} — 202 Training job; 422 naming
//     Data_URLs when it is missing, empty, not an array of strings or holds a non-URL;
//     503 when the training queue is full; 429 with Retry-After when the key already has
//     its limit of jobs queued or running (trainer.WithJobsPerOwner);
//   - POST /api/v1/routers/train/upload (multipart: file, and optionally format,
//     prompt_column, maximize, llm_providers, model_prices) — 202 Training job on the
//     uploaded file; POST /v2/pzn/trainCustomRouter — the same for Not Diamond's Python
//     SDK (CustomRouter.fit), 200 {"preference_id", "training_job_id", …} (see uploadRoutes);
//   - GET /api/v1/routers/train/status?task_id=ID — Training job status;
//   - POST /api/v1/routers/train/cancel?task_id=ID — stop a queued or running job; it ends
//     failed with an error_message saying it was cancelled (the spec's training states are
//     queued, running, completed and failed); 409 when it already ended;
//   - GET /api/v1/routers/models?model_id=ID — Router model details; without model_id the
//     key's router models, newest first (limit, cursor, created_after, created_before,
//     status active|archived);
//   - GET /api/v1/routers/train/jobs — the key's training jobs, newest first (the same
//     parameters; status queued|running|completed|failed);
//   - DELETE /api/v1/routers/train/jobs/{task_id} and /api/v1/routers/models/{model_id} —
//     delete a job record (cancelling a queued or running job first; 409 with Retry-After
//     when a running one has not stopped within 30 s) or a model with its weights;
//   - POST /api/v1/routers/predict {"model_id", "inputs"} — Prediction response; 422 for
//     0 or more than 500 inputs or an empty input (naming inputs[i]).
//
// A missing query parameter is a 422 naming it; an unknown id, or one of another key, is a
// 404 (an archived model's 404 says it was archived). The caller starts the service
// (svc.Start) after New; the server's Close closes it.
func CustomRouters(svc *trainer.Service) Option {
	return func(s *Server) error {
		if svc == nil {
			return errors.New("server: CustomRouters needs a *trainer.Service")
		}
		tags := []string{"Custom routers"}
		s.Handle(Route{Method: "POST", Path: "/api/v1/routers/train", Summary: "Start training a custom router from dataset URLs",
			Request: trainRequest{}, Response: trainer.Job{}, Status: http.StatusAccepted, Tags: tags,
			Errors: map[int]string{
				422: "validation error: the message names the field (Data_URLs)",
				429: "this key has its limit of training jobs queued or running (Retry-After)",
				503: "the training queue is full; retry later",
			}},
			func(w http.ResponseWriter, r *http.Request) error {
				urls, prices, err := decodeTrainRequest(r)
				if err != nil {
					return err
				}
				job, err := svc.SubmitWithOptions(r.Context(), owner(r), urls, trainer.JobOptions{ModelPrices: prices})
				if err != nil {
					return err
				}
				writeJSON(w, http.StatusAccepted, job)
				return nil
			})
		s.uploadRoutes(svc, tags)
		s.Handle(Route{Method: "GET", Path: "/api/v1/routers/train/status", Summary: "Status of a router training job",
			Query:    []QueryParam{{Name: "task_id", Required: true, Description: "training_job_id returned by POST /api/v1/routers/train"}},
			Response: trainer.JobStatus{}, Tags: tags, Errors: trainingJobErrors},
			func(w http.ResponseWriter, r *http.Request) error {
				id, err := requiredQuery(r, "task_id")
				if err != nil {
					return err
				}
				st, err := svc.Status(r.Context(), owner(r), id)
				if err != nil {
					return err
				}
				writeJSON(w, http.StatusOK, st)
				return nil
			})
		s.Handle(Route{Method: "POST", Path: "/api/v1/routers/train/cancel", Summary: "Cancel a queued or running router training job (it ends failed)",
			Query:    []QueryParam{{Name: "task_id", Required: true, Description: "training_job_id returned by POST /api/v1/routers/train"}},
			Response: trainer.JobStatus{}, Tags: tags, Errors: withError(trainingJobErrors, http.StatusConflict, "the job has already ended")},
			func(w http.ResponseWriter, r *http.Request) error {
				id, err := requiredQuery(r, "task_id")
				if err != nil {
					return err
				}
				st, err := svc.Cancel(r.Context(), owner(r), id)
				if err != nil {
					return err
				}
				writeJSON(w, http.StatusOK, st)
				return nil
			})
		s.Handle(Route{Method: "GET", Path: "/api/v1/routers/train/jobs", Summary: "List this key's training jobs, newest first",
			Query: listParams("queued, running, completed, failed"), Response: trainer.JobList{}, Tags: tags},
			listing(svc.ListJobs))
		s.Handle(Route{Method: "DELETE", Path: "/api/v1/routers/train/jobs/{task_id}", Summary: "Delete a training job record (a queued or running job is cancelled first; its router model stays)",
			Response: trainer.Deletion{}, Tags: tags, Errors: map[int]string{http.StatusNotFound: "no training job with that id for this key"}},
			deletion("task_id", svc.DeleteJob))
		s.Handle(Route{Method: "DELETE", Path: "/api/v1/routers/models/{model_id}", Summary: "Delete a router model with its weights (it answers 404 everywhere afterwards)",
			Response: trainer.Deletion{}, Tags: tags, Errors: map[int]string{http.StatusNotFound: "no router model with that id for this key"}},
			deletion("model_id", svc.DeleteModel))
		s.Handle(Route{Method: "GET", Path: "/api/v1/routers/models", Summary: "Details and held-out metrics of a trained router model; without model_id the key's router models newest first",
			Query: append([]QueryParam{{Name: "model_id", Description: "model_id of a completed training job; absent: list the key's models (then limit, cursor, created_after, created_before and status apply)"}},
				listParams("active, archived")...),
			OneOf: []any{trainer.ModelDetails{}, trainer.ModelList{}}, Tags: tags, Errors: map[int]string{
				http.StatusNotFound:            "no router model with that model_id for this key",
				http.StatusUnprocessableEntity: "model_id given empty, or a listing parameter out of range",
			}},
			func(w http.ResponseWriter, r *http.Request) error {
				id := r.URL.Query().Get("model_id")
				if !r.URL.Query().Has("model_id") {
					return listing(svc.ListModels)(w, r)
				}
				if id == "" {
					return Validation(http.StatusUnprocessableEntity, "query parameter model_id is empty: give a model_id, or leave it out to list your router models")
				}
				d, err := svc.Model(r.Context(), owner(r), id)
				if err != nil {
					return err
				}
				writeJSON(w, http.StatusOK, d)
				return nil
			})
		s.Handle(Route{Method: "POST", Path: "/api/v1/routers/predict", Summary: "Rank the models for up to 500 inputs with a trained router",
			Request: predictRequest{}, Response: trainer.PredictResponse{}, Tags: tags,
			Errors: map[int]string{
				404: "model_id names no active router model of this key (archived models too)",
				422: "validation error: the message names the field (model_id, inputs: 1 to 500 non-empty strings)",
			}},
			func(w http.ResponseWriter, r *http.Request) error {
				var req predictRequest
				if err := decodeJSON(r, &req, decodeOptions{EmptyIsObject: true}); err != nil {
					return err
				}
				resp, err := svc.Predict(r.Context(), owner(r), req.ModelID, req.Inputs)
				if err != nil {
					return err
				}
				writeJSON(w, http.StatusOK, resp)
				return nil
			})
		s.AddErrorMapper(trainerError)
		s.OnClose(func(context.Context) error { return svc.Close() })
		return nil
	}
}

// decodeTrainRequest reads {"Data_URLs": [...], "model_prices": {...}} and names the field
// on every type problem (missing, not an array, an element that is not a string, a price
// that is not a number).
func decodeTrainRequest(r *http.Request) ([]string, map[string]float64, error) {
	var raw struct {
		DataURLs    json.RawMessage `json:"Data_URLs"`
		ModelPrices json.RawMessage `json:"model_prices"`
	}
	if err := decodeJSON(r, &raw, decodeOptions{EmptyIsObject: true}); err != nil {
		return nil, nil, err
	}
	if len(raw.DataURLs) == 0 || string(raw.DataURLs) == "null" {
		return nil, nil, Validation(http.StatusUnprocessableEntity, "Data_URLs is required: an array of dataset file URLs")
	}
	var items []any
	if err := json.Unmarshal(raw.DataURLs, &items); err != nil {
		return nil, nil, Validation(http.StatusUnprocessableEntity, "Data_URLs must be an array of strings (URLs of dataset files)")
	}
	urls := make([]string, len(items))
	for i, it := range items {
		u, ok := it.(string)
		if !ok {
			return nil, nil, Validation(http.StatusUnprocessableEntity, "Data_URLs[%d] must be a string, got %s", i, jsonKind(it))
		}
		urls[i] = u
	}
	var prices map[string]float64
	if len(raw.ModelPrices) > 0 && string(raw.ModelPrices) != "null" {
		var obj map[string]any
		if err := json.Unmarshal(raw.ModelPrices, &obj); err != nil {
			return nil, nil, Validation(http.StatusUnprocessableEntity, "model_prices must be an object mapping provider/model to a price in USD per 1M tokens")
		}
		prices = make(map[string]float64, len(obj))
		for m, v := range obj {
			p, ok := v.(float64)
			if !ok {
				return nil, nil, Validation(http.StatusUnprocessableEntity, "model_prices[%q] must be a number, got %s", m, jsonKind(v))
			}
			prices[m] = p
		}
	}
	return urls, prices, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// requiredQuery returns a query parameter, or a 422 naming it when it is missing or empty.
func requiredQuery(r *http.Request, name string) (string, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return "", Validation(http.StatusUnprocessableEntity, "query parameter %s is required", name)
	}
	return v, nil
}

// trainerError maps trainer's typed errors: invalid → 422, not found (and archived) → 404,
// full queue or closed service → 503 with Retry-After, the key's job limit → 429 with
// Retry-After, cancel of an ended job → 409.
func trainerError(err error) *APIError {
	var ve *trainer.ValidationError
	switch {
	case errors.Is(err, trainer.ErrInvalid) && errors.As(err, &ve):
		return Validation(http.StatusUnprocessableEntity, "%s", ve.Error())
	case errors.Is(err, trainer.ErrInvalid):
		return Validation(http.StatusUnprocessableEntity, "%s", userMessage(err))
	case errors.Is(err, trainer.ErrArchived):
		return NotFound("%s", userMessage(err))
	case errors.Is(err, trainer.ErrNotFound):
		return NotFound("%s", userMessage(err))
	case errors.Is(err, trainer.ErrTooManyJobs):
		ae := Errorf(http.StatusTooManyRequests, KindTooManyRequests, "%s", userMessage(err))
		ae.Header = http.Header{"Retry-After": {"30"}}
		return ae
	case errors.Is(err, trainer.ErrStillRunning):
		ae := Errorf(http.StatusConflict, KindConflict, "%s", userMessage(err))
		ae.Header = http.Header{"Retry-After": {"5"}}
		return ae
	case errors.Is(err, trainer.ErrFinished):
		return Errorf(http.StatusConflict, KindConflict, "%s", userMessage(err))
	case errors.Is(err, trainer.ErrQueueFull), errors.Is(err, trainer.ErrClosed):
		ae := Errorf(http.StatusServiceUnavailable, KindUnavailable, "%s", userMessage(err))
		ae.Header = http.Header{"Retry-After": {"30"}}
		return ae
	}
	return nil
}
