package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// Virtual keys are API keys an operator issues to an application or a person from a key of
// their own (LiteLLM's and Bifrost's virtual keys): each may be limited to some models, to
// a USD budget (for all time or per period), to tokens and requests, to a request rate and
// to a lifetime, and its spend is metered. A virtual key acts for the key that issued it
// (the same conversations, routers and usage history), on the gateway's surfaces and model
// selection only: it cannot train routers, run optimization jobs or issue keys.
//
// Records: the key's description in store.VirtualKeys under "<owner>/<id>", its
// hash in store.ScopedKeys (the shared-key path of every replica resolves it, so a
// revocation on one replica holds on all of them at once) and its account in store.Budgets
// under "key/<id>". The three are written and deleted together.

// Bounds of a virtual key's request.
const (
	// MaxVirtualKeysPerOwner bounds the virtual keys one key may have issued.
	MaxVirtualKeysPerOwner = 1000
	// maxKeyNameLength bounds a virtual key's name.
	maxKeyNameLength = 256
	// maxKeyModels bounds a virtual key's model list.
	maxKeyModels = 100
	// maxKeyGuardrails bounds a virtual key's guardrails.
	maxKeyGuardrails = 16
	// maxKeyMCPServers bounds a virtual key's MCP server list.
	maxKeyMCPServers = 100
	// maxKeyMetadataBytes bounds a virtual key's metadata, as JSON.
	maxKeyMetadataBytes = 16 << 10
)

// keyRequest is the body of POST /api/v1/keys.
type keyRequest struct {
	Name              string   `json:"name,omitempty" jsonschema:"description=A label for the key (at most 256 characters)"`
	Models            []string `json:"models,omitempty" jsonschema:"description=The models the key may call: provider/model names or bare names or model groups (at most 100); empty allows every model"`
	MaxBudgetUSD      float64  `json:"max_budget_usd,omitempty" jsonschema:"description=USD the key may spend (per budget_duration when set); 0 for no bound"`
	SoftBudgetUSD     float64  `json:"soft_budget_usd,omitempty" jsonschema:"description=USD mark that never blocks: crossing it sends a budget alert to the server's --alert-webhook once per budget_duration (LiteLLM's soft_budget); 0 for none"`
	BudgetDuration    string   `json:"budget_duration,omitempty" jsonschema:"description=Period after which the key's spend starts again from zero: a number and s or m or h or d or w (weeks) or mo (months of 30 days): 30d or 1mo for monthly; empty for all time"`
	MaxTokens         int64    `json:"max_tokens,omitempty" jsonschema:"description=Prompt and completion tokens the key may use (per budget_duration when set); 0 for no bound"`
	MaxRequests       int64    `json:"max_requests,omitempty" jsonschema:"description=Completion and embedding requests the key may make (per budget_duration when set); 0 for no bound"`
	RequestsPerMinute int      `json:"requests_per_minute,omitempty" jsonschema:"description=POST requests per minute the key may make (across replicas on PostgreSQL give or take --limits-sync-interval); 0 for the server's per-key bound"`
	TokensPerMinute   int64    `json:"tokens_per_minute,omitempty" jsonschema:"description=Tokens the key's answers may use per minute (across replicas on PostgreSQL give or take --limits-sync-interval; a request after the minute's tokens are used is a 429 with Retry-After); 0 for no bound"`
	// MaxParallelRequests bounds the key's requests in flight at once (LiteLLM's
	// max_parallel_requests).
	MaxParallelRequests int `json:"max_parallel_requests,omitempty" jsonschema:"description=Requests of the key in flight at once (LiteLLM's max_parallel_requests): every POST of the gateway counts from its arrival until its answer ends (a stream until its last event) and a /v1/realtime WebSocket session for its whole life; one more is a 429 naming max_parallel_requests (across replicas on PostgreSQL give or take --limits-sync-interval); 0 for no bound (at most 100000)"`
	// Aliases are the key's own model names (LiteLLM's key aliases).
	Aliases    map[string]string `json:"aliases,omitempty" jsonschema:"description=Model names of the key's own (LiteLLM's key aliases): {my-model: gpt-4o} sends a request of the key naming my-model (its model or an entry of models or fallback_models) to gpt-4o\\, which the key's models must allow; at most 100 names\\, each target a model or model group this server routes to; on PATCH the map replaces the key's\\, {} or null removes them"`
	ExpiresAt  *time.Time        `json:"expires_at,omitempty" jsonschema:"description=When the key stops working (RFC 3339 and in the future); absent for never"`
	Metadata   map[string]any    `json:"metadata,omitempty" jsonschema:"description=Labels kept with the key and shown with it (a JSON object of at most 16 KiB); the server reads two: user_id (see user_id) and tags\\, the key's tags (LiteLLM's key-level tags: a list of at most 16 request tags every request of the key carries\\, for tag routing\\, tag budgets and spend per tag)"`
	Blocked    bool              `json:"blocked,omitempty" jsonschema:"description=true: the key refuses every request as over its budget (a budget of nothing: LiteLLM's max_budget 0) until set false; its records and spend are kept"`
	Guardrails []string          `json:"guardrails,omitempty" jsonschema:"description=Guardrails (configured on the server by --guardrails) every chat request of the key runs besides the default_on ones and those the request names; a request cannot turn them off (at most 16)"`
	TeamID     string            `json:"team_id,omitempty" jsonschema:"description=A team of this key (POST /api/v1/teams) the key belongs to: its requests also draw on the team's budget and keep to its models and rates; empty for none (\"\" or null on PATCH takes the key out of its team); a key with a user_id moved into a team on PATCH must be of a member of it\\, and its tokens_per_minute and requests_per_minute at most the team's (403 otherwise)"`
	MCPServers []string          `json:"mcp_servers,omitempty" jsonschema:"description=The MCP servers (configured on the server by --mcp-servers) the key may use through /mcp and /mcp-rest; empty allows every one (at most 100)"`
	// OrganizationID puts a key without a team in an organization (LiteLLM's key
	// organization_id); a key of a team is in the team's organization.
	OrganizationID string `json:"organization_id,omitempty" jsonschema:"description=An organization of this key (POST /organization/new) a key without a team belongs to: its requests also draw on the organization's budget (and on its user's membership of the organization) and keep to its models and rates; beside team_id it must be the team's organization; empty for none (on PATCH \"\" or null takes the key out of it\\, a key whose team_id is set to \"\" or null stays in its team's organization unless organization_id is given too\\, and a key put into another team takes that team's)"`
	// UserID links the key to a user of the calling key; it is kept as metadata.user_id.
	UserID string `json:"user_id,omitempty" jsonschema:"description=A user of this key (POST /api/v1/users) the key is made for: its requests also draw on the user's budget (and on the user's membership of the key's team) and the user lists it; kept as metadata.user_id (LiteLLM's key user_id): given beside metadata the two must agree; on PATCH \"\" or null takes the key from its user and a metadata without user_id keeps it"`
	// BudgetID names a LiteLLM budget (POST /budget/new) whose max_budget, soft_budget,
	// budget_duration, tpm_limit and max_parallel_requests become the key's, now and on
	// every /budget/update.
	BudgetID string `json:"budget_id,omitempty" jsonschema:"description=A budget of this key (POST /budget/new) whose max_budget and soft_budget and budget_duration and tpm_limit and max_parallel_requests become the key's max_budget_usd and soft_budget_usd and budget_duration and tokens_per_minute and max_parallel_requests: now and whenever the budget changes; those fields given with it must have the budget's values (null asks for nothing); \"\" on PATCH leaves the budget and keeps its values as the key's own"`

	// Tags are the key's tags, kept as metadata.tags (where LiteLLM's key-level tags are).
	Tags []string `json:"tags,omitempty" jsonschema:"description=The key's tags (LiteLLM's key-level tags\\, kept as metadata.tags): every request of the key carries them\\, for tag routing\\, tag budgets (POST /tag/new) and spend per tag (at most 16 with the request's own); beside metadata with a tags label they win and replace it (as LiteLLM's /key/generate); on PATCH they replace the key's tags alone (its other labels kept)\\, [] or null removes them"`

	// ModelMaxBudget, ModelRPMLimit and ModelTPMLimit bound single models of the key
	// (keymodellimits.go).
	ModelMaxBudget map[string]keyModelBudget `json:"model_max_budget,omitempty" jsonschema:"description=USD budgets of single models of the key (LiteLLM's model_max_budget): an object of models (named as in models) each {max_budget_usd: USD; budget_duration: period}: a model whose budget is spent is skipped for the request's next model (its fallbacks or a group's other members) and a request all of whose models are refused is a 400 while its other models still work; the model that answers is charged; the spend is the key's own per model; given on PATCH it replaces them all ({} or null removes them)"`
	ModelRPMLimit  map[string]int64          `json:"model_rpm_limit,omitempty" jsonschema:"description=Requests per minute of single models of the key (LiteLLM's model_rpm_limit): an object of models each a number (0 refuses every request for it): each model called is counted (a fallback in its own); past it the model is skipped for the request's next one and a request all of whose models are refused is a 429 with Retry-After (across replicas on PostgreSQL give or take --limits-sync-interval); given on PATCH it replaces them all"`
	ModelTPMLimit  map[string]int64          `json:"model_tpm_limit,omitempty" jsonschema:"description=Tokens per minute of single models of the key (LiteLLM's model_tpm_limit): an object of models each a number: once the answers for the model used them in the last minute a request for it is a 429 with Retry-After (across replicas as model_rpm_limit); given on PATCH it replaces them all"`

	// RouterSettings are the key's own retries, timeout and fallbacks (routersettings.go).
	RouterSettings *routerSettings `json:"router_settings,omitempty" jsonschema:"description=The key's own router settings (LiteLLM's key router_settings): num_retries and timeout and fallbacks and context_window_fallbacks applied to every request of the key in place of its team's (a key without any takes its team's whole) and the server's; given on PATCH they replace the key's whole\\, {} or null removes them"`

	// budgetBlock marks Blocked as LiteLLM's max_budget 0 (set by its routes only; blocked
	// given outright clears it).
	budgetBlock bool
	// modelLimitsGiven: the request gives per-model limits, whose models are checked
	// (checkKeyRequest's checkModels checks them too).
	modelLimitsGiven bool
	// fields are the fields of the body that made the request (nil: those set non-zero),
	// for the budget fields given beside a budget_id (takeBudget).
	fields map[string]json.RawMessage
	// authorize, when not nil, is checked first in the transaction that issues the key
	// (an org_admin's virtual key's right to make it: orgAdminCreation).
	authorize func(ctx context.Context, rd store.Reader) error
}

