package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// KeyRequest asks the server to issue a virtual key (POST /api/v1/keys): an API key for an
// application or a person that acts for the calling key on the gateway and model selection
// only, within the limits given. Zero fields mean no limit.
type KeyRequest struct {
	// Name labels the key (at most 256 characters).
	Name string `json:"name,omitempty"`
	// Models the key may call: "provider/model" names, bare names, model groups.
	Models []string `json:"models,omitempty"`
	// MaxBudgetUSD is what the key may spend, per BudgetDuration when set.
	MaxBudgetUSD float64 `json:"max_budget_usd,omitempty"`
	// BudgetDuration restarts the key's spend from zero every period: "30d", "12h", "90m".
	BudgetDuration string `json:"budget_duration,omitempty"`
	// MaxTokens and MaxRequests bound its tokens and requests, per BudgetDuration when set.
	MaxTokens   int64 `json:"max_tokens,omitempty"`
	MaxRequests int64 `json:"max_requests,omitempty"`
	// RequestsPerMinute bounds its POST requests per server process.
	RequestsPerMinute int `json:"requests_per_minute,omitempty"`
	// TokensPerMinute bounds the tokens its answers use per minute, per server process.
	TokensPerMinute int64 `json:"tokens_per_minute,omitempty"`
	// MaxParallelRequests bounds its requests in flight at once (LiteLLM's
	// max_parallel_requests): one more is a 429 until one ends; 0 for no bound.
	MaxParallelRequests int `json:"max_parallel_requests,omitempty"`
	// Aliases are the key's own model names (LiteLLM's key aliases): a request of the key
	// naming one (as a chat request's model, or in a completions request's Models or
	// FallbackModels) is sent to the model it stands for, which Models must allow.
	Aliases map[string]string `json:"aliases,omitempty"`
	// RouterSettings are the key's own retries, timeout and fallbacks (LiteLLM's key
	// router_settings), applied to each of its requests in place of its team's and the
	// server's; nil for none.
	RouterSettings *RouterSettings `json:"router_settings,omitempty"`
	// ExpiresAt is when the key stops working; nil for never.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// Metadata are labels kept and shown with the key (a JSON object of at most 16 KiB).
	// The server reads two: user_id (UserID) and tags (Tags).
	Metadata map[string]any `json:"metadata,omitempty"`
	// Tags are the key's tags (LiteLLM's key-level tags; at most 16, 1-64 letters, digits or
	// . _ : / -): every request of the key carries them, for tag routing, tag budgets
	// (CreateTag) and spend per tag. The server keeps them as Metadata's tags; given both,
	// Tags win and replace Metadata's tags label.
	Tags []string `json:"tags,omitempty"`
	// Blocked issues the key refusing every request as over its budget, until unblocked
	// (LiteLLM's max_budget 0).
	Blocked bool `json:"blocked,omitempty"`
	// Guardrails names server guardrails (serve --guardrails) every chat request of the key
	// runs, whatever the request names.
	Guardrails []string `json:"guardrails,omitempty"`
	// TeamID puts the key in a team (CreateTeam) of the calling key: its requests also draw
	// on the team's budget and keep to the team's models and rates.
	TeamID string `json:"team_id,omitempty"`
	// OrganizationID puts a key without a team in an organization (CreateOrganization) of
	// the calling key: its requests also draw on the organization's budget (and on the
	// user's membership of it) and keep to its models and rates. Beside TeamID it must be
	// the team's organization.
	OrganizationID string `json:"organization_id,omitempty"`
	// SoftBudgetUSD is a USD mark that never blocks: crossing it sends a budget alert to the
	// server's --alert-webhook (LiteLLM's soft_budget).
	SoftBudgetUSD float64 `json:"soft_budget_usd,omitempty"`
	// MCPServers are the MCP servers (serve --mcp-servers) the key may use through /mcp and
	// the mcp tools of /v1/responses; empty allows every one.
	MCPServers []string `json:"mcp_servers,omitempty"`
	// UserID makes the key a user's (CreateUser) of the calling key: its requests also
	// draw on the user's budget (and on the user's membership of the key's team) and the
	// user lists it. The server keeps it as Metadata's user_id; given both, they must agree.
	// A user id naming no user is a 404 naming user_id.
	UserID string `json:"user_id,omitempty"`
	// BudgetID names a LiteLLM budget of the calling key (POST /budget/new) whose
	// max_budget, soft_budget, budget_duration, tpm_limit, rpm_limit and
	// max_parallel_requests become the key's MaxBudgetUSD, SoftBudgetUSD, BudgetDuration,
	// TokensPerMinute, RequestsPerMinute and MaxParallelRequests, now and whenever the
	// budget changes, and its model_max_budget the key's when it has none of its own;
	// those fields may not be set
	// beside it with other values (a 422 naming the field), and a
	// budget id naming no budget is a 404 naming budget_id.
	BudgetID string `json:"budget_id,omitempty"`
}

