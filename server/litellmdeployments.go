package server

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/deployments"
	"github.com/switchyard-ai/switchyard/litellmconfig"
)

// LiteLLM's proxy with store_model_in_db: true adds, changes and removes deployments at run
// time (its admin UI's "Add Model"): POST /model/new, POST /model/update (and PATCH
// /model/{model_id}/update), POST /model/delete. The routes here serve them from a
// deployments.Service, which keeps them in the store and swaps them into the gateway's
// routes; they are the operator's (a virtual or job key gets a 403). An api_key sent is
// stored sealed and never answered.

// litellmModelNew is the body of POST /model/new and /model/update.
type litellmModelNew struct {
	ModelName     string         `json:"model_name,omitempty" jsonschema:"description=The name clients send (a model group: 1-64 letters or digits or '_' '.' ':' '-'); a name of the config file adds a deployment to that group; required on /model/new"`
	LiteLLMParams map[string]any `json:"litellm_params,omitempty" jsonschema:"description=As a config.yaml model_list entry's: model (provider/model) and api_base and api_key (sealed in the store and never answered; or os.environ/NAME) and api_version and rpm and tpm and max_parallel_requests and weight and timeout and stream_timeout and input_cost_per_token and output_cost_per_token …; on update the keys given replace the deployment's"`
	ModelInfo     map[string]any `json:"model_info,omitempty" jsonschema:"description=As a config.yaml entry's (base_model and mode and max_input_tokens …); id is the deployment's id (a random one when not given on /model/new; required on POST /model/update)"`
}

// litellmStoredModel is a stored deployment as the model routes answer it: never its api_key.
type litellmStoredModel struct {
	ModelID       string         `json:"model_id" jsonschema:"description=The deployment's id (model_info.id)"`
	ModelName     string         `json:"model_name"`
	LiteLLMParams map[string]any `json:"litellm_params" jsonschema:"description=Its litellm_params without api_key (an os.environ/NAME reference is shown); api_base as /model/info shows it: without user info\\, query or fragment"`
	ModelInfo     map[string]any `json:"model_info" jsonschema:"description=Its model_info with id and db_model true"`
	CreatedAt     time.Time      `json:"created_at"`
	UpdatedAt     time.Time      `json:"updated_at"`
}

// litellmModelDelete is the body of POST /model/delete.
type litellmModelDelete struct {
	ID string `json:"id" jsonschema:"description=The deployment's id (model_info.id)"`
}

// litellmModelDeleted is POST /model/delete's answer.
type litellmModelDeleted struct {
	Message string `json:"message"`
}

