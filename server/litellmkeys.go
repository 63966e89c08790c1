package server

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// LiteLLM's proxy manages its virtual keys through /key/generate, /key/info, /key/update,
// /key/delete, /key/list, /key/block and /key/unblock (and regenerates them); the routes here answer those requests for scripts and admin
// tools moved from it unchanged. They are translations onto the virtual keys of keys.go
// (the same records, checks, limits and owner scoping as /api/v1/keys): LiteLLM's field
// names become Switchyard's on the way in and back on the way out, and the failures name
// LiteLLM's fields, in LiteLLM's envelope (OpenAI's: {"error": {"message", "type", "param",
// "code"}}). A LiteLLM field that asks for something a virtual key cannot do is refused
// with a 400 naming it rather than dropped (see litellmRefused).

// litellmFieldNames maps LiteLLM's key fields onto keyRequest's.
var litellmFieldNames = map[string]string{
	"models":          "models",
	"key_alias":       "name",
	"tpm_limit":       "tokens_per_minute",
	"rpm_limit":       "requests_per_minute",
	"budget_duration": "budget_duration",
	"metadata":        "metadata",
	"guardrails":      "guardrails",
	"team_id":         "team_id",
	"organization_id": "organization_id",
	"soft_budget":     "soft_budget_usd",
	"budget_id":       "budget_id",
	// max_parallel_requests and aliases: the same names (keyRequest's own).
	"max_parallel_requests": "max_parallel_requests",
	"aliases":               "aliases",
	"router_settings":       "router_settings",
}

// litellmBudgetIDFields are LiteLLM's key fields a budget_id sets.
var litellmBudgetIDFields = []string{"max_budget", "soft_budget", "budget_duration", "tpm_limit"}

// litellmKeyNativeName is keyRequest's name of LiteLLM's key field name.
func litellmKeyNativeName(name string) string {
	if name == "max_budget" {
		return "max_budget_usd"
	}
	return litellmFieldNames[name]
}

// litellmRefused are LiteLLM key fields without an equivalent here, with the reason given
// when one asks for something (an empty value — null, {}, [], "", 0, false — is accepted,
// as LiteLLM's clients send their defaults).
var litellmRefused = map[string]string{
	"key":                          "Switchyard mints every key itself (sy-vk-…, shown once) and takes none chosen by the caller: omit key",
	"policies":                     "Switchyard has no per-key policies",
	"prompts":                      "Switchyard has no per-key prompts",
	"permissions":                  "a virtual key reaches the gateway's surfaces only; there are no other permissions to set",
	"allowed_routes":               "a virtual key reaches the gateway's surfaces only; its routes cannot be chosen",
	"allowed_passthrough_routes":   "every key may use the pass-through routes (/anthropic, /gemini, /openai), held to its models: they cannot be chosen per key",
	"config":                       "Switchyard has no per-key configuration",
	"enforced_params":              "Switchyard has no per-key enforced parameters",
	"allowed_cache_controls":       "Switchyard has no per-key cache controls",
	"spend":                        "a key's spend is metered by the server and cannot be set",
	"send_invite_email":            "Switchyard sends no e-mail",
	"rpm_limit_type":               "Switchyard's rpm_limit is a plain bound (no throughput types)",
	"tpm_limit_type":               "Switchyard's tpm_limit is a plain bound (no throughput types)",
	"tpd_limit":                    "Switchyard has no tokens-per-day bound: use tpm_limit, or max_budget with budget_duration",
	"allowed_vector_store_indexes": "Switchyard has no vector stores",
	"access_group_ids":             "Switchyard has no access groups: list the models in models",
	"duration_type":                "not supported",
	"new_key":                      "Switchyard mints every key itself (sy-vk-…, shown once) and takes none chosen by the caller: omit new_key",
	"new_master_key":               "the operator keys are configured on the server (SWITCHYARD_API_KEYS), not regenerated here",
}

// litellmKeyRequest documents LiteLLM's key request body (POST /key/generate, and with key
// POST /key/update); other LiteLLM fields are refused when they ask for something.
type litellmKeyRequest struct {
	Key                 string            `json:"key,omitempty" jsonschema:"description=POST /key/update only: the key to change (the key itself or its token); refused on /key/generate (keys are minted here)"`
	Models              []string          `json:"models,omitempty" jsonschema:"description=The models the key may call (as models of POST /api/v1/keys); empty for every model"`
	MaxBudget           *float64          `json:"max_budget,omitempty" jsonschema:"description=USD the key may spend (per budget_duration when set): max_budget_usd; 0 blocks the key (every request refused as over budget)"`
	Duration            *string           `json:"duration,omitempty" jsonschema:"description=How long the key works from now: a number and s or m or h or d or w (weeks) or mo (months of 30 days): 30d; absent\\, null\\, empty or None for ever (on /key/update: the expiry is kept)"`
	KeyAlias            *string           `json:"key_alias,omitempty" jsonschema:"description=A label for the key: name"`
	Metadata            map[string]any    `json:"metadata,omitempty" jsonschema:"description=Labels kept with the key (at most 16 KiB of JSON)"`
	Tags                []string          `json:"tags,omitempty" jsonschema:"description=The key's tags (LiteLLM's key-level tags\\, kept as metadata.tags): every request of the key carries them\\, for tag routing\\, tag budgets (POST /tag/new) and spend per tag (at most 16 with the request's own); null on /key/update removes them"`
	TPMLimit            *int64            `json:"tpm_limit,omitempty" jsonschema:"description=Tokens per minute: tokens_per_minute"`
	RPMLimit            *int              `json:"rpm_limit,omitempty" jsonschema:"description=Requests per minute: requests_per_minute"`
	BudgetDuration      *string           `json:"budget_duration,omitempty" jsonschema:"description=Period after which the spend starts again from zero (30d)"`
	UserID              *string           `json:"user_id,omitempty" jsonschema:"description=The user (/user/new) whose budget the key draws on; kept as metadata.user_id (a label when no user has this id)"`
	Guardrails          []string          `json:"guardrails,omitempty" jsonschema:"description=Guardrails every chat request of the key runs (configured on the server by --guardrails)"`
	Blocked             *bool             `json:"blocked,omitempty" jsonschema:"description=true: the key refuses every request until unblocked (as POST /key/block); false lifts a block"`
	TeamID              *string           `json:"team_id,omitempty" jsonschema:"description=A team (POST /team/new) the key belongs to: it draws on the team's budget and keeps to its models and rates; null on /key/update takes the key out of its team; a key with a user_id moved into a team on /key/update must be of a member of it\\, and its tpm_limit and rpm_limit at most the team's (403 otherwise)"`
	OrganizationID      *string           `json:"organization_id,omitempty" jsonschema:"description=An organization (POST /organization/new) a key without a team belongs to: it draws on the organization's budget (and its user's max_budget_in_organization) and keeps to its models and rates; beside team_id it must be the team's organization; null on /key/update takes the key out of it (a key whose team_id is set to null stays in its team's organization unless organization_id is given too; a key put into another team takes that team's)"`
	SoftBudget          *float64          `json:"soft_budget,omitempty" jsonschema:"description=USD mark that never blocks: crossing it sends a budget alert (soft_budget_usd); null for none"`
	MaxParallelRequests *int              `json:"max_parallel_requests,omitempty" jsonschema:"description=Requests of the key in flight at once: each POST of the gateway from its arrival until its answer ends (a stream until its last event) and each /v1/realtime session for its life; one more is a 429 (Rate limit exceeded for api_key: … Limit type: max_parallel_requests …); across replicas on PostgreSQL give or take --limits-sync-interval; null for no bound (0 is refused: LiteLLM's 0 blocks the key\\, which max_budget 0 does here)"`
	Aliases             map[string]string `json:"aliases,omitempty" jsonschema:"description=The key's own model names: a request of the key naming one (its model; on /api/v1/completions an entry of models or fallback_models) is sent to the model it stands for (the key's models must allow that model); each must be a model or model group this server routes to; on /key/update the map replaces the key's and null or {} removes them"`
	BudgetID            *string           `json:"budget_id,omitempty" jsonschema:"description=A budget of /budget/new whose max_budget and soft_budget and budget_duration and tpm_limit and max_parallel_requests the key takes: now and on every /budget/update (those fields given with it must have the budget's values or be null); null on /key/update leaves the budget and keeps its values as the key's own"`
	// ObjectPermission is LiteLLM's object_permission: its mcp_servers only.
	ObjectPermission *litellmObjectPermission `json:"object_permission,omitempty" jsonschema:"description=Which MCP servers the key may use: mcp_servers (the other members are refused when not empty)"`
	// The key's per-model limits (keymodellimits.go).
	ModelMaxBudget map[string]litellmModelBudget `json:"model_max_budget,omitempty" jsonschema:"description=USD budgets of single models: {gpt-4o: {budget_limit: 10\\, time_period: 1d}} (a plain number: a budget for all time); a model whose budget is spent is skipped for the request's next model (its fallbacks or a group's other members) and a request all of whose models are refused gets LiteLLM's 400 budget_exceeded while the key's other models still work; the model that answers is charged; models named as in models; null or {} on /key/update removes them"`
	ModelRPMLimit  map[string]int64              `json:"model_rpm_limit,omitempty" jsonschema:"description=Requests per minute of single models: {gpt-4o: 10}; past it the model is skipped for the request's next one (a fallback) and a request all of whose models are refused is a 429 with Retry-After (shared across replicas as rpm_limit); 0 refuses every request for the model; null or {} on /key/update removes them"`
	ModelTPMLimit  map[string]int64              `json:"model_tpm_limit,omitempty" jsonschema:"description=Tokens per minute of single models: {gpt-4o: 10000}; once the model's answers used them in the last minute a request for it is a 429 with Retry-After (shared across replicas as tpm_limit); null or {} on /key/update removes them"`
	// RouterSettings are LiteLLM's key router_settings (routersettings.go).
	RouterSettings *routerSettings `json:"router_settings,omitempty" jsonschema:"description=The key's own router settings (LiteLLM's key router_settings): num_retries (or max_retries) and timeout (seconds) and fallbacks ([{gpt-4o: [claude-sonnet-4-5]}]) and context_window_fallbacks for every request of the key in place of its team's (whole: a key with any takes none of its team's) and the server's; the other settings of LiteLLM's router are the server's and refused when they ask for something; null or {} on /key/update removes them"`
}