// VirtualKey describes an issued key. Key is set only in IssueKey's answer: the server
// keeps a hash and cannot show it again.
type VirtualKey struct {
	// ID names the key in the keys API (vk_ and 16 hex digits); it is not the key.
	ID string `json:"id"`
	// Key is the key itself (sy-vk-…), in IssueKey's answer only.
	Key string `json:"key,omitempty"`
	// Name, Models, MaxBudgetUSD, BudgetDuration, MaxTokens, MaxRequests and
	// RequestsPerMinute are the key's limits, as KeyRequest describes them.
	Name              string   `json:"name,omitempty"`
	Models            []string `json:"models,omitempty"`
	MaxBudgetUSD      float64  `json:"max_budget_usd,omitempty"`
	BudgetDuration    string   `json:"budget_duration,omitempty"`
	MaxTokens         int64    `json:"max_tokens,omitempty"`
	MaxRequests       int64    `json:"max_requests,omitempty"`
	RequestsPerMinute int      `json:"requests_per_minute,omitempty"`
	TokensPerMinute   int64    `json:"tokens_per_minute,omitempty"`
	// MaxParallelRequests and Aliases are the key's, as KeyRequest describes them.
	MaxParallelRequests int               `json:"max_parallel_requests,omitempty"`
	Aliases             map[string]string `json:"aliases,omitempty"`
	// RouterSettings are the key's own (nil: its team's apply, else the server's).
	RouterSettings *RouterSettings `json:"router_settings,omitempty"`
	CreatedAt      time.Time       `json:"created_at"`
	// ExpiresAt is when the key stops working; nil for never.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// Expired: the key is past ExpiresAt and refused.
	Expired bool `json:"expired,omitempty"`
	// Metadata are the key's labels.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Tags are the key's tags, its Metadata's tags (none: nil).
	Tags []string `json:"tags,omitempty"`
	// Blocked: the key refuses every request as over its budget until unblocked.
	Blocked bool `json:"blocked,omitempty"`
	// Guardrails are the server guardrails every chat request of the key runs.
	Guardrails []string `json:"guardrails,omitempty"`
	// BudgetBlock: the block is LiteLLM's max_budget 0 (a budget of nothing), which a new
	// max_budget on /key/update lifts.
	BudgetBlock bool `json:"budget_block,omitempty"`
	// TeamID is the key's team ("" for none).
	TeamID string `json:"team_id,omitempty"`
	// OrganizationID is the organization of a key without a team ("" for none; a key of a
	// team is in the team's organization).
	OrganizationID string `json:"organization_id,omitempty"`
	// SoftBudgetUSD is the key's alerting mark (0 for none).
	SoftBudgetUSD float64 `json:"soft_budget_usd,omitempty"`
	// MCPServers are the MCP servers the key may use (empty: every one).
	MCPServers []string `json:"mcp_servers,omitempty"`
	// UserID is the user the key is made for, its Metadata's user_id ("" for none).
	UserID string `json:"user_id,omitempty"`
	// BudgetID is the LiteLLM budget the key's budget fields come from ("" for its own).
	BudgetID string `json:"budget_id,omitempty"`
	// Spend is what the key used (in the current period with BudgetDuration).
	Spend KeySpend `json:"spend"`
	// ETag is the key's version, from the answer's ETag header (Key, IssueKey, RotateKey,
	// UpdateKey; "" from ListKeys or a server without it): it changes with every rotation
	// and every change of the key's name or limits (a /budget/update changing the values of
	// its BudgetID included), not with its spend. Give it to RotateKeyIfMatch or
	// KeyUpdate.IfMatch to act only on that version.
	ETag string `json:"-"`
}