// virtualKey describes an issued key; Key is present only in the answer that issued it.
type virtualKey struct {
	ID                string   `json:"id" jsonschema:"description=The key's id (vk_ and 16 hex digits): not the key itself"`
	Object            string   `json:"object" jsonschema:"description=Always api_key"`
	Key               string   `json:"key,omitempty" jsonschema:"description=The key itself: shown once when it is issued and never again"`
	Name              string   `json:"name,omitempty"`
	Models            []string `json:"models,omitempty"`
	MaxBudgetUSD      float64  `json:"max_budget_usd,omitempty"`
	SoftBudgetUSD     float64  `json:"soft_budget_usd,omitempty"`
	BudgetDuration    string   `json:"budget_duration,omitempty"`
	MaxTokens         int64    `json:"max_tokens,omitempty"`
	MaxRequests       int64    `json:"max_requests,omitempty"`
	RequestsPerMinute int      `json:"requests_per_minute,omitempty"`
	TokensPerMinute   int64    `json:"tokens_per_minute,omitempty"`
	// MaxParallelRequests is the key's bound on its requests in flight (0: none).
	MaxParallelRequests int `json:"max_parallel_requests,omitempty" jsonschema:"description=Requests of the key in flight at once; absent for no bound"`
	// Aliases are the key's own model names and the models they stand for.
	Aliases        map[string]string `json:"aliases,omitempty" jsonschema:"description=The key's own model names and the models they stand for; absent for none"`
	CreatedAt      time.Time         `json:"created_at"`
	ExpiresAt      *time.Time        `json:"expires_at,omitempty"`
	Expired        bool              `json:"expired,omitempty" jsonschema:"description=The key is past expires_at and no longer accepted"`
	Metadata       map[string]any    `json:"metadata,omitempty"`
	Blocked        bool              `json:"blocked,omitempty" jsonschema:"description=The key refuses every request as over its budget"`
	Guardrails     []string          `json:"guardrails,omitempty" jsonschema:"description=Guardrails every chat request of the key runs"`
	BudgetBlock    bool              `json:"budget_block,omitempty" jsonschema:"description=The block is LiteLLM's max_budget 0 (a budget of nothing): a new max_budget on /key/update lifts it"`
	TeamID         string            `json:"team_id,omitempty" jsonschema:"description=The team the key belongs to"`
	OrganizationID string            `json:"organization_id,omitempty" jsonschema:"description=The organization a key without a team belongs to (a key of a team is in the team's organization)"`
	MCPServers     []string          `json:"mcp_servers,omitempty" jsonschema:"description=The MCP servers the key may use (absent: every one)"`
	// RouterSettings are the key's own retries, timeout and fallbacks (absent: its team's).
	RouterSettings *routerSettings `json:"router_settings,omitempty" jsonschema:"description=The key's own router settings (absent: its team's apply\\, else the server's)"`
	// UserID is the user the key is made for: its metadata.user_id, answered apart and not
	// stored apart.
	UserID string `json:"user_id,omitempty" jsonschema:"description=The user the key is made for (its metadata.user_id); absent for none"`
	// Tags are the key's tags: its metadata.tags, answered apart and not stored apart.
	Tags []string `json:"tags,omitempty" jsonschema:"description=The key's tags (its metadata.tags): every request of the key carries them; absent for none"`
	// BudgetID is the LiteLLM budget the key's budget fields come from ("": its own).
	BudgetID string `json:"budget_id,omitempty" jsonschema:"description=The LiteLLM budget (POST /budget/new) its max_budget_usd and soft_budget_usd and budget_duration and tokens_per_minute and max_parallel_requests come from; absent for its own"`
	// The key's per-model limits (keyRequest's).
	ModelMaxBudget map[string]keyModelBudget `json:"model_max_budget,omitempty" jsonschema:"description=USD budgets of single models of the key (spend.models says what each spent)"`
	ModelRPMLimit  map[string]int64          `json:"model_rpm_limit,omitempty" jsonschema:"description=Requests per minute of single models of the key"`
	ModelTPMLimit  map[string]int64          `json:"model_tpm_limit,omitempty" jsonschema:"description=Tokens per minute of single models of the key"`
	Spend          keySpend                  `json:"spend" jsonschema:"description=What the key has used (in the current period with budget_duration)"`

	// keyName is the key abbreviated (abbreviateKey), kept in its record's key_name from
	// when the key was made or last rotated; "" for a key stored by an earlier build.
	keyName string
	// version is the key's ETag (keyVersion of its stored record) when it was read or
	// written; "" when unknown.
	version string
}

// keySpend is what a virtual key used.
type keySpend struct {
	Requests    int64      `json:"requests"`
	Tokens      int64      `json:"tokens"`
	CostUSD     float64    `json:"cost_usd"`
	PeriodStart *time.Time `json:"period_start,omitempty" jsonschema:"description=When the current budget period began (with budget_duration; absent before the first use)"`
	// Models is the spend of each model of model_max_budget, in its own period.
	Models map[string]keyModelSpend `json:"models,omitempty" jsonschema:"description=USD spent on each model of model_max_budget in its own period (its budget_duration)"`
}

// storedVirtualKey is a virtual key's record in store.VirtualKeys.
type storedVirtualKey struct {
	virtualKey
	Owner string `json:"owner"`
	Hash  string `json:"hash"` // hex SHA-256 of the key: its store.ScopedKeys record
	// KeyName is the key abbreviated (LiteLLM's key_name: its prefix and last four
	// characters), recorded when the key is made or rotated: the key itself is not kept, and
	// a hash gives no such name. Absent in the records of earlier builds.
	KeyName string `json:"key_name,omitempty"`
}

// readKeyRecord decodes a store.VirtualKeys record, its key_name carried in the key and
// its version (keyVersion) in the key's.
func readKeyRecord(value []byte) (storedVirtualKey, error) {
	var rec storedVirtualKey
	if err := json.Unmarshal(value, &rec); err != nil {
		return rec, err
	}
	rec.keyName = rec.KeyName
	rec.version = keyVersion(value)
	rec.UserID = keyUserID(rec.virtualKey)
	rec.Tags, _ = keyTags(rec.Metadata) // checked when set; an invalid label an earlier build kept is left out
	return rec, nil
}

