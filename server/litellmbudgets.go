package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// LiteLLM's proxy keeps reusable budgets (its LiteLLM_BudgetTable) managed through
// /budget/new, /budget/update, /budget/info, /budget/list, /budget/delete and
// /budget/settings, and attached by budget_id to customers (/customer/new and
// /customer/update) and to virtual keys (/key/generate and /key/update; keybudgets.go).
// The routes here keep them in store.LiteLLMBudgets under "<owner>/<budget_id>", each key
// seeing its own, as its teams and end users. A budget is a template of limits, not an
// account: an end user or virtual key naming one takes its max_budget, soft_budget,
// budget_duration and tpm_limit as its own account's limits (each spends against them on
// its own, as on LiteLLM), and a /budget/update rewrites them on every end user and key
// naming it in the same store transaction (store.BudgetCustomers indexes those end users;
// the keys are found among the owner's). A budget some end user or key names cannot be
// deleted: LiteLLM's database sets their budget_id to null, leaving them unbounded without
// a word; here the delete is a 400 naming them. A budget's max_parallel_requests bounds
// the requests in flight of each virtual key naming it (the key's max_parallel_requests,
// rewritten by /budget/update as the others); end users and organizations naming the budget
// have no such bound, as LiteLLM bounds requests in flight of keys and teams only. Its
// rpm_limit becomes the rpm_limit of each key, organization and end user naming it (an end
// user's requests_per_minute, LiteLLM's end_user_rpm_limit), and its model_max_budget the
// model_max_budget of each key naming it that has none of its own, as LiteLLM's key view
// (LiteLLM_VerificationTokenView) fills a key's empty rpm_limit and model_max_budget from
// its budget's row and its organization view takes the budget's rpm_limit. An end user
// naming the budget takes its model_max_budget as its own (LiteLLM's
// end_user_model_max_budget, read from the end user's budget row), rewritten by
// /budget/update as its other limits. budget_reset_at is refused with a 400
// naming it unless it asks for nothing, as the other LiteLLM routes here refuse theirs.

// Bounds of LiteLLM budgets.
const (
	// maxLiteLLMBudgetsPerOwner bounds the budgets one key may have.
	maxLiteLLMBudgetsPerOwner = 1000
	// maxLiteLLMBudgetIDLength bounds a budget's id.
	maxLiteLLMBudgetIDLength = 256
	// maxLiteLLMBudgetsAtOnce bounds the ids of one /budget/info.
	maxLiteLLMBudgetsAtOnce = 100
	// maxBudgetCustomersNamed bounds the end users a refused /budget/delete names.
	maxBudgetCustomersNamed = 20
)

// litellmBudgetUnsupported are LiteLLM's budget fields no account here can hold, with the
// reason given when one asks for something.
var litellmBudgetUnsupported = map[string]string{
	"budget_reset_at": "each end user's period starts at its own first request after it takes the budget, and restarts every budget_duration",
}

// litellmBudgetRecord is a budget's record in store.LiteLLMBudgets.
type litellmBudgetRecord struct {
	BudgetID        string  `json:"budget_id"`
	MaxBudgetUSD    float64 `json:"max_budget_usd,omitempty"`
	SoftBudgetUSD   float64 `json:"soft_budget_usd,omitempty"`
	BudgetDuration  string  `json:"budget_duration,omitempty"`
	TokensPerMinute int64   `json:"tokens_per_minute,omitempty"`
	// MaxParallelRequests bounds the requests in flight of each key naming the budget.
	MaxParallelRequests int `json:"max_parallel_requests,omitempty"`
	// RequestsPerMinute becomes the requests_per_minute (LiteLLM's rpm_limit) of each key,
	// organization and end user naming the budget.
	RequestsPerMinute int `json:"requests_per_minute,omitempty"`
	// ModelMaxBudget becomes the model_max_budget of each key naming the budget that has
	// none of its own.
	ModelMaxBudget map[string]keyModelBudget `json:"model_max_budget,omitempty"`
	CreatedAt      time.Time                 `json:"created_at"`
	CreatedBy      string                    `json:"created_by"`
	UpdatedAt      time.Time                 `json:"updated_at"`
	UpdatedBy      string                    `json:"updated_by"`
	Owner          string                    `json:"owner"`
}

// litellmBudget is a budget as LiteLLM's LiteLLM_BudgetTable describes one.
type litellmBudget struct {
	BudgetID            string                         `json:"budget_id"`
	MaxBudget           *float64                       `json:"max_budget" jsonschema:"description=USD each end user or key naming the budget may spend (per budget_duration); null for no bound"`
	SoftBudget          *float64                       `json:"soft_budget" jsonschema:"description=USD mark that sends a budget alert and never blocks; null for none"`
	MaxParallelRequests *int                           `json:"max_parallel_requests" jsonschema:"description=Requests each virtual key naming the budget may have in flight at once (its max_parallel_requests; end users have no such bound); null for no bound"`
	TPMLimit            *int64                         `json:"tpm_limit" jsonschema:"description=Tokens per minute each end user or key naming the budget may use; null for no bound"`
	RPMLimit            *int                           `json:"rpm_limit" jsonschema:"description=Requests per minute each virtual key or organization or end user naming the budget may make (its rpm_limit); null for no bound"`
	ModelMaxBudget      *map[string]litellmModelBudget `json:"model_max_budget" jsonschema:"description=USD budgets of single models ({gpt-4o: {budget_limit: 10\\, time_period: 1d}}) of each virtual key naming the budget that has none of its own; null for none"`
	BudgetDuration      *string                        `json:"budget_duration" jsonschema:"description=Period after which the spend of each end user or key naming it starts again from zero (30d); null for all time"`
	BudgetResetAt       *time.Time                     `json:"budget_reset_at" jsonschema:"description=Always null: each end user's period starts at its own first request (its litellm_budget_table.budget_reset_at)"`
	CreatedAt           time.Time                      `json:"created_at"`
	CreatedBy           string                         `json:"created_by" jsonschema:"description=The owner (calling key's id) that made the budget"`
	UpdatedAt           time.Time                      `json:"updated_at"`
	UpdatedBy           string                         `json:"updated_by"`
}