// litellmObjectPermission is LiteLLM's object_permission of a key, as far as Switchyard has
// one: the MCP servers the key may use.
type litellmObjectPermission struct {
	MCPServers []string `json:"mcp_servers" jsonschema:"description=The MCP servers (serve --mcp-servers) the key may use; empty for every one"`
}

// litellmKeyInfo is a virtual key as LiteLLM's /key/info describes one.
type litellmKeyInfo struct {
	Token               string            `json:"token" jsonschema:"description=The key's id (vk_…): what /key/info\\, /key/update and /key/delete take in place of the key"`
	KeyName             *string           `json:"key_name" jsonschema:"description=The key abbreviated\\, for display: its prefix and last four characters (sy-vk-…abcd)\\, recorded when the key was made or regenerated; null for a key made by an earlier build"`
	KeyAlias            *string           `json:"key_alias"`
	Spend               float64           `json:"spend" jsonschema:"description=USD spent (in the current period with budget_duration)"`
	MaxBudget           *float64          `json:"max_budget"`
	SoftBudget          *float64          `json:"soft_budget" jsonschema:"description=USD mark that never blocks: crossing it sends a budget alert"`
	Models              []string          `json:"models" jsonschema:"description=Empty: every model"`
	Expires             *time.Time        `json:"expires"`
	TPMLimit            *int64            `json:"tpm_limit"`
	RPMLimit            *int              `json:"rpm_limit"`
	BudgetDuration      *string           `json:"budget_duration"`
	BudgetResetAt       *time.Time        `json:"budget_reset_at"`
	Metadata            map[string]any    `json:"metadata"`
	UserID              *string           `json:"user_id" jsonschema:"description=metadata.user_id"`
	TeamID              *string           `json:"team_id" jsonschema:"description=The key's team (POST /team/new); null for none"`
	OrganizationID      *string           `json:"organization_id" jsonschema:"description=The organization (POST /organization/new) the key spends through: its own for a key without a team\\, its team's for a key of a team; null for none"`
	BudgetID            *string           `json:"budget_id" jsonschema:"description=The budget of /budget/new its max_budget and soft_budget and budget_duration and tpm_limit and max_parallel_requests come from; null for its own"`
	Blocked             bool              `json:"blocked" jsonschema:"description=The key refuses every request (POST /key/block or max_budget 0) until unblocked"`
	Guardrails          []string          `json:"guardrails,omitempty" jsonschema:"description=Guardrails every chat request of the key runs"`
	MaxParallelRequests *int              `json:"max_parallel_requests" jsonschema:"description=Requests of the key in flight at once; null for no bound"`
	Aliases             map[string]string `json:"aliases" jsonschema:"description=The key's own model names and the models they stand for ({} for none)"`
	// RouterSettings are the key's own retries, timeout and fallbacks.
	RouterSettings *routerSettings `json:"router_settings" jsonschema:"description=The key's own router settings ({} for none: its team's apply\\, else the server's)"`
	// ObjectPermission says which MCP servers the key may use.
	ObjectPermission litellmObjectPermission `json:"object_permission"`
	CreatedAt        time.Time               `json:"created_at"`
	// Switchyard's limits LiteLLM's key has no field for, so that they are not hidden.
	// The key's per-model limits, and what each model of model_max_budget spent.
	ModelMaxBudget      map[string]litellmModelBudget      `json:"model_max_budget" jsonschema:"description=USD budgets of single models ({} for none)"`
	ModelMaxBudgetUsage map[string]litellmModelBudgetUsage `json:"model_max_budget_usage" jsonschema:"description=What each model of model_max_budget spent in its current time_period"`
	ModelRPMLimit       map[string]int64                   `json:"model_rpm_limit" jsonschema:"description=Requests per minute of single models ({} for none)"`
	ModelTPMLimit       map[string]int64                   `json:"model_tpm_limit" jsonschema:"description=Tokens per minute of single models ({} for none)"`
	MaxTokens           int64                              `json:"max_tokens,omitempty" jsonschema:"description=Switchyard: tokens the key may use (per budget_duration)"`
	MaxRequests         int64                              `json:"max_requests,omitempty" jsonschema:"description=Switchyard: requests the key may make (per budget_duration)"`
	Expired             bool                               `json:"expired,omitempty" jsonschema:"description=Switchyard: past expires and no longer accepted"`
}

// litellmGeneratedKey is the answer of POST /key/generate: the key (shown once) and its info.
type litellmGeneratedKey struct {
	Key string `json:"key" jsonschema:"description=The key itself: shown once"`
	litellmKeyInfo
}

// litellmUpdatedKey is the answer of POST /key/update: the key as the request named it and
// its info, as LiteLLM answers {"key": …, …the updated key}.
type litellmUpdatedKey struct {
	Key string `json:"key" jsonschema:"description=The key changed\\, as given (its token or the key itself)"`
	litellmKeyInfo
}

// litellmKeyInfoAnswer is the answer of GET /key/info.
type litellmKeyInfoAnswer struct {
	Key  string         `json:"key" jsonschema:"description=The key asked about\\, as given"`
	Info litellmKeyInfo `json:"info"`
}