// keyVersion is the ETag of a virtual key whose store.VirtualKeys record is value: a
// quoted hex SHA-256 of the record. The record holds the hash of the key (never the key),
// so the tag changes with every rotation (a new key, a new hash) and with every change
// of the key's name or limits; its spend is kept elsewhere and leaves it as it is.
func keyVersion(value []byte) string {
	h := sha256.Sum256(value)
	return `"` + hex.EncodeToString(h[:16]) + `"`
}

// checkIfMatch answers 412 unless ifMatch (the request's If-Match field values: nil when
// the header is absent; "*" or a list of entity tags) names rec's current version. A weak
// tag (W/"…") never matches: If-Match compares strongly (RFC 9110 13.1.1). A header sent
// empty (or of empty list elements only) is a list of no entity tags (RFC 9110's
// #entity-tag allows zero), which no version matches: 412, not the request going ahead as
// if unconditional, since a client that sent If-Match asked for a condition (a lost ETag
// must not turn into an overwrite).
func checkIfMatch(ifMatch []string, rec storedVirtualKey) error {
	if ifMatch == nil {
		return nil
	}
	named := false
	for _, v := range ifMatch {
		for _, tag := range strings.Split(v, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" || tag == rec.version {
				return nil
			}
			named = named || tag != ""
		}
	}
	var e *APIError
	if !named {
		e = Errorf(http.StatusPreconditionFailed, KindPreconditionFailed,
			"If-Match: the header names no entity tag, which no version of virtual key %s matches (its current ETag is %s): nothing was changed; give the key's ETag (GET /api/v1/keys/%s) or leave If-Match out",
			rec.ID, rec.version, rec.ID)
	} else {
		e = Errorf(http.StatusPreconditionFailed, KindPreconditionFailed,
			"If-Match: virtual key %s was rotated or changed since the version given (its current ETag is %s): nothing was changed; GET /api/v1/keys/%s again and decide whether to retry",
			rec.ID, rec.version, rec.ID)
	}
	e.Header = http.Header{"Etag": {rec.version}}
	return e
}

// ifMatchOf is r's If-Match field values: nil when the header is absent, a list (of one
// empty value for an empty header) when it was sent.
func ifMatchOf(r *http.Request) []string {
	return r.Header.Values("If-Match")
}

// writeKey answers vk with status, its version as the ETag header when known.
func writeKey(w http.ResponseWriter, status int, vk *virtualKey) {
	writeETag(w, vk)
	writeJSON(w, status, vk)
}

// writeETag sets w's ETag header to vk's version when known: the new version, for a next
// conditional request.
func writeETag(w http.ResponseWriter, vk *virtualKey) {
	if vk.version != "" {
		w.Header().Set("ETag", vk.version)
	}
}

// keyList is the answer of GET /api/v1/keys.
type keyList struct {
	Object string       `json:"object" jsonschema:"description=Always list"`
	Data   []virtualKey `json:"data" jsonschema:"description=The keys this key issued newest first"`
}

// keyDeletion is the answer of DELETE /api/v1/keys/{key_id}.
type keyDeletion struct {
	ID      string `json:"id"`
	Object  string `json:"object" jsonschema:"description=Always api_key"`
	Deleted bool   `json:"deleted" jsonschema:"description=Always true (a failed delete is an error)"`
}

// virtualKeyScope is the Principal.Scope of a virtual key.
type virtualKeyScope struct {
	completions.Scope
	// KeyID is the key's id: the unit of its request rate.
	KeyID string
	// RequestsPerMinute is the key's own rate bound (0: the server's per-key bound).
	RequestsPerMinute int
	// Team is the unit of the key's team's request rate ("" without a team), TeamRPM that
	// rate (0: none).
	Team    string
	TeamRPM int
	// Org is the unit of the key's team's organization's request rate ("" without one),
	// OrgRPM that rate (0: none).
	Org    string
	OrgRPM int
	// TeamID and UserID are the key's team_id and user_id ("" without one), for the
	// gateway's observers (Scope.TeamID, Scope.UserID).
	TeamID, UserID string
	// Tags are the key's tags (keyTags), added to every request it makes.
	Tags []string
	// KeyAlias and TeamAlias are the key's and its team's names (key_alias, team_alias),
	// for the gateway's observers (Scope.KeyAlias, Scope.TeamAlias).
	KeyAlias, TeamAlias string
	// MaxParallel is the key's bound on its requests in flight, TeamMaxParallel its team's
	// on all the team's keys together (0: none).
	MaxParallel, TeamMaxParallel int
	// Aliases are the key's own model names (LiteLLM's key aliases): a request naming one
	// is sent to the model it stands for.
	Aliases map[string]string
}

// neverExpires stands for "no expiry" in a shared key record, which always has one.
var neverExpires = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// The headers of a virtual key's conditional requests, as the OpenAPI document shows them.
var (
	keyETagHeader = HeaderParam{Name: "ETag",
		Description: "The key's version: it changes with every rotation and every change of its name or limits (not with its spend), a /budget/update changing the values of its budget_id included; give it in If-Match to rotate, change or revoke the key only if it is still at that version"}
	keyIfMatchHeader = HeaderParam{Name: "If-Match",
		Description: "An ETag of the key (from GET /api/v1/keys/{key_id} or an earlier rotate or PATCH answer): the request goes ahead only if the key is still at that version and is answered 412 otherwise; checked in the same transaction as the change. Absent: the request goes ahead whatever the key's version; sent empty (no entity tag): 412"}
	keyDeleteIfMatchHeader = HeaderParam{Name: "If-Match",
		Description: "ETags of the keys (from GET /api/v1/keys/{key_id}): the keys are deleted only if each is still at a version listed (* any) and none is otherwise (412); checked in the same transaction as the deletion. Absent: the keys are deleted whatever their versions; sent empty (no entity tag): 412"}
)

// keyRoutes registers the virtual key endpoints; g checks the models a key names.
func (s *Server) keyRoutes(g *completions.Gateway) {
	tags := []string{"Keys"}
	s.Handle(Route{Method: "POST", Path: "/api/v1/keys", Summary: "Issue a virtual key limited to some models, a budget, a rate and a lifetime (the key is shown once)",
		Tags: tags, Request: keyRequest{}, Response: virtualKey{}, Status: http.StatusCreated, ResponseHeaders: []HeaderParam{keyETagHeader},
		Errors: map[int]string{
			403: "the calling key is itself limited in scope (a virtual or job key)",
			404: "user_id names no user of this key (POST /api/v1/users makes one), or budget_id no budget of this key (POST /budget/new makes one)",
			409: fmt.Sprintf("this key has issued %d virtual keys already", MaxVirtualKeysPerOwner),
			422: "validation error: the message names the field",
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req keyRequest
			var body []byte
			if err := decodeJSON(r, &req, decodeOptions{Rewrite: keepBody(&body)}); err != nil {
				return err
			}
			req.fields = bodyFields(body)
			vk, err := s.issueKey(r.Context(), g, owner(r), req, "")
			if err != nil {
				return err
			}
			writeKey(w, http.StatusCreated, vk)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/api/v1/keys", Summary: "The virtual keys this key issued, newest first, with their spend",
		Tags: tags, Response: keyList{}},
		func(w http.ResponseWriter, r *http.Request) error {
			keys, err := s.listKeys(r.Context(), owner(r))
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, keyList{Object: "list", Data: keys})
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/api/v1/keys/self", Summary: "The calling virtual key: its limits and spend",
		Tags: tags, Response: virtualKey{}, ScopedKeys: true,
		Errors: map[int]string{404: "the calling key is not a virtual key"}},
		s.keyInfoHandler(func(r *http.Request) (string, error) {
			p, _ := PrincipalFrom(r.Context())
			if ks, ok := p.Scope.(virtualKeyScope); ok {
				return ks.KeyID, nil
			}
			return "", NotFound("the calling key is not a virtual key (GET /api/v1/keys lists the keys it issued)")
		}))
	s.Handle(Route{Method: "GET", Path: "/api/v1/keys/{key_id}", Summary: "One virtual key this key issued, with its spend; its ETag header is its version (for If-Match on rotate, PATCH and DELETE)",
		Tags: tags, Response: virtualKey{}, ResponseHeaders: []HeaderParam{keyETagHeader}, Errors: map[int]string{404: "no virtual key of this key has this id"}},
		s.keyInfoHandler(func(r *http.Request) (string, error) { return r.PathValue("key_id"), nil }))
	s.Handle(Route{Method: "PATCH", Path: "/api/v1/keys/{key_id}", Summary: "Change a virtual key's name or limits (the fields given; expires_at null removes the expiry); its spend is kept; with If-Match only if the key is still at that version",
		Tags: tags, Request: keyRequest{}, Response: virtualKey{}, Headers: []HeaderParam{keyIfMatchHeader}, ResponseHeaders: []HeaderParam{keyETagHeader}, Errors: map[int]string{
			404: "no virtual key of this key has this id, or a changed user_id names no user of this key, or budget_id no budget of this key",
			412: "If-Match was given and the key was rotated or changed since that version: nothing was changed",
			422: "validation error: the message names the field",
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			vk, err := s.updateKey(r, g, owner(r), r.PathValue("key_id"))
			if err != nil {
				return err
			}
			writeKey(w, http.StatusOK, vk)
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/api/v1/keys/{key_id}/rotate", Summary: "Give a virtual key a new key (shown once): the old one stops working at once on every replica; id, limits and spend stay; with If-Match only if the key is still at that version (of concurrent rotations naming one version exactly one succeeds); without it the key is rotated whatever its version",
		Tags: tags, Response: virtualKey{}, Headers: []HeaderParam{keyIfMatchHeader}, ResponseHeaders: []HeaderParam{keyETagHeader}, Errors: map[int]string{
			404: "no virtual key of this key has this id",
			412: "If-Match was given and the key was rotated or changed since that version: no new key was made",
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			vk, err := s.rotateKey(r.Context(), owner(r), r.PathValue("key_id"), retiredKey{ifMatch: ifMatchOf(r)})
			if err != nil {
				return err
			}
			writeKey(w, http.StatusOK, vk)
			return nil
		})
	s.Handle(Route{Method: "DELETE", Path: "/api/v1/keys/{key_id}", Summary: "Revoke a virtual key at once on every replica (its spend record goes with it); with If-Match only if the key is still at that version",
		Tags: tags, Response: keyDeletion{}, Headers: []HeaderParam{keyIfMatchHeader}, Errors: map[int]string{
			404: "no virtual key of this key has this id",
			412: "If-Match was given and the key was rotated or changed since that version: the key was not revoked",
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			id := r.PathValue("key_id")
			if err := s.revokeKeyIfMatch(r.Context(), owner(r), id, ifMatchOf(r)); err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, keyDeletion{ID: id, Object: "api_key", Deleted: true})
			return nil
		})
}

// keyInfoHandler answers with the calling key's virtual key that idOf names.
func (s *Server) keyInfoHandler(idOf func(r *http.Request) (string, error)) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := idOf(r)
		if err != nil {
			return err
		}
		vk, err := s.keyInfo(r.Context(), owner(r), id)
		if err != nil {
			return err
		}
		writeKey(w, http.StatusOK, vk)
		return nil
	}
}

