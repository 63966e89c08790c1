package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// A virtual key's per-model limits (LiteLLM's model_max_budget, model_rpm_limit and
// model_tpm_limit): one key, different bounds per model. They become the entries of its
// account's completions.BudgetLimits.Models, enforced by the gateway on the model a request
// asks for; the spend of each is kept in the key's account, beside the key's own, from the
// same charges.

// keyModelBudget is one model's budget of a virtual key (native model_max_budget's entry).
type keyModelBudget struct {
	MaxBudgetUSD   float64 `json:"max_budget_usd" jsonschema:"description=USD the key may spend on the model (per budget_duration when set); 0 refuses every request for it"`
	BudgetDuration string  `json:"budget_duration,omitempty" jsonschema:"description=Period after which the model's spend starts again from zero (30d; s m h d w mo); empty for all time"`
}

// keyModelLimitFields are the native names of the per-model limit fields.
var keyModelLimitFields = []string{"model_max_budget", "model_rpm_limit", "model_tpm_limit"}

// keyModelLimitsGiven reports whether a request body (its fields) gives a per-model limit.
func keyModelLimitsGiven(given map[string]json.RawMessage) bool {
	for _, f := range keyModelLimitFields {
		if _, ok := given[f]; ok {
			return true
		}
	}
	return false
}