// KeySpend is what a virtual key used.
type KeySpend struct {
	// Requests counts the completion and embedding requests that took a call.
	Requests int64 `json:"requests"`
	// Tokens and CostUSD are what the answers used, as the gateway priced them.
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
	// PeriodStart is when the current budget period began (with BudgetDuration).
	PeriodStart *time.Time `json:"period_start,omitempty"`
	// Models is the spend of each model of the model_max_budget (an end user's
	// Customer.ModelMaxBudget, a key's), in its own period.
	Models map[string]ModelSpend `json:"models,omitempty"`
}

// IssueKey issues a virtual key; its Key is shown once, here.
func (c *Client) IssueKey(ctx context.Context, req *KeyRequest) (*VirtualKey, error) {
	if req == nil {
		req = &KeyRequest{}
	}
	return c.keyCall(ctx, http.MethodPost, "/api/v1/keys", "", req)
}

// keyCall sends a keys API request with If-Match ifMatch (none when "") and answers the
// key, its ETag from the answer's header.
func (c *Client) keyCall(ctx context.Context, method, path, ifMatch string, body any) (*VirtualKey, error) {
	var header http.Header
	if ifMatch != "" {
		header = http.Header{"If-Match": {ifMatch}}
	}
	var out VirtualKey
	h, err := c.doHeader(ctx, method, path, nil, header, body, &out)
	if err != nil {
		return nil, err
	}
	out.ETag = h.Get("ETag")
	return &out, nil
}