// storedKeyOf reads owner's virtual key id through rd, or answers 404.
func storedKeyOf(ctx context.Context, rd store.Reader, owner, id string) (storedVirtualKey, error) {
	raw, err := ownedRecord[json.RawMessage](ctx, rd, store.VirtualKeys, owner, id, "key", func() error {
		return NotFound("no virtual key %q issued by this key", id)
	})
	if err != nil {
		return storedVirtualKey{}, err
	}
	rec, err := readKeyRecord(raw)
	if err != nil {
		return rec, fmt.Errorf("server: reading key %s: %w", id, err)
	}
	return rec, nil
}

// parseBudgetDuration reads "30d", "12h", "90m", "45s" (and Go durations such as "1h30m"),
// and as LiteLLM's duration parser does, "2w" (weeks) and "1mo" (months, here 30 days each).
func parseBudgetDuration(v string) (time.Duration, error) {
	for _, u := range []struct {
		suffix, name string
		days, max    float64
	}{{"mo", "months", 30, 122}, {"w", "weeks", 7, 522}, {"d", "days", 1, 3660}} {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			f, err := strconv.ParseFloat(n, 64)
			if err != nil || f <= 0 || f > u.max {
				return 0, fmt.Errorf("must be a number of %s between 0 and %v followed by %s", u.name, u.max, u.suffix)
			}
			return time.Duration(f * u.days * float64(24*time.Hour)), nil
		}
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, errors.New("must be a number followed by s, m, h, d, w or mo (for example 30d)")
	}
	return d, nil
}

// checkKeyRequest validates req and returns its budget limits; with checkModels false the
// models are taken as they are (a PATCH that does not change them).
func checkKeyRequest(g *completions.Gateway, req keyRequest, now time.Time, checkModels bool) (completions.BudgetLimits, error) {
	invalid := func(format string, args ...any) error {
		return Validation(http.StatusUnprocessableEntity, format, args...)
	}
	var l completions.BudgetLimits
	if len(req.Name) > maxKeyNameLength {
		return l, invalid("name: at most %d characters, got %d", maxKeyNameLength, len(req.Name))
	}
	if len(req.Models) > maxKeyModels {
		return l, invalid("models: at most %d models, got %d", maxKeyModels, len(req.Models))
	}
	for i, m := range req.Models {
		if !checkModels {
			break
		}
		if strings.TrimSpace(m) == "" {
			return l, invalid("models[%d]: must not be empty", i)
		}
		if slices.Index(req.Models, m) < i {
			return l, invalid("models[%d]: %q is listed twice", i, m)
		}
		if strings.Contains(m, "*") {
			continue // a pattern, as LiteLLM's keys take ("openai/*", "*")
		}
		if !keyServes(g, m) {
			return l, invalid("models[%d]: %q is not a model or model group this server routes to (GET /v1/models lists them)", i, m)
		}
	}
	models, err := checkKeyModelLimits(g, req, checkModels || req.modelLimitsGiven)
	if err != nil {
		return l, err
	}
	l.Models = models
	if math.IsNaN(req.MaxBudgetUSD) || math.IsInf(req.MaxBudgetUSD, 0) || req.MaxBudgetUSD < 0 {
		return l, invalid("max_budget_usd: must be a number of at least 0, got %v", req.MaxBudgetUSD)
	}
	if math.IsNaN(req.SoftBudgetUSD) || math.IsInf(req.SoftBudgetUSD, 0) || req.SoftBudgetUSD < 0 {
		return l, invalid("soft_budget_usd: must be a number of at least 0, got %v", req.SoftBudgetUSD)
	}
	if req.MaxTokens < 0 {
		return l, invalid("max_tokens: must be at least 0, got %d", req.MaxTokens)
	}
	if req.MaxRequests < 0 {
		return l, invalid("max_requests: must be at least 0, got %d", req.MaxRequests)
	}
	if req.RequestsPerMinute < 0 || req.RequestsPerMinute > 1_000_000 {
		return l, invalid("requests_per_minute: must be between 0 and 1000000, got %d", req.RequestsPerMinute)
	}
	if req.TokensPerMinute < 0 {
		return l, invalid("tokens_per_minute: must be at least 0, got %d", req.TokensPerMinute)
	}
	if req.MaxParallelRequests < 0 || req.MaxParallelRequests > maxParallelBound {
		return l, invalid("max_parallel_requests: must be between 0 and %d, got %d", maxParallelBound, req.MaxParallelRequests)
	}
	if err := checkKeyAliases(g, req.Aliases); err != nil {
		return l, err
	}
	if err := checkRouterSettings(g, req.RouterSettings); err != nil {
		return l, err
	}
	if req.BudgetDuration != "" {
		d, err := parseBudgetDuration(req.BudgetDuration)
		if err == nil && (d < time.Second || d > 3660*24*time.Hour) {
			err = errors.New("must be between 1s and 3660d")
		}
		if err != nil {
			return l, invalid("budget_duration: %s, got %q", err, req.BudgetDuration)
		}
		l.ResetEvery = d
	}
	if req.Metadata != nil {
		// Measured as sent: without json.Marshal's HTML escaping (< is one byte, not six).
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(req.Metadata); err != nil || b.Len()-1 > maxKeyMetadataBytes {
			return l, invalid("metadata: at most %d bytes of JSON, got %d", maxKeyMetadataBytes, b.Len()-1)
		}
	}
	if len(req.Guardrails) > maxKeyGuardrails {
		return l, invalid("guardrails: at most %d guardrails, got %d", maxKeyGuardrails, len(req.Guardrails))
	}
	for i, name := range req.Guardrails {
		if slices.Index(req.Guardrails, name) < i {
			return l, invalid("guardrails[%d]: %q is listed twice", i, name)
		}
	}
	if err := g.CheckGuardrailNames("guardrails", req.Guardrails); err != nil {
		return l, invalid("%s", err.Error())
	}
	if req.ExpiresAt != nil && !req.ExpiresAt.After(now) {
		return l, invalid("expires_at: must be in the future, got %s", req.ExpiresAt.Format(time.RFC3339))
	}
	l.AllowedModels = slices.Clone(req.Models)
	l.MaxCostUSD, l.MaxTokens, l.MaxCalls, l.TokensPerMinute = req.MaxBudgetUSD, req.MaxTokens, req.MaxRequests, req.TokensPerMinute
	l.Blocked, l.SoftCostUSD = req.Blocked, req.SoftBudgetUSD
	return l, nil
}