// litellmKeyDeleteRequest is the body of POST /key/delete.
type litellmKeyDeleteRequest struct {
	Keys       []string `json:"keys,omitempty" jsonschema:"description=Keys to delete: the keys themselves or their tokens"`
	KeyAliases []string `json:"key_aliases,omitempty" jsonschema:"description=Aliases whose keys to delete (every key of this key with that alias)"`
}

// litellmKeyRef is the body of POST /key/regenerate, /key/block and /key/unblock.
type litellmKeyRef struct {
	Key string `json:"key" jsonschema:"description=The key itself or its token"`
}

// litellmKeyDeletion is the answer of POST /key/delete.
type litellmKeyDeletion struct {
	DeletedKeys []string `json:"deleted_keys" jsonschema:"description=The keys\\, then the aliases\\, given"`
}

// litellmKeyList is the answer of GET /key/list.
type litellmKeyList struct {
	Keys        []any `json:"keys" jsonschema:"description=Tokens\\, newest first (info objects with return_full_object=true)"`
	TotalCount  int   `json:"total_count"`
	CurrentPage int   `json:"current_page"`
	TotalPages  int   `json:"total_pages"`
}

// litellmPath reports the paths answered in LiteLLM's error envelope.
func litellmPath(path string) bool {
	return strings.HasPrefix(path, "/key/") || litellmTeamPath(path) || litellmCustomerPath(path) || litellmModelPath(path) || litellmSpendPath(path) || litellmUserPath(path) || litellmBudgetPath(path) || litellmTagPath(path) ||
		strings.HasPrefix(path, "/organization/")
}