// litellmBudgetRequest documents the body of POST /budget/new and /budget/update; other
// LiteLLM fields are refused when they ask for something.
type litellmBudgetRequest struct {
	BudgetID       string   `json:"budget_id,omitempty" jsonschema:"description=The budget's id (at most 256 characters; made when not given on /budget/new; required on /budget/update)"`
	MaxBudget      *float64 `json:"max_budget,omitempty" jsonschema:"description=USD each end user or key naming it may spend (per budget_duration); more than 0; null for no bound"`
	SoftBudget     *float64 `json:"soft_budget,omitempty" jsonschema:"description=USD mark that sends a budget alert and never blocks; null or 0 for none"`
	BudgetDuration *string  `json:"budget_duration,omitempty" jsonschema:"description=Period after which the spend of each end user or key naming it starts again from zero (30d); null for all time"`
	TPMLimit       *int64   `json:"tpm_limit,omitempty" jsonschema:"description=Tokens per minute each end user or key naming it may use; null or 0 for no bound"`
	// RPMLimit becomes the rpm_limit of each key, organization and end user naming the budget.
	RPMLimit *int `json:"rpm_limit,omitempty" jsonschema:"description=Requests per minute each virtual key or organization or end user naming it may make (their rpm_limit: past it a 429); null or 0 for no bound"`
	// ModelMaxBudget becomes the model_max_budget of each key naming the budget.
	ModelMaxBudget map[string]litellmModelBudget `json:"model_max_budget,omitempty" jsonschema:"description=USD budgets of single models ({gpt-4o: {budget_limit: 10\\, time_period: 1d}}) of each virtual key naming it that has no model_max_budget of its own (LiteLLM's rule) and of each end user naming it; organizations ignore it; null or {} for none"`
	// MaxParallelRequests becomes the max_parallel_requests of each key naming the budget.
	MaxParallelRequests *int `json:"max_parallel_requests,omitempty" jsonschema:"description=Requests each virtual key naming it may have in flight at once (the key's max_parallel_requests: one more is a 429); end users naming it have no such bound; null for no bound (0 is refused: LiteLLM's 0 blocks)"`
}

// litellmBudgetIDs is the body of POST /budget/info.
type litellmBudgetIDs struct {
	Budgets []string `json:"budgets" jsonschema:"description=The budgets' ids"`
}

// litellmBudgetDeletion is the body of POST /budget/delete.
type litellmBudgetDeletion struct {
	ID string `json:"id" jsonschema:"description=The budget's id"`
}

// litellmBudgetSetting is one field of GET /budget/settings (LiteLLM's ConfigList).
type litellmBudgetSetting struct {
	FieldName         string `json:"field_name"`
	FieldType         string `json:"field_type" jsonschema:"description=Integer\\, Float\\, String or Object"`
	FieldDescription  string `json:"field_description"`
	FieldValue        any    `json:"field_value" jsonschema:"description=The budget's value; null when not set"`
	StoredInDB        bool   `json:"stored_in_db" jsonschema:"description=Always true"`
	FieldDefaultValue any    `json:"field_default_value" jsonschema:"description=Always null"`
}

// litellmBudgetPath reports the budget paths answered in LiteLLM's error envelope.
func litellmBudgetPath(path string) bool { return strings.HasPrefix(path, "/budget/") }