// keyServes reports whether m, a model a key names that is not a pattern, is one this
// server routes to: what a request may name (a LiteLLM config's models only).
func keyServes(g *completions.Gateway, m string) bool {
	if !g.Serves(m) {
		return false
	}
	if _, ok := g.ResolveModel(m); ok {
		return true
	}
	if eid, ok := g.ResolveEmbeddingModel(m); ok && slices.Contains(g.EmbeddingModels(), eid) {
		return true
	}
	if _, ok := g.ResolveAudioModel(m); ok {
		return true
	}
	if rid, ok := g.ResolveRerankModel(m); ok && g.HasRerankModel(rid) {
		return true
	}
	if _, ok := g.ResolveImageModel(m); ok {
		return true
	}
	_, ok := g.ResolveRealtimeModel(m)
	return ok
}

// maxParallelBound bounds a key's and a team's max_parallel_requests.
const maxParallelBound = 100000

// checkKeyAliases validates a key's aliases (LiteLLM's key aliases): at most maxKeyModels
// names, none empty, each standing for a model or model group g routes to (not a pattern:
// a request names one model).
func checkKeyAliases(g *completions.Gateway, aliases map[string]string) error {
	invalid := func(format string, args ...any) error {
		return Validation(http.StatusUnprocessableEntity, format, args...)
	}
	if len(aliases) > maxKeyModels {
		return invalid("aliases: at most %d names, got %d", maxKeyModels, len(aliases))
	}
	for _, name := range slices.Sorted(maps.Keys(aliases)) {
		target := aliases[name]
		switch {
		case strings.TrimSpace(name) == "":
			return invalid("aliases: a name must not be empty")
		case strings.TrimSpace(target) == "":
			return invalid("aliases[%q]: must name the model it stands for, got %q", name, target)
		case strings.Contains(target, "*"):
			return invalid("aliases[%q]: %q is a pattern; an alias stands for one model or model group", name, target)
		case target == name:
			return invalid("aliases[%q]: stands for itself", name)
		case !keyServes(g, target):
			return invalid("aliases[%q]: %q is not a model or model group this server routes to (GET /v1/models lists them)", name, target)
		}
	}
	return nil
}

// issueKey validates req, mints a key and stores its three records in one transaction.
// With uniqueName (LiteLLM's key_alias, named so in the 409) a name another of owner's keys
// has is refused.
func (s *Server) issueKey(ctx context.Context, g *completions.Gateway, owner string, req keyRequest, uniqueName string) (*virtualKey, error) {
	now := time.Now().UTC()
	userID := req.UserID
	if userID != "" {
		if err := req.linkUser(true); err != nil {
			return nil, err
		}
	}
	if req.Tags != nil {
		if err := req.linkTags(); err != nil {
			return nil, err
		}
	}
	if _, err := keyTags(req.Metadata); err != nil {
		return nil, err
	}
	if _, err := checkKeyRequest(g, req, now, true); err != nil {
		return nil, err
	}
	if err := s.checkKeyMCPServers(req.MCPServers); err != nil {
		return nil, err
	}
	key, hash, err := mintKey()
	if err != nil {
		return nil, err
	}
	id := "vk_" + hash[:16]
	vk := virtualKey{ID: id, Object: "api_key", CreatedAt: now, keyName: abbreviateKey(key)}
	err = s.cfg.Store.UpdateLocked(ctx, accountLocks("key/"+id), func(tx store.Tx) error {
		req := req // the budget's fields, taken in each attempt of the transaction
		if req.authorize != nil {
			if err := req.authorize(ctx, tx); err != nil {
				return err
			}
		}
		if err := takeKeyBudgetOf(ctx, tx, owner, &req, req.budgetFieldsGiven()); err != nil {
			return err
		}
		limits, err := checkKeyRequest(g, req, now, false) // the models were checked above
		if err != nil {
			return err
		}
		req.applyTo(&vk, limits)
		issued, err := tx.List(ctx, store.VirtualKeys, store.ListOptions{Prefix: owner + "/", Limit: MaxVirtualKeysPerOwner})
		if err != nil {
			return err
		}
		if len(issued) >= MaxVirtualKeysPerOwner {
			return Errorf(http.StatusConflict, KindConflict, "this key has issued %d virtual keys, the most it may have: delete some first (DELETE /api/v1/keys/{key_id})", len(issued))
		}
		if err := checkUniqueName(issued, uniqueName, req.Name, ""); err != nil {
			return err
		}
		if err := checkKeyTeam(ctx, g, tx, owner, req.TeamID, req.Models); err != nil {
			return err
		}
		if err := checkKeyTeamTags(ctx, tx, owner, req.TeamID, req.Metadata); err != nil {
			return err
		}
		if err := checkKeyOrganization(ctx, g, tx, owner, req); err != nil {
			return err
		}
		if userID != "" {
			if _, err := storedUserOf(ctx, tx, owner, userID); err != nil {
				return err
			}
		}
		if err := completions.PutSharedBudget(ctx, tx, "key/"+id, limits); err != nil {
			return err
		}
		return putKeyRecords(ctx, tx, owner, hash, &vk)
	})
	if err != nil {
		return nil, fmt.Errorf("server: issuing a key: %w", err)
	}
	s.log.InfoContext(ctx, "virtual key issued", "owner", owner, "key_id", id, "name", req.Name)
	vk.Key = key
	return &vk, nil
}

// mintKey makes a new virtual key and its hash (hex SHA-256, its shared-key record's key).
func mintKey() (key, hash string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("server: minting a key: %w", err)
	}
	key = "sy-vk-" + base64.RawURLEncoding.EncodeToString(b[:])
	h := sha256.Sum256([]byte(key))
	return key, hex.EncodeToString(h[:]), nil
}

// retiredKey names the key a rotation retires. A request that named it by its value or
// hash (LiteLLM's regenerate) gives hash, and the rotation goes ahead only if that is still
// the virtual key's current key when the rotation's transaction reads it: of concurrent
// regenerations naming one old key, one gives it a new key and the others get gone, what
// the same request naming a key already rotated away gets (a 404, or the 400 of a body key
// that is not the path's), rather than each retiring the key the one before made. A
// request naming the key's id (hash "") rotates whatever key it has.
//
// ifMatch, the request's If-Match header, is checked in the same transaction too
// (checkIfMatch): of concurrent requests giving the key's current ETag, one goes ahead and
// the others are answered 412, whichever way they name the key.
type retiredKey struct {
	hash    string   // hex SHA-256 of the key named; "" when the request named the id
	gone    error    // the answer when it is no longer the current key
	ifMatch []string // the request's If-Match field values; nil for none
}

// check answers 412 unless rec is at a version k.ifMatch names, and k.gone unless rec's key
// is still the one k names.
func (k retiredKey) check(rec storedVirtualKey) error {
	if err := checkIfMatch(k.ifMatch, rec); err != nil {
		return err
	}
	if k.hash != "" && rec.Hash != k.hash {
		return k.gone
	}
	return nil
}

// rotateKey gives owner's virtual key id a new key, in one transaction: the old key stops
// working at once on every replica (its shared-key record goes), the new one acts as the
// same key — id, limits, spend, tags. old is checked in that transaction (retiredKey). The
// answer carries the new key, shown once.
func (s *Server) rotateKey(ctx context.Context, owner, id string, old retiredKey) (*virtualKey, error) {
	key, hash, err := mintKey()
	if err != nil {
		return nil, err
	}
	var vk virtualKey
	err = s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		rec, err := storedKeyOf(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		if err := old.check(rec); err != nil {
			return err // rotated meanwhile by another request naming the same key
		}
		vk = rec.virtualKey
		vk.keyName = abbreviateKey(key)
		return rotateKeyRecords(ctx, tx, owner, rec.Hash, hash, &vk)
	})
	if err != nil {
		return nil, fmt.Errorf("server: rotating key %s: %w", id, err)
	}
	s.log.InfoContext(ctx, "virtual key rotated", "owner", owner, "key_id", id)
	vk = s.withSpend(ctx, vk)
	vk.Key = key
	return &vk, nil
}

