package server

import (
	"bytes"
	"cmp"
	"encoding/json"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// A virtual key's or a team's router settings (LiteLLM's key and team router_settings):
// how the gateway retries, times out and falls back for the requests made with the key.
// LiteLLM resolves them per request as the key's when it has any, else its team's — whole,
// never merged field by field (keyRouterSettings) — and fills those it names into the
// request's router settings the request leaves unset, its router keeping the server's for
// the rest (litellm/proxy/route_llm_request.py, router_settings_override): so does the
// gateway here (applyTo sets only the settings named; the server's stand for the others,
// a key with fallbacks but no context_window_fallbacks still getting the server's). Of
// LiteLLM's settings (Router.update_settings) those a request can
// carry are kept: num_retries (max_retries its older name), timeout, fallbacks and
// context_window_fallbacks. The others configure the deployments the server shares between every key (cooldowns, the
// routing strategy, retry policies by kind, aliases of groups) and are refused with a
// message naming them when they ask for something, as the LiteLLM routes refuse every
// field they cannot honour.

// Bounds of router settings.
const (
	// maxRouterTimeoutSeconds bounds router_settings.timeout (an hour, the longest a
	// request of the gateway may be given).
	maxRouterTimeoutSeconds = 3600
	// maxRouterRetries bounds router_settings.num_retries, as a request's max_retries.
	maxRouterRetries = 10
)

// routerSettings are a virtual key's or a team's own router settings.
type routerSettings struct {
	// NumRetries replaces the server's retries per model for requests that set none.
	NumRetries *int `json:"num_retries,omitempty" jsonschema:"minimum=0,maximum=10,description=Retries per model of a request that sets no max_retries of its own (LiteLLM's num_retries; max_retries is read as it when num_retries is absent): in place of the server's default"`
	// Timeout bounds each upstream call, in seconds (LiteLLM's router timeout: a call cut by
	// it leaves the request's time to its retries and fallbacks).
	Timeout *float64 `json:"timeout,omitempty" jsonschema:"description=Seconds one upstream call may take (0 < timeout <= 3600): in place of the server's attempt timeout (LiteLLM's router timeout); a call cut by it goes on to the retries and fallbacks within the request's time (the server's request timeout or a background response's run; at least one call long); a request's own timeout still wins"`
	// Fallbacks are LiteLLM's router fallbacks: a list of {model: [fallbacks]} objects.
	// Nil is no setting (the server's apply); an empty list is one: no fallbacks.
	Fallbacks []map[string][]string `json:"fallbacks,omitzero" jsonschema:"description=LiteLLM's router fallbacks: [{gpt-4o: [claude-sonnet-4-5]}]: a request naming gpt-4o as its model tries them in order (each once) when it fails unless the request names fallbacks of its own; they replace the server's fallbacks of the model group asked; the model * stands for every model without an entry of its own; an entry [] asks for no fallbacks for its model (over * and the server's) and fallbacks [] for none at all (null: not set); at most 100 models each with at most 100 fallbacks; each a model or model group this server routes to"`
	// ContextWindowFallbacks are LiteLLM's router context_window_fallbacks, written as
	// Fallbacks are: tried when the model asked fails with a prompt too long for it. Nil
	// and empty as Fallbacks.
	ContextWindowFallbacks []map[string][]string `json:"context_window_fallbacks,omitzero" jsonschema:"description=LiteLLM's router context_window_fallbacks: [{gpt-4o-mini: [gpt-4o]}]: when the model asked (a member of the group asked) fails with a prompt too long for it these are tried in place of the plain fallbacks (each once) and of the server's context window fallbacks of the group asked; a request naming fallbacks of its own goes to those instead; with none for the model asked (no entry or an entry []; context_window_fallbacks [] for every model) a prompt too long ends the request with its error (the plain fallbacks are not tried); looked up and bounded as fallbacks"`
	// retriesField names the setting NumRetries was read from (max_retries, LiteLLM's older
	// name; "" for num_retries), for checkRouterSettings' message.
	retriesField string
}

// routerSettingsRefused are LiteLLM's router settings (Router.update_settings's) a key or a
// team cannot have here, with the reason given when one asks for something.
var routerSettingsRefused = map[string]string{
	"routing_strategy":              "the routing strategy is the server's (--model-groups, --litellm-config router_settings), shared by every key",
	"routing_strategy_args":         "the routing strategy is the server's (--model-groups, --litellm-config router_settings), shared by every key",
	"routing_groups":                "the routing strategy is the server's (--model-groups, --litellm-config router_settings), shared by every key",
	"allowed_fails":                 "cooldowns are the server's: a deployment cooling down does so for every key (--litellm-config router_settings)",
	"cooldown_time":                 "cooldowns are the server's: a deployment cooling down does so for every key (--litellm-config router_settings)",
	"retry_after":                   "the pause between retries is the server's (--litellm-config router_settings)",
	"model_group_retry_policy":      "retries by kind of failure are the server's; a key's num_retries sets its retries per model",
	"retry_policy":                  "retries by kind of failure are the server's; a key's num_retries sets its retries per model",
	"content_policy_fallbacks":      "fallbacks for a content filter's refusal are set per model group on the server (--litellm-config router_settings); a key's fallbacks are tried on any failure",
	"model_group_alias":             "a key's own model names are its aliases (POST /key/generate aliases); a team has none",
	"enable_weighted_failover":      "failover between a group's deployments is the server's (--litellm-config router_settings)",
	"enable_tag_filtering":          "tag filtering is set per model group on the server (--litellm-config router_settings)",
	"default_fallbacks":             "use fallbacks with the model * for every model",
	"enable_pre_call_checks":        "the checks before a call are the server's",
	"optional_pre_call_checks":      "the checks before a call are the server's",
	"default_max_parallel_requests": "set max_parallel_requests on the key or the team",
}

// UnmarshalJSON reads LiteLLM's router_settings object, checking each setting (a setting
// with no equivalent is refused unless it asks for nothing; numbers may be sent as strings,
// which LiteLLM casts). The failures name router_settings.<setting>.
func (rs *routerSettings) UnmarshalJSON(data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || (fields == nil && !bytes.Equal(bytes.TrimSpace(data), []byte("null"))) {
		return routerSettingsError("router_settings", "must be an object such as {\"num_retries\": 2, \"timeout\": 30, \"fallbacks\": [{\"gpt-4o\": [\"claude-sonnet-4-5\"]}]}, got %s", data)
	}
	*rs = routerSettings{}
	var maxRetries *int
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		raw := fields[name]
		field := "router_settings." + name
		switch name {
		case "num_retries", "max_retries", "timeout":
		case "fallbacks", "context_window_fallbacks":
			if fallbacksAskNothing(raw) {
				continue
			}
		default:
			if emptyJSON(raw) {
				continue // LiteLLM's clients' defaults ask for nothing
			}
		}
		switch name {
		case "num_retries", "max_retries":
			if isJSONNull(raw) {
				continue
			}
			// The shape only: the bounds are checkRouterSettings', so that a key stored under
			// other bounds still reads.
			n, ok := settingNumber(raw)
			if !ok || n != math.Trunc(n) || math.Abs(n) > math.MaxInt32 {
				return routerSettingsError(field, "must be a whole number from 0 to %d, got %s", maxRouterRetries, raw)
			}
			v := int(n)
			if name == "num_retries" {
				rs.NumRetries = &v
			} else {
				maxRetries = &v
			}
		case "timeout":
			if isJSONNull(raw) {
				continue
			}
			n, ok := settingNumber(raw)
			if !ok {
				return routerSettingsError(field, "must be a number of seconds above 0 and at most %d, got %s", maxRouterTimeoutSeconds, raw)
			}
			rs.Timeout = &n
		case "fallbacks", "context_window_fallbacks":
			var list []map[string][]string
			if err := json.Unmarshal(raw, &list); err != nil {
				return routerSettingsError(field, "must be a list of objects each naming a model and its fallbacks: [{\"gpt-4o\": [\"claude-sonnet-4-5\"]}], got %s", raw)
			}
			if name == "fallbacks" {
				rs.Fallbacks = list
			} else {
				rs.ContextWindowFallbacks = list
			}
		default:
			if why, ok := routerSettingsRefused[name]; ok {
				return routerSettingsError(field, "%s", why)
			}
			return routerSettingsError(field, "unknown setting (a key's or team's router_settings are num_retries, timeout, fallbacks and context_window_fallbacks; another is accepted only when its value is empty)")
		}
	}
	if rs.NumRetries == nil && maxRetries != nil {
		rs.NumRetries, rs.retriesField = maxRetries, "router_settings.max_retries"
	}
	return nil
}