// litellmRoutes registers LiteLLM's key management routes; g checks the models a key names.
func (s *Server) litellmRoutes(g *completions.Gateway) {
	tags := []string{"LiteLLM compatibility"}
	notFound := "no virtual key of this key is the one given"
	scoped := "the calling key is itself limited in scope (a virtual or job key)"
	s.Handle(Route{Method: "POST", Path: "/key/generate", Summary: "LiteLLM's key generation: issues a virtual key (as POST /api/v1/keys)",
		Tags: tags, Request: litellmKeyRequest{}, Response: litellmGeneratedKey{}, VirtualKeys: true,
		Errors: map[int]string{
			400: "a bad or unsupported field, or a budget field beside budget_id with another value than the budget's: the message names it",
			403: scoped + ", or a virtual key not an org_admin's of organization_id, or giving a field, user or limit an org_admin may not (the message names it)",
			404: "budget_id names no budget of this key (param budget_id; POST /budget/new makes one)",
			409: fmt.Sprintf("this key has issued %d virtual keys already, or key_alias is another key's", MaxVirtualKeysPerOwner),
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			fields, err := litellmBody(r)
			if err != nil {
				return err
			}
			c, err := orgCallerOf(r)
			if err != nil {
				return err
			}
			var org string
			if c.virtual {
				if org, err = orgAdminFields("/key/generate", fields, orgAdminKeyFields); err != nil {
					return err
				}
			}
			native, err := litellmToNative(fields, false, time.Now().UTC())
			if err != nil {
				return err
			}
			var req keyRequest
			if err := decodeExact(native.Body, &req, http.StatusUnprocessableEntity); err != nil {
				return litellmNames(err)
			}
			req.budgetBlock, req.fields = native.BudgetBlock, bodyFields(native.Body)
			if native.Tags != nil {
				req.Metadata = withKeyTags(req.Metadata, *native.Tags)
			}
			if c.virtual {
				user := req.UserID
				if user == "" { // LiteLLM's user_id arrives as the metadata label
					user = keyUserID(virtualKey{Metadata: req.Metadata})
				}
				req.authorize = orgAdminCreation{caller: c, owner: owner(r), org: org, team: req.TeamID, user: user,
					maxBudget: req.MaxBudgetUSD, tpm: req.TokensPerMinute, rpm: req.RequestsPerMinute}.check
			}
			vk, err := s.issueKey(r.Context(), g, owner(r), req, "key_alias")
			if err != nil {
				return litellmNames(err)
			}
			writeJSON(w, http.StatusOK, litellmGeneratedKey{Key: vk.Key, litellmKeyInfo: litellmInfoOf(*vk, s.organizationsOfTeams(r.Context(), owner(r)))})
			return nil
		})
	// regenerate gives the key ref names a new key; fields (LiteLLM's regenerate body: the
	// key's fields to change with it, as its admin UI sends them) are applied as /key/update
	// applies them, in the rotation's transaction: a refused field, or a rotation that
	// fails, changes nothing. A key named by its value or hash (ref, or old when the path
	// gives the token and the body the key) is retired only if it is still the current one
	// when the rotation writes (retiredKey): of concurrent regenerations of one key, one
	// succeeds, the others answered as a later request naming that key is. A key named by
	// its token (vk_…, which a rotation keeps, unlike LiteLLM's hashed token) is rotated
	// whatever key it has, unless the request gives If-Match with the key's ETag: then, as
	// on POST /api/v1/keys/{key_id}/rotate, only if it is still at that version (412
	// otherwise).
	regenerate := func(w http.ResponseWriter, r *http.Request, ref string, old retiredKey, fields map[string]json.RawMessage) error {
		rec, err := s.litellmKeyOf(r.Context(), owner(r), ref)
		if err != nil {
			return err
		}
		if old.hash == "" && !strings.HasPrefix(ref, "vk_") {
			old = retiredKey{hash: rec.Hash, gone: NotFound("no virtual key %q issued by this key", ref)} // litellmKeyOf's 404
		}
		old.ifMatch = ifMatchOf(r) // Switchyard's own: the key's ETag (GET /api/v1/keys/{key_id})
		var vk *virtualKey
		if len(fields) > 0 {
			vk, err = s.litellmUpdateKey(r.Context(), g, owner(r), rec.ID, fields, true, old)
		} else {
			vk, err = s.rotateKey(r.Context(), owner(r), rec.ID, old)
		}
		if err != nil {
			return err
		}
		writeETag(w, vk)
		writeJSON(w, http.StatusOK, litellmGeneratedKey{Key: vk.Key, litellmKeyInfo: litellmInfoOf(*vk, s.organizationsOfTeams(r.Context(), owner(r)))})
		return nil
	}
	regenBody := func(r *http.Request) (map[string]json.RawMessage, error) { return litellmBodyOf(r, true) }
	regenErrors := map[int]string{400: "a bad or unsupported field, or a budget field beside budget_id with another value than the budget's: the message names it", 403: scoped, 404: notFound + ", or budget_id names no budget of this key (param budget_id)", 409: "key_alias is another key's",
		412: "If-Match was given and the key was rotated or changed since that version (GET /api/v1/keys/{key_id}'s ETag)"}
	s.Handle(Route{Method: "POST", Path: "/key/{key}/regenerate", Summary: "LiteLLM's key regeneration: a new key for a virtual key (as POST /api/v1/keys/{key_id}/rotate), the fields given changed as /key/update changes them; the old key stops working at once",
		Tags: tags, Request: litellmKeyRequest{}, Response: litellmGeneratedKey{}, Headers: []HeaderParam{keyIfMatchHeader}, ResponseHeaders: []HeaderParam{keyETagHeader}, Errors: regenErrors},
		func(w http.ResponseWriter, r *http.Request) error {
			fields, err := regenBody(r)
			if err != nil {
				return err
			}
			ref := r.PathValue("key")
			var old retiredKey
			if raw, ok := fields["key"]; ok {
				// LiteLLM's regenerate body has key too: the path's own key (or null) is
				// the same request, another key a mistake that regenerates nothing.
				var named string
				if json.Unmarshal(raw, &named) != nil {
					return paramError("key", "key: must be a string, the key of the path (or omitted), got %s", raw)
				}
				if named != "" {
					rec, err := s.litellmKeyOf(r.Context(), owner(r), ref)
					if err != nil {
						return err
					}
					other := paramError("key", "key: the body names another key than the path's: omit key, or give the same key")
					same, err := s.litellmKeyOf(r.Context(), owner(r), named)
					if err != nil || same.ID != rec.ID {
						return other
					}
					if strings.HasPrefix(ref, "vk_") && !strings.HasPrefix(named, "vk_") {
						old = retiredKey{hash: same.Hash, gone: other} // the key to retire, the path naming its token
					}
				}
				delete(fields, "key")
			}
			return regenerate(w, r, ref, old, fields)
		})
	s.Handle(Route{Method: "POST", Path: "/key/regenerate", Summary: "LiteLLM's key regeneration, the key in the body (with the fields to change)",
		Tags: tags, Request: litellmKeyRequest{}, Response: litellmGeneratedKey{}, Headers: []HeaderParam{keyIfMatchHeader}, ResponseHeaders: []HeaderParam{keyETagHeader}, Errors: regenErrors},
		func(w http.ResponseWriter, r *http.Request) error {
			fields, err := regenBody(r)
			if err != nil {
				return err
			}
			var ref string
			if raw, ok := fields["key"]; !ok || json.Unmarshal(raw, &ref) != nil || ref == "" {
				return paramError("key", "key is required: the key to regenerate, or its token")
			}
			delete(fields, "key")
			return regenerate(w, r, ref, retiredKey{}, fields)
		})
	block := func(blocked bool) func(w http.ResponseWriter, r *http.Request) error {
		return func(w http.ResponseWriter, r *http.Request) error {
			var req litellmKeyRef
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
				return err
			}
			if req.Key == "" {
				return paramError("key", "key is required: the key to block or unblock, or its token")
			}
			rec, err := s.litellmKeyOf(r.Context(), owner(r), req.Key)
			if err != nil {
				return err
			}
			body, _ := json.Marshal(map[string]bool{"blocked": blocked})
			vk, err := s.applyKeyUpdate(r.Context(), g, owner(r), rec.ID, body, nil, "", false, retiredKey{ifMatch: ifMatchOf(r)})
			if err != nil {
				return litellmNames(err)
			}
			writeETag(w, vk)
			writeJSON(w, http.StatusOK, litellmInfoOf(*vk, s.organizationsOfTeams(r.Context(), owner(r))))
			return nil
		}
	}
	ifMatchMoved := "If-Match was given and the key was rotated or changed since that version (GET /api/v1/keys/{key_id}'s ETag): nothing was changed"
	blockErrors := map[int]string{400: "key missing or a field besides key", 403: scoped, 404: notFound, 412: ifMatchMoved}
	s.Handle(Route{Method: "POST", Path: "/key/block", Summary: "LiteLLM's key block: the virtual key refuses every request (as over its budget) until unblocked; its limits, budget and spend are kept",
		Tags: tags, Request: litellmKeyRef{}, Response: litellmKeyInfo{}, Headers: []HeaderParam{keyIfMatchHeader}, ResponseHeaders: []HeaderParam{keyETagHeader}, Errors: blockErrors}, block(true))
	s.Handle(Route{Method: "POST", Path: "/key/unblock", Summary: "LiteLLM's key unblock: lifts a block (from /key/block, blocked true or max_budget 0: then the key has no budget)",
		Tags: tags, Request: litellmKeyRef{}, Response: litellmKeyInfo{}, Headers: []HeaderParam{keyIfMatchHeader}, ResponseHeaders: []HeaderParam{keyETagHeader}, Errors: blockErrors}, block(false))
	s.Handle(Route{Method: "GET", Path: "/key/info", Summary: "LiteLLM's key info: a virtual key this key issued, or without key the calling virtual key",
		Tags: tags, Response: litellmKeyInfoAnswer{}, ScopedKeys: true,
		Query:  []QueryParam{{Name: "key", Description: "The key itself or its token; absent: the calling virtual key"}},
		Errors: map[int]string{403: "a virtual key asked about another key, or a job key asked", 404: notFound + ", or the calling key without key is not a virtual key"}},
		func(w http.ResponseWriter, r *http.Request) error {
			ref := r.URL.Query().Get("key")
			id, err := s.litellmInfoScope(r, ref)
			if err != nil {
				return err
			}
			if id == "" {
				rec, err := s.litellmKeyOf(r.Context(), owner(r), ref)
				if err != nil {
					return err
				}
				id = rec.ID
			}
			vk, err := s.keyInfo(r.Context(), owner(r), id)
			if err != nil {
				return err
			}
			if ref == "" {
				ref = vk.ID // the calling key's own: named by its token
			}
			writeJSON(w, http.StatusOK, litellmKeyInfoAnswer{Key: ref, Info: litellmInfoOf(*vk, s.organizationsOfTeams(r.Context(), owner(r)))})
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/key/update", Summary: "LiteLLM's key update: changes the fields given of a virtual key this key issued (as PATCH /api/v1/keys/{key_id})",
		Tags: tags, Request: litellmKeyRequest{}, Response: litellmUpdatedKey{}, Headers: []HeaderParam{keyIfMatchHeader}, ResponseHeaders: []HeaderParam{keyETagHeader},
		Errors: map[int]string{400: "a bad or unsupported field, or a budget field beside budget_id (given or the key's) with another value than the budget's: the message names it", 403: scoped, 404: notFound + ", or budget_id names no budget of this key (param budget_id)", 409: "key_alias is another key's", 412: ifMatchMoved}},
		func(w http.ResponseWriter, r *http.Request) error {
			fields, err := litellmBody(r)
			if err != nil {
				return err
			}
			var ref string
			if raw, ok := fields["key"]; !ok || json.Unmarshal(raw, &ref) != nil || ref == "" {
				return paramError("key", "key: required, a string: the key to change (the key itself or its token)")
			}
			delete(fields, "key")
			rec, err := s.litellmKeyOf(r.Context(), owner(r), ref)
			if err != nil {
				return err
			}
			vk, err := s.litellmUpdateKey(r.Context(), g, owner(r), rec.ID, fields, false, retiredKey{ifMatch: ifMatchOf(r)})
			if err != nil {
				return err
			}
			writeETag(w, vk)
			writeJSON(w, http.StatusOK, litellmUpdatedKey{Key: ref, litellmKeyInfo: litellmInfoOf(*vk, s.organizationsOfTeams(r.Context(), owner(r)))})
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/key/delete", Summary: "LiteLLM's key deletion: revokes virtual keys this key issued, by key or alias (all or none are found)",
		Tags: tags, Request: litellmKeyDeleteRequest{}, Response: litellmKeyDeletion{}, Headers: []HeaderParam{keyDeleteIfMatchHeader},
		Errors: map[int]string{400: "neither keys nor key_aliases given", 403: scoped, 404: notFound, 409: "an alias names several keys (made through /api/v1/keys): delete them by keys",
			412: "If-Match was given and a key named is not at any version it lists: no key was deleted"}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req litellmKeyDeleteRequest
			if err := decodeJSON(r, &req, decodeOptions{}); err != nil {
				return err
			}
			if len(req.Keys)+len(req.KeyAliases) == 0 {
				return paramError("keys", "keys: give the keys to delete in keys or their aliases in key_aliases")
			}
			if n := len(req.Keys) + len(req.KeyAliases); n > MaxVirtualKeysPerOwner {
				return paramError("keys", "keys: at most %d keys and aliases at once, got %d", MaxVirtualKeysPerOwner, n)
			}
			ctx, who := r.Context(), owner(r)
			var ids []string
			for _, ref := range req.Keys {
				rec, err := s.litellmKeyOf(ctx, who, ref)
				if err != nil {
					return err
				}
				ids = append(ids, rec.ID)
			}
			if len(req.KeyAliases) > 0 {
				keys, err := s.listKeys(ctx, who)
				if err != nil {
					return err
				}
				for _, alias := range req.KeyAliases {
					var named []string
					for _, k := range keys {
						if k.Name == alias && alias != "" {
							named = append(named, k.ID)
						}
					}
					switch {
					case len(named) == 0:
						return NotFound("no virtual key issued by this key has the alias %q", alias)
					case len(named) > 1: // only keys named through /api/v1/keys share one
						e := Errorf(http.StatusConflict, KindConflict, "key_aliases: %q is the alias of %d keys (%s): delete them by keys", alias, len(named), strings.Join(named, ", "))
						e.Param = "key_aliases"
						return e
					}
					ids = append(ids, named[0])
				}
			}
			slices.Sort(ids)
			if err := s.revokeKeys(ctx, who, slices.Compact(ids), ifMatchOf(r)); err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, litellmKeyDeletion{DeletedKeys: append(slices.Clone(req.Keys), req.KeyAliases...)})
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/key/list", Summary: "LiteLLM's key list: the virtual keys this key issued, newest first, a page at a time",
		Tags: tags, Response: litellmKeyList{}, Query: []QueryParam{
			{Name: "page", Description: "Page number from 1 (default 1)", Type: "integer", Minimum: Bound(1), Maximum: Bound(1 << 30)},
			{Name: "size", Description: "Keys per page, 1 to 100 (default 10)", Type: "integer", Minimum: Bound(1), Maximum: Bound(100)},
			{Name: "return_full_object", Description: "true: info objects in place of tokens", Type: "boolean"},
			{Name: "key_alias", Description: "Only the keys with this alias"},
			{Name: "user_id", Description: "Only the keys whose metadata.user_id is this"},
			{Name: "key_hash", Description: "Only the key this names: its token, the key itself or its SHA-256 hex"},
			{Name: "sort_by", Description: "created_at (the only order kept)", Enum: []string{"created_at"}},
			{Name: "sort_order", Description: "desc (default: newest first) or asc", Enum: []string{"asc", "desc"}},
			{Name: "team_id", Description: "Only the keys of this team"},
			{Name: "organization_id", Description: "Only the keys of this organization (/organization/new): its own (/key/generate organization_id) and those of its teams"},
			{Name: "include_team_keys", Description: "Accepted and without effect (every key of the caller's teams is the caller's)", Type: "boolean"},
			{Name: "include_created_by_keys", Description: "Accepted and without effect (every key listed was created by the caller)", Type: "boolean"},
		}, Errors: map[int]string{400: "a bad parameter or an unknown one: the message names it", 403: scoped}},
		func(w http.ResponseWriter, r *http.Request) error {
			q := r.URL.Query()
			page, err := litellmQueryInt(q.Get("page"), "page", 1, 1, 1<<30)
			if err != nil {
				return err
			}
			size, err := litellmQueryInt(q.Get("size"), "size", 10, 1, 100)
			if err != nil {
				return err
			}
			if err := litellmListParams(q); err != nil {
				return err
			}
			full, err := litellmQueryBool(q.Get("return_full_object"), "return_full_object")
			if err != nil {
				return err
			}
			for _, name := range []string{"include_team_keys", "include_created_by_keys"} {
				if _, err := litellmQueryBool(q.Get(name), name); err != nil {
					return err
				}
			}
			if v := q.Get("sort_by"); v != "" && v != "created_at" {
				return paramError("sort_by", "sort_by: keys are listed by created_at only, got %q", v)
			}
			asc := false
			switch v := strings.ToLower(q.Get("sort_order")); v {
			case "", "desc":
			case "asc":
				asc = true
			default:
				return paramError("sort_order", "sort_order: asc or desc, got %q", q.Get("sort_order"))
			}
			keys, err := s.listKeys(r.Context(), owner(r))
			if err != nil {
				return err
			}
			only := ""
			if ref := q.Get("key_hash"); ref != "" {
				only = "-" // matches no key: ref names none of the caller's
				if rec, err := s.litellmKeyOf(r.Context(), owner(r), ref); err == nil {
					only = rec.ID
				}
			}
			alias, user, teamID, org := q.Get("key_alias"), q.Get("user_id"), q.Get("team_id"), q.Get("organization_id")
			var orgTeams []string // the teams of organization_id (nil: no filter)
			if org != "" {
				ts, err := organizationTeams(r.Context(), s.cfg.Store, owner(r), org)
				if err != nil {
					return err
				}
				orgTeams = []string{}
				for _, t := range ts {
					orgTeams = append(orgTeams, t.TeamID)
				}
			}
			keys = slices.DeleteFunc(keys, func(k virtualKey) bool {
				return (alias != "" && k.Name != alias) || (user != "" && k.Metadata["user_id"] != user) || (only != "" && k.ID != only) || (teamID != "" && k.TeamID != teamID) ||
					(orgTeams != nil && k.OrganizationID != org && (k.TeamID == "" || !slices.Contains(orgTeams, k.TeamID)))
			})
			if asc {
				slices.Reverse(keys)
			}
			out := litellmKeyList{Keys: []any{}, TotalCount: len(keys), CurrentPage: page, TotalPages: (len(keys) + size - 1) / size}
			var teamOrgs map[string]string
			if full {
				teamOrgs = s.organizationsOfTeams(r.Context(), owner(r))
			}
			for i := (page - 1) * size; i < len(keys) && i < page*size; i++ {
				if full {
					out.Keys = append(out.Keys, litellmInfoOf(keys[i], teamOrgs))
				} else {
					out.Keys = append(out.Keys, keys[i].ID)
				}
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
}

// litellmUpdateKey changes the LiteLLM key fields given of the virtual key id of who, as
// /key/update does (litellmToNative's translation, decided against the stored key inside
// the update's transaction), and answers the key as it now is; with rotate the key is given
// a new key in the same transaction, cond checked in it (applyKeyUpdate's rotate and cond).
func (s *Server) litellmUpdateKey(ctx context.Context, g *completions.Gateway, who, id string, fields map[string]json.RawMessage, rotate bool, cond retiredKey) (*virtualKey, error) {
	native, err := litellmToNative(fields, true, time.Now().UTC())
	if err != nil {
		return nil, err
	}
	userID := native.UserID
	_, userGiven := fields["user_id"]
	_, metadataGiven := fields["metadata"]
	// Both decided against the stored key, inside the update's transaction.
	adjust := func(req *keyRequest, prev virtualKey) {
		if metadataGiven && !userGiven {
			// New labels without user_id: the key stays its user's, drawing on the user's
			// account.
			req.Metadata = keepKeyUser(req.Metadata, keyUserID(prev))
		}
		switch {
		case native.BudgetBlock:
			req.budgetBlock = true
		case native.LiftBudgetBlock && prev.Blocked && prev.BudgetBlock:
			req.Blocked, req.budgetBlock = false, false // the budget of nothing, replaced
		}
		if userID != nil { // a label among the others
			req.Metadata, _, _ = withKeyUser(req.Metadata, *userID, false)
		}
		if native.Tags != nil {
			req.Metadata = withKeyTags(req.Metadata, *native.Tags)
		}
	}
	vk, err := s.applyKeyUpdate(ctx, g, who, id, native.Body, adjust, "key_alias", rotate, cond)
	if err != nil {
		return nil, litellmNames(err)
	}
	return vk, nil
}

// litellmBody reads a LiteLLM key request body as its fields.
func litellmBody(r *http.Request) (map[string]json.RawMessage, error) { return litellmBodyOf(r, false) }

// litellmBodyOf is litellmBody; emptyIsObject takes an empty body as {} (regenerate's body
// is optional).
func litellmBodyOf(r *http.Request, emptyIsObject bool) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := decodeJSON(r, &fields, decodeOptions{AllowUnknownFields: true, EmptyIsObject: emptyIsObject, ValidationStatus: http.StatusBadRequest}); err != nil {
		return nil, err
	}
	if fields == nil {
		return nil, paramError("", "the body must be a JSON object")
	}
	return fields, nil
}

// litellmToNative turns LiteLLM's key fields into a body of keyRequest's. A null field is
// "not given" on generate; on update (where LiteLLM stores what is sent) it removes the
// limit or label (max_budget, tpm_limit, rpm_limit, budget_duration, key_alias, metadata,
// user_id), except duration (null: the expiry is kept) and models (null is refused: []
// allows every model). duration becomes expires_at from now, user_id the metadata label
// user_id (returned apart, "" to remove it, on an update that does not send metadata), and
// fields with no equivalent are refused unless empty.
//
// A key is blocked by max_budget 0 (a budget of nothing: the key remembers it as its
// budget_block) or blocked true (LiteLLM's flag, also set by /key/block); both are the one
// blocked state of the virtual key. On update another max_budget lifts only a budget
// block: a key blocked through /key/block or blocked true stays blocked whatever its
// budget becomes, until unblocked. The lift is returned apart (liftBudgetBlock), to be
// decided against the stored key inside the update's transaction.
func litellmToNative(fields map[string]json.RawMessage, update bool, now time.Time) (litellmNative, error) {
	var out litellmNative
	if raw, ok := fields["tags"]; ok {
		// LiteLLM keeps a key's tags in its metadata: set there against the stored key
		// (litellmNative.Tags), not sent as a field of its own.
		fields = maps.Clone(fields)
		delete(fields, "tags")
		var tags []string
		switch {
		case isJSONNull(raw) && !update:
		case isJSONNull(raw):
			out.Tags = &tags // removed
		case json.Unmarshal(raw, &tags) != nil:
			return out, paramError("tags", "tags: must be a list of tags (strings), got %s", raw)
		default:
			out.Tags = &tags
		}
	}
	body, userID, lift, zero, err := litellmFields(fields, update, now)
	out.Body, out.UserID, out.LiftBudgetBlock, out.BudgetBlock = body, userID, lift, zero
	return out, err
}

// litellmNative is a LiteLLM key request translated (litellmToNative).
type litellmNative struct {
	Body   json.RawMessage // keyRequest's fields
	UserID *string         // the metadata label user_id to set inside the update ("": remove)
	Tags   *[]string       // the metadata label tags to set (the key's tags; empty: remove), nil: unchanged
	// LiftBudgetBlock: a new max_budget lifts a block that is a budget of nothing.
	LiftBudgetBlock bool
	// BudgetBlock: max_budget 0 blocks the key as a budget of nothing.
	BudgetBlock bool
}

// litellmFields is litellmToNative's translation.
func litellmFields(fields map[string]json.RawMessage, update bool, now time.Time) (body json.RawMessage, userID *string, liftBudgetBlock, zeroBudget bool, err error) {
	native := map[string]json.RawMessage{}
	var metadata map[string]any
	var blocked *bool
	metadataNull := false
	var budgetID string
	_ = json.Unmarshal(fields["budget_id"], &budgetID)
	for name, raw := range fields {
		isNull := bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
		if name == "duration" || name == "budget_duration" {
			// LiteLLM's UI and parser read "", "None" and "null" as no duration: as null.
			var v string
			if json.Unmarshal(raw, &v) == nil && (v == "" || strings.EqualFold(v, "none") || strings.EqualFold(v, "null")) {
				raw, isNull = json.RawMessage("null"), true
			}
		}
		if isNull && slices.Contains(litellmBudgetIDFields, name) {
			// Beside a budget_id (given, or the key's on an update) a null budget field asks
			// for nothing: on an update it goes as the native null, which the budget check
			// passes over and which removes the limit of a key left without a budget.
			if update && budgetID == "" {
				native[litellmKeyNativeName(name)] = json.RawMessage(`null`)
				liftBudgetBlock = liftBudgetBlock || name == "max_budget"
			}
			continue
		}
		var number float64
		isZero := !isNull && json.Unmarshal(raw, &number) == nil && number == 0
		switch {
		case name == "max_budget":
			// LiteLLM's max_budget 0 is a budget of nothing that refuses every request (its
			// auth check is spend >= max_budget), where max_budget_usd 0 is no bound: it is
			// the key's blocked state. Any other value, or null, lifts it.
			switch {
			case isZero:
				native["max_budget_usd"], native["blocked"] = json.RawMessage(`0`), json.RawMessage(`true`)
				zeroBudget = true
			case !isNull:
				native["max_budget_usd"], liftBudgetBlock = raw, update
			case update:
				native["max_budget_usd"], liftBudgetBlock = json.RawMessage(`0`), true
			}
		case name == "blocked":
			if isNull {
				continue
			}
			var v bool
			if json.Unmarshal(raw, &v) != nil {
				return nil, nil, false, false, paramError(name, "blocked: must be true or false, got %s", raw)
			}
			blocked = &v
		case isZero && (name == "rpm_limit" || name == "tpm_limit" || name == "max_parallel_requests"):
			// On LiteLLM a limit of 0 refuses every request; here 0 would mean no bound (or the
			// server's), so it is refused rather than read as the opposite.
			return nil, nil, false, false, paramError(name, "%s: 0 blocks every request on LiteLLM, which Switchyard's limit cannot express: to block the key send max_budget 0; null for no bound", name)
		case name == "metadata":
			if isNull {
				metadataNull = update
				continue
			}
			if json.Unmarshal(raw, &metadata) != nil || metadata == nil {
				return nil, nil, false, false, paramError(name, "metadata: must be a JSON object")
			}
		case name == "models" && isNull && update:
			return nil, nil, false, false, paramError(name, "models: must be a list of models ([] allows every model), got null")
		case name == "model_max_budget" && !isNull:
			if native[name], err = litellmModelMaxBudget(raw); err != nil {
				return nil, nil, false, false, err
			}
		case (name == "model_rpm_limit" || name == "model_tpm_limit") && !isNull:
			if native[name], err = litellmModelRates(name, raw); err != nil {
				return nil, nil, false, false, err
			}
		case name == "model_max_budget" || name == "model_rpm_limit" || name == "model_tpm_limit":
			if update { // null removes them
				native[name] = json.RawMessage(`null`)
			}
		case name == "models" && litellmAllModels(raw):
			native["models"] = json.RawMessage(`[]`)
		case litellmFieldNames[name] != "":
			switch {
			case !isNull:
				native[litellmFieldNames[name]] = raw
			case update && (name == "key_alias" || name == "budget_duration" || name == "team_id" || name == "budget_id" || name == "organization_id"):
				native[litellmFieldNames[name]] = json.RawMessage(`""`)
			case update && name == "guardrails":
				native[litellmFieldNames[name]] = json.RawMessage(`[]`)
			case update && (name == "aliases" || name == "router_settings"):
				native[litellmFieldNames[name]] = json.RawMessage(`null`) // removed
			case update:
				native[litellmFieldNames[name]] = json.RawMessage(`0`)
			}
		case name == "duration":
			if isNull {
				continue
			}
			var v string
			if json.Unmarshal(raw, &v) != nil {
				return nil, nil, false, false, paramError(name, "duration: must be a string such as 30s, 30m, 30h, 30d, 2w or 1mo, got %s", raw)
			}
			d, err := parseBudgetDuration(v)
			if err == nil && (d < time.Second || d > 3660*24*time.Hour) {
				err = errors.New("must be between 1s and 3660d")
			}
			if err != nil {
				return nil, nil, false, false, paramError(name, "duration: %s, got %q", err, v)
			}
			native["expires_at"], _ = json.Marshal(now.Add(d))
		case name == "user_id":
			if isNull {
				if update {
					userID = new(string) // "": removed
				}
				continue
			}
			var v string
			if json.Unmarshal(raw, &v) != nil {
				return nil, nil, false, false, paramError(name, "user_id: must be a string, got %s", raw)
			}
			userID = &v
		case name == "object_permission":
			if isNull {
				if update {
					native["mcp_servers"] = json.RawMessage(`[]`)
				}
				continue
			}
			var perm map[string]json.RawMessage
			if json.Unmarshal(raw, &perm) != nil || perm == nil {
				return nil, nil, false, false, paramError(name, "object_permission: must be a JSON object such as {\"mcp_servers\": [\"github\"]}, got %s", raw)
			}
			for k, v := range perm {
				switch {
				case k == "mcp_servers" && emptyJSON(v):
					// null, [] or LiteLLM's clients' default [null]: every server.
					native["mcp_servers"] = json.RawMessage(`[]`)
				case k == "mcp_servers":
					native["mcp_servers"] = v
				case k == "object_permission_id" || emptyJSON(v):
					// LiteLLM's record id, or a permission asking for nothing.
				default:
					return nil, nil, false, false, paramError(name, "object_permission.%s: Switchyard's keys have mcp_servers only (no MCP access groups, per-tool permissions, vector stores or agents)", k)
				}
			}
		case name == "key_type":
			var v string
			if !isNull && (json.Unmarshal(raw, &v) != nil || (v != "" && v != "default" && v != "llm_api")) {
				return nil, nil, false, false, paramError(name, "key_type: a virtual key here can call the gateway only (llm_api or default), got %s", raw)
			}
		case name == "spend" && update:
			return nil, nil, false, false, paramError(name, "spend: %s (nor reset)", litellmRefused[name])
		case litellmRefused[name] != "":
			if !emptyJSON(raw) {
				return nil, nil, false, false, paramError(name, "%s: %s", name, litellmRefused[name])
			}
		case emptyJSON(raw):
			// A field newer than this translation (auto_rotate, rotation_interval, …) sent at
			// its default, as LiteLLM's UI and SDK do: it asks for nothing.
		default:
			return nil, nil, false, false, paramError(name, "unknown field %q (one is ignored only when its value is empty: null, false, 0, \"\", [] or {})", name)
		}
	}
	if userID != nil && (metadata != nil || !update) {
		md, prev, ok := withKeyUser(metadata, *userID, true)
		if !ok {
			return nil, nil, false, false, paramError("user_id", "user_id: %q differs from metadata.user_id %v (user_id is kept as metadata.user_id)", *userID, prev)
		}
		metadata, userID = md, nil
	}
	switch {
	case metadata != nil:
		native["metadata"], _ = json.Marshal(metadata)
	case metadataNull && userID != nil && *userID != "":
		native["metadata"], _ = json.Marshal(map[string]any{"user_id": *userID})
		userID = nil
	case metadataNull:
		native["metadata"] = json.RawMessage(`null`)
	}
	if blocked != nil {
		if !*blocked && zeroBudget {
			return nil, nil, false, false, paramError("blocked", "blocked: false contradicts max_budget 0 (a budget of nothing blocks the key)")
		}
		native["blocked"], _ = json.Marshal(*blocked)
		liftBudgetBlock = false // said outright
	}
	body, err = json.Marshal(native)
	return body, userID, liftBudgetBlock, zeroBudget, err
}

// emptyJSON reports a JSON value that asks for nothing: null, "", 0, false, and an object or
// list whose members all ask for nothing ({"vector_stores": []}). Inside an object or list
// a 0 is not empty: it is a bound (model_rpm_limit {"gpt-4o": 0} blocks a model).
func emptyJSON(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	if f, ok := v.(float64); ok {
		return f == 0
	}
	return emptyValue(v)
}

// emptyValue is emptyJSON below the top level.
func emptyValue(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, m := range v {
			if !emptyValue(m) {
				return false
			}
		}
		return true
	case []any:
		for _, m := range v {
			if !emptyValue(m) {
				return false
			}
		}
		return true
	case string:
		return v == ""
	case bool:
		return !v
	}
	return false
}