// rotateKeyRecords gives owner's virtual key vk, whose key hashes to oldHash, the key
// hashing to newHash, through tx: the old key's shared-key record goes, vk's records are
// written under the new one (vk's version set to theirs).
func rotateKeyRecords(ctx context.Context, tx store.Tx, owner, oldHash, newHash string, vk *virtualKey) error {
	if err := tx.Delete(ctx, store.ScopedKeys, oldHash); err != nil {
		return err
	}
	return putKeyRecords(ctx, tx, owner, newHash, vk)
}

// checkUniqueName answers 409 naming field when another key than except among issued (an
// owner's store.VirtualKeys records) is called name; field "" or name "" checks nothing.
func checkUniqueName(issued []store.Entry, field, name, except string) error {
	if field == "" || name == "" {
		return nil
	}
	for _, e := range issued {
		var rec storedVirtualKey
		if json.Unmarshal(e.Value, &rec) == nil && rec.Name == name && rec.ID != except {
			err := Errorf(http.StatusConflict, KindConflict, "%s: %q is already the %s of key %s (aliases are unique, so that one names one key)", field, name, field, rec.ID)
			err.Param = field
			return err
		}
	}
	return nil
}

// applyTo sets vk's name and limits to req's (limits is req checked: its models).
func (req keyRequest) applyTo(vk *virtualKey, limits completions.BudgetLimits) {
	vk.Name, vk.Models, vk.MaxBudgetUSD, vk.BudgetDuration = req.Name, limits.AllowedModels, req.MaxBudgetUSD, req.BudgetDuration
	vk.MaxTokens, vk.MaxRequests, vk.RequestsPerMinute, vk.TokensPerMinute = req.MaxTokens, req.MaxRequests, req.RequestsPerMinute, req.TokensPerMinute
	vk.MaxParallelRequests, vk.Aliases = req.MaxParallelRequests, maps.Clone(req.Aliases)
	vk.RouterSettings = req.RouterSettings.normalized()
	if len(vk.Aliases) == 0 {
		vk.Aliases = nil
	}
	vk.Metadata, vk.Blocked, vk.Guardrails, vk.SoftBudgetUSD = req.Metadata, req.Blocked, req.Guardrails, req.SoftBudgetUSD
	vk.MCPServers = slices.Clone(req.MCPServers)
	if len(vk.MCPServers) == 0 {
		vk.MCPServers = nil
	}
	vk.ModelMaxBudget, vk.ModelRPMLimit, vk.ModelTPMLimit = nil, nil, nil
	if len(req.ModelMaxBudget) > 0 {
		vk.ModelMaxBudget = req.ModelMaxBudget
	}
	if len(req.ModelRPMLimit) > 0 {
		vk.ModelRPMLimit = req.ModelRPMLimit
	}
	if len(req.ModelTPMLimit) > 0 {
		vk.ModelTPMLimit = req.ModelTPMLimit
	}
	vk.BudgetBlock = req.Blocked && req.budgetBlock
	vk.TeamID, vk.BudgetID, vk.OrganizationID = req.TeamID, req.BudgetID, req.OrganizationID
	if vk.TeamID != "" {
		vk.OrganizationID = "" // in the team's organization (checkKeyOrganization checked it is this one)
	}
	if len(vk.Guardrails) == 0 {
		vk.Guardrails = nil
	}
	if len(vk.Metadata) == 0 {
		vk.Metadata = nil
	}
	vk.UserID = keyUserID(*vk)
	vk.Tags, _ = keyTags(vk.Metadata)
	vk.ExpiresAt = nil
	if req.ExpiresAt != nil {
		e := req.ExpiresAt.UTC()
		vk.ExpiresAt = &e
	}
}

// putKeyRecords writes virtual key vk's shared-key record (under hash, the key's own
// record every replica resolves) and its description, through tx, and sets vk's version to
// the description's.
func putKeyRecords(ctx context.Context, tx store.Tx, owner, hash string, vk *virtualKey) error {
	expires := neverExpires
	if vk.ExpiresAt != nil {
		expires = *vk.ExpiresAt
	}
	tags, _ := keyTags(vk.Metadata) // checked when set; an invalid label an earlier build kept is left out
	doc, _ := json.Marshal(keyScopeDoc{Tag: "key:" + vk.ID, Budget: "key/" + vk.ID, KeyID: vk.ID, RequestsPerMinute: vk.RequestsPerMinute, Guardrails: vk.Guardrails, TeamID: vk.TeamID, MCPServers: vk.MCPServers, UserID: keyUserID(*vk),
		OrganizationID: vk.OrganizationID, Tags: tags, TagsRead: true, KeyAlias: vk.Name, MaxParallel: vk.MaxParallelRequests, Aliases: vk.Aliases,
		RouterSettings: vk.RouterSettings})
	if err := store.PutJSON(ctx, tx, store.ScopedKeys, hash, storedScopedKey{Owner: owner, Scope: doc, ExpiresAt: expires}); err != nil {
		return err
	}
	return putKeyDescription(ctx, tx, owner, hash, vk)
}

// putKeyDescription writes virtual key vk's description (its store.VirtualKeys record; its
// key hashes to hash) through tx, and sets vk's version to the description's.
func putKeyDescription(ctx context.Context, tx store.Tx, owner, hash string, vk *virtualKey) error {
	kept := *vk
	kept.UserID, kept.Tags = "", nil // metadata.user_id and metadata.tags are the record of them
	rec, err := json.Marshal(storedVirtualKey{virtualKey: kept, Owner: owner, Hash: hash, KeyName: vk.keyName})
	if err != nil {
		return fmt.Errorf("server: encoding key %s: %w", vk.ID, err)
	}
	if err := tx.Put(ctx, store.VirtualKeys, owner+"/"+vk.ID, rec); err != nil {
		return err
	}
	vk.version = keyVersion(rec)
	return nil
}