// checkKeyModelLimits validates req's per-model limits and returns them as the account's
// Models (nil for none): each model named as the key's models must be (checkModels: the
// names are checked against what the server routes to; a PATCH leaving them alone keeps a
// model no longer served), each bound at least 0, each duration parsed.
func checkKeyModelLimits(g *completions.Gateway, req keyRequest, checkModels bool) (map[string]completions.ModelLimits, error) {
	invalid := func(format string, args ...any) error {
		return Validation(http.StatusUnprocessableEntity, format, args...)
	}
	checkName := func(field, m string) error {
		switch {
		case strings.TrimSpace(m) == "":
			return invalid("%s[%q]: the model must not be empty", field, m)
		case strings.Contains(m, "*"):
			return invalid("%s[%q]: a per-model limit names one model, not a pattern", field, m)
		case !checkModels:
			return nil
		case !keyServes(g, m):
			return invalid("%s[%q]: %q is not a model or model group this server routes to (GET /v1/models lists them)", field, m, m)
		}
		return nil
	}
	for _, m := range []int{len(req.ModelMaxBudget), len(req.ModelRPMLimit), len(req.ModelTPMLimit)} {
		if m > maxKeyModels {
			return nil, invalid("model_max_budget, model_rpm_limit, model_tpm_limit: at most %d models each, got %d", maxKeyModels, m)
		}
	}
	out := map[string]completions.ModelLimits{}
	for _, m := range sortedKeys(req.ModelMaxBudget) {
		b := req.ModelMaxBudget[m]
		if err := checkName("model_max_budget", m); err != nil {
			return nil, err
		}
		if math.IsNaN(b.MaxBudgetUSD) || math.IsInf(b.MaxBudgetUSD, 0) || b.MaxBudgetUSD < 0 {
			return nil, invalid("model_max_budget[%q].max_budget_usd: must be a number of at least 0, got %v", m, b.MaxBudgetUSD)
		}
		l := out[m]
		l.MaxCostUSD = &b.MaxBudgetUSD
		if b.BudgetDuration != "" {
			d, err := parseBudgetDuration(b.BudgetDuration)
			if err == nil && (d < time.Second || d > 3660*24*time.Hour) {
				err = errors.New("must be between 1s and 3660d")
			}
			if err != nil {
				return nil, invalid("model_max_budget[%q].budget_duration: %s, got %q", m, err, b.BudgetDuration)
			}
			l.ResetEvery = d
		}
		out[m] = l
	}
	for _, f := range []struct {
		name  string
		m     map[string]int64
		field func(*completions.ModelLimits) **int64
	}{
		{"model_rpm_limit", req.ModelRPMLimit, func(l *completions.ModelLimits) **int64 { return &l.RequestsPerMinute }},
		{"model_tpm_limit", req.ModelTPMLimit, func(l *completions.ModelLimits) **int64 { return &l.TokensPerMinute }},
	} {
		for _, m := range sortedKeys(f.m) {
			n := f.m[m]
			if err := checkName(f.name, m); err != nil {
				return nil, err
			}
			if n < 0 {
				return nil, invalid("%s[%q]: must be at least 0 (0 refuses every request for the model), got %d", f.name, m, n)
			}
			l := out[m]
			*f.field(&l) = &n
			out[m] = l
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// keyModelLimitsOf is the account's Models of vk as stored (checked when set).
func keyModelLimitsOf(vk virtualKey) map[string]completions.ModelLimits {
	req := keyRequest{ModelMaxBudget: vk.ModelMaxBudget, ModelRPMLimit: vk.ModelRPMLimit, ModelTPMLimit: vk.ModelTPMLimit}
	l, _ := checkKeyModelLimits(nil, req, false)
	return l
}

// sortedKeys is m's keys in order (a check names the first bad one every time).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// keyModelSpend is one model's spend of a virtual key in its period (keySpend.Models).
type keyModelSpend struct {
	CostUSD     float64    `json:"cost_usd"`
	PeriodStart *time.Time `json:"period_start,omitempty" jsonschema:"description=When the model's current budget period began (with its budget_duration; absent before its first use)"`
}

// keyModelSpendOf is the spend of vk's models with a budget, from its account's usage u.
func keyModelSpendOf(vk virtualKey, u completions.BudgetUsage) map[string]keyModelSpend {
	if len(vk.ModelMaxBudget) == 0 {
		return nil
	}
	out := map[string]keyModelSpend{}
	for m := range vk.ModelMaxBudget {
		mu := u.Models[m]
		s := keyModelSpend{CostUSD: mu.CostUSD}
		if !mu.PeriodStart.IsZero() {
			s.PeriodStart = &mu.PeriodStart
		}
		out[m] = s
	}
	return out
}

// litellmModelBudget is one model's entry of LiteLLM's model_max_budget (its
// GenericBudgetInfo), as /key/generate takes it and /key/info shows it.
type litellmModelBudget struct {
	BudgetLimit float64 `json:"budget_limit" jsonschema:"description=USD the key may spend on the model per time_period"`
	TimePeriod  *string `json:"time_period" jsonschema:"description=The period after which the model's spend starts from zero (1d; 30d); null for all time"`
}

// litellmModelBudgetUsage is one model's entry of /key/info's model_max_budget_usage.
type litellmModelBudgetUsage struct {
	CurrentSpend float64 `json:"current_spend" jsonschema:"description=USD spent on the model in its current period"`
	BudgetLimit  float64 `json:"budget_limit"`
	TimePeriod   *string `json:"time_period"`
}

// litellmModelMaxBudget translates LiteLLM's model_max_budget (an object of models, each a
// {budget_limit, time_period} — budget_limit may be a numeric string, as its UI sends it;
// max_budget and budget_duration are its internal names — or, as older LiteLLM versions
// took it, a number: a budget for all time) into the native field's value. An entry that
// asks for nothing (null, or no budget_limit: LiteLLM then gates nothing) is left out.
func litellmModelMaxBudget(raw json.RawMessage) (json.RawMessage, error) {
	var entries map[string]json.RawMessage
	if json.Unmarshal(raw, &entries) != nil || entries == nil {
		return nil, paramError("model_max_budget", "model_max_budget: must be an object of models, each {\"budget_limit\": USD, \"time_period\": \"30d\"}, got %s", raw)
	}
	out := map[string]keyModelBudget{}
	for _, m := range sortedKeys(entries) {
		e := entries[m]
		bad := func(format string, args ...any) error {
			return paramError("model_max_budget", "model_max_budget[%q]: "+format, append([]any{m}, args...)...)
		}
		if isJSONNull(e) {
			continue
		}
		var n float64
		if json.Unmarshal(e, &n) == nil {
			if n < 0 {
				return nil, bad("must be at least 0, got %v", n)
			}
			out[m] = keyModelBudget{MaxBudgetUSD: n}
			continue
		}
		var fields map[string]json.RawMessage
		if json.Unmarshal(e, &fields) != nil || fields == nil {
			return nil, bad("must be {\"budget_limit\": USD, \"time_period\": \"30d\"} or a number, got %s", e)
		}
		var b keyModelBudget
		limitGiven := false
		for k, v := range fields {
			switch k {
			case "budget_limit", "max_budget":
				if isJSONNull(v) {
					continue
				}
				var s string
				if json.Unmarshal(v, &s) == nil {
					v = json.RawMessage(s) // LiteLLM's UI sends a numeric string
				}
				if json.Unmarshal(v, &b.MaxBudgetUSD) != nil {
					return nil, bad("%s: must be a number of USD, got %s", k, v)
				}
				if b.MaxBudgetUSD < 0 || math.IsNaN(b.MaxBudgetUSD) {
					return nil, bad("%s: must be at least 0, got %v", k, b.MaxBudgetUSD)
				}
				limitGiven = true
			case "time_period", "budget_duration":
				if isJSONNull(v) {
					continue
				}
				if json.Unmarshal(v, &b.BudgetDuration) != nil {
					return nil, bad("%s: must be a duration such as 1d or 30d, got %s", k, v)
				}
			default:
				if !emptyJSON(v) {
					return nil, bad("unknown field %q (budget_limit and time_period only)", k)
				}
			}
		}
		if !limitGiven {
			continue // LiteLLM gates nothing without a budget_limit
		}
		if b.BudgetDuration != "" {
			if _, err := parseBudgetDuration(b.BudgetDuration); err != nil {
				return nil, bad("time_period: %s, got %q", err, b.BudgetDuration)
			}
		}
		out[m] = b
	}
	return json.Marshal(out)
}

// litellmModelRates checks LiteLLM's model_rpm_limit or model_tpm_limit (field): an object
// of models, each a whole number of at least 0.
func litellmModelRates(field string, raw json.RawMessage) (json.RawMessage, error) {
	var entries map[string]json.RawMessage
	if json.Unmarshal(raw, &entries) != nil || entries == nil {
		return nil, paramError(field, "%s: must be an object of models, each a whole number per minute ({\"gpt-4o\": 10}), got %s", field, raw)
	}
	out := map[string]int64{}
	for _, m := range sortedKeys(entries) {
		if isJSONNull(entries[m]) {
			continue // asks for nothing
		}
		var n int64
		if json.Unmarshal(entries[m], &n) != nil {
			return nil, paramError(field, "%s[%q]: must be a whole number per minute, got %s", field, m, entries[m])
		}
		if n < 0 {
			return nil, paramError(field, "%s[%q]: must be at least 0 (0 refuses every request for the model), got %d", field, m, n)
		}
		out[m] = n
	}
	return json.Marshal(out)
}

// litellmModelBudgets is m in LiteLLM's fields (an empty map for none).
func litellmModelBudgets(m map[string]keyModelBudget) map[string]litellmModelBudget {
	out := make(map[string]litellmModelBudget, len(m))
	for name, b := range m {
		var period *string
		if b.BudgetDuration != "" {
			period = &b.BudgetDuration
		}
		out[name] = litellmModelBudget{BudgetLimit: b.MaxBudgetUSD, TimePeriod: period}
	}
	return out
}

// litellmModelLimitsInfo sets info's per-model limits (and the model budgets' spend) from vk.
func litellmModelLimitsInfo(info *litellmKeyInfo, vk virtualKey) {
	info.ModelMaxBudget, info.ModelMaxBudgetUsage = litellmModelBudgets(vk.ModelMaxBudget), map[string]litellmModelBudgetUsage{}
	for m, b := range info.ModelMaxBudget {
		info.ModelMaxBudgetUsage[m] = litellmModelBudgetUsage{CurrentSpend: vk.Spend.Models[m].CostUSD, BudgetLimit: b.BudgetLimit, TimePeriod: b.TimePeriod}
	}
	info.ModelRPMLimit, info.ModelTPMLimit = vk.ModelRPMLimit, vk.ModelTPMLimit
	if info.ModelRPMLimit == nil {
		info.ModelRPMLimit = map[string]int64{}
	}
	if info.ModelTPMLimit == nil {
		info.ModelTPMLimit = map[string]int64{}
	}
}

// modelLimitError is the answer of a request refused by one of its key's per-model
// limits, or its end user's model_max_budget (LiteLLM's: a 400 budget_exceeded for a
// model's budget, a 429 with Retry-After for its rate), nil for another error.
func modelLimitError(err error) *APIError {
	var mb *completions.ModelBudgetError
	var mr *completions.ModelRateError
	switch {
	case errors.As(err, &mb) && mb.Kind == endUserKind:
		// An end user's model_max_budget: LiteLLM's words for it.
		return Errorf(http.StatusBadRequest, KindBadRequest, "LiteLLM End User: %s, exceeded budget for model=%s", mb.Name, mb.Model)
	case errors.As(err, &mb):
		return Errorf(http.StatusBadRequest, KindBadRequest, "%s", mb.Error())
	case errors.As(err, &mr):
		ae := Errorf(http.StatusTooManyRequests, KindTooManyRequests, "%s", mr.Error())
		ae.Retryable = true
		ae.Header = http.Header{"Retry-After": {fmt.Sprint(int(math.Ceil(mr.RetryAfter.Seconds())))}}
		return ae
	}
	return nil
}