// litellmNames rewrites a failure of the shared key checks to name LiteLLM's fields
// (max_budget for max_budget_usd, …); other errors pass unchanged.
func litellmNames(err error) error {
	// A 403 too: checkKeyTeamRates' names tokens_per_minute or requests_per_minute.
	return litellmRenamedOf(err, litellmNativeNames, http.StatusUnprocessableEntity, http.StatusForbidden)
}

// litellmName is a native request's field name and LiteLLM's.
type litellmName struct{ native, litellm string }

// litellmRenamed rewrites a 422 of the native checks to name LiteLLM's fields, trying
// names in order; other errors pass unchanged.
func litellmRenamed(err error, names []litellmName) error {
	return litellmRenamedOf(err, names, http.StatusUnprocessableEntity)
}

// litellmRenamedOf is litellmRenamed for the errors of the statuses given.
func litellmRenamedOf(err error, names []litellmName, statuses ...int) error {
	var ae *APIError
	if !errors.As(err, &ae) || !slices.Contains(statuses, ae.Status) {
		return err
	}
	out := *ae
	for _, n := range names {
		// The field a message is about leads it ("models[0]: …"), or follows decodeExact's
		// `field "…"` / `unknown field "…"`; the rest is the caller's values, left as they are.
		for _, lead := range []string{"", `field "`, `unknown field "`} {
			rest, ok := strings.CutPrefix(out.Message, lead+n.native)
			if !ok {
				continue
			}
			ends := ":["
			if lead != "" {
				ends = `"[/.`
			}
			if rest != "" && strings.ContainsRune(ends, rune(rest[0])) {
				out.Message, out.Param = lead+n.litellm+rest, n.litellm
				return &out
			}
		}
	}
	return &out
}