// litellmBudgetRoutes registers LiteLLM's budget management routes.
func (s *Server) litellmBudgetRoutes(g *completions.Gateway) {
	tags := []string{"LiteLLM compatibility"}
	scoped := "the calling key is itself limited in scope (a virtual or job key)"
	s.Handle(Route{Method: "POST", Path: "/budget/new", Summary: "LiteLLM's budget creation: a reusable budget that end users (/customer/new, /customer/update) and virtual keys (/key/generate, /key/update) take by budget_id",
		Tags: tags, Request: litellmBudgetRequest{}, Response: litellmBudget{},
		Errors: map[int]string{400: "budget_id taken or too long, past the key's 1000 budgets, or a bad or unsupported field: the message names it", 403: scoped}},
		func(w http.ResponseWriter, r *http.Request) error {
			fields, err := litellmBody(r)
			if err != nil {
				return err
			}
			now := time.Now().UTC()
			b := litellmBudgetRecord{Owner: owner(r), CreatedAt: now, CreatedBy: owner(r), UpdatedAt: now, UpdatedBy: owner(r)}
			if raw, ok := fields["budget_id"]; ok && !isJSONNull(raw) {
				if json.Unmarshal(raw, &b.BudgetID) != nil {
					return paramError("budget_id", "budget_id: must be a string, got %s", raw)
				}
			}
			delete(fields, "budget_id")
			if b.BudgetID == "" {
				b.BudgetID = uuid.NewString()
			}
			if err := checkLiteLLMBudgetID("budget_id", b.BudgetID); err != nil {
				return err
			}
			if err := applyLiteLLMBudgetFields(&b, fields, g); err != nil {
				return err
			}
			if err := s.createLiteLLMBudget(r.Context(), b); err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, litellmBudgetOf(b))
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/budget/update", Summary: "LiteLLM's budget update: sets the fields given (null removes a bound) and applies them to every end user and virtual key that names the budget",
		Tags: tags, Request: litellmBudgetRequest{}, Response: litellmBudget{},
		Errors: map[int]string{400: "budget_id missing or a bad or unsupported field: the message names it", 403: scoped, 404: "no budget of this key has the budget_id"}},
		func(w http.ResponseWriter, r *http.Request) error {
			fields, err := litellmBody(r)
			if err != nil {
				return err
			}
			var id string
			if raw, ok := fields["budget_id"]; !ok || json.Unmarshal(raw, &id) != nil || id == "" {
				return paramError("budget_id", "budget_id: required, a string: the budget to change")
			}
			delete(fields, "budget_id")
			b, err := s.updateLiteLLMBudget(r.Context(), g, owner(r), id, fields)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, litellmBudgetOf(*b))
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/budget/info", Summary: "LiteLLM's budget info: the budgets of the ids given",
		Tags: tags, Request: litellmBudgetIDs{}, Response: []litellmBudget{},
		Errors: map[int]string{400: "budgets missing, empty or past 100 ids", 403: scoped, 404: "an id is no budget of this key: the message lists them"}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req litellmBudgetIDs
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
				return err
			}
			if len(req.Budgets) == 0 {
				return paramError("budgets", "budgets: give the ids of the budgets, e.g. {\"budgets\": [\"my-budget\"]}")
			}
			if len(req.Budgets) > maxLiteLLMBudgetsAtOnce {
				return paramError("budgets", "budgets: at most %d ids at once, got %d", maxLiteLLMBudgetsAtOnce, len(req.Budgets))
			}
			out := make([]litellmBudget, 0, len(req.Budgets))
			var missing []string
			for _, id := range req.Budgets {
				b, err := s.litellmBudgetOf(r.Context(), s.cfg.Store, owner(r), id)
				var ae *APIError
				switch {
				case asAPIError(err, &ae) && ae.Status == http.StatusNotFound:
					if !slices.Contains(missing, id) {
						missing = append(missing, id)
					}
				case err != nil:
					return err
				case !slices.ContainsFunc(out, func(o litellmBudget) bool { return o.BudgetID == id }):
					out = append(out, litellmBudgetOf(b))
				}
			}
			if len(missing) > 0 {
				return litellmNotFound("budgets", "Budget id(s)=%s do not exist in db", strings.Join(missing, ", "))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/budget/list", Summary: "LiteLLM's budget list: every budget of this key, oldest first",
		Tags: tags, Response: []litellmBudget{}, Errors: map[int]string{403: scoped}},
		func(w http.ResponseWriter, r *http.Request) error {
			bs, err := s.litellmBudgets(r.Context(), owner(r))
			if err != nil {
				return err
			}
			out := make([]litellmBudget, 0, len(bs))
			for _, b := range bs {
				out = append(out, litellmBudgetOf(b))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/budget/delete", Summary: "LiteLLM's budget deletion: deletes a budget no end user or virtual key names (LiteLLM would leave them unbounded: here it is a 400 naming them)",
		Tags: tags, Request: litellmBudgetDeletion{}, Response: litellmBudget{},
		Errors: map[int]string{400: "id missing, or end users or virtual keys name the budget: the message lists them (and counts the keys)", 403: scoped, 404: "no budget of this key has the id"}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req litellmBudgetDeletion
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
				return err
			}
			if req.ID == "" {
				return paramError("id", "id: required: the budget to delete")
			}
			b, err := s.deleteLiteLLMBudget(r.Context(), owner(r), req.ID)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, litellmBudgetOf(*b))
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/budget/settings", Summary: "LiteLLM's budget settings: each field a budget has, with its type, description and the budget's value (LiteLLM's admin UI)",
		Tags: tags, Response: []litellmBudgetSetting{}, Query: []QueryParam{{Name: "budget_id", Required: true, Description: "The budget's id"}},
		Errors: map[int]string{400: "budget_id missing", 403: scoped, 404: "no budget of this key has the budget_id"}},
		func(w http.ResponseWriter, r *http.Request) error {
			id := r.URL.Query().Get("budget_id")
			if id == "" {
				return paramError("budget_id", "budget_id: required: GET /budget/settings?budget_id=…")
			}
			b, err := s.litellmBudgetOf(r.Context(), s.cfg.Store, owner(r), id)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, litellmBudgetSettings(litellmBudgetOf(b)))
			return nil
		})
}

// isJSONNull reports a JSON null.
func isJSONNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// checkLiteLLMBudgetID refuses a budget id that is empty, too long, not UTF-8 or holds
// control characters (field names the field).
func checkLiteLLMBudgetID(field, id string) error {
	switch {
	case id == "":
		return paramError(field, "%s: required: the budget's id", field)
	case len(id) > maxLiteLLMBudgetIDLength:
		return paramError(field, "%s: at most %d characters, got %d", field, maxLiteLLMBudgetIDLength, len(id))
	case !utf8.ValidString(id) || strings.IndexFunc(id, unicode.IsControl) >= 0:
		return paramError(field, "%s: must be text without control characters, got %q", field, id)
	}
	return nil
}

