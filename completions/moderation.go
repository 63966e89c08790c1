package completions

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/invopop/jsonschema"

	"github.com/switchyard-ai/switchyard/providers"
)

// OperationModeration is RequestRecord.Operation for a moderation request.
const OperationModeration = "moderation"

// DefaultModerationModel is the model a moderation request without one is classified by
// (OpenAI's default).
const DefaultModerationModel = "omni-moderation-latest"

// ModerationRequest is OpenAI's POST /v1/moderations body. The model is "provider/model",
// a bare OpenAI moderation model name ("omni-moderation-latest", "text-moderation-…"; the
// default), or a model group, whose members are tried in order.
type ModerationRequest struct {
	// Model names the moderation model (DefaultModerationModel when empty).
	Model string `json:"model,omitempty"`
	// Input is what to classify: a string, an array of strings (a result each), or an array
	// of text and image_url parts (one result).
	Input ModerationInput `json:"input" jsonschema:"required"`
	// Tags label the request for cost attribution, as on chat requests (Request.Tags).
	Tags []string `json:"tags,omitempty" jsonschema:"maxItems=16"`
}

// ModerationInput is a moderation request's input as the caller sent it (JSON): a string,
// an array of strings, or an array of text and image_url parts.
type ModerationInput json.RawMessage

// UnmarshalJSON keeps the input as it came (validate checks it).
func (in *ModerationInput) UnmarshalJSON(b []byte) error {
	*in = append((*in)[:0], b...)
	return nil
}

// MarshalJSON writes the input as it came (null when absent).
func (in ModerationInput) MarshalJSON() ([]byte, error) {
	if len(in) == 0 {
		return []byte("null"), nil
	}
	return in, nil
}

// JSONSchema documents OpenAI's three forms.
func (ModerationInput) JSONSchema() *jsonschema.Schema {
	part := jsonschema.NewProperties()
	part.Set("type", &jsonschema.Schema{Type: "string", Enum: []any{"text", "image_url"}})
	part.Set("text", &jsonschema.Schema{Type: "string", Description: "The text of a text part"})
	url := jsonschema.NewProperties()
	url.Set("url", &jsonschema.Schema{Type: "string", Description: "An image URL or a data URL"})
	part.Set("image_url", &jsonschema.Schema{Type: "object", Properties: url, Required: []string{"url"}})
	return &jsonschema.Schema{Description: "What to classify: a string or an array of strings (a result each) or an array of text and image_url parts (one result)",
		OneOf: []*jsonschema.Schema{
			{Type: "string", MinLength: ptrUint(1)},
			{Type: "array", MinItems: ptrUint(1), Items: &jsonschema.Schema{Type: "string", MinLength: ptrUint(1)}},
			{Type: "array", MinItems: ptrUint(1), Items: &jsonschema.Schema{Type: "object", Properties: part, Required: []string{"type"}}},
		}}
}

// moderationPart is one part of a multi-modal moderation input.
type moderationPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