// litellmNativeNames are keyRequest's field names and LiteLLM's, in the order litellmNames
// tries them.
var litellmNativeNames = []litellmName{
	{"max_budget_usd", "max_budget"}, {"name", "key_alias"}, {"tokens_per_minute", "tpm_limit"},
	{"requests_per_minute", "rpm_limit"}, {"expires_at", "duration"}, {"budget_duration", "budget_duration"},
	{"models", "models"}, {"metadata", "metadata"}, {"team_id", "team_id"}, {"soft_budget_usd", "soft_budget"},
	{"mcp_servers", "object_permission.mcp_servers"}, {"budget_id", "budget_id"},
	{"model_max_budget", "model_max_budget"}, {"model_rpm_limit", "model_rpm_limit"}, {"model_tpm_limit", "model_tpm_limit"},
	{"max_parallel_requests", "max_parallel_requests"}, {"aliases", "aliases"}, {"router_settings", "router_settings"},
}

// litellmKeyOf reads owner's virtual key that ref names: its token (vk_…), the key itself,
// or the key's SHA-256 hash in hex (LiteLLM's hashed token); anything else is a 404.
func (s *Server) litellmKeyOf(ctx context.Context, owner, ref string) (storedVirtualKey, error) {
	id, hash := s.litellmKeyID(ctx, ref)
	rec, err := storedKeyOf(ctx, s.cfg.Store, owner, id)
	if err != nil || (hash != "" && rec.Hash != hash) {
		return storedVirtualKey{}, NotFound("no virtual key %q issued by this key", ref)
	}
	return rec, nil
}