// fallbacksAskNothing reports a fallbacks setting without a model in it (null, [{}], or
// another empty value a client sends as its default): no setting. An empty list is one:
// LiteLLM's proxy fills a key's fallbacks: [] into the request (route_llm_request.py,
// router_settings_override), and its router, finding a list that is not None, takes it
// in place of its own (async_function_with_fallbacks: kwargs.get("fallbacks",
// self.fallbacks)) and so has none to try. An entry with no fallbacks ({"gpt-4o": []}) is
// one too: LiteLLM's router finds the model's entry before "*" and has nothing to try, so
// it asks for no fallbacks for that model.
func fallbacksAskNothing(raw json.RawMessage) bool {
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return emptyJSON(raw) // {} or "" as a client's default; another shape is refused naming the setting
	}
	if list != nil && len(list) == 0 {
		return false // [] (null reads as a nil list)
	}
	for _, entry := range list {
		if len(entry) > 0 {
			return false
		}
	}
	return true
}

// routerSettingsError is a 422 naming field (renamed nothing on the LiteLLM routes: the
// field has the same name there).
func routerSettingsError(field, format string, args ...any) error {
	return fieldInvalid(http.StatusUnprocessableEntity, field, field+": "+format, args...)
}

// settingNumber reads a JSON number, or a string holding one (LiteLLM casts its settings
// with int() and float(), so its UI sends "30").
func settingNumber(raw json.RawMessage) (float64, bool) {
	var n float64
	if json.Unmarshal(raw, &n) == nil {
		return n, true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0, false
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return n, err == nil && !math.IsNaN(n) && !math.IsInf(n, 0)
}

// empty reports settings that ask for nothing (nil included): the team's, else the
// server's, apply. Fallbacks of [] ask for something: none.
func (rs *routerSettings) empty() bool {
	return rs == nil || (rs.NumRetries == nil && rs.Timeout == nil && rs.Fallbacks == nil && rs.ContextWindowFallbacks == nil)
}

// normalized returns rs, or nil when it asks for nothing (so a key's {} is stored as none).
func (rs *routerSettings) normalized() *routerSettings {
	if rs.empty() {
		return nil
	}
	return rs
}

// fallbackMap flattens fallbacks (a key's Fallbacks or ContextWindowFallbacks) to one list
// per model (a model listed twice keeps its first list, as LiteLLM's lookup finds the
// first entry): nil when not set, an empty map for [] (the scope's "none").
func fallbackMap(fallbacks []map[string][]string) map[string][]string {
	if fallbacks == nil {
		return nil
	}
	out := map[string][]string{}
	for _, entry := range fallbacks {
		for _, m := range slices.Sorted(maps.Keys(entry)) {
			if _, seen := out[m]; !seen {
				out[m] = entry[m]
			}
		}
	}
	return out
}

// checkRouterSettings validates rs's fallbacks against the models g routes to (nil g: the
// names alone), as a key's aliases are checked.
func checkRouterSettings(g *completions.Gateway, rs *routerSettings) error {
	if rs.empty() {
		return nil
	}
	if n := rs.NumRetries; n != nil && (*n < 0 || *n > maxRouterRetries) {
		return routerSettingsError(cmp.Or(rs.retriesField, "router_settings.num_retries"), "must be a whole number from 0 to %d, got %d", maxRouterRetries, *n)
	}
	if t := rs.Timeout; t != nil && (!(*t > 0) || *t > maxRouterTimeoutSeconds) {
		return routerSettingsError("router_settings.timeout", "must be a number of seconds above 0 and at most %d, got %v", maxRouterTimeoutSeconds, *t)
	}
	if err := checkFallbacks(g, "router_settings.fallbacks", fallbackMap(rs.Fallbacks)); err != nil {
		return err
	}
	return checkFallbacks(g, "router_settings.context_window_fallbacks", fallbackMap(rs.ContextWindowFallbacks))
}

// checkFallbacks validates fbs, the fallbacks of setting (router_settings.fallbacks or
// context_window_fallbacks) by model: their bounds, and each a model or model group g
// routes to. A model may have none ([]): no fallbacks for it, over "*" and over the
// server's (LiteLLM's router finds its entry and has nothing to try).
func checkFallbacks(g *completions.Gateway, setting string, fbs map[string][]string) error {
	if len(fbs) > maxKeyModels {
		return routerSettingsError(setting, "at most %d models, got %d", maxKeyModels, len(fbs))
	}
	for _, m := range slices.Sorted(maps.Keys(fbs)) {
		field := setting + "[" + strconv.Quote(m) + "]"
		if strings.TrimSpace(m) == "" {
			return routerSettingsError(setting, "a model must not be empty")
		}
		if len(fbs[m]) > maxKeyModels {
			return routerSettingsError(field, "at most %d fallbacks, got %d", maxKeyModels, len(fbs[m]))
		}
		for _, f := range fbs[m] {
			switch {
			case strings.TrimSpace(f) == "":
				return routerSettingsError(field, "a fallback must not be empty")
			case f == m:
				return routerSettingsError(field, "%q falls back to itself", f)
			case strings.Contains(f, "*"):
				return routerSettingsError(field, "%q is a pattern; a fallback is one model or model group", f)
			case !keyServes(g, f):
				return routerSettingsError(field, "%q is not a model or model group this server routes to (GET /v1/models lists them)", f)
			}
		}
	}
	return nil
}

// keyRouterSettings is the settings a request of a key applies: the key's own when it has
// any, else its team's (LiteLLM's order; the two never merged), each setting over the
// server's.
func keyRouterSettings(key, team *routerSettings) *routerSettings {
	if !key.empty() {
		return key
	}
	return team.normalized()
}

// applyTo puts rs on a gateway scope: retries, timeout and both kinds of fallbacks.
func (rs *routerSettings) applyTo(sc *completions.Scope) {
	if rs.empty() {
		return
	}
	if rs.NumRetries != nil {
		n := *rs.NumRetries
		sc.NumRetries = &n
	}
	if rs.Timeout != nil {
		sc.AttemptTimeout = time.Duration(*rs.Timeout * float64(time.Second)) // each call, as LiteLLM's router timeout
	}
	sc.Fallbacks, sc.ContextWindowFallbacks = fallbackMap(rs.Fallbacks), fallbackMap(rs.ContextWindowFallbacks)
}