// applyLiteLLMBudgetFields sets b's limits to LiteLLM's fields given (null removes one,
// as LiteLLM's /budget/update stores what it is sent) and checks the result, refusing a
// field with no equivalent unless it asks for nothing. The models of a model_max_budget are
// checked against what g routes to (nil g: not checked).
func applyLiteLLMBudgetFields(b *litellmBudgetRecord, fields map[string]json.RawMessage, g *completions.Gateway) error {
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	slices.Sort(names) // the first bad field named is the same every time
	for _, name := range names {
		raw := fields[name]
		null := isJSONNull(raw)
		switch name {
		case "max_budget", "soft_budget":
			var v float64
			if !null && json.Unmarshal(raw, &v) != nil {
				return paramError(name, "%s: must be a number or null, got %s", name, raw)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return paramError(name, "%s: must be a non-negative finite number, got %v", name, v)
			}
			if name == "max_budget" {
				if !null && v == 0 {
					return paramError(name, "max_budget: 0 would be a budget of nothing, which a shared budget cannot be here: give more than 0, or null for no bound (/customer/block blocks an end user)")
				}
				b.MaxBudgetUSD = v
			} else {
				b.SoftBudgetUSD = v
			}
		case "tpm_limit":
			var v int64
			if !null && json.Unmarshal(raw, &v) != nil {
				return paramError(name, "tpm_limit: must be a whole number or null, got %s", raw)
			}
			if v < 0 {
				return paramError(name, "tpm_limit: must be at least 0, got %d", v)
			}
			b.TokensPerMinute = v
		case "rpm_limit":
			var v int
			if !null && json.Unmarshal(raw, &v) != nil {
				return paramError(name, "rpm_limit: must be a whole number or null, got %s", raw)
			}
			if v < 0 || v > 1_000_000 {
				return paramError(name, "rpm_limit: must be between 0 and 1000000 (0 or null for no bound), got %d", v)
			}
			b.RequestsPerMinute = v
		case "model_max_budget":
			b.ModelMaxBudget = nil
			if null {
				continue
			}
			native, err := litellmModelMaxBudget(raw)
			if err != nil {
				return err
			}
			var m map[string]keyModelBudget
			if err := json.Unmarshal(native, &m); err != nil {
				return fmt.Errorf("server: model_max_budget: %w", err)
			}
			if _, err := checkKeyModelLimits(g, keyRequest{ModelMaxBudget: m}, g != nil); err != nil {
				return paramError(name, "%s", userMessage(err))
			}
			if len(m) > 0 {
				b.ModelMaxBudget = m
			}
		case "max_parallel_requests":
			var v int
			if !null && json.Unmarshal(raw, &v) != nil {
				return paramError(name, "max_parallel_requests: must be a whole number or null, got %s", raw)
			}
			if !null && (v < 1 || v > maxParallelBound) {
				return paramError(name, "max_parallel_requests: must be between 1 and %d (null for no bound), got %d", maxParallelBound, v)
			}
			b.MaxParallelRequests = v
		case "budget_duration":
			var v string
			if !null && json.Unmarshal(raw, &v) != nil {
				return paramError(name, "budget_duration: must be a string such as \"30d\" or null, got %s", raw)
			}
			b.BudgetDuration = v
		default:
			if emptyJSON(raw) {
				continue // created_at null, model_max_budget {}, rpm_limit 0, …: LiteLLM's clients' defaults
			}
			if why, ok := litellmBudgetUnsupported[name]; ok {
				return paramError(name, "%s: not supported: %s", name, why)
			}
			return paramError(name, "%s: a budget has no %s (its fields: budget_id, max_budget, soft_budget, budget_duration, tpm_limit, rpm_limit, max_parallel_requests, model_max_budget)", name, name)
		}
	}
	_, err := checkKeyRequest(nil, keyRequest{MaxBudgetUSD: b.MaxBudgetUSD, SoftBudgetUSD: b.SoftBudgetUSD,
		BudgetDuration: b.BudgetDuration, TokensPerMinute: b.TokensPerMinute}, time.Now(), false)
	return litellmRenamed(err, []litellmName{{"budget_duration", "budget_duration"}, {"tokens_per_minute", "tpm_limit"},
		{"max_budget_usd", "max_budget"}, {"soft_budget_usd", "soft_budget"}})
}

// litellmBudgetOf describes b in LiteLLM's fields.
func litellmBudgetOf(b litellmBudgetRecord) litellmBudget {
	out := litellmBudget{BudgetID: b.BudgetID, CreatedAt: b.CreatedAt, CreatedBy: b.CreatedBy, UpdatedAt: b.UpdatedAt, UpdatedBy: b.UpdatedBy}
	if b.MaxBudgetUSD > 0 {
		out.MaxBudget = &b.MaxBudgetUSD
	}
	if b.SoftBudgetUSD > 0 {
		out.SoftBudget = &b.SoftBudgetUSD
	}
	if b.TokensPerMinute > 0 {
		out.TPMLimit = &b.TokensPerMinute
	}
	if b.BudgetDuration != "" {
		out.BudgetDuration = &b.BudgetDuration
	}
	if b.MaxParallelRequests > 0 {
		out.MaxParallelRequests = &b.MaxParallelRequests
	}
	if b.RequestsPerMinute > 0 {
		out.RPMLimit = &b.RequestsPerMinute
	}
	if len(b.ModelMaxBudget) > 0 {
		m := litellmModelBudgets(b.ModelMaxBudget)
		out.ModelMaxBudget = &m
	}
	return out
}