// keyRefHash is the SHA-256 hash a key reference names: ref itself when it is a hash in hex
// (LiteLLM's hashed token, either case), else the hash of ref (the key).
func keyRefHash(ref string) [sha256.Size]byte {
	if b, err := hex.DecodeString(ref); err == nil && len(b) == sha256.Size {
		return [sha256.Size]byte(b)
	}
	return sha256.Sum256([]byte(ref))
}

// litellmKeyID is the id ref names and, unless ref is an id, the hash its record must have.
// A key (or its hash) is looked up in its shared-key record, which names its id: a key's
// id is not its hash's once the key was rotated.
func (s *Server) litellmKeyID(ctx context.Context, ref string) (id, hash string) {
	if strings.HasPrefix(ref, "vk_") {
		return ref, ""
	}
	h := keyRefHash(ref)
	hash = hex.EncodeToString(h[:])
	rec, err := store.GetJSON[storedScopedKey](ctx, s.cfg.Store, store.ScopedKeys, hash)
	var doc keyScopeDoc
	if err == nil && json.Unmarshal(rec.Scope, &doc) == nil && doc.KeyID != "" {
		return doc.KeyID, hash
	}
	// No shared-key record: an expired key's goes at its first use after expiry (an update
	// brings it back). The id a key was issued with is its hash's; the caller checks the
	// record's hash, so a value rotated away still finds nothing.
	return "vk_" + hash[:16], hash
}