// listKeys returns owner's virtual keys, newest first, with their spend.
func (s *Server) listKeys(ctx context.Context, owner string) ([]virtualKey, error) {
	es, err := s.cfg.Store.List(ctx, store.VirtualKeys, store.ListOptions{Prefix: owner + "/"})
	if err != nil {
		return nil, fmt.Errorf("server: listing keys: %w", err)
	}
	out := make([]virtualKey, 0, len(es))
	for _, e := range es {
		rec, err := readKeyRecord(e.Value)
		if err != nil {
			return nil, fmt.Errorf("server: key record %s: %w", e.Key, err)
		}
		out = append(out, s.withSpend(ctx, rec.virtualKey))
	}
	slices.SortStableFunc(out, func(a, b virtualKey) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out, nil
}

// keyInfo returns owner's virtual key id with its spend, or a 404.
func (s *Server) keyInfo(ctx context.Context, owner, id string) (*virtualKey, error) {
	rec, err := storedKeyOf(ctx, s.cfg.Store, owner, id)
	if err != nil {
		return nil, err
	}
	vk := s.withSpend(ctx, rec.virtualKey)
	return &vk, nil
}

// withSpend fills in vk's spend from its account and whether it expired.
func (s *Server) withSpend(ctx context.Context, vk virtualKey) virtualKey {
	if b, err := completions.LoadSharedBudget(ctx, s.cfg.Store, "key/"+vk.ID); err == nil {
		u := b.Used(ctx)
		vk.Spend = keySpend{Requests: u.Calls, Tokens: u.Tokens, CostUSD: u.CostUSD, Models: keyModelSpendOf(vk, u)}
		if !u.PeriodStart.IsZero() {
			vk.Spend.PeriodStart = &u.PeriodStart
		}
	}
	vk.Expired = vk.ExpiresAt != nil && !time.Now().Before(*vk.ExpiresAt)
	vk.UserID = keyUserID(vk)
	vk.Tags, _ = keyTags(vk.Metadata)
	return vk
}

// revokeKey deletes owner's virtual key id and its records, or answers 404.
func (s *Server) revokeKey(ctx context.Context, owner, id string) error {
	return s.revokeKeyIfMatch(ctx, owner, id, nil)
}

// revokeKeyIfMatch is revokeKey only if the key is at a version ifMatch (the request's
// If-Match field values; nil for none) names, checked in the delete's transaction
// (checkIfMatch): a key rotated or changed since is answered 412 and kept.
func (s *Server) revokeKeyIfMatch(ctx context.Context, owner, id string, ifMatch []string) error {
	err := s.cfg.Store.UpdateLocked(ctx, accountLocks("key/"+id), func(tx store.Tx) error {
		rec, err := storedKeyOf(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		if err := checkIfMatch(ifMatch, rec); err != nil {
			return err // rotated or changed since the version given
		}
		return deleteKeyRecords(ctx, tx, owner, id, rec.Hash)
	})
	if err != nil {
		return fmt.Errorf("server: revoking key %s: %w", id, err)
	}
	s.log.InfoContext(ctx, "virtual key revoked", "owner", owner, "key_id", id)
	return nil
}

// deleteKeyRecords deletes, in tx, the three records of owner's virtual key id (whose key
// hashes to hash): the key, its budget and its description.
func deleteKeyRecords(ctx context.Context, tx store.Tx, owner, id, hash string) error {
	if err := tx.Delete(ctx, store.ScopedKeys, hash); err != nil {
		return err
	}
	if err := tx.Delete(ctx, store.Budgets, "key/"+id); err != nil {
		return err
	}
	return tx.Delete(ctx, store.VirtualKeys, owner+"/"+id)
}

// revokeKeys revokes owner's virtual keys ids in one transaction: all of them or, when the
// store fails or a key is not at a version ifMatch (the request's If-Match field values;
// nil for none) names, none (checkIfMatch's 412 for the first such key: every key must be
// at one of the tags listed). A key already gone (revoked meanwhile by another request)
// counts as revoked: what was asked is so.
func (s *Server) revokeKeys(ctx context.Context, owner string, ids []string, ifMatch []string) error {
	locks := accountLocks(eachAccount(ids, func(id string) string { return "key/" + id })...)
	err := s.cfg.Store.UpdateLocked(ctx, locks, func(tx store.Tx) error {
		for _, id := range ids {
			rec, err := storedKeyOf(ctx, tx, owner, id)
			var ae *APIError
			if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
				continue
			}
			if err != nil {
				return err
			}
			if err := checkIfMatch(ifMatch, rec); err != nil {
				return err // rotated or changed since the version given: nothing revoked
			}
			if err := deleteKeyRecords(ctx, tx, owner, id, rec.Hash); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("server: revoking keys %s: %w", strings.Join(ids, ", "), err)
	}
	s.log.InfoContext(ctx, "virtual keys revoked", "owner", owner, "key_ids", ids)
	return nil
}

// updateKey applies a PATCH body to owner's virtual key id: the fields it gives replace the
// key's (checked as on issue; models and expires_at only when given, so a key naming a
// model no longer served, or an expired one, can still be renamed, bounded or given a new
// expiry). The record is read, merged and written in one transaction over its three
// records, so two PATCHes at once do not undo each other.
func (s *Server) updateKey(r *http.Request, g *completions.Gateway, owner, id string) (*virtualKey, error) {
	ctx := r.Context()
	if _, err := storedKeyOf(ctx, s.cfg.Store, owner, id); err != nil {
		return nil, err // 404 before reading a body for nothing
	}
	var body json.RawMessage
	if err := decodeJSON(r, &body, decodeOptions{AllowUnknownFields: true}); err != nil {
		return nil, err // empty, malformed, too large or too slow
	}
	var given map[string]json.RawMessage
	_ = json.Unmarshal(body, &given) // not an object: applyKeyUpdate refuses it
	_, metadataGiven := given["metadata"]
	_, userGiven := given["user_id"]
	keepUser := func(req *keyRequest, prev virtualKey) {
		if metadataGiven && !userGiven {
			req.Metadata = keepKeyUser(req.Metadata, keyUserID(prev))
		}
	}
	return s.applyKeyUpdate(ctx, g, owner, id, body, keepUser, "", false, retiredKey{ifMatch: ifMatchOf(r)})
}

// linkUser puts req.UserID, given in the request, into req's metadata as its user_id
// label (withKeyUser: "" removes it), or answers 422 naming user_id: not a user id, or
// beside a metadata.user_id of another user when metadataGiven (the metadata is the
// request's own). Whether the user exists is the caller's to check, in its transaction.
func (req *keyRequest) linkUser(metadataGiven bool) error {
	if req.UserID != "" {
		if err := checkUserID("user_id", req.UserID, http.StatusUnprocessableEntity); err != nil {
			return err
		}
	}
	md, other, ok := withKeyUser(req.Metadata, req.UserID, metadataGiven)
	if !ok {
		v := Validation(http.StatusUnprocessableEntity, "user_id: %q differs from metadata.user_id %v (user_id is kept as metadata.user_id)", req.UserID, other)
		v.Param = "user_id"
		return v
	}
	req.Metadata = md
	return nil
}

// applyKeyUpdate is updateKey on a body already read; adjust, when not nil, changes the
// merged request inside the transaction before it is checked (LiteLLM's /key/update sets
// one metadata label while keeping the others); uniqueName is issueKey's. cond is checked
// in the transaction as rotateKey checks old (If-Match, and with rotate the key retired).
// With rotate the key is also given a new key (as rotateKey does) in the same transaction,
// so that the change and the new key are kept together or not at all; the answer then
// carries the new key, shown once.
func (s *Server) applyKeyUpdate(ctx context.Context, g *completions.Gateway, owner, id string, body json.RawMessage, adjust func(req *keyRequest, prev virtualKey), uniqueName string, rotate bool, cond retiredKey) (*virtualKey, error) {
	var given map[string]json.RawMessage
	if json.Unmarshal(body, &given) != nil || given == nil {
		return nil, Validation(http.StatusUnprocessableEntity, "the body must be a JSON object of the fields to change")
	}
	var key, newHash string
	if rotate {
		var err error
		if key, newHash, err = mintKey(); err != nil {
			return nil, err
		}
	}
	_, modelsGiven := given["models"]
	_, expiryGiven := given["expires_at"]
	_, metadataGiven := given["metadata"]
	var vk virtualKey
	err := s.cfg.Store.UpdateLocked(ctx, accountLocks("key/"+id), func(tx store.Tx) error {
		rec, err := storedKeyOf(ctx, tx, owner, id)
		if err != nil {
			return err // revoked meanwhile: 404
		}
		if err := cond.check(rec); err != nil {
			return err // rotated or changed meanwhile by another request
		}
		req := keyRequest{Name: rec.Name, Models: rec.Models, MaxBudgetUSD: rec.MaxBudgetUSD, SoftBudgetUSD: rec.SoftBudgetUSD, BudgetDuration: rec.BudgetDuration,
			MaxTokens: rec.MaxTokens, MaxRequests: rec.MaxRequests, RequestsPerMinute: rec.RequestsPerMinute, TokensPerMinute: rec.TokensPerMinute,
			ExpiresAt: rec.ExpiresAt, Metadata: rec.Metadata, Blocked: rec.Blocked, Guardrails: rec.Guardrails, budgetBlock: rec.BudgetBlock, TeamID: rec.TeamID,
			MCPServers: rec.MCPServers, BudgetID: rec.BudgetID, OrganizationID: rec.OrganizationID,
			ModelMaxBudget: rec.ModelMaxBudget, ModelRPMLimit: rec.ModelRPMLimit, ModelTPMLimit: rec.ModelTPMLimit,
			MaxParallelRequests: rec.MaxParallelRequests, Aliases: rec.Aliases, RouterSettings: rec.RouterSettings}
		if metadataGiven {
			req.Metadata = nil // replaced whole, not merged
		}
		// Given, a per-model limit replaces the key's whole (decoding would merge the maps).
		if _, ok := given["model_max_budget"]; ok {
			req.ModelMaxBudget = nil
		}
		if _, ok := given["model_rpm_limit"]; ok {
			req.ModelRPMLimit = nil
		}
		if _, ok := given["model_tpm_limit"]; ok {
			req.ModelTPMLimit = nil
		}
		if _, ok := given["aliases"]; ok {
			req.Aliases = nil // replaced whole, not merged
		}
		if _, ok := given["router_settings"]; ok {
			req.RouterSettings = nil // replaced whole, not merged
		}
		if err := decodeExact(body, &req, http.StatusUnprocessableEntity); err != nil {
			return err
		}
		// null takes the key out of its team or organization, as "" does (decoding leaves
		// a string as it was).
		if string(given["team_id"]) == "null" {
			req.TeamID = ""
		}
		if string(given["organization_id"]) == "null" {
			req.OrganizationID = ""
		}
		if _, orgGiven := given["organization_id"]; req.TeamID != "" && req.TeamID != rec.TeamID && !orgGiven {
			// A key put into a team is in the team's organization, whichever it was in (as
			// LiteLLM gives a team's key its team's organization_id); an organization_id
			// sent with the team must be the team's (checkKeyOrganization).
			req.OrganizationID = ""
		}
		if _, orgGiven := given["organization_id"]; rec.TeamID != "" && req.TeamID == "" && !orgGiven {
			// A key taken out of its team stays in the team's organization (it spent through
			// it and keeps to its budget) unless organization_id says otherwise.
			t, err := store.GetJSON[storedTeam](ctx, tx, store.Teams, owner+"/"+rec.TeamID)
			switch {
			case err == nil:
				req.OrganizationID = t.OrganizationID
			case !errors.Is(err, store.ErrNotFound):
				return fmt.Errorf("server: reading team %s: %w", rec.TeamID, err)
			}
		}
		if _, ok := given["blocked"]; ok {
			req.budgetBlock = false // blocked said outright (LiteLLM's max_budget 0 says it again in adjust)
		}
		if _, ok := given["user_id"]; ok { // null: "", the key taken from its user
			if err := req.linkUser(metadataGiven); err != nil {
				return err
			}
			// Only a changed user_id must name a user: the key's own, sent back as it is,
			// may be a label no user has (LiteLLM's /key/generate, a build before users).
			if req.UserID != "" && req.UserID != keyUserID(rec.virtualKey) {
				if _, err := storedUserOf(ctx, tx, owner, req.UserID); err != nil {
					return err
				}
			}
		}
		if _, ok := given["tags"]; ok { // null or []: the key's tags removed
			if err := req.linkTags(); err != nil {
				return err
			}
		}
		if adjust != nil {
			adjust(&req, rec.virtualKey)
		}
		if !reflect.DeepEqual(req.Metadata["tags"], rec.Metadata["tags"]) { // a label of an older key is kept as it is
			if _, err := keyTags(req.Metadata); err != nil {
				return err
			}
		}
		if err := takeKeyBudgetOf(ctx, tx, owner, &req, given); err != nil {
			return err
		}
		check := req
		check.modelLimitsGiven = keyModelLimitsGiven(given)
		if !expiryGiven {
			check.ExpiresAt = nil // kept as it is, past or not
		}
		if _, given := given["guardrails"]; !given {
			check.Guardrails = nil // kept as they are, even one the server no longer configures
		}
		if _, given := given["aliases"]; !given {
			check.Aliases = nil // kept as they are, even one naming a model no longer served
		}
		if _, given := given["router_settings"]; !given {
			check.RouterSettings = nil // kept as they are, even a fallback no longer served
		}
		limits, err := checkKeyRequest(g, check, time.Now().UTC(), modelsGiven)
		if err != nil {
			return err
		}
		if _, given := given["mcp_servers"]; given {
			if err := s.checkKeyMCPServers(req.MCPServers); err != nil {
				return err
			}
		}
		if _, nameGiven := given["name"]; nameGiven && uniqueName != "" && req.Name != rec.Name {
			issued, err := tx.List(ctx, store.VirtualKeys, store.ListOptions{Prefix: owner + "/", Limit: MaxVirtualKeysPerOwner})
			if err != nil {
				return err
			}
			if err := checkUniqueName(issued, uniqueName, req.Name, id); err != nil {
				return err
			}
		}
		_, teamGiven := given["team_id"]
		_, orgGiven := given["organization_id"]
		if teamGiven || modelsGiven {
			if err := checkKeyTeam(ctx, g, tx, owner, req.TeamID, req.Models); err != nil {
				return err
			}
		}
		if req.TeamID != "" && req.TeamID != rec.TeamID {
			if err := checkKeyUserInTeam(ctx, tx, owner, req.TeamID, keyUserID(virtualKey{Metadata: req.Metadata})); err != nil {
				return err
			}
			if err := checkKeyTeamRates(ctx, tx, owner, id, req.TeamID, req.TokensPerMinute, req.RequestsPerMinute); err != nil {
				return err
			}
		}
		if req.TeamID != "" && (req.TeamID != rec.TeamID || !reflect.DeepEqual(req.Metadata["tags"], rec.Metadata["tags"])) {
			// Moved into a team, or its tags changed: with the team's, at most MaxTags.
			if err := checkKeyTeamTags(ctx, tx, owner, req.TeamID, req.Metadata); err != nil {
				return err
			}
		}
		if teamGiven || modelsGiven || orgGiven {
			if err := checkKeyOrganization(ctx, g, tx, owner, req); err != nil {
				return err
			}
		}
		vk = rec.virtualKey
		req.applyTo(&vk, limits)
		if err := completions.SetSharedBudgetLimits(ctx, tx, "key/"+id, limits); err != nil {
			return err
		}
		if rotate {
			vk.keyName = abbreviateKey(key)
			return rotateKeyRecords(ctx, tx, owner, rec.Hash, newHash, &vk)
		}
		// Rewritten whole: an expired key's record may be gone (the first use after its
		// expiry deletes it), and a new expiry brings it back.
		return putKeyRecords(ctx, tx, owner, rec.Hash, &vk)
	})
	if err != nil {
		return nil, fmt.Errorf("server: updating key %s: %w", id, err)
	}
	s.log.InfoContext(ctx, "virtual key updated", "owner", owner, "key_id", id, "rotated", rotate)
	out := s.withSpend(ctx, vk)
	out.Key = key
	return &out, nil
}

// checkKeyUserInTeam answers 403 naming team_id when a key of user (its user_id, "" for
// none) is put into owner's team but user is not a member of it, as LiteLLM's
// validate_key_team_change refuses a key moved into a team its user_id is not in
// (key_management_endpoints.py), whoever moves it. A key without user_id may join any team.
// The user checked is the key's after the change (LiteLLM checks the key's before it,
// which differs only when one request changes both).
func checkKeyUserInTeam(ctx context.Context, rd store.Reader, owner, team, user string) error {
	if user == "" {
		return nil
	}
	if _, ok, err := memberOf(ctx, rd, owner, team, user); err != nil {
		return err
	} else if !ok {
		return forbiddenParam("team_id", "team_id: User=%s is not a member of the team=%s. Check team members via `/team/info` (add it with /team/member_add).", user, team)
	}
	return nil
}

// checkKeyTeamRates answers 403 naming the field when key id, moved into owner's team,
// would keep a tokens_per_minute (tpm) or requests_per_minute (rpm) above the team's, as
// LiteLLM's validate_key_team_change refuses a key whose tpm_limit or rpm_limit is greater
// than its new team's; 0 on either side is no bound. The key's limits are those after the
// update, so a request lowering them with the move passes.
func checkKeyTeamRates(ctx context.Context, rd store.Reader, owner, id, team string, tpm int64, rpm int) error {
	if tpm == 0 && rpm == 0 {
		return nil
	}
	t, err := storedTeamOf(ctx, rd, owner, team)
	if err != nil {
		return err
	}
	refuse := func(field, unit string, key, teams int64) error {
		return forbiddenParam(field, "%s: Key=%s has a limit of %d %s per minute, which is greater than the %d of team=%s (lower it with the move, or raise the team's)", field, id, key, unit, teams, team)
	}
	if t.TokensPerMinute > 0 && tpm > t.TokensPerMinute {
		return refuse("tokens_per_minute", "tokens", tpm, t.TokensPerMinute)
	}
	if t.RequestsPerMinute > 0 && rpm > t.RequestsPerMinute {
		return refuse("requests_per_minute", "requests", int64(rpm), int64(t.RequestsPerMinute))
	}
	return nil
}

// checkKeyMCPServers validates a key's mcp_servers: each one a server of --mcp-servers,
// listed once.
func (s *Server) checkKeyMCPServers(names []string) error {
	if len(names) > maxKeyMCPServers {
		return Validation(http.StatusUnprocessableEntity, "mcp_servers: at most %d servers, got %d", maxKeyMCPServers, len(names))
	}
	for i, n := range names {
		if slices.Index(names, n) < i {
			return Validation(http.StatusUnprocessableEntity, "mcp_servers[%d]: %q is listed twice", i, n)
		}
		if s.mcp == nil {
			return Validation(http.StatusUnprocessableEntity, "mcp_servers[%d]: %q: this server has no MCP servers configured (serve --mcp-servers)", i, n)
		}
		if !s.mcp.HasServer(n) {
			return Validation(http.StatusUnprocessableEntity, "mcp_servers[%d]: %q is not an MCP server of this server (GET /v1/mcp/server lists them)", i, n)
		}
	}
	return nil
}