// litellmBudgetSettings lists b's fields as LiteLLM's /budget/settings does.
func litellmBudgetSettings(b litellmBudget) []litellmBudgetSetting {
	value := func(p any) any { // a typed nil pointer answers null
		switch v := p.(type) {
		case *float64:
			if v != nil {
				return *v
			}
		case *int64:
			if v != nil {
				return *v
			}
		case *int:
			if v != nil {
				return *v
			}
		case *string:
			if v != nil {
				return *v
			}
		case *map[string]litellmModelBudget:
			if v != nil {
				return *v
			}
		}
		return nil
	}
	return []litellmBudgetSetting{
		{FieldName: "max_parallel_requests", FieldType: "Integer", FieldDescription: "Requests each virtual key naming the budget may have in flight at once", FieldValue: value(b.MaxParallelRequests), StoredInDB: true},
		{FieldName: "tpm_limit", FieldType: "Integer", FieldDescription: "Tokens per minute each end user or key naming the budget may use", FieldValue: value(b.TPMLimit), StoredInDB: true},
		{FieldName: "rpm_limit", FieldType: "Integer", FieldDescription: "Requests per minute each virtual key or organization or end user naming the budget may make", FieldValue: value(b.RPMLimit), StoredInDB: true},
		{FieldName: "budget_duration", FieldType: "String", FieldDescription: "Period after which the spend of each end user or key naming the budget starts again from zero (30d)", FieldValue: value(b.BudgetDuration), StoredInDB: true},
		{FieldName: "max_budget", FieldType: "Float", FieldDescription: "USD each end user or key naming the budget may spend (per budget_duration)", FieldValue: value(b.MaxBudget), StoredInDB: true},
		{FieldName: "soft_budget", FieldType: "Float", FieldDescription: "USD mark that sends a budget alert and never blocks", FieldValue: value(b.SoftBudget), StoredInDB: true},
		{FieldName: "model_max_budget", FieldType: "Object", FieldDescription: "USD budgets of single models of each virtual key naming the budget that has none of its own", FieldValue: value(b.ModelMaxBudget), StoredInDB: true},
	}
}

// litellmBudgetNotFound is the 404 of owner's missing budget id, naming param.
func litellmBudgetNotFound(param, id string) *APIError {
	return litellmNotFound(param, "%s: no budget %q of this key (POST /budget/new makes one)", param, id)
}

// litellmBudgetOf reads owner's budget id through rd, or answers 404 naming budget_id.
func (s *Server) litellmBudgetOf(ctx context.Context, rd store.Reader, owner, id string) (litellmBudgetRecord, error) {
	return ownedRecord[litellmBudgetRecord](ctx, rd, store.LiteLLMBudgets, owner, id, "budget", func() error {
		return litellmBudgetNotFound("budget_id", id)
	})
}

