package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// CustomerRequest asks the server to create an end user of an app (POST
// /api/v1/customers, LiteLLM's customer): the budget, block and models of every request
// that names it (OpenAI's user, Anthropic's metadata.user_id, the x-litellm-end-user-id
// header). Zero fields mean no limit. A request naming an end user not created yet makes
// it with no limits, so its spend is always kept.
type CustomerRequest struct {
	// EndUserID is the id the app gives the end user in its requests (required).
	EndUserID string `json:"end_user_id"`
	// Alias labels the end user.
	Alias string `json:"alias,omitempty"`
	// Models the end user's requests may call; empty allows every model.
	Models []string `json:"models,omitempty"`
	// MaxBudgetUSD is what the end user's requests may spend across every key, per
	// BudgetDuration; SoftBudgetUSD a mark that sends a budget alert and never blocks.
	MaxBudgetUSD  float64 `json:"max_budget_usd,omitempty"`
	SoftBudgetUSD float64 `json:"soft_budget_usd,omitempty"`
	// BudgetDuration restarts the end user's spend from zero every period: "30d".
	BudgetDuration string `json:"budget_duration,omitempty"`
	// Blocked creates the end user with every request naming it refused.
	Blocked bool `json:"blocked,omitempty"`
	// TokensPerMinute bounds the tokens the end user's answers may use per minute across
	// every key (LiteLLM's tpm_limit); 0 for no bound.
	TokensPerMinute int64 `json:"tokens_per_minute,omitempty"`
	// RequestsPerMinute bounds the requests naming the end user per minute across every
	// key (LiteLLM's rpm_limit: past it a 429); 0 for no bound.
	RequestsPerMinute int `json:"requests_per_minute,omitempty"`
	// ModelMaxBudget bounds what the end user's requests spend on single models across
	// every key (LiteLLM's end user model_max_budget): a model whose budget is spent is
	// passed over for the request's next model, and a request all of whose models are
	// spent is refused (400 budget_exceeded). Models are named as requests name them.
	ModelMaxBudget map[string]ModelBudget `json:"model_max_budget,omitempty"`
	// BudgetID names a LiteLLM budget of the calling key (POST /budget/new) whose
	// max_budget, soft_budget, budget_duration, tpm_limit, rpm_limit and model_max_budget
	// the end user takes, now and whenever the budget changes; MaxBudgetUSD,
	// SoftBudgetUSD, BudgetDuration, TokensPerMinute, RequestsPerMinute and ModelMaxBudget
	// may not be given with it (unless they are the budget's).
	BudgetID string `json:"budget_id,omitempty"`
}

// ModelBudget is one model's budget of an end user's ModelMaxBudget.
type ModelBudget struct {
	// MaxBudgetUSD is what may be spent on the model (per BudgetDuration when set); 0
	// refuses every request for it.
	MaxBudgetUSD float64 `json:"max_budget_usd"`
	// BudgetDuration restarts the model's spend from zero every period: "1d"; empty for
	// all time.
	BudgetDuration string `json:"budget_duration,omitempty"`
}

// ModelSpend is what one model of a ModelMaxBudget spent in its current period.
type ModelSpend struct {
	CostUSD float64 `json:"cost_usd"`
	// PeriodStart is when the model's current period began (with a BudgetDuration).
	PeriodStart *time.Time `json:"period_start,omitempty"`
}

// Customer describes an end user.
type Customer struct {
	EndUserID string `json:"end_user_id"`
	// Alias, Models, MaxBudgetUSD, SoftBudgetUSD, BudgetDuration and Blocked are as
	// CustomerRequest describes them.
	Alias          string   `json:"alias,omitempty"`
	Models         []string `json:"models,omitempty"`
	MaxBudgetUSD   float64  `json:"max_budget_usd,omitempty"`
	SoftBudgetUSD  float64  `json:"soft_budget_usd,omitempty"`
	BudgetDuration string   `json:"budget_duration,omitempty"`
	Blocked        bool     `json:"blocked,omitempty"`
	// TokensPerMinute, RequestsPerMinute and BudgetID are as CustomerRequest describes
	// them; with BudgetID the budget fields are the budget's.
	TokensPerMinute   int64     `json:"tokens_per_minute,omitempty"`
	RequestsPerMinute int       `json:"requests_per_minute,omitempty"`
	BudgetID          string    `json:"budget_id,omitempty"`
	CreatedAt         time.Time `json:"created_at"`
	// ModelMaxBudget is as CustomerRequest describes it; what each model spent is in
	// Spend.Models.
	ModelMaxBudget map[string]ModelBudget `json:"model_max_budget,omitempty"`
	// CreatedByRequest is true when the first request naming it made it.
	CreatedByRequest bool `json:"created_by_request,omitempty"`
	// Spend is what the end user's requests used across every key (in the current period).
	Spend KeySpend `json:"spend"`
}