// litellmInfoScope applies /api/v1/keys' rules to GET /key/info: a virtual key sees only
// itself (its id is returned), a job key nothing, and another key only with ?key= ("" is
// returned: the key is looked up among its own).
func (s *Server) litellmInfoScope(r *http.Request, ref string) (string, error) {
	p, _ := PrincipalFrom(r.Context())
	vk, virtual := p.Scope.(virtualKeyScope)
	switch {
	case virtual:
		if ref == "" {
			return vk.KeyID, nil
		}
		if id, _ := s.litellmKeyID(r.Context(), ref); id != vk.KeyID {
			return "", Errorf(http.StatusForbidden, KindForbidden, "a virtual key may see only its own info: call /key/info without key, or with its own")
		}
		return "", nil // checked again against the record's hash
	case p.Scope != nil:
		return "", Errorf(http.StatusForbidden, KindForbidden, "this key is limited in scope and may not call GET /key/info")
	case ref == "":
		return "", NotFound("the calling key is not a virtual key: give ?key= (the key or its token) to see one it issued")
	}
	return "", nil
}

// organizationsOfTeams is teamOrganizations of owner's teams for litellmInfoOf: on a store
// error (logged) the keys of teams show no organization rather than failing the answer.
func (s *Server) organizationsOfTeams(ctx context.Context, owner string) map[string]string {
	m, err := teamOrganizations(ctx, s.cfg.Store, owner)
	if err != nil {
		s.log.WarnContext(ctx, "reading the organizations of teams", "err", err)
	}
	return m
}

// litellmInfoOf describes vk in LiteLLM's fields; teamOrgs (teamOrganizations) names the
// organization of a key of a team, which is its team's: the one it spends through.
func litellmInfoOf(vk virtualKey, teamOrgs map[string]string) litellmKeyInfo {
	info := litellmKeyInfo{Token: vk.ID, Spend: vk.Spend.CostUSD, Models: vk.Models, Expires: vk.ExpiresAt, Metadata: vk.Metadata, Guardrails: vk.Guardrails,
		CreatedAt: vk.CreatedAt, MaxTokens: vk.MaxTokens, MaxRequests: vk.MaxRequests, Expired: vk.Expired,
		ObjectPermission: litellmObjectPermission{MCPServers: vk.MCPServers}}
	if info.ObjectPermission.MCPServers == nil {
		info.ObjectPermission.MCPServers = []string{}
	}
	if info.Models == nil {
		info.Models = []string{}
	}
	if info.Metadata == nil {
		info.Metadata = map[string]any{}
	}
	info.Aliases = vk.Aliases
	if info.Aliases == nil {
		info.Aliases = map[string]string{}
	}
	info.RouterSettings = vk.RouterSettings
	if info.RouterSettings == nil {
		info.RouterSettings = &routerSettings{}
	}
	if vk.MaxParallelRequests > 0 {
		info.MaxParallelRequests = &vk.MaxParallelRequests
	}
	if vk.Name != "" {
		info.KeyAlias = &vk.Name
	}
	if vk.keyName != "" {
		info.KeyName = &vk.keyName
	}
	info.Blocked = vk.Blocked
	if vk.Blocked && vk.BudgetBlock {
		info.MaxBudget = new(float64) // a budget of nothing: LiteLLM's max_budget 0
	} else if vk.MaxBudgetUSD > 0 {
		info.MaxBudget = &vk.MaxBudgetUSD
	}
	if vk.SoftBudgetUSD > 0 {
		info.SoftBudget = &vk.SoftBudgetUSD
	}
	if vk.TokensPerMinute > 0 {
		info.TPMLimit = &vk.TokensPerMinute
	}
	if vk.RequestsPerMinute > 0 {
		info.RPMLimit = &vk.RequestsPerMinute
	}
	if vk.BudgetDuration != "" {
		info.BudgetDuration = &vk.BudgetDuration
		if d, err := parseBudgetDuration(vk.BudgetDuration); err == nil && vk.Spend.PeriodStart != nil {
			reset := vk.Spend.PeriodStart.Add(d)
			info.BudgetResetAt = &reset
		}
	}
	if u, ok := vk.Metadata["user_id"].(string); ok {
		info.UserID = &u
	}
	if vk.TeamID != "" {
		info.TeamID = &vk.TeamID
	}
	if org := cmp.Or(vk.OrganizationID, teamOrgs[vk.TeamID]); org != "" {
		info.OrganizationID = &org
	}
	if vk.BudgetID != "" {
		info.BudgetID = &vk.BudgetID
	}
	litellmModelLimitsInfo(&info, vk)
	return info
}

// abbreviateKey is key as LiteLLM shows a key's name: its prefix and last four characters.
func abbreviateKey(key string) string {
	if len(key) < 12 {
		return "…"
	}
	return key[:6] + "…" + key[len(key)-4:]
}

// litellmListParams refuses a /key/list query parameter it does not know (with a value: an
// empty one filters nothing), naming it, rather than ignoring a filter and listing every key.
func litellmListParams(q url.Values) error {
	var unknown []string
	for name, vs := range q {
		switch name {
		case "page", "size", "return_full_object", "key_alias", "user_id", "key_hash", "team_id", "organization_id",
			"sort_by", "sort_order", "include_team_keys", "include_created_by_keys":
			continue
		}
		if slices.ContainsFunc(vs, func(v string) bool { return v != "" }) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return paramError(unknown[0], "unknown query parameter %s: /key/list filters by key_alias, user_id, key_hash and team_id only", strings.Join(unknown, ", "))
}

// litellmQueryBool reads a boolean query parameter as FastAPI does (true/false, 1/0, yes/no,
// on/off, any case); absent is false.
func litellmQueryBool(v, name string) (bool, error) {
	switch strings.ToLower(v) {
	case "", "false", "0", "no", "off", "f", "n":
		return false, nil
	case "true", "1", "yes", "on", "t", "y":
		return true, nil
	}
	return false, paramError(name, "%s: must be true or false, got %q", name, v)
}

// litellmQueryInt reads query parameter name, def when absent, within [min, max].
func litellmQueryInt(v, name string, def, min, max int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		return 0, paramError(name, "%s: must be a whole number from %d to %d, got %q", name, min, max, v)
	}
	return n, nil
}

// litellmAllModels reports whether raw, a models list of LiteLLM's key, team, user or
// organization requests, names one of LiteLLM's special models: "all-team-models" (a
// key may call every model of its team; its admin UI's "All Team Models") or
// "all-proxy-models" (every model the proxy serves; "All Proxy Models"). Both are
// Switchyard's empty list: every model, within the team's, user's and organization's.
func litellmAllModels(raw json.RawMessage) bool {
	var models []string
	if json.Unmarshal(raw, &models) != nil {
		return false
	}
	return slices.Contains(models, "all-team-models") || slices.Contains(models, "all-proxy-models")
}