// litellmBudgets returns owner's budgets, oldest first.
func (s *Server) litellmBudgets(ctx context.Context, owner string) ([]litellmBudgetRecord, error) {
	es, err := s.cfg.Store.List(ctx, store.LiteLLMBudgets, store.ListOptions{Prefix: owner + "/"})
	if err != nil {
		return nil, fmt.Errorf("server: listing budgets: %w", err)
	}
	out := make([]litellmBudgetRecord, 0, len(es))
	for _, e := range es {
		var b litellmBudgetRecord
		if err := json.Unmarshal(e.Value, &b); err != nil {
			return nil, fmt.Errorf("server: reading budget %s: %w", e.Key, err)
		}
		out = append(out, b)
	}
	slices.SortStableFunc(out, func(a, b litellmBudgetRecord) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// createLiteLLMBudget stores b, refusing an id taken and a budget past the owner's bound.
func (s *Server) createLiteLLMBudget(ctx context.Context, b litellmBudgetRecord) error {
	err := s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.Get(ctx, store.LiteLLMBudgets, b.Owner+"/"+b.BudgetID); err == nil {
			return paramError("budget_id", "Budget with id '%s' already exists.", b.BudgetID)
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		have, err := tx.List(ctx, store.LiteLLMBudgets, store.ListOptions{Prefix: b.Owner + "/", Limit: maxLiteLLMBudgetsPerOwner})
		if err != nil {
			return err
		}
		if len(have) >= maxLiteLLMBudgetsPerOwner {
			return paramError("budget_id", "budget_id: this key has %d budgets, the most it may have: delete one first", len(have))
		}
		return store.PutJSON(ctx, tx, store.LiteLLMBudgets, b.Owner+"/"+b.BudgetID, b)
	})
	if err != nil {
		return fmt.Errorf("server: creating budget %s: %w", b.BudgetID, err)
	}
	s.log.InfoContext(ctx, "budget created", "owner", b.Owner, "budget_id", b.BudgetID)
	return nil
}

// updateLiteLLMBudget applies LiteLLM's fields to owner's budget id and its limits to
// every end user, virtual key and organization naming it, in one transaction: a failed
// update changes nothing. The transaction names their accounts to UpdateLocked
// (budgetAccountLocks), as the requests charging them do.
func (s *Server) updateLiteLLMBudget(ctx context.Context, g *completions.Gateway, owner, id string, fields map[string]json.RawMessage) (*litellmBudgetRecord, error) {
	var b litellmBudgetRecord
	applied, keys, orgs := 0, 0, 0
	var endUsers []string // whose rpm_limit the budget's is
	err := s.cfg.Store.UpdateLocked(ctx, budgetAccountLocks(ctx, s.cfg.Store, owner, id), func(tx store.Tx) error {
		applied, endUsers = 0, endUsers[:0]
		var err error
		if b, err = s.litellmBudgetOf(ctx, tx, owner, id); err != nil {
			return err
		}
		old := b
		if err := applyLiteLLMBudgetFields(&b, fields, g); err != nil {
			return err
		}
		b.UpdatedAt, b.UpdatedBy = time.Now().UTC(), owner
		if err := store.PutJSON(ctx, tx, store.LiteLLMBudgets, owner+"/"+id, b); err != nil {
			return err
		}
		recs, err := budgetUsers(ctx, tx, owner, id, 0)
		if err != nil {
			return err
		}
		for _, rec := range recs {
			eid := rec.EndUserID
			rec.MaxBudgetUSD, rec.SoftBudgetUSD, rec.BudgetDuration, rec.TokensPerMinute = b.MaxBudgetUSD, b.SoftBudgetUSD, b.BudgetDuration, b.TokensPerMinute
			rec.RequestsPerMinute, rec.ModelMaxBudget = b.RequestsPerMinute, maps.Clone(b.ModelMaxBudget)
			if err := completions.SetSharedBudgetLimits(ctx, tx, endUserBudgetID(owner, eid), endUserLimits(rec.endUser)); err != nil {
				return err
			}
			if err := store.PutJSON(ctx, tx, store.EndUsers, owner+"/"+eid, rec); err != nil {
				return err
			}
			endUsers = append(endUsers, eid)
			applied++
		}
		if keys, err = applyBudgetToKeys(ctx, tx, owner, old, b); err != nil {
			return err
		}
		orgs, err = applyBudgetToOrganizations(ctx, tx, owner, b)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("server: updating budget %s: %w", id, err)
	}
	s.endUserChanged(owner, endUsers...)
	s.log.InfoContext(ctx, "budget updated", "owner", owner, "budget_id", id, "end_users", applied, "keys", keys, "organizations", orgs)
	return &b, nil
}

// deleteLiteLLMBudget deletes owner's budget id unless an end user or virtual key names it
// (a 400 naming them) and returns it.
func (s *Server) deleteLiteLLMBudget(ctx context.Context, owner, id string) (*litellmBudgetRecord, error) {
	var b litellmBudgetRecord
	err := s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		var err error
		if b, err = ownedRecord[litellmBudgetRecord](ctx, tx, store.LiteLLMBudgets, owner, id, "budget", func() error {
			return litellmBudgetNotFound("id", id)
		}); err != nil {
			return err
		}
		recs, err := budgetUsers(ctx, tx, owner, id, maxBudgetCustomersNamed+1)
		if err != nil {
			return err
		}
		keyRecs, err := budgetKeys(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		if os, err := organizationsNamingBudget(ctx, tx, owner, id); err != nil {
			return err
		} else if len(os) > 0 {
			named := make([]string, len(os))
			for i, o := range os {
				named[i] = o.OrganizationID
			}
			return paramError("id", "id: budget %q is the budget of organizations %s: give them another budget_id or budget_id null (/organization/update) or delete them (/organization/delete) first", id, pythonList(named))
		}
		if len(recs) > 0 || len(keyRecs) > 0 {
			users := make([]string, len(recs))
			for i, rec := range recs {
				users[i] = rec.EndUserID
			}
			keys := make([]string, len(keyRecs))
			for i, rec := range keyRecs {
				keys[i] = rec.ID
			}
			return budgetInUse(id, users[:min(len(users), maxBudgetCustomersNamed)], len(users) > maxBudgetCustomersNamed, keys)
		}
		return tx.Delete(ctx, store.LiteLLMBudgets, owner+"/"+id)
	})
	if err != nil {
		return nil, fmt.Errorf("server: deleting budget %s: %w", id, err)
	}
	s.log.InfoContext(ctx, "budget deleted", "owner", owner, "budget_id", id)
	return &b, nil
}

// budgetAccountLocks names to Store.UpdateLocked (accountLocks) the stored accounts an
// update of owner's budget id writes: its end users', virtual keys' and organizations',
// read from st before the transaction, so that the update and the requests charging those
// accounts wait for one another on PostgreSQL instead of aborting one another. One that
// comes to name the budget between this read and the transaction is locked when a run
// again touches it, as under Update; a read that fails names none (the transaction reads
// again and reports it).
func budgetAccountLocks(ctx context.Context, st *store.Store, owner, id string) []store.Ref {
	var ids []string
	prefix := budgetCustomersPrefix(owner, id)
	for after := ""; len(ids) <= maxAccountLocks; {
		es, err := st.List(ctx, store.BudgetCustomers, store.ListOptions{Prefix: prefix, After: after, Limit: store.MaxPageLimit})
		if err != nil {
			return nil
		}
		for _, e := range es {
			ids = append(ids, endUserBudgetID(owner, strings.TrimPrefix(e.Key, prefix)))
		}
		if len(es) < store.MaxPageLimit {
			break
		}
		after = es[len(es)-1].Key
	}
	if len(ids) > maxAccountLocks {
		return nil
	}
	keys, err := budgetKeys(ctx, st, owner, id)
	if err != nil {
		return nil
	}
	for _, k := range keys {
		ids = append(ids, "key/"+k.ID)
	}
	orgs, err := organizationsNamingBudget(ctx, st, owner, id)
	if err != nil {
		return nil
	}
	for _, o := range orgs {
		ids = append(ids, organizationBudgetID(owner, o.OrganizationID))
	}
	return accountLocks(ids...)
}

// budgetCustomersPrefix is the store.BudgetCustomers prefix of owner's budget id.
func budgetCustomersPrefix(owner, budgetID string) string {
	return owner + "/" + url.PathEscape(budgetID) + "/"
}

// budgetUsers returns owner's end users naming budget id (at most limit; 0: all), read
// through tx by store.BudgetCustomers. An entry whose end user is gone or names another
// budget or none (the index out of step: left by a replica of an earlier build, or by a
// write that missed it) is deleted, never taken for a user of the budget.
func budgetUsers(ctx context.Context, tx store.Tx, owner, id string, limit int) ([]storedEndUser, error) {
	prefix := budgetCustomersPrefix(owner, id)
	var out []storedEndUser
	for after := ""; ; {
		es, err := tx.List(ctx, store.BudgetCustomers, store.ListOptions{Prefix: prefix, After: after, Limit: store.MaxPageLimit})
		if err != nil {
			return nil, fmt.Errorf("server: listing the end users of budget %s: %w", id, err)
		}
		for _, e := range es {
			eid := strings.TrimPrefix(e.Key, prefix)
			rec, err := store.GetJSON[storedEndUser](ctx, tx, store.EndUsers, owner+"/"+eid)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
			if err != nil || rec.BudgetID != id {
				if err := tx.Delete(ctx, store.BudgetCustomers, e.Key); err != nil {
					return nil, fmt.Errorf("server: dropping a stale end user %s of budget %s: %w", eid, id, err)
				}
				continue
			}
			if out = append(out, rec); limit > 0 && len(out) >= limit {
				return out, nil
			}
		}
		if len(es) < store.MaxPageLimit {
			return out, nil
		}
		after = es[len(es)-1].Key
	}
}

// moveBudgetCustomer moves owner's end user id from the end users of budget from to
// those of budget to ("": none) through tx.
func moveBudgetCustomer(ctx context.Context, tx store.Tx, owner, id, from, to string) error {
	if from == to {
		return nil
	}
	if from != "" {
		if err := tx.Delete(ctx, store.BudgetCustomers, budgetCustomersPrefix(owner, from)+id); err != nil {
			return fmt.Errorf("server: end user %s leaving budget %s: %w", id, from, err)
		}
	}
	if to != "" {
		if err := tx.Put(ctx, store.BudgetCustomers, budgetCustomersPrefix(owner, to)+id, []byte(`""`)); err != nil {
			return fmt.Errorf("server: end user %s taking budget %s: %w", id, to, err)
		}
	}
	return nil
}

// budgetIDFields are the end user and virtual key fields a budget_id sets, in the order
// a refusal names them.
var budgetIDFields = []string{"max_budget_usd", "soft_budget_usd", "budget_duration", "tokens_per_minute", "requests_per_minute", "max_parallel_requests"}

// budgetFieldsGiven is the fields of the body that made req, or, without one, the budget
// fields req sets (budgetFieldsSet).
func (req endUserRequest) budgetFieldsGiven() map[string]json.RawMessage {
	if req.fields != nil {
		return req.fields
	}
	given := budgetFieldsSet(req.MaxBudgetUSD, req.SoftBudgetUSD, req.BudgetDuration, req.TokensPerMinute, req.RequestsPerMinute, 0, req.Blocked && req.budgetBlock)
	if len(req.ModelMaxBudget) > 0 {
		given["model_max_budget"] = json.RawMessage(`{}`)
	}
	return given
}

// budgetFieldsSet names, of budgetIDFields, those an end user's or a key's request sets
// (non-zero), for a request made without a body: budgetBlocked (LiteLLM's max_budget 0)
// sets max_budget_usd 0 and blocked; maxParallel is a key's max_parallel_requests (0 for
// an end user).
func budgetFieldsSet(maxUSD, softUSD float64, duration string, tokensPerMinute int64, requestsPerMinute, maxParallel int, budgetBlocked bool) map[string]json.RawMessage {
	given := map[string]json.RawMessage{}
	if maxUSD != 0 || budgetBlocked {
		given["max_budget_usd"] = json.RawMessage(`0`)
	}
	if budgetBlocked {
		given["blocked"] = json.RawMessage(`true`)
	}
	if softUSD != 0 {
		given["soft_budget_usd"] = json.RawMessage(`0`)
	}
	if duration != "" {
		given["budget_duration"] = json.RawMessage(`""`)
	}
	if tokensPerMinute != 0 {
		given["tokens_per_minute"] = json.RawMessage(`0`)
	}
	if requestsPerMinute != 0 {
		given["requests_per_minute"] = json.RawMessage(`0`)
	}
	if maxParallel != 0 {
		given["max_parallel_requests"] = json.RawMessage(`0`)
	}
	return given
}

// keepBody is a decodeOptions.Rewrite that keeps the body in *body, unchanged.
func keepBody(body *[]byte) func([]byte) ([]byte, error) {
	return func(b []byte) ([]byte, error) {
		*body = b
		return b, nil
	}
}

// bodyFields is the fields of a JSON object body (an empty map when it is none).
func bodyFields(body []byte) map[string]json.RawMessage {
	fields := map[string]json.RawMessage{}
	_ = json.Unmarshal(body, &fields)
	if fields == nil {
		fields = map[string]json.RawMessage{}
	}
	return fields
}

// budgetFieldsBeside refuses, of an end user's or a key's own budget fields given (of
// given; null asks for nothing) with (or while it has) budget b, the first whose value
// (to's, as the request would set it) is not the one b sets, naming the field; what ("end
// user", "key") names the end user or key. A value equal to b's (0 or "" where b has
// none) changes nothing and is accepted, as LiteLLM's clients send a record's values back
// with its budget_id; LiteLLM's max_budget 0 (a block: to's budgetBlock, with blocked
// given) is never b's, b's max_budget being more than 0 or none.
func budgetFieldsBeside(what string, given map[string]json.RawMessage, to budgetTarget, b litellmBudgetRecord) error {
	_, blockGiven := given["blocked"]
	for _, f := range budgetIDFields {
		raw, ok := given[f]
		if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue
		}
		var same bool
		var sets string
		switch f {
		case "max_budget_usd":
			block := blockGiven && *to.blocked && *to.budgetBlock
			same = *to.maxUSD == b.MaxBudgetUSD && !block
			sets = budgetAmount(b.MaxBudgetUSD)
			if block && b.MaxBudgetUSD == 0 {
				sets = "none (null; max_budget 0 blocks)" // the 0 refused is no way to say none
			}
		case "soft_budget_usd":
			same, sets = *to.softUSD == b.SoftBudgetUSD, budgetAmount(b.SoftBudgetUSD)
		case "budget_duration":
			same, sets = *to.duration == b.BudgetDuration, "none (null or \"\")"
			if b.BudgetDuration != "" {
				sets = strconv.Quote(b.BudgetDuration)
			}
		case "tokens_per_minute":
			same, sets = *to.tokensPerMinute == b.TokensPerMinute, "none (null)"
			if b.TokensPerMinute != 0 {
				sets = strconv.FormatInt(b.TokensPerMinute, 10)
			}
		case "requests_per_minute":
			if to.requestsPerMinute == nil {
				continue // an end user's: it takes no budget with one
			}
			same, sets = *to.requestsPerMinute == b.RequestsPerMinute, "none (null)"
			if b.RequestsPerMinute != 0 {
				sets = strconv.Itoa(b.RequestsPerMinute)
			}
		case "max_parallel_requests":
			if to.maxParallel == nil {
				continue // an end user's or organization's: the budget sets none
			}
			same, sets = *to.maxParallel == b.MaxParallelRequests, "none (null)"
			if b.MaxParallelRequests != 0 {
				sets = strconv.Itoa(b.MaxParallelRequests)
			}
		}
		if !same {
			v := Validation(http.StatusUnprocessableEntity, "%s: the %s's budget %q (budget_id) sets it to %s: send that value or leave the field out (POST /budget/update changes the budget)", f, what, b.BudgetID, sets)
			v.Param = f
			return v
		}
	}
	return nil
}