// CustomerUpdate changes an end user (PATCH /api/v1/customers/{id}): the fields set
// replace the end user's; the others stay.
type CustomerUpdate struct {
	// Alias, MaxBudgetUSD, SoftBudgetUSD, BudgetDuration and Blocked replace the end
	// user's when not nil.
	Alias          *string
	MaxBudgetUSD   *float64
	SoftBudgetUSD  *float64
	BudgetDuration *string
	Blocked        *bool
	// TokensPerMinute replaces the end user's tokens per minute bound when not nil (0:
	// none).
	TokensPerMinute *int64
	// RequestsPerMinute replaces the end user's requests per minute bound when not nil
	// (0: none).
	RequestsPerMinute *int
	// ModelMaxBudget replaces the end user's per-model budgets whole when not nil; empty
	// (non-nil) removes them.
	ModelMaxBudget map[string]ModelBudget
	// BudgetID, when not nil, makes the end user take that LiteLLM budget's limits; ""
	// leaves its budget, keeping the budget's values as the end user's own. The end user's
	// budget fields may not be set beside a non-empty BudgetID.
	BudgetID *string
	// Models replaces the end user's list when not nil; empty (non-nil) allows every model.
	Models []string
}

// CreateCustomer creates an end user of the calling key.
func (c *Client) CreateCustomer(ctx context.Context, req *CustomerRequest) (*Customer, error) {
	if req == nil || req.EndUserID == "" {
		return nil, fmt.Errorf("client: POST /api/v1/customers: %w", ErrMissingID)
	}
	var out Customer
	if err := c.do(ctx, http.MethodPost, "/api/v1/customers", nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Customer returns one end user of the calling key with its spend.
func (c *Client) Customer(ctx context.Context, id string) (*Customer, error) {
	if id == "" {
		return nil, fmt.Errorf("client: GET /api/v1/customers/: %w", ErrMissingID)
	}
	var out Customer
	if err := c.do(ctx, http.MethodGet, "/api/v1/customers/"+url.PathEscape(id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Customers returns all the calling key's end users, oldest first (every page of
// ListCustomers).
func (c *Client) Customers(ctx context.Context) ([]Customer, error) {
	var out []Customer
	opts := &ListOptions{Limit: 100}
	for {
		page, err := c.ListCustomers(ctx, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Data...)
		if page.NextCursor == "" {
			return out, nil
		}
		opts.Cursor = page.NextCursor
	}
}

// ListCustomers returns one page of the calling key's end users, oldest first (opts:
// Limit, Cursor, CreatedAfter and CreatedBefore; end users have no Status).
func (c *Client) ListCustomers(ctx context.Context, opts *ListOptions) (*Page[Customer], error) {
	return list[Customer](ctx, c, "/api/v1/customers", opts)
}

// UpdateCustomer changes the end user id and returns it as it is now; its spend is kept.
func (c *Client) UpdateCustomer(ctx context.Context, id string, u *CustomerUpdate) (*Customer, error) {
	if id == "" {
		return nil, fmt.Errorf("client: PATCH /api/v1/customers/: %w", ErrMissingID)
	}
	body := patchBody{}
	if u != nil {
		set := body.set
		set("alias", u.Alias, u.Alias != nil)
		set("models", u.Models, u.Models != nil)
		set("max_budget_usd", u.MaxBudgetUSD, u.MaxBudgetUSD != nil)
		set("soft_budget_usd", u.SoftBudgetUSD, u.SoftBudgetUSD != nil)
		set("budget_duration", u.BudgetDuration, u.BudgetDuration != nil)
		set("blocked", u.Blocked, u.Blocked != nil)
		set("tokens_per_minute", u.TokensPerMinute, u.TokensPerMinute != nil)
		set("requests_per_minute", u.RequestsPerMinute, u.RequestsPerMinute != nil)
		set("model_max_budget", u.ModelMaxBudget, u.ModelMaxBudget != nil)
		set("budget_id", u.BudgetID, u.BudgetID != nil)
	}
	var out Customer
	if err := c.do(ctx, http.MethodPatch, "/api/v1/customers/"+url.PathEscape(id), nil, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteCustomer deletes the end user id and its spend; a later request naming it makes
// it again with no limits.
func (c *Client) DeleteCustomer(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("client: DELETE /api/v1/customers/: %w", ErrMissingID)
	}
	return c.do(ctx, http.MethodDelete, "/api/v1/customers/"+url.PathEscape(id), nil, nil, nil)
}
