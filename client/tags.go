package client

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// Tag budgets are LiteLLM's (POST /tag/new and the routes beside it): a tag given a budget
// holds one account that every request naming the tag (CompletionRequest.Tags, the
// OpenAI surfaces' metadata.tags, an x-litellm-tags header), of any virtual key of the
// calling key, also draws on; past it those requests are refused (429 "Budget has been
// exceeded! Tag=…") while requests without the tag go on.

// TagRequest asks the server to create a tag with a budget (POST /tag/new). Zero fields
// mean no limit.
type TagRequest struct {
	// Name is the tag: 1-64 letters, digits or . _ : / -; required.
	Name string `json:"name"`
	// Description says what the tag stands for.
	Description string `json:"description,omitempty"`
	// MaxBudgetUSD is what the requests naming the tag may spend together, per
	// BudgetDuration (LiteLLM's max_budget).
	MaxBudgetUSD float64 `json:"max_budget,omitempty"`
	// SoftBudgetUSD is a mark that sends a budget alert and never blocks (soft_budget).
	SoftBudgetUSD float64 `json:"soft_budget,omitempty"`
	// BudgetDuration restarts the tag's spend from zero every period: "30d".
	BudgetDuration string `json:"budget_duration,omitempty"`
	// TokensPerMinute bounds the requests naming the tag together (tpm_limit).
	TokensPerMinute int64 `json:"tpm_limit,omitempty"`
	// Models are deployments (model_info.id, or model group names) that carry the tag for
	// tag routing (LiteLLM's models): groups with tag filtering on route requests naming
	// the tag to them.
	Models []string `json:"models,omitempty"`
}

// TagUpdate changes the fields of a tag that are not nil (POST /tag/update); its spend is
// kept.
type TagUpdate struct {
	// Description replaces the description; "" removes it.
	Description *string
	// MaxBudgetUSD replaces the bound; RemoveMaxBudget removes it (not both).
	MaxBudgetUSD    *float64
	RemoveMaxBudget bool
	// SoftBudgetUSD replaces the soft budget (0 removes it).
	SoftBudgetUSD *float64
	// BudgetDuration replaces the period ("" for all time).
	BudgetDuration *string
	// TokensPerMinute replaces the bound (0 removes it).
	TokensPerMinute *int64
	// Models replaces the deployments that carry the tag when not nil; empty (non-nil)
	// removes them.
	Models []string
}

// Tag describes a tag as LiteLLM's TagConfig does, with its limits and spend.
type Tag struct {
	// Name is the tag; Description what it stands for (empty for none).
	Name        string `json:"name"`
	Description string `json:"description"`
	// Models are the deployments that carry the tag for tag routing (none: empty).
	Models []string `json:"models"`
	// Budget holds its limits (LiteLLM's litellm_budget_table); nil when it has none.
	Budget *TagBudget `json:"litellm_budget_table"`
	// SpendUSD is what the requests naming it spent (in the current period with a
	// budget_duration).
	SpendUSD float64 `json:"spend"`
	// CreatedAt, UpdatedAt and CreatedBy say when and by which key it was made and changed.
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	CreatedBy string    `json:"created_by"`
}

// TagBudget is a tag's limits; nil means no bound.
type TagBudget struct {
	MaxBudgetUSD    *float64 `json:"max_budget"`
	SoftBudgetUSD   *float64 `json:"soft_budget"`
	TokensPerMinute *int64   `json:"tpm_limit"`
	BudgetDuration  *string  `json:"budget_duration"`
}

// tagAnswer is the answer of /tag/new and /tag/update.
type tagAnswer struct {
	Tag Tag `json:"tag"`
}

// CreateTag makes a tag with a budget and returns it. A tag that exists is ErrConflict; a
// bad field ErrInvalid naming it.
func (c *Client) CreateTag(ctx context.Context, req *TagRequest) (*Tag, error) {
	if req == nil || req.Name == "" {
		return nil, fmt.Errorf("client: POST /tag/new: %w", ErrMissingID)
	}
	var out tagAnswer
	if err := c.do(ctx, http.MethodPost, "/tag/new", nil, req, &out); err != nil {
		return nil, err
	}
	return &out.Tag, nil
}

// UpdateTag changes the tag name and returns it as it is now. A failed update changes
// nothing; an unknown tag is ErrNotFound.
func (c *Client) UpdateTag(ctx context.Context, name string, u *TagUpdate) (*Tag, error) {
	if name == "" {
		return nil, fmt.Errorf("client: POST /tag/update: %w", ErrMissingID)
	}
	body := patchBody{"name": name}
	if u != nil {
		if u.RemoveMaxBudget && u.MaxBudgetUSD != nil {
			return nil, fmt.Errorf("client: POST /tag/update: MaxBudgetUSD and RemoveMaxBudget both set: %w", ErrInvalid)
		}
		if u.Description != nil {
			body["description"] = nullOr(*u.Description, *u.Description == "")
		}
		body.set("max_budget", u.MaxBudgetUSD, u.MaxBudgetUSD != nil)
		body.set("max_budget", nil, u.RemoveMaxBudget)
		if u.SoftBudgetUSD != nil {
			body["soft_budget"] = nullOr(*u.SoftBudgetUSD, *u.SoftBudgetUSD == 0)
		}
		if u.BudgetDuration != nil {
			body["budget_duration"] = nullOr(*u.BudgetDuration, *u.BudgetDuration == "")
		}
		if u.TokensPerMinute != nil {
			body["tpm_limit"] = nullOr(*u.TokensPerMinute, *u.TokensPerMinute == 0)
		}
		body.set("models", u.Models, u.Models != nil)
	}
	var out tagAnswer
	if err := c.do(ctx, http.MethodPost, "/tag/update", nil, body, &out); err != nil {
		return nil, err
	}
	return &out.Tag, nil
}

// Tag returns the tag name with its limits and spend; an unknown tag is ErrNotFound.
func (c *Client) Tag(ctx context.Context, name string) (*Tag, error) {
	if name == "" {
		return nil, fmt.Errorf("client: POST /tag/info: %w", ErrMissingID)
	}
	var out map[string]Tag
	if err := c.do(ctx, http.MethodPost, "/tag/info", nil, map[string]any{"names": []string{name}}, &out); err != nil {
		return nil, err
	}
	t, ok := out[name]
	if !ok {
		return nil, fmt.Errorf("client: POST /tag/info: the answer has no tag %q: %w", name, ErrNotFound)
	}
	return &t, nil
}

// Tags returns the calling key's tags with budgets.
func (c *Client) Tags(ctx context.Context) ([]Tag, error) {
	var out []Tag
	if err := c.do(ctx, http.MethodGet, "/tag/list", nil, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteTag deletes the tag name with its account: requests naming it no longer draw on a
// budget. An unknown tag is ErrNotFound.
func (c *Client) DeleteTag(ctx context.Context, name string) error {
	if name == "" {
		return fmt.Errorf("client: POST /tag/delete: %w", ErrMissingID)
	}
	return c.do(ctx, http.MethodPost, "/tag/delete", nil, map[string]string{"name": name}, nil)
}