// budgetAmount describes a budget's USD amount in a refusal (0: none).
func budgetAmount(usd float64) string {
	if usd == 0 {
		return "none (null or 0)"
	}
	return strconv.FormatFloat(usd, 'f', -1, 64)
}

// budgetNamed reads owner's budget id through tx for a budget_id given on an end user or
// a key, or answers 404 naming budget_id.
func budgetNamed(ctx context.Context, tx store.Tx, owner, id string) (litellmBudgetRecord, error) {
	return ownedRecord[litellmBudgetRecord](ctx, tx, store.LiteLLMBudgets, owner, id, "budget", func() error {
		return litellmBudgetNotFound("budget_id", id)
	})
}

// takeBudgetOf sets req's budget fields to those of owner's budget req.BudgetID, read
// through tx ("": req unchanged), refusing those given (the fields of the request's body)
// with other values, or answers 404 naming budget_id (takeBudget).
func takeBudgetOf(ctx context.Context, tx store.Tx, owner string, req *endUserRequest, given map[string]json.RawMessage) error {
	return takeBudget(ctx, tx, owner, req.BudgetID, "end user", given, budgetTarget{maxUSD: &req.MaxBudgetUSD, softUSD: &req.SoftBudgetUSD, duration: &req.BudgetDuration, tokensPerMinute: &req.TokensPerMinute,
		requestsPerMinute: &req.RequestsPerMinute, blocked: &req.Blocked, budgetBlock: &req.budgetBlock, endUserModels: &req.ModelMaxBudget})
}