// ListKeys returns the virtual keys the calling key issued, newest first, with their spend.
func (c *Client) ListKeys(ctx context.Context) ([]VirtualKey, error) {
	var out struct {
		Data []VirtualKey `json:"data"`
	}
	if err := c.do(ctx, http.MethodGet, "/api/v1/keys", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// Key returns one virtual key the calling key issued; id "self" is the calling virtual
// key itself (its limits and spend).
func (c *Client) Key(ctx context.Context, id string) (*VirtualKey, error) {
	if id == "" {
		return nil, fmt.Errorf("client: GET /api/v1/keys/: %w", ErrMissingID)
	}
	return c.keyCall(ctx, http.MethodGet, "/api/v1/keys/"+url.PathEscape(id), "", nil)
}

// RotateKey gives the virtual key id the calling key issued a new key (in the answer's Key,
// shown once): the old key stops working at once on every replica; the id, limits and
// spend stay. It rotates whatever key id has: of two callers rotating at once both succeed
// and the first one's new key no longer works; RotateKeyIfMatch rotates only one version.
func (c *Client) RotateKey(ctx context.Context, id string) (*VirtualKey, error) {
	return c.RotateKeyIfMatch(ctx, id, "")
}

// RotateKeyIfMatch is RotateKey only if the key is still at version etag (a VirtualKey's
// ETag, from Key or an earlier rotation or update): otherwise nothing changes and the
// error matches ErrPreconditionFailed (the key was rotated or changed meanwhile). Of
// concurrent calls giving one etag exactly one succeeds. etag "" rotates unconditionally.
// A call resent after a connection error or a 502/504 (RetryPolicy) may have rotated the
// key on that earlier attempt, its new key lost: the 412 it then gets says so.
func (c *Client) RotateKeyIfMatch(ctx context.Context, id, etag string) (*VirtualKey, error) {
	if id == "" {
		return nil, fmt.Errorf("client: POST /api/v1/keys/{id}/rotate: %w", ErrMissingID)
	}
	return c.keyCall(ctx, http.MethodPost, "/api/v1/keys/"+url.PathEscape(id)+"/rotate", etag, nil)
}

// RevokeKey revokes a virtual key the calling key issued, at once on every replica,
// whatever its version; RevokeKeyIfMatch revokes only one version.
func (c *Client) RevokeKey(ctx context.Context, id string) (*Deletion, error) {
	return c.remove(ctx, "/api/v1/keys/", id)
}

// RevokeKeyIfMatch is RevokeKey only if the key is still at version etag (a VirtualKey's
// ETag, from Key or an earlier rotation or update): otherwise the key is kept and the
// error matches ErrPreconditionFailed (it was rotated or changed meanwhile). etag ""
// revokes unconditionally.
func (c *Client) RevokeKeyIfMatch(ctx context.Context, id, etag string) (*Deletion, error) {
	if etag == "" {
		return c.RevokeKey(ctx, id)
	}
	if id == "" {
		return nil, fmt.Errorf("client: DELETE /api/v1/keys/: %w", ErrMissingID)
	}
	var d Deletion
	if _, err := c.doHeader(ctx, http.MethodDelete, "/api/v1/keys/"+url.PathEscape(id), nil, http.Header{"If-Match": {etag}}, nil, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// KeyUpdate changes a virtual key (PATCH /api/v1/keys/{id}): the fields set replace the
// key's; the others stay. ClearExpiry removes its expiry.
type KeyUpdate struct {
	// Name, MaxBudgetUSD, BudgetDuration, MaxTokens, MaxRequests, RequestsPerMinute,
	// TokensPerMinute and ExpiresAt replace the key's when not nil.
	Name              *string
	MaxBudgetUSD      *float64
	BudgetDuration    *string
	MaxTokens         *int64
	MaxRequests       *int64
	RequestsPerMinute *int
	TokensPerMinute   *int64
	ExpiresAt         *time.Time
	// MaxParallelRequests replaces the key's bound when not nil (0 removes it).
	MaxParallelRequests *int
	// Aliases replaces the key's aliases whole when not nil; empty (non-nil) removes them.
	Aliases map[string]string
	// RouterSettings replaces the key's router settings whole when not nil; a zero
	// RouterSettings removes them (its team's apply again).
	RouterSettings *RouterSettings
	// Models replaces the key's list when not nil; empty (non-nil) allows every model.
	Models []string
	// ClearExpiry removes the key's expiry.
	ClearExpiry bool
	// Metadata replaces the key's labels whole when not nil; empty (non-nil) removes them.
	Metadata map[string]any
	// Tags replaces the key's tags alone when not nil (its other labels kept); empty
	// (non-nil) removes them. Beside Metadata with a tags label Tags win and replace it.
	Tags []string
	// Blocked blocks (true) or unblocks (false) the key when not nil.
	Blocked *bool
	// Guardrails replaces the key's guardrails when not nil; empty (non-nil) removes them.
	Guardrails []string
	// TeamID moves the key into this team when not nil; "" takes it out of its team (it
	// stays in the team's organization, and draws on its budget, unless OrganizationID is
	// set too).
	TeamID *string
	// OrganizationID moves a key without a team into this organization when not nil; ""
	// takes it out of its organization.
	OrganizationID *string
	// SoftBudgetUSD replaces the key's soft budget when not nil (0 removes it).
	SoftBudgetUSD *float64
	// MCPServers replaces the key's MCP servers when not nil; empty (non-nil) allows every
	// one.
	MCPServers []string
	// UserID makes the key this user's when not nil; "" takes it from its user. A Metadata
	// set without UserID (and without a user_id label) keeps the key its user's.
	UserID *string
	// BudgetID makes the key take that LiteLLM budget's limits when not nil; "" leaves its
	// budget, keeping the budget's values as the key's own. The key's budget fields may not
	// be set beside a non-empty BudgetID, nor while the key has one.
	BudgetID *string
	// IfMatch, when not empty, makes the update conditional (If-Match): it is made only if
	// the key is still at this version (a VirtualKey's ETag); otherwise nothing changes and
	// the error matches ErrPreconditionFailed.
	IfMatch string
}

// UpdateKey changes the virtual key id the calling key issued and returns it as it is now;
// its spend is kept.
func (c *Client) UpdateKey(ctx context.Context, id string, u *KeyUpdate) (*VirtualKey, error) {
	if id == "" {
		return nil, fmt.Errorf("client: PATCH /api/v1/keys/: %w", ErrMissingID)
	}
	body := patchBody{}
	var ifMatch string
	if u != nil {
		ifMatch = u.IfMatch
		set := body.set
		set("name", u.Name, u.Name != nil)
		set("models", u.Models, u.Models != nil)
		set("max_budget_usd", u.MaxBudgetUSD, u.MaxBudgetUSD != nil)
		set("budget_duration", u.BudgetDuration, u.BudgetDuration != nil)
		set("max_tokens", u.MaxTokens, u.MaxTokens != nil)
		set("max_requests", u.MaxRequests, u.MaxRequests != nil)
		set("requests_per_minute", u.RequestsPerMinute, u.RequestsPerMinute != nil)
		set("tokens_per_minute", u.TokensPerMinute, u.TokensPerMinute != nil)
		set("max_parallel_requests", u.MaxParallelRequests, u.MaxParallelRequests != nil)
		set("aliases", u.Aliases, u.Aliases != nil)
		set("router_settings", u.RouterSettings, u.RouterSettings != nil)
		set("expires_at", u.ExpiresAt, u.ExpiresAt != nil)
		set("expires_at", nil, u.ClearExpiry)
		set("metadata", u.Metadata, u.Metadata != nil)
		set("tags", u.Tags, u.Tags != nil)
		set("blocked", u.Blocked, u.Blocked != nil)
		set("guardrails", u.Guardrails, u.Guardrails != nil)
		set("team_id", u.TeamID, u.TeamID != nil)
		set("organization_id", u.OrganizationID, u.OrganizationID != nil)
		set("soft_budget_usd", u.SoftBudgetUSD, u.SoftBudgetUSD != nil)
		set("mcp_servers", u.MCPServers, u.MCPServers != nil)
		set("user_id", u.UserID, u.UserID != nil)
		set("budget_id", u.BudgetID, u.BudgetID != nil)
	}
	return c.keyCall(ctx, http.MethodPatch, "/api/v1/keys/"+url.PathEscape(id), ifMatch, body)
}

// patchBody is the JSON body of a PATCH: only the fields given.
type patchBody map[string]any

// set puts v under name when ok (the field was given).
func (b patchBody) set(name string, v any, ok bool) {
	if ok {
		b[name] = v
	}
}

// RouterSettings are a virtual key's or a team's own router settings (LiteLLM's key and
// team router_settings). A request of a key applies the key's when it has any, else its
// team's, else the server's: whole, never merged setting by setting.
type RouterSettings struct {
	// NumRetries replaces the server's retries per model (0 to 10) for requests that set
	// no max_retries of their own; nil keeps the server's.
	NumRetries *int `json:"num_retries,omitempty"`
	// TimeoutSeconds bounds each upstream call, in seconds (above 0, at most 3600), as
	// LiteLLM's router timeout: a call cut by it goes on to the retries and fallbacks
	// within the request's time; nil keeps the server's. A request's own timeout wins.
	TimeoutSeconds *float64 `json:"timeout,omitempty"`
	// Fallbacks are LiteLLM's router fallbacks: [{"gpt-4o": ["claude-sonnet-4-5"]}]: a
	// request naming gpt-4o tries them when it fails, unless it names fallbacks of its
	// own (which replace them); they replace the server's fallbacks of the model group
	// asked; the model "*" stands for every model without an entry of its own.
	Fallbacks []map[string][]string `json:"fallbacks,omitempty"`
	// ContextWindowFallbacks are LiteLLM's router context_window_fallbacks, written as
	// Fallbacks are: tried in place of the plain fallbacks (and of the server's context
	// window fallbacks of the group asked) when the model asked fails with a prompt too
	// long for it.
	ContextWindowFallbacks []map[string][]string `json:"context_window_fallbacks,omitempty"`
}