// validate checks req and returns the provider request (its model left for each target)
// with how many results its input calls for.
func (r *ModerationRequest) validate() (*providers.ModerationRequest, error) {
	if err := CheckTags("tags", r.Tags); err != nil {
		return nil, err
	}
	in := bytes.TrimSpace(r.Input)
	if len(in) == 0 || bytes.Equal(in, []byte("null")) {
		return nil, invalid("input", "is required: a string, an array of strings or an array of text and image_url parts")
	}
	out := &providers.ModerationRequest{Input: in, Results: 1}
	switch in[0] {
	case '"':
		var s string
		if err := json.Unmarshal(in, &s); err != nil {
			return nil, invalid("input", "is not a valid JSON string")
		}
		if s == "" {
			return nil, invalid("input", "must not be empty")
		}
		return out, nil
	case '[':
	default:
		return nil, invalid("input", "must be a string, an array of strings or an array of text and image_url parts")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(in, &items); err != nil {
		return nil, invalid("input", "is not a valid JSON array")
	}
	if len(items) == 0 {
		return nil, invalid("input", "must not be empty")
	}
	strs := items[0][0] == '"'
	for i, it := range items {
		field := "input[" + strconv.Itoa(i) + "]"
		if (it[0] == '"') != strs {
			return nil, invalid(field, "mixes strings and parts: send strings, or text and image_url parts")
		}
		if strs {
			var s string
			if err := json.Unmarshal(it, &s); err != nil || s == "" {
				return nil, invalid(field, "must be a non-empty string")
			}
			continue
		}
		var p moderationPart
		if it[0] != '{' || json.Unmarshal(it, &p) != nil {
			return nil, invalid(field, "must be a string, or a part object with a type")
		}
		switch p.Type {
		case "text":
			if p.Text == "" {
				return nil, invalid(field+".text", "is required for a text part")
			}
		case "image_url":
			if p.ImageURL.URL == "" {
				return nil, invalid(field+".image_url.url", "is required for an image_url part")
			}
		default:
			return nil, invalid(field+".type", "must be text or image_url, got %q", p.Type)
		}
	}
	if strs {
		out.Results = len(items)
	}
	return out, nil
}

// ModerationResult is one input's classification as the provider sent it: flagged,
// categories, category_scores and category_applied_input_types (OpenAI adds categories
// over time: they are passed on whole).
type ModerationResult json.RawMessage

// MarshalJSON writes the result as it came.
func (m ModerationResult) MarshalJSON() ([]byte, error) {
	if len(m) == 0 {
		return []byte("{}"), nil
	}
	return m, nil
}

// JSONSchema documents the result's fields.
func (ModerationResult) JSONSchema() *jsonschema.Schema {
	props := jsonschema.NewProperties()
	props.Set("flagged", &jsonschema.Schema{Type: "boolean", Description: "Whether any category was flagged"})
	props.Set("categories", &jsonschema.Schema{Type: "object", Description: "Each category and whether it was flagged",
		AdditionalProperties: &jsonschema.Schema{Type: "boolean"}})
	props.Set("category_scores", &jsonschema.Schema{Type: "object", Description: "Each category's score",
		AdditionalProperties: &jsonschema.Schema{Type: "number"}})
	props.Set("category_applied_input_types", &jsonschema.Schema{Type: "object", Description: "The input types (text or image) each score applies to",
		AdditionalProperties: &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string"}}})
	return &jsonschema.Schema{Type: "object", Properties: props, Required: []string{"flagged", "categories", "category_scores"}}
}

// ModerationResponse is OpenAI's moderations answer; Model is the "provider/model" that
// classified the input.
type ModerationResponse struct {
	ID      string             `json:"id"`
	Model   string             `json:"model"`
	Results []ModerationResult `json:"results"`
}

// moderationVendors are the makers of the bare moderation model names.
var moderationVendors = []struct{ prefix, provider string }{
	{"omni-moderation", "openai"}, {"text-moderation", "openai"},
}

// moderationModel returns the "provider/model" a bare moderation model name stands for.
func (g *Gateway) moderationModel(field, name string) (string, error) {
	return g.kindModel(field, name, nil, moderationVendors)
}

// moderationTargets resolves a moderation request's model: a model group's members in
// order, else the model itself.
func (g *Gateway) moderationTargets(name string) ([]target, error) {
	return g.groupTargets(name, g.moderationModel, providers.ServesModeration,
		func(field, provider, model string) error {
			return invalid(field, "provider %q of %q has no moderations API", provider, model)
		})
}

// Moderate answers a moderation request: it validates req, checks the caller's budget
// (its model restrictions and request counts: moderation is free, as OpenAI's is) and
// calls the model, retrying it (and, for a model group, its other members in order) as
// chat completions are retried, with the same circuit breakers. The request is recorded in
// the ledger and by the observer (operation "moderation") at no cost. Errors:
// *ValidationError (ErrInvalid), ErrModelNotAllowed, ErrBudgetExceeded, *AllFailedError,
// or the context's error.
func (g *Gateway) Moderate(ctx context.Context, scope Scope, req *ModerationRequest) (*ModerationResponse, error) {
	if g.breakers == nil {
		return nil, ErrZeroGateway
	}
	if req == nil {
		return nil, errNilRequest()
	}
	preq, err := req.validate()
	if err != nil {
		return nil, err
	}
	if scope, err = g.withTagBudgets(ctx, scope, req.Tags); err != nil {
		return nil, err
	}
	model := cmp.Or(req.Model, DefaultModerationModel)
	targets, err := g.moderationTargets(model)
	if err != nil {
		return nil, err
	}
	p, err := g.enterOp(ctx, scope, req.Model, req.Tags, targets, func(have []target) []target {
		return g.opFallbacks(ctx, scope, model, providers.ModerationMode, req.Tags, have, g.moderationTargets, nil)
	})
	if err != nil {
		return nil, err
	}
	defer p.ended() // every way out of Moderate ends the request
	var out *providers.ModerationResponse
	used, begin, err := g.callAttempts(ctx, p, "no moderation", func(ctx, actx context.Context, t target, begin time.Time) error {
		r := *preq
		r.Model = t.model
		res, err := t.p.(providers.Moderator).Moderate(actx, &r)
		if err != nil {
			// An answer over the cap on its size: the call was made, at no cost (as every
			// moderation's), recorded as a part with the answer's size.
			g.chargeOversizedOp(ctx, p, t, err, begin, func(*providers.Error) (providers.Usage, Costs, bool) {
				return providers.Usage{}, Costs{PriceKnown: true}, false
			})
		}
		out = res
		return err
	})
	if err != nil {
		g.observeOpFailure(ctx, p, OperationModeration, false, err)
		return nil, err
	}
	now := g.opts.Now()
	costs := Costs{PriceKnown: true}
	g.account(ctx, p, used, providers.Usage{}, costs, true, false, now.Sub(begin))
	resp := &ModerationResponse{ID: out.ID, Model: used.name, Results: make([]ModerationResult, len(out.Results))}
	if resp.ID == "" {
		resp.ID = "modr-" + uuid.NewString()
	}
	for i, r := range out.Results {
		resp.Results[i] = ModerationResult(r)
	}
	g.observeOpAnswer(ctx, p, OperationModeration, used, Usage{Costs: costs}, false, nil, now)
	return resp, nil
}