// storedModelOf is d as the model routes answer it: its api_base as /model/info shows one
// (completions.PublicURL: without user info, query or fragment, where a credential may be
// written), an os.environ/ reference as it is.
func storedModelOf(d deployments.Deployment) litellmStoredModel {
	params := d.LiteLLMParams
	if base, ok := params["api_base"].(string); ok && !strings.HasPrefix(base, litellmconfig.EnvPrefix) {
		params = maps.Clone(params)
		if public := completions.PublicURL(base); public != "" {
			params["api_base"] = public
		} else {
			delete(params, "api_base")
		}
	}
	return litellmStoredModel{ModelID: d.ID, ModelName: d.ModelName, LiteLLMParams: params, ModelInfo: d.ModelInfo, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

// StoredDeployments serves LiteLLM's /model/new, /model/update, PATCH
// /model/{model_id}/update and /model/delete from svc (operator keys only).
func StoredDeployments(svc *deployments.Service) Option {
	return func(s *Server) error {
		if svc == nil {
			return errors.New("server: StoredDeployments needs a *deployments.Service")
		}
		s.AddErrorMapper(deploymentError)
		s.storedModels = svc
		s.storedDeploymentRoutes(svc)
		return nil
	}
}

// deploymentError maps the deployments package's errors, in LiteLLM's words.
func deploymentError(err error) *APIError {
	var fe *deployments.FieldError
	switch {
	case errors.As(err, &fe):
		return paramError(fe.Field, "%s: %s", fe.Field, fe.Message)
	case errors.Is(err, deployments.ErrDuplicate):
		return paramError("model_info.id", "%s: a deployment has this id already", err.Error())
	case errors.Is(err, deployments.ErrInConfig):
		return paramError("id", "Can't edit or delete model. Model in config. Store model in db via `/model/new`. to edit. (the config file's deployments change only there)")
	case errors.Is(err, deployments.ErrNotFound):
		e := NotFound("Model with id=%s not found in db", strings.TrimPrefix(err.Error(), deployments.ErrNotFound.Error()+": "))
		e.Param = "id"
		return e
	}
	return nil
}

func (s *Server) storedDeploymentRoutes(svc *deployments.Service) {
	tags := []string{"LiteLLM compatibility"}
	scoped := "the calling key is limited in scope (a virtual or job key): deployments are the operator's"
	s.Handle(Route{Method: "POST", Path: "/model/new", Summary: "LiteLLM's Add Model (store_model_in_db): adds a deployment; kept in the store and served at once by this replica and within serve --deployments-poll by the others; operator keys only",
		Tags: tags, Request: litellmModelNew{}, Response: litellmStoredModel{},
		Errors: map[int]string{400: "a bad field (unknown provider prefix in litellm_params.model; a bad litellm_params.api_base; model_info.id taken): the message names it", 403: scoped}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req litellmModelNew
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
				return err
			}
			d, err := svc.Add(r.Context(), deployments.Input(req))
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, storedModelOf(d))
			return nil
		})
	update := func(w http.ResponseWriter, r *http.Request, id string, req litellmModelNew) error {
		d, err := svc.Update(r.Context(), id, deployments.Input(req))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, storedModelOf(d))
		return nil
	}
	updateErrors := map[int]string{400: "a bad field (the message names it), or the id is a deployment of the config file", 403: scoped, 404: "no stored deployment has the id"}
	s.Handle(Route{Method: "POST", Path: "/model/update", Summary: "LiteLLM's model update: changes the stored deployment model_info.id names (the litellm_params and model_info keys given replace its own; api_key kept unless given); operator keys only",
		Tags: tags, Request: litellmModelNew{}, Response: litellmStoredModel{}, Errors: updateErrors},
		func(w http.ResponseWriter, r *http.Request) error {
			var req litellmModelNew
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
				return err
			}
			raw, given := req.ModelInfo["id"]
			id, isText := raw.(string)
			if given && raw != nil && !isText {
				shown, _ := json.Marshal(raw)
				return paramError("model_info.id", "model_info.id: must be a string, the id of the deployment to update, got %s", shown)
			}
			if id == "" {
				return paramError("model_info.id", "model_info.id: is required: the id of the deployment to update")
			}
			return update(w, r, id, req)
		})
	s.Handle(Route{Method: "PATCH", Path: "/model/{model_id}/update", Summary: "LiteLLM's model patch: as POST /model/update for the deployment model_id; operator keys only",
		Tags: tags, Request: litellmModelNew{}, Response: litellmStoredModel{}, Errors: updateErrors},
		func(w http.ResponseWriter, r *http.Request) error {
			var req litellmModelNew
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
				return err
			}
			return update(w, r, r.PathValue("model_id"), req)
		})
	s.Handle(Route{Method: "POST", Path: "/model/delete", Summary: "LiteLLM's model delete: removes the stored deployment id (one of the config file cannot be); operator keys only",
		Tags: tags, Request: litellmModelDelete{}, Response: litellmModelDeleted{},
		Errors: map[int]string{400: "id missing, or a deployment of the config file", 403: scoped, 404: "no stored deployment has the id"}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req litellmModelDelete
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
				return err
			}
			if req.ID == "" {
				return paramError("id", "id: is required: the deployment's model_info.id")
			}
			if _, err := svc.Delete(r.Context(), req.ID); err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, litellmModelDeleted{Message: "Model: " + req.ID + " deleted successfully"})
			return nil
		})
}