// budgetTarget points at the budget fields of an end user's, a key's or an organization's
// request; maxParallel and modelMaxBudget only a key's (nil: the budget's
// max_parallel_requests or model_max_budget is not taken), endUserModels only an end
// user's (its model_max_budget: always the budget's, as LiteLLM reads an end user's
// end_user_model_max_budget from its budget's row).
type budgetTarget struct {
	maxUSD, softUSD      *float64
	duration             *string
	tokensPerMinute      *int64
	blocked, budgetBlock *bool
	maxParallel          *int
	requestsPerMinute    *int
	modelMaxBudget       *map[string]keyModelBudget
	endUserModels        *map[string]keyModelBudget
}

// budgetModelsText describes a budget's model_max_budget in a refusal.
func budgetModelsText(m map[string]keyModelBudget) string {
	if len(m) == 0 {
		return "none ({} or null)"
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// takeBudget sets to's fields to those of owner's budget id, read through tx ("": to
// unchanged), or answers 404 naming budget_id; budget fields of given (the request's
// body) that would set another value than the budget's are refused (budgetFieldsBeside,
// what naming the end user or key). The budget replaces a block that was a budget of
// nothing (LiteLLM's max_budget 0).
func takeBudget(ctx context.Context, tx store.Tx, owner, id, what string, given map[string]json.RawMessage, to budgetTarget) error {
	if id == "" {
		return nil
	}
	b, err := budgetNamed(ctx, tx, owner, id)
	if err != nil {
		return err
	}
	if err := budgetFieldsBeside(what, given, to, b); err != nil {
		return err
	}
	if to.endUserModels != nil {
		// Its own given beside the budget: the budget's, or none ({} or null) asking nothing.
		if raw, ok := given["model_max_budget"]; ok && !isJSONNull(raw) && len(*to.endUserModels) > 0 && !maps.Equal(*to.endUserModels, b.ModelMaxBudget) {
			return paramError("model_max_budget", "model_max_budget: the %s's budget %q (budget_id) sets it to %s: send that value or leave the field out (POST /budget/update changes the budget)", what, b.BudgetID, budgetModelsText(b.ModelMaxBudget))
		}
		*to.endUserModels = maps.Clone(b.ModelMaxBudget)
	}
	*to.maxUSD, *to.softUSD, *to.duration, *to.tokensPerMinute = b.MaxBudgetUSD, b.SoftBudgetUSD, b.BudgetDuration, b.TokensPerMinute
	if to.maxParallel != nil {
		*to.maxParallel = b.MaxParallelRequests
	}
	if to.requestsPerMinute != nil {
		*to.requestsPerMinute = b.RequestsPerMinute
	}
	if to.modelMaxBudget != nil && len(*to.modelMaxBudget) == 0 {
		*to.modelMaxBudget = maps.Clone(b.ModelMaxBudget) // LiteLLM's rule: the key's own, when it has one, wins
	}
	*to.blocked, *to.budgetBlock = *to.blocked && !*to.budgetBlock, false
	return nil
}
