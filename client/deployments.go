package client

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"time"
)

// Deployments are LiteLLM's dynamic models (a proxy with store_model_in_db: its admin UI's
// "Add Model"): POST /model/new adds one, PATCH /model/{model_id}/update changes it and
// POST /model/delete removes it. The server keeps them in its store, serves them at once and
// on its other replicas within serve --deployments-poll, and seals their api_key: no answer
// ever holds it. They are the operator's: a virtual key gets a 403.

// DeploymentRequest describes a deployment to add (AddDeployment) or the settings of one
// to change (UpdateDeployment: the fields set replace the deployment's, the others stay).
// It is sent as a config.yaml model_list entry: {model_name, litellm_params, model_info}.
type DeploymentRequest struct {
	// ID is the deployment's id (model_info.id); empty on AddDeployment: the server makes
	// one.
	ID string
	// ModelName is the name clients send (a model group; one of the config file joins
	// that group); required on AddDeployment.
	ModelName string
	// Model is the provider/model the deployment calls (litellm_params.model):
	// "openai/gpt-4o"; required on AddDeployment.
	Model string
	// APIBase is the provider's endpoint root (litellm_params.api_base).
	APIBase string
	// APIKey is the provider's credential (litellm_params.api_key), or os.environ/NAME for
	// the server's environment variable NAME. Stored sealed; never answered.
	APIKey string
	// APIVersion is an Azure deployment's api-version (litellm_params.api_version).
	APIVersion string
	// RequestsPerMinute and TokensPerMinute bound the deployment (litellm_params rpm and
	// tpm); 0: not set.
	RequestsPerMinute int
	TokensPerMinute   int64
	// Params are other litellm_params (timeout, input_cost_per_token, weight, …); the
	// fields above win over the same keys here.
	Params map[string]any
	// Info are other model_info keys (base_model, mode, max_input_tokens, …).
	Info map[string]any
}

// MarshalJSON writes r as LiteLLM's {model_name, litellm_params, model_info}, leaving out
// what is not set.
func (r DeploymentRequest) MarshalJSON() ([]byte, error) {
	params := maps.Clone(r.Params)
	if params == nil {
		params = map[string]any{}
	}
	put := func(m map[string]any, k string, v any, ok bool) {
		if ok {
			m[k] = v
		}
	}
	put(params, "model", r.Model, r.Model != "")
	put(params, "api_base", r.APIBase, r.APIBase != "")
	put(params, "api_key", r.APIKey, r.APIKey != "")
	put(params, "api_version", r.APIVersion, r.APIVersion != "")
	put(params, "rpm", r.RequestsPerMinute, r.RequestsPerMinute != 0)
	put(params, "tpm", r.TokensPerMinute, r.TokensPerMinute != 0)
	info := maps.Clone(r.Info)
	if info == nil {
		info = map[string]any{}
	}
	put(info, "id", r.ID, r.ID != "")
	out := map[string]any{}
	put(out, "model_name", r.ModelName, r.ModelName != "")
	put(out, "litellm_params", params, len(params) > 0)
	put(out, "model_info", info, len(info) > 0)
	return json.Marshal(out)
}

// String describes r without its api_key, so that a logged or printed request does not
// show the secret.
func (r DeploymentRequest) String() string {
	key := ""
	if r.APIKey != "" {
		key = " api_key=[redacted]"
	}
	return fmt.Sprintf("deployment %s (model_name %s, model %s%s)", r.ID, r.ModelName, r.Model, key)
}

// GoString is String, for %#v.
func (r DeploymentRequest) GoString() string { return r.String() }

// Deployment is a stored deployment as the server answers it: never its api_key.
type Deployment struct {
	// ID is the deployment's id (model_info.id).
	ID string `json:"model_id"`
	// ModelName is the name clients send.
	ModelName string `json:"model_name"`
	// Params are its litellm_params without api_key (an os.environ/NAME reference is
	// shown).
	Params map[string]any `json:"litellm_params"`
	// Info is its model_info, with id and db_model true.
	Info map[string]any `json:"model_info"`
	// CreatedAt and UpdatedAt say when it was added and last changed.
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Model is the provider/model the deployment calls (litellm_params.model).
func (d Deployment) Model() string { s, _ := d.Params["model"].(string); return s }

// DeploymentInfo is one deployment the server routes to, as LiteLLM's GET /model/info
// describes it: those of its configuration and the stored ones (Stored).
type DeploymentInfo struct {
	// ModelName is the name clients send.
	ModelName string `json:"model_name"`
	// Params are the provider/model it calls and its endpoint (no credential).
	Params struct {
		Model   string `json:"model"`
		APIBase string `json:"api_base,omitempty"`
	} `json:"litellm_params"`
	// Info holds its id, whether it is stored and its catalogued figures.
	Info struct {
		// ID is the deployment's id (UpdateDeployment and DeleteDeployment take it for a
		// stored one).
		ID string `json:"id"`
		// Stored is true for a deployment added through AddDeployment (LiteLLM's
		// db_model); false for one of the server's configuration, which cannot be changed
		// through the API.
		Stored bool `json:"db_model"`
		// Mode is chat, embedding or rerank; Provider the provider prefix.
		Mode     string `json:"mode"`
		Provider string `json:"litellm_provider"`
		// InputCostPerToken and OutputCostPerToken are its prices in USD (nil: not
		// catalogued).
		InputCostPerToken  *float64 `json:"input_cost_per_token"`
		OutputCostPerToken *float64 `json:"output_cost_per_token"`
	} `json:"model_info"`
}

// AddDeployment adds a deployment (POST /model/new) and returns it as stored. A bad field
// is a 400 naming it (an unknown provider prefix in litellm_params.model, a bad
// litellm_params.api_base, a model_info.id taken).
func (c *Client) AddDeployment(ctx context.Context, req *DeploymentRequest) (*Deployment, error) {
	if req == nil {
		req = &DeploymentRequest{}
	}
	var out Deployment
	if err := c.do(ctx, http.MethodPost, "/model/new", nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateDeployment changes the stored deployment id (PATCH /model/{id}/update): the
// litellm_params and model_info keys u sets replace its own (its api_key is kept unless u
// gives one), and returns it as it is now. u.ID, when set, must be id. A deployment of the
// server's config file is a 400; an unknown id a 404.
func (c *Client) UpdateDeployment(ctx context.Context, id string, u *DeploymentRequest) (*Deployment, error) {
	if id == "" {
		return nil, fmt.Errorf("client: PATCH /model/{model_id}/update: %w", ErrMissingID)
	}
	if u == nil {
		u = &DeploymentRequest{}
	}
	if u.ID != "" && u.ID != id {
		return nil, fmt.Errorf("client: PATCH /model/%s/update: the request's ID %q is another deployment's: %w", id, u.ID, ErrInvalid)
	}
	var out Deployment
	if err := c.do(ctx, http.MethodPatch, "/model/"+url.PathEscape(id)+"/update", nil, u, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteDeployment removes the stored deployment id (POST /model/delete) from this
// replica at once and from the others within their poll. A deployment of the server's
// config file is a 400; an unknown id a 404.
func (c *Client) DeleteDeployment(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("client: POST /model/delete: %w", ErrMissingID)
	}
	return c.do(ctx, http.MethodPost, "/model/delete", nil, map[string]string{"id": id}, nil)
}

// DeploymentInfos returns the deployments the server routes to (GET /model/info): those of
// its configuration and the stored ones; a virtual key sees only those of its models.
func (c *Client) DeploymentInfos(ctx context.Context) ([]DeploymentInfo, error) {
	var out struct {
		Data []DeploymentInfo `json:"data"`
	}
	if err := c.do(ctx, http.MethodGet, "/model/info", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}
