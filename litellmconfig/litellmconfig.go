// Package litellmconfig reads a LiteLLM proxy config.yaml (model_list, router_settings,
// litellm_settings, general_settings) into what Switchyard is configured with: provider
// entries (providers.FileConfig), model groups (completions.ModelGroup), the deployments'
// own prices (providers.OwnPrice) and a few server settings (the master key, retries, the
// per-call timeout, the circuit breakers). What it knows but Switchyard does
// not do is listed in Config.Warnings, never dropped silently; a malformed value is an
// *Error naming its path in the file ("model_list[2].litellm_params.api_base").
package litellmconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// ErrInvalid is matched (errors.Is) by every *Error.
var ErrInvalid = errors.New("litellmconfig: invalid LiteLLM config")

// ErrEnvUnset is matched (errors.Is) by an *Error of a value naming an environment variable
// (os.environ/NAME) that is not set: a deployment stored with one whose variable is gone.
var ErrEnvUnset = errors.New("litellmconfig: an environment variable it names is not set")

// Error is a value of the config that cannot be used; Path says where it is.
type Error struct {
	// Path is the value's place in the file: "model_list[2].litellm_params.api_base"; for a
	// value of one of ParseWith's entries, its place in that entry
	// ("litellm_params.api_base").
	Path string
	// Entry is 1 + the index in ParseWith's entries of the entry at fault; 0 for the file.
	Entry int
	// Message says what is wrong with it.
	Message string
	// envUnset: the value names an environment variable (os.environ/NAME) that is not set.
	envUnset bool
}

// Error names the path and the problem.
func (e *Error) Error() string { return "litellm config: " + e.Path + ": " + e.Message }

// Is reports whether target is ErrInvalid, or ErrEnvUnset for a value naming an unset
// environment variable.
func (e *Error) Is(target error) bool {
	return target == ErrInvalid || target == ErrEnvUnset && e.envUnset
}

// EnvPrefix marks a value read from the environment: "os.environ/AZURE_API_KEY".
const EnvPrefix = "os.environ/"

// Config is what a LiteLLM proxy config configures in Switchyard's terms.
type Config struct {
	// Providers are the provider entries the deployments need beyond the environment's
	// own providers (a deployment's api_base, api_key or api_version that differ from them),
	// in --providers-config's shape.
	Providers providers.FileConfig
	// ModelGroups are the model_names clients send, each standing for its deployments
	// (and any model_group_alias), in --model-groups' shape.
	ModelGroups map[string]completions.ModelGroup
	// MasterKey is general_settings.master_key: an operator API key ("" when unset).
	MasterKey string
	// RejectClientTags is general_settings.reject_clientside_metadata_tags: requests may not
	// name tags of their own (body, metadata, headers); only their keys' tags apply.
	RejectClientTags bool
	// NumRetries is router_settings.num_retries (else litellm_settings.num_retries); nil
	// when unset.
	NumRetries *int
	// Timeout is router_settings.timeout (else litellm_settings.request_timeout): how long
	// one upstream call may take; 0 when unset.
	Timeout time.Duration
	// Passthrough lists the wildcard deployments' providers ("openai/*"): every model of
	// those providers is served by its provider/model name.
	Passthrough []string
	// MaxBudget is litellm_settings.max_budget: the USD every request of the proxy may
	// spend together (0: no bound); BudgetDuration its budget_duration ("30d"; "" never
	// reset), as written.
	MaxBudget      float64
	BudgetDuration string
	// Listed are what the config names besides its model groups, as LiteLLM's /v1/models
	// lists its model_list: each model_name with '/' as written (served by its deployment
	// through DeploymentNames), and each wildcard deployment's "provider/*" (every
	// catalogued model of the provider).
	Listed []string
	// Wildcards are the model_list entries whose model_name has a '*' ("*", "openai/*",
	// "anthropic/claude-*"), in the file's order, for completions.Options.Wildcards: a
	// name they match that no model_name holds and the price catalogue does not place is
	// routed to their model, as LiteLLM's wildcard routing does.
	Wildcards []completions.Wildcard
	// Prices are the deployments' own prices and token limits (input_cost_per_token,
	// output_cost_per_token, the cache rates, max_input_tokens, max_output_tokens of
	// litellm_params or model_info), by member ("provider/model"), for
	// providers.Catalog.WithOwnPrices.
	Prices map[string]providers.OwnPrice
	// Breaker is what router_settings.allowed_fails and cooldown_time set of the
	// circuit breakers (zero fields: not set).
	Breaker Breaker
	// Prometheus says litellm_settings.callbacks, success_callback or failure_callback
	// names "prometheus": serve then adds the metrics under LiteLLM's names to /metrics
	// (serve --litellm-metrics).
	Prometheus bool
	// PrometheusEndUser is litellm_settings.enable_end_user_cost_tracking_prometheus_only:
	// the metrics under LiteLLM's names carry the request's end user in their end_user
	// label (otherwise empty, as LiteLLM leaves it: a series per end user is unbounded;
	// Switchyard bounds it at telemetry.MaxEndUserLabels values, later ones "other").
	PrometheusEndUser bool
	// DropParams is litellm_settings.drop_params (nil when unset).
	DropParams *bool
	// Deployments are the model_list entries served (wildcards left out), in order, with
	// the member each calls.
	Deployments []Deployment
	// DeploymentNames are the names of deployments the gateway calls under another (a
	// provider entry of their own: "openai/gpt-4o" called as
	// "openai-my-gpt-1a2b3c4d/gpt-4o"): each model_name with '/' and each other
	// litellm_params.model that is no model_name or alias, to the deployments it stands for
	// (at most completions.MaxModels, the first ones), for
	// completions.Options.DeploymentNames. A request may name them, as LiteLLM's router
	// serves a deployment by its litellm_params.model, and is sent to those deployments
	// with their own api_base and key.
	DeploymentNames map[string][]completions.NamedDeployment
	// ContextWindowFallbacksSet says router_settings or litellm_settings set
	// context_window_fallbacks with any entry, for
	// completions.Options.ContextWindowFallbacksSet: a prompt too long for a model with no
	// entry (one served through a wildcard deployment too, which no group's
	// ContextWindowFallbacksSet covers) ends the request with its error, as LiteLLM's
	// router re-raises it.
	ContextWindowFallbacksSet bool
	// Warnings say, one line each, what the file asks that Switchyard does differently or
	// not at all (the keys ignored, the routing strategy's nearest equivalent).
	Warnings []string
}

// Deployment is one model_list entry as served: the name clients send and the
// "provider/model" member it calls.
type Deployment struct {
	// Index is the entry's index in model_list (ParseWith's entries follow the file's).
	Index int
	// Entry is 1 + the index in ParseWith's entries of an entry of theirs; 0 for the file's.
	Entry int
	// ModelName is its model_name.
	ModelName string
	// Member is the "provider/model" the gateway calls for it.
	Member string
	// Model is its litellm_params.model as the entry gives it ("openai/gpt-4o"; an
	// os.environ/ reference read); Member
	// differs from it when the entry has a provider entry of its own (its api_base or
	// api_key: "openai-name-1a2b3c4d/gpt-4o").
	Model string
	// ID is its model_info.id ("" when not given): the id it is known by (/model/info,
	// litellm_model_id, /health's model_id) in place of completions.DeploymentID's hash.
	// The file's ids are unique.
	ID string
}

// DeploymentIDs maps each deployment of the file (not ParseWith's entries) that gives a
// model_info.id from completions.DeploymentID(ModelName, Member) to that id, for
// completions.Options.DeploymentIDs and completions.Routes.IDs; nil when none gives one.
func (c *Config) DeploymentIDs() map[string]string {
	var out map[string]string
	for _, d := range c.Deployments {
		if d.Entry != 0 || d.ID == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[completions.DeploymentID(d.ModelName, d.Member)] = d.ID
	}
	return out
}

// Breaker is what router_settings sets of the circuit breakers (completions.BreakerOptions),
// LiteLLM's deployment cooldowns.
type Breaker struct {
	// Failures is how many failures open a model's breaker: allowed_fails + 1 (LiteLLM
	// cools a deployment down on the failure after the allowed ones); -1 for
	// disable_cooldowns: true (no breaker); 0 when unset.
	Failures int
	// Cooldown is cooldown_time: how long an open breaker skips its model; 0 when unset.
	Cooldown time.Duration
}

// Load reads the config at path; os.environ/ values are looked up with lookupEnv (nil:
// os.LookupEnv).
func Load(path string, lookupEnv func(string) (string, bool)) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("litellm config: reading %s: %w", path, err)
	}
	return Parse(b, lookupEnv)
}

// providerPrefixes maps LiteLLM's provider prefixes to Switchyard's provider names.
var providerPrefixes = map[string]string{
	"openai": "openai", "azure": "azure", "anthropic": "anthropic", "gemini": "gemini",
	"vertex_ai": "vertex_ai", "bedrock": "bedrock", "mistral": "mistral", "groq": "groq",
	"together_ai": "together", "deepseek": "deepseek", "xai": "xai", "openrouter": "openrouter",
	"fireworks_ai": "fireworks", "ollama": "ollama", "ollama_chat": "ollama",
	"hosted_vllm": "openai", "voyage": "voyage", "jina_ai": "jina", "cohere": "cohere",
}

// Handled keys, per section; the rest are reported as ignored.
var (
	topKeys     = []string{"model_list", "router_settings", "litellm_settings", "general_settings"}
	entryKeys   = []string{"model_name", "litellm_params", "model_info"}
	paramKeys   = []string{"model", "api_base", "api_key", "api_version", "rpm", "tpm", "max_parallel_requests", "weight", "timeout", "stream_timeout", "aws_region_name", "aws_access_key_id", "aws_secret_access_key", "aws_session_token", "aws_profile_name", "vertex_project", "vertex_location", "vertex_credentials", "input_cost_per_token", "output_cost_per_token", "cache_read_input_token_cost", "cache_creation_input_token_cost", "tags", "tag_regex", "temperature", "top_p", "max_tokens", "max_completion_tokens", "stop", "seed", "frequency_penalty", "presence_penalty", "reasoning_effort", "extra_headers", "organization"}
	infoKeys    = []string{"id", "db_model", "base_model", "mode", "enable_tag_filtering", "allow_fail_open", "input_cost_per_token", "output_cost_per_token", "cache_read_input_token_cost", "cache_creation_input_token_cost", "max_tokens", "max_input_tokens", "max_output_tokens"}
	routerKeys  = []string{"routing_strategy", "fallbacks", "context_window_fallbacks", "content_policy_fallbacks", "num_retries", "timeout", "model_group_alias", "allowed_fails", "cooldown_time", "disable_cooldowns", "enable_tag_filtering", "tag_filtering_match_any", "tag_routing_prefix"}
	litellmKeys = []string{"max_budget", "budget_duration", "fallbacks", "context_window_fallbacks", "content_policy_fallbacks", "default_fallbacks", "num_retries", "request_timeout", "drop_params",
		"callbacks", "success_callback", "failure_callback", // the callbacks: read (or warned about) by parser.callbacks
		"enable_end_user_cost_tracking_prometheus_only"}
	generalKeys     = []string{"master_key", "reject_clientside_metadata_tags"}
	groupNameRE     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`)
	slugDisallowed  = regexp.MustCompile(`[^a-z0-9_.-]+`)
	strategyDefault = "simple-shuffle"
)

// deployment is one model_list entry as Switchyard calls it.
type deployment struct {
	path   string // model_list[i]
	name   string // model_name
	member string // provider/model
	model  string // litellm_params.model as given, an os.environ/ reference read
	// weight, rpm and tpm are LiteLLM's shares (nil: not set); rpm, tpm and
	// maxParallel (max_parallel_requests) are also the member's limits.
	weight, rpm, tpm, maxParallel *float64
	// timeouts are its timeout and stream_timeout, in seconds (0: not set).
	timeouts completions.MemberTimeouts
	// price is its own rates and limits (input_cost_per_token, …, max_output_tokens);
	// priced says it sets any.
	price  providers.OwnPrice
	priced bool
	// tags are its litellm_params.tags (nil: none).
	tags []string
	// tagRegex are its litellm_params.tag_regex (nil: none).
	tagRegex []string
	// tagFiltering is its model_info.enable_tag_filtering (nil: not set): its model
	// group's own setting, over router_settings'.
	tagFiltering *bool
	// failOpen is its model_info.allow_fail_open: its model group's TagFailOpen.
	failOpen bool
	// params are its default request parameters (litellm_params temperature, max_tokens…).
	params completions.MemberParams
}

// limited reports whether d sets any of rpm, tpm and max_parallel_requests.
func (d deployment) limited() bool { return d.rpm != nil || d.tpm != nil || d.maxParallel != nil }

// parser carries the state of one Parse.
type parser struct {
	lookupEnv func(string) (string, bool)
	cfg       *Config
	ignored   []string // paths of keys not supported
	// providerOf maps a provider entry's settings (as JSON, without its name) to its
	// name, so deployments on one resource share an entry.
	providerOf map[string]string
	// storedName marks the provider entries named by a ParseWith entry's id (addProvider).
	storedName map[string]bool
	// origin is the path of the entry each provider entry came from (errors).
	origin []string
	// azureBase are base_models for the environment's azure provider.
	azureBase map[string]string
	// aliasOf maps each model_group_alias naming a group to that group.
	aliasOf map[string]string
	// first is the index in model_list of ParseWith's first entry (-1: none).
	first int
	// params are the default request parameters of each member (memberParams).
	params map[string]completions.MemberParams
}

// Parse reads a LiteLLM proxy config (YAML, or JSON which is YAML).
func Parse(b []byte, lookupEnv func(string) (string, bool)) (*Config, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, &Error{Path: "(file)", Message: "not YAML: " + err.Error()}
	}
	return parseDoc(doc, lookupEnv, -1)
}

// ParseWith reads the LiteLLM proxy config b (nil or empty: none) with entries appended
// to its model_list: deployments kept elsewhere (LiteLLM's store_model_in_db, POST
// /model/new), each a map with model_name, litellm_params and model_info as in the file.
// Each entry is read as a model_list entry of the file is (the same providers, groups,
// limits and prices), so an entry naming a model_name of the file joins that group. A
// value of an entry at fault is an *Error whose Entry is 1 + its index and whose Path is
// its place in the entry ("litellm_params.api_base").
func ParseWith(b []byte, entries []map[string]any, lookupEnv func(string) (string, bool)) (*Config, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	doc := map[string]any{}
	if len(strings.TrimSpace(string(b))) > 0 {
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return nil, &Error{Path: "(file)", Message: "not YAML: " + err.Error()}
		}
		if doc == nil {
			doc = map[string]any{}
		}
	}
	list, _ := doc["model_list"].([]any)
	if doc["model_list"] != nil && list == nil {
		return nil, &Error{Path: "model_list", Message: "must be a list, got " + kind(doc["model_list"])}
	}
	first := len(list)
	list = slices.Clone(list)
	for _, e := range entries {
		list = append(list, e)
	}
	doc["model_list"] = list
	cfg, err := parseDoc(doc, lookupEnv, first)
	var ce *Error
	if errors.As(err, &ce) {
		var i int
		if _, scanErr := fmt.Sscanf(ce.Path, "model_list[%d]", &i); scanErr == nil && i >= first {
			rest := strings.TrimPrefix(ce.Path[strings.Index(ce.Path, "]")+1:], ".")
			if rest == "" {
				rest = "(entry)"
			}
			return nil, &Error{Path: rest, Entry: i - first + 1, Message: ce.Message, envUnset: ce.envUnset}
		}
	}
	return cfg, err
}

// parseDoc reads a config already decoded; model_list's entries from first on are
// ParseWith's (first -1: none are).
func parseDoc(doc map[string]any, lookupEnv func(string) (string, bool), first int) (*Config, error) {
	p := &parser{first: first, lookupEnv: lookupEnv, cfg: &Config{ModelGroups: map[string]completions.ModelGroup{}}, providerOf: map[string]string{}}
	p.ignore("", doc, topKeys)
	if v, ok := doc["environment_variables"]; ok && v != nil {
		p.cfg.Warnings = append(p.cfg.Warnings, "environment_variables is not applied: set those variables in the server's environment")
	}
	router, err := section(doc, "router_settings")
	if err != nil {
		return nil, err
	}
	litellm, err := section(doc, "litellm_settings")
	if err != nil {
		return nil, err
	}
	general, err := section(doc, "general_settings")
	if err != nil {
		return nil, err
	}
	p.ignore("router_settings.", router, routerKeys)
	p.ignore("litellm_settings.", litellm, litellmKeys)
	p.callbacks(litellm)
	if err := p.proxyBudget(litellm); err != nil {
		return nil, err
	}
	if v, ok := litellm["enable_end_user_cost_tracking_prometheus_only"]; ok && v != nil {
		on, isBool := v.(bool)
		if !isBool {
			return nil, &Error{Path: "litellm_settings.enable_end_user_cost_tracking_prometheus_only", Message: "must be true or false, got " + kind(v)}
		}
		p.cfg.PrometheusEndUser = on
	}
	p.ignore("general_settings.", general, generalKeys)

	deps, err := p.modelList(doc["model_list"])
	if err != nil {
		return nil, err
	}
	strategy := strategyDefault
	if v, ok := router["routing_strategy"]; ok {
		if strategy, err = str("router_settings.routing_strategy", v); err != nil {
			return nil, err
		}
	}
	if err := p.groups(deps, strategy); err != nil {
		return nil, err
	}
	p.memberPrices(deps)
	if err := p.aliases(router["model_group_alias"], deps); err != nil {
		return nil, err
	}
	p.deploymentNames()
	if err := p.fallbacks(router, litellm, deps); err != nil {
		return nil, err
	}
	if err := p.settings(router, litellm, general); err != nil {
		return nil, err
	}
	if err := p.tagFiltering(router, deps); err != nil {
		return nil, err
	}
	if len(p.azureBase) > 0 {
		p.cfg.Providers.Providers = append(p.cfg.Providers.Providers, providers.ProviderConfig{Name: "azure", BaseModels: p.azureBase})
		p.origin = append(p.origin, "model_list")
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	if len(p.ignored) > 0 {
		p.cfg.Warnings = append(p.cfg.Warnings, "not supported, ignored: "+strings.Join(p.ignored, ", "))
	}
	return p.cfg, nil
}

// callbacks reads the logging callbacks litellm_settings names: "prometheus" turns on
// the metrics under LiteLLM's names (Prometheus); for the others (Langfuse, OpenTelemetry,
// Arize Phoenix, LangSmith, …) a warning points at OTLP tracing: those tools take the
// spans serve sends, with prompts and answers under --trace-content, so the user learns
// the way there rather than only that the key was ignored.
func (p *parser) callbacks(litellm map[string]any) {
	var named []string
	for _, k := range []string{"callbacks", "success_callback", "failure_callback"} {
		v, ok := litellm[k]
		if !ok {
			continue
		}
		others := v != nil
		switch v := v.(type) {
		case string:
			others = !isPrometheus(v)
			p.cfg.Prometheus = p.cfg.Prometheus || !others
		case []any:
			others = false
			for _, e := range v {
				if s, ok := e.(string); ok && isPrometheus(s) {
					p.cfg.Prometheus = true
				} else {
					others = true
				}
			}
		}
		if others {
			named = append(named, "litellm_settings."+k)
		}
	}
	if len(named) > 0 {
		p.cfg.Warnings = append(p.cfg.Warnings, strings.Join(named, ", ")+": logging callbacks are not run (but \"prometheus\", served at /metrics); "+
			"Langfuse, Phoenix, LangSmith and other OpenTelemetry backends take serve's traces instead: "+
			"set OTEL_EXPORTER_OTLP_ENDPOINT (and OTEL_EXPORTER_OTLP_HEADERS) and --trace-content for prompts and answers "+
			"(README, \"Metrics and traces\")")
	}
}

// isPrometheus says a callback's name is LiteLLM's Prometheus logger.
func isPrometheus(name string) bool { return strings.EqualFold(strings.TrimSpace(name), "prometheus") }

// section returns the map under key of doc (nil when absent).
func section(doc map[string]any, key string) (map[string]any, error) {
	v, ok := doc[key]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{Path: key, Message: "must be a map, got " + kind(v)}
	}
	return m, nil
}

// ignore records the keys of m not in known, under prefix; a path with an index is
// recorded once for all entries ("model_list[*].litellm_params.temperature").
func (p *parser) ignore(prefix string, m map[string]any, known []string) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if slices.Contains(known, k) || prefix == "" && k == "environment_variables" {
			continue
		}
		path := prefix + k
		if i := strings.Index(path, "["); i >= 0 {
			if j := strings.Index(path, "]"); j > i {
				path = path[:i] + "[*]" + path[j+1:]
			}
		}
		if !slices.Contains(p.ignored, path) {
			p.ignored = append(p.ignored, path)
		}
	}
}

// modelList reads model_list into deployments, adding the provider entries they need.
func (p *parser) modelList(v any) ([]deployment, error) {
	if v == nil {
		return nil, &Error{Path: "model_list", Message: "is required: the deployments clients' model names stand for"}
	}
	list, ok := v.([]any)
	if !ok {
		return nil, &Error{Path: "model_list", Message: "must be a list, got " + kind(v)}
	}
	var deps []deployment
	index := map[string]int{}   // deployments seen per model_name
	idAt := map[string]string{} // the file's model_info.ids, to the entry that gives each
	for i, item := range list {
		path := fmt.Sprintf("model_list[%d]", i)
		entry, ok := item.(map[string]any)
		if !ok {
			return nil, &Error{Path: path, Message: "must be a map with model_name and litellm_params, got " + kind(item)}
		}
		p.ignore(path+".", entry, entryKeys)
		name, err := str(path+".model_name", entry["model_name"])
		if err != nil {
			return nil, err
		}
		if name == "" {
			return nil, &Error{Path: path + ".model_name", Message: "must not be empty"}
		}
		params, ok := entry["litellm_params"].(map[string]any)
		if !ok {
			return nil, &Error{Path: path + ".litellm_params", Message: "must be a map with at least model, got " + kind(entry["litellm_params"])}
		}
		info, _ := entry["model_info"].(map[string]any)
		if entry["model_info"] != nil && info == nil {
			return nil, &Error{Path: path + ".model_info", Message: "must be a map, got " + kind(entry["model_info"])}
		}
		p.ignore(path+".model_info.", info, infoKeys)
		p.ignore(path+".litellm_params.", params, paramKeys)
		id, err := deploymentID(path+".model_info.id", info)
		if err != nil {
			return nil, err
		}
		if id != "" && (p.first < 0 || i < p.first) {
			if at, dup := idAt[id]; dup {
				return nil, &Error{Path: path + ".model_info.id", Message: fmt.Sprintf("%q is %s's id too: each deployment's id must be unique", id, at)}
			}
			idAt[id] = path
		}
		index[name]++
		ownID := "" // an entry of ParseWith's names its provider entry by its id
		if p.first >= 0 && i >= p.first {
			ownID = id
		}
		d, err := p.deployment(path, name, index[name], ownID, params, info)
		if err != nil {
			return nil, err
		}
		if d != nil {
			deps = append(deps, *d)
			dep := Deployment{Index: i, ModelName: name, Member: d.member, Model: d.model, ID: id}
			if p.first >= 0 && i >= p.first {
				dep.Entry = i - p.first + 1
			}
			p.cfg.Deployments = append(p.cfg.Deployments, dep)
		}
	}
	return deps, nil
}

// deploymentID reads model_info.id at path: text, or an integer as LiteLLM turns one into
// text ("" when not given).
func deploymentID(path string, info map[string]any) (string, error) {
	v, ok := info["id"]
	if !ok || v == nil {
		return "", nil
	}
	var id string
	switch t := v.(type) {
	case string:
		id = t
	case int:
		id = strconv.Itoa(t)
	case int64:
		id = strconv.FormatInt(t, 10)
	case uint64:
		id = strconv.FormatUint(t, 10)
	case float64:
		if t != math.Trunc(t) || math.Abs(t) > 1<<53 {
			return "", &Error{Path: path, Message: fmt.Sprintf("must be text or a whole number, got %v", t)}
		}
		id = strconv.FormatInt(int64(t), 10)
	default:
		return "", &Error{Path: path, Message: "must be text, got " + kind(v)}
	}
	if strings.TrimSpace(id) == "" || strings.TrimSpace(id) != id || len(id) > 200 || strings.ContainsAny(id, "/\x00") {
		return "", &Error{Path: path, Message: fmt.Sprintf("must be 1-200 characters without '/' or surrounding spaces, got %q", id)}
	}
	return id, nil
}

// deployment reads one model_list entry; nil for a wildcard (Config.Passthrough). ownID is
// the id of an entry of ParseWith's ("" for the file's): its provider entry is named by it.
func (p *parser) deployment(path, name string, nth int, ownID string, params, info map[string]any) (*deployment, error) {
	pp := path + ".litellm_params"
	// LiteLLM's proxy reads os.environ/ in every litellm_params value, model included.
	if _, err := str(pp+".model", params["model"]); err != nil {
		return nil, err
	}
	model, _, err := p.value(pp+".model", params["model"], false)
	if err != nil {
		return nil, err
	}
	prov, rest, err := splitModel(pp+".model", model)
	if err != nil {
		return nil, err
	}
	d := &deployment{path: path, name: name, model: model}
	for _, f := range []struct {
		key string
		to  **float64
	}{{"weight", &d.weight}, {"rpm", &d.rpm}, {"tpm", &d.tpm}, {"max_parallel_requests", &d.maxParallel}} {
		if v, ok := params[f.key]; ok && v != nil {
			n, err := p.share(pp+"."+f.key, v)
			if err != nil {
				return nil, err
			}
			*f.to = &n
		}
	}
	for _, f := range []struct {
		key string
		to  *float64
	}{{"timeout", &d.timeouts.Timeout}, {"stream_timeout", &d.timeouts.StreamTimeout}} {
		if v, ok := params[f.key]; ok && v != nil {
			n, err := p.share(pp+"."+f.key, v) // seconds, as a number or text, or os.environ/NAME
			if err != nil {
				return nil, err
			}
			if n <= 0 || n > 86400 {
				return nil, &Error{Path: pp + "." + f.key, Message: fmt.Sprintf("must be seconds, more than 0 and at most a day, got %g", n)}
			}
			*f.to = n
		}
	}
	if d.price, d.priced, err = p.ownPrice(path, params, info); err != nil {
		return nil, err
	}
	if d.tags, err = deploymentTags(pp+".tags", params["tags"]); err != nil {
		return nil, err
	}
	if d.tagRegex, err = p.deploymentTagRegex(pp+".tag_regex", params["tag_regex"]); err != nil {
		return nil, err
	}
	if d.params, err = deploymentParams(pp, params); err != nil {
		return nil, err
	}
	if v, ok := info["enable_tag_filtering"]; ok && v != nil {
		b, isBool := v.(bool)
		if !isBool {
			return nil, &Error{Path: path + ".model_info.enable_tag_filtering", Message: "must be true or false, got " + kind(v)}
		}
		d.tagFiltering = &b
	}
	if v, ok := info["allow_fail_open"]; ok && v != nil {
		b, isBool := v.(bool)
		if !isBool {
			return nil, &Error{Path: path + ".model_info.allow_fail_open", Message: "must be true or false, got " + kind(v)}
		}
		d.failOpen = b
	}
	pc, err := p.providerEntry(pp, prov, params)
	if err != nil {
		return nil, err
	}
	baseModel := ""
	if v, ok := info["base_model"]; ok {
		if baseModel, err = str(path+".model_info.base_model", v); err != nil {
			return nil, err
		}
		baseModel = strings.TrimPrefix(baseModel, "azure/")
		if prov != "azure" {
			p.ignored = append(p.ignored, path+".model_info.base_model (azure only)")
			baseModel = ""
		}
	}
	if baseModel != "" && d.priced {
		// Its own price holds (as LiteLLM's deployment pricing does over base_model): the
		// base model only fills the rates and limits it leaves unset. It stays the
		// deployment's base model all the same: the family the adapter treats it as (a
		// reasoning model's sampling settings); the gateway prices a member with its own
		// price by its own name.
		d.price.Like = baseModel
		if !strings.Contains(baseModel, "/") {
			d.price.Like = "azure/" + baseModel
		}
	}
	wildcard := rest == "*" || strings.Contains(name, "*")
	if wildcard {
		if !strings.Contains(rest, "*") {
			return nil, &Error{Path: pp + ".model", Message: fmt.Sprintf("a wildcard model_name %q needs a wildcard model such as %s/*, got %q", name, prov, model)}
		}
		if pc != nil {
			// The provider's own settings change: every one of its models uses them.
			pc.Name, pc.Format = prov, ""
			if !slices.ContainsFunc(providers.Presets(), func(pr providers.Preset) bool { return pr.Name == prov }) {
				return nil, &Error{Path: pp + ".model", Message: fmt.Sprintf("a wildcard needs a built-in provider, not %q", prov)}
			}
			p.cfg.Providers.Providers = append(p.cfg.Providers.Providers, *pc)
			p.origin = append(p.origin, pp)
		}
		if d.timeouts != (completions.MemberTimeouts{}) {
			p.ignored = append(p.ignored, pp+".timeout and stream_timeout (a wildcard's)")
		}
		if d.priced {
			p.ignored = append(p.ignored, path+" prices and token limits (a wildcard's)")
		}
		if !slices.Contains(p.cfg.Passthrough, prov+"/*") {
			p.cfg.Passthrough = append(p.cfg.Passthrough, prov+"/*")
		}
		if !slices.Contains(p.cfg.Listed, prov+"/*") {
			p.cfg.Listed = append(p.cfg.Listed, prov+"/*")
		}
		if strings.Contains(name, "*") {
			// LiteLLM's pattern routing: the names it matches that no model_name holds go to
			// the provider ("*" with openai/*: my-finetune → openai/my-finetune).
			p.cfg.Wildcards = append(p.cfg.Wildcards, completions.Wildcard{Pattern: name, Model: prov + "/" + rest})
		}
		return nil, nil
	}
	provName := prov
	if pc != nil {
		if baseModel != "" {
			pc.BaseModels = map[string]string{rest: baseModel}
		}
		provName = p.addProvider(pp, *pc, prov, name, nth, ownID)
	} else if baseModel != "" {
		if p.azureBase == nil {
			p.azureBase = map[string]string{}
		}
		p.azureBase[rest] = baseModel
	}
	d.member = provName + "/" + rest
	return d, nil
}

// priceKeys are the rates a deployment may set, in litellm_params or model_info, and the
// field of providers.OwnPrice each sets.
var priceKeys = []struct {
	key string
	to  func(*providers.OwnPrice) **float64
}{
	{"input_cost_per_token", func(o *providers.OwnPrice) **float64 { return &o.InputPerToken }},
	{"output_cost_per_token", func(o *providers.OwnPrice) **float64 { return &o.OutputPerToken }},
	{"cache_read_input_token_cost", func(o *providers.OwnPrice) **float64 { return &o.CacheReadPerToken }},
	{"cache_creation_input_token_cost", func(o *providers.OwnPrice) **float64 { return &o.CacheCreationPerToken }},
}

// ownPrice reads the deployment at path's own price: the rates of priceKeys from
// litellm_params (which win) or model_info, and model_info's max_input_tokens and
// max_output_tokens (else max_tokens, LiteLLM's older name of the output limit), each a
// number or text or os.environ/NAME; model_info.mode says which catalogue the price
// goes to (embedding, else chat), and of other modes it is not applied. set reports
// whether the deployment sets any of them.
func (p *parser) ownPrice(path string, params, info map[string]any) (o providers.OwnPrice, set bool, err error) {
	for _, k := range priceKeys {
		for _, src := range []struct {
			path string
			m    map[string]any
		}{{path + ".litellm_params." + k.key, params}, {path + ".model_info." + k.key, info}} {
			v, ok := src.m[k.key]
			if !ok || v == nil || *k.to(&o) != nil {
				continue
			}
			n, err := p.share(src.path, v)
			if err != nil {
				return o, false, err
			}
			if n > 0.01 {
				p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s: %g USD per token is $%g per million tokens, far above any model's price: LiteLLM's rates are per token (divide a price per million by 1000000)", src.path, n, n*1e6))
			}
			*k.to(&o) = &n
			set = true
		}
	}
	for _, f := range []struct {
		key string
		to  *int
	}{{"max_input_tokens", &o.MaxInputTokens}, {"max_output_tokens", &o.MaxOutputTokens}, {"max_tokens", &o.MaxOutputTokens}} {
		v, ok := info[f.key]
		if !ok || v == nil || *f.to != 0 {
			continue
		}
		fp := path + ".model_info." + f.key
		n, err := p.share(fp, v)
		if err != nil {
			return o, false, err
		}
		if n < 1 || n != math.Trunc(n) || n > 1e9 {
			return o, false, &Error{Path: fp, Message: fmt.Sprintf("must be a whole number of tokens from 1 to 1000000000, got %g", n)}
		}
		*f.to = int(n)
		set = true
	}
	if v, ok := info["mode"]; ok && v != nil {
		mode, err := str(path+".model_info.mode", v)
		if err != nil {
			return o, false, err
		}
		switch mode {
		case "chat", "completion", "responses":
		case "embedding":
			// Without rates or limits of its own too: the mode alone makes the deployment
			// an embedding model (its /health check embeds, /model/info says so), as
			// LiteLLM reads model_info.mode.
			o.Embedding, set = true, true
		default:
			if set {
				p.ignored = append(p.ignored, fmt.Sprintf("%s prices and token limits (model_info.mode %s: chat and embedding models' only)", path, mode))
			}
			return providers.OwnPrice{}, false, nil
		}
	}
	return o, set, nil
}

// splitModel maps LiteLLM's model string to Switchyard's provider and model.
func splitModel(path, model string) (prov, rest string, err error) {
	prefix, rest, ok := strings.Cut(model, "/")
	if !ok {
		// A bare name, as LiteLLM infers it for the common ones.
		switch {
		case strings.HasPrefix(model, "claude"):
			return "anthropic", model, nil
		case strings.HasPrefix(model, "gemini"):
			return "gemini", model, nil
		}
		return "openai", model, nil
	}
	prov, known := providerPrefixes[prefix]
	if !known {
		return "", "", &Error{Path: path, Message: fmt.Sprintf("unknown provider prefix %q in %q (known: %s)", prefix, model, strings.Join(slices.Sorted(maps.Keys(providerPrefixes)), ", "))}
	}
	if rest == "" {
		return "", "", &Error{Path: path, Message: fmt.Sprintf("%q names no model after %q", model, prefix+"/")}
	}
	if prefix == "hosted_vllm" {
		prov = "hosted_vllm" // an OpenAI-format server of its own: needs api_base (providerEntry)
	}
	return prov, rest, nil
}

// preset returns the built-in provider named name.
func preset(name string) (providers.Preset, bool) {
	for _, pr := range providers.Presets() {
		if pr.Name == name {
			return pr, true
		}
	}
	return providers.Preset{}, false
}

// providerEntry returns the provider entry a deployment of prov with params needs, or nil
// when the environment's provider serves it as it is.
func (p *parser) providerEntry(pp, prov string, params map[string]any) (*providers.ProviderConfig, error) {
	pr, isPreset := preset(prov)
	if prov == "hosted_vllm" {
		pr, isPreset = providers.Preset{Name: "hosted_vllm", Format: providers.FormatOpenAI}, false
	}
	pc := providers.ProviderConfig{Format: pr.Format}
	own := false // a setting differs from the environment's
	// api_base, api_version: values (from the environment or not).
	base, baseEnv, err := p.value(pp+".api_base", params["api_base"], false)
	if err != nil {
		return nil, err
	}
	if base != "" {
		if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
			return nil, &Error{Path: pp + ".api_base", Message: fmt.Sprintf("must be an http:// or https:// URL, got %q", base)}
		}
		if strings.Contains(base, "#") {
			// Not echoed: what follows '#' may be a credential put in the wrong place.
			return nil, &Error{Path: pp + ".api_base", Message: "has a fragment (#...), which an HTTP client never sends to the upstream, so what it holds would be silently dropped: remove it (a credential goes in api_key, or the query)"}
		}
		pc.BaseURL = base
		own = own || baseEnv == "" || baseEnv != pr.BaseURLEnv
	}
	if v, ok := params["api_version"]; ok {
		if prov != "azure" {
			return nil, &Error{Path: pp + ".api_version", Message: "applies to azure deployments only"}
		}
		ver, verEnv, err := p.value(pp+".api_version", v, false)
		if err != nil {
			return nil, err
		}
		pc.APIVersion = ver
		own = own || verEnv != "AZURE_API_VERSION"
	}
	// api_key: an os.environ/ key stays a variable (api_key_env).
	if v, ok := params["api_key"]; ok {
		key, keyEnv, err := p.value(pp+".api_key", v, true)
		if err != nil {
			return nil, err
		}
		switch {
		case keyEnv != "":
			pc.APIKeyEnv = keyEnv
			own = own || keyEnv != pr.KeyEnv
		case key != "":
			pc.APIKey = key
			own = true
		}
	}
	if err := p.cloudFields(pp, prov, params, &pc, &own); err != nil {
		return nil, err
	}
	// extra_headers: sent with every call of the entry (values may be os.environ/NAME).
	if v, ok := params["extra_headers"]; ok && v != nil {
		m, isMap := v.(map[string]any)
		if !isMap {
			return nil, &Error{Path: pp + ".extra_headers", Message: "must be a map of header names to values, got " + kind(v)}
		}
		if pr.Format == providers.FormatVertex {
			p.ignored = append(p.ignored, pp+".extra_headers (a vertex_ai deployment's)")
			m = nil
		}
		if len(m) > 0 {
			pc.Headers = make(map[string]string, len(m))
		}
		for k, hv := range m {
			val, _, err := p.value(pp+".extra_headers."+k, hv, true)
			if err != nil {
				return nil, err
			}
			pc.Headers[k] = val
		}
		own = own || len(m) > 0
	}
	// organization: OpenAI's OpenAI-Organization header, as LiteLLM sends it.
	if v, ok := params["organization"]; ok && v != nil {
		org, _, err := p.value(pp+".organization", v, false)
		if pr.Format != providers.FormatOpenAI && pr.Format != providers.FormatAzure {
			// LiteLLM sends it to OpenAI only: elsewhere it does nothing.
			p.ignored = append(p.ignored, pp+".organization (not an OpenAI-format deployment's)")
			org = ""
		}
		if err != nil {
			return nil, err
		}
		if org != "" {
			if pc.Headers == nil {
				pc.Headers = map[string]string{}
			}
			pc.Headers["OpenAI-Organization"] = org
			own = true
		}
	}
	if prov == "hosted_vllm" && pc.BaseURL == "" {
		return nil, &Error{Path: pp + ".api_base", Message: "is required for hosted_vllm (the server's URL)"}
	}
	if !own && isPreset {
		return nil, nil
	}
	// Fill what the entry leaves to the environment.
	if pc.BaseURL == "" && pr.Format != providers.FormatBedrock && pr.Format != providers.FormatVertex {
		switch {
		case pr.BaseURLEnv != "" && p.env(pr.BaseURLEnv) != "":
			pc.BaseURL = p.env(pr.BaseURLEnv)
		case pr.BaseURL != "":
			pc.BaseURL = pr.BaseURL
		default:
			return nil, &Error{Path: pp + ".api_base", Message: fmt.Sprintf("is required: %s has no default endpoint (or set %s)", prov, pr.BaseURLEnv)}
		}
	}
	if pc.APIKey == "" && pc.APIKeyEnv == "" && pr.Format != providers.FormatBedrock && pr.Format != providers.FormatVertex {
		if pr.KeyEnv != "" && p.env(pr.KeyEnv) != "" {
			pc.APIKeyEnv = pr.KeyEnv
		} else if pr.Format == providers.FormatOpenAI {
			pc.KeyOptional = true // a self-hosted server without a key (vLLM, …)
		} else if pr.KeyEnv != "" {
			pc.APIKeyEnv = pr.KeyEnv
		}
	}
	if pc.APIVersion == "" && pr.Format == providers.FormatAzure {
		pc.APIVersion = p.env("AZURE_API_VERSION")
	}
	pc.MaxTokensField, pc.OmitStreamOptions, pc.ShortToolCallIDs, pc.Prefill = pr.MaxTokensField, pr.OmitStreamOptions, pr.ShortToolCallIDs, pr.Prefill
	return &pc, nil
}

// cloudFields reads Bedrock's and Vertex AI's settings into pc.
func (p *parser) cloudFields(pp, prov string, params map[string]any, pc *providers.ProviderConfig, own *bool) error {
	awsEnv := map[string]*string{"aws_access_key_id": &pc.AWSAccessKeyIDEnv, "aws_secret_access_key": &pc.AWSSecretAccessKeyEnv, "aws_session_token": &pc.AWSSessionTokenEnv}
	plain := map[string]*string{"aws_region_name": &pc.Region, "aws_profile_name": &pc.AWSProfileName}
	vertex := map[string]*string{"vertex_project": &pc.Project, "vertex_location": &pc.Location, "vertex_credentials": &pc.CredentialsFile}
	for _, key := range slices.Sorted(maps.Keys(params)) {
		path := pp + "." + key
		switch {
		case awsEnv[key] != nil || plain[key] != nil:
			if prov != "bedrock" {
				return &Error{Path: path, Message: "applies to bedrock deployments only"}
			}
		case vertex[key] != nil:
			if prov != "vertex_ai" {
				return &Error{Path: path, Message: "applies to vertex_ai deployments only"}
			}
		default:
			continue
		}
		val, envName, err := p.value(path, params[key], awsEnv[key] != nil)
		if err != nil {
			return err
		}
		*own = true
		switch {
		case awsEnv[key] != nil && envName == "":
			return &Error{Path: path, Message: "must be os.environ/VARIABLE: Switchyard reads AWS credentials from the environment, never from the file"}
		case awsEnv[key] != nil:
			*awsEnv[key] = envName
		case key == "vertex_credentials" && strings.HasPrefix(strings.TrimSpace(val), "{"):
			return &Error{Path: path, Message: "must be a credentials file's path (Switchyard does not take the JSON itself here)"}
		case plain[key] != nil:
			*plain[key] = val
		default:
			*vertex[key] = val
		}
	}
	return nil
}

// addProvider names the provider entry pc of a deployment (entry nth of model_name name)
// and adds it, or returns the name of an identical entry already added. An entry of
// ParseWith's with an id (ownID) gets a name of its own made from that id
// ("openai-team-1a2b3c4d"), shared with no other of ParseWith's entries: it stays the same
// while that deployment lives, whatever entries are added or removed around it, so its
// rate-limit counts and the name its usage is logged under do not move to another.
func (p *parser) addProvider(pp string, pc providers.ProviderConfig, prov, name string, nth int, ownID string) string {
	baseModels := pc.BaseModels
	pc.BaseModels = nil
	key, _ := json.Marshal(pc)
	existing, ok := p.providerOf[string(key)]
	if ownID != "" {
		// The file's identical entry (named before any of ParseWith's) may be shared; another
		// stored deployment's may not.
		if ok && p.storedName[existing] {
			ok = false
		}
		if !ok {
			existing, ok = p.providerOf[string(key)+"\x00"+ownID]
		}
	}
	if ok {
		for i := range p.cfg.Providers.Providers {
			if e := &p.cfg.Providers.Providers[i]; e.Name == existing && len(baseModels) > 0 {
				if e.BaseModels == nil {
					e.BaseModels = map[string]string{}
				}
				maps.Copy(e.BaseModels, baseModels)
			}
		}
		return existing
	}
	base := slugDisallowed.ReplaceAllString(strings.ToLower(strings.ReplaceAll(prov, "_", "-")+"-"+name), "-")
	base = strings.Trim(base, "-._")
	if len(base) > 56 {
		base = strings.TrimRight(base[:56], "-._")
	}
	candidate := base
	if ownID != "" {
		sum := sha256.Sum256([]byte(ownID))
		base = fitName(base, "-"+hex.EncodeToString(sum[:4]))
		candidate = base
	} else if nth > 1 {
		candidate = fmt.Sprintf("%s-%d", base, nth)
	}
	for k := 2; p.nameTaken(candidate); k++ {
		candidate = fitName(base, fmt.Sprintf("-%d", nth*10+k)) // rare: two model_names slug alike
	}
	pc.Name, pc.BaseModels = candidate, baseModels
	if ownID != "" {
		if p.storedName == nil {
			p.storedName = map[string]bool{}
		}
		p.storedName[candidate] = true
		p.providerOf[string(key)+"\x00"+ownID] = candidate
		if _, shared := p.providerOf[string(key)]; !shared {
			p.providerOf[string(key)] = candidate
		}
	} else {
		p.providerOf[string(key)] = candidate
	}
	p.cfg.Providers.Providers = append(p.cfg.Providers.Providers, pc)
	p.origin = append(p.origin, pp)
	return candidate
}

// maxProviderName is the longest provider entry name the registry takes.
const maxProviderName = 64

// fitName is base followed by suffix, base cut (and its trailing '-', '.', '_' dropped) so
// the whole is at most maxProviderName characters.
func fitName(base, suffix string) string {
	if n := maxProviderName - len(suffix); len(base) > n {
		base = strings.TrimRight(base[:n], "-._")
	}
	return base + suffix
}

// nameTaken reports whether a provider entry or a built-in provider is named name.
func (p *parser) nameTaken(name string) bool {
	if _, ok := preset(name); ok {
		return true
	}
	return slices.ContainsFunc(p.cfg.Providers.Providers, func(pc providers.ProviderConfig) bool { return pc.Name == name })
}

// groups makes a model group of each model_name.
func (p *parser) groups(deps []deployment, strategy string) error {
	var order []string
	by := map[string][]deployment{}
	for _, d := range deps {
		if _, ok := by[d.name]; !ok {
			order = append(order, d.name)
		}
		by[d.name] = append(by[d.name], d)
	}
	nearest := ""
	switch strategy {
	case "simple-shuffle", "latency-based-routing":
	case "usage-based-routing", "usage-based-routing-v2":
		nearest = "simple-shuffle weighted by tpm, else rpm (each deployment's rpm and tpm are still limits)"
	case "least-busy":
		nearest = "simple-shuffle (Switchyard does not count each deployment's requests in flight)"
	case "cost-based-routing":
		nearest = `route with tradeoff "cost" (the cheapest deployment by the price catalogue within the router's tolerance)`
	default:
		return &Error{Path: "router_settings.routing_strategy", Message: fmt.Sprintf("unknown strategy %q (simple-shuffle, latency-based-routing, usage-based-routing, usage-based-routing-v2, least-busy, cost-based-routing)", strategy)}
	}
	if nearest != "" {
		p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("router_settings.routing_strategy %s is not supported: groups of several deployments use %s", strategy, nearest))
	}
	limits := p.memberLimits(deps)
	timeouts := p.memberTimeouts(deps)
	p.params = p.memberParams(deps)
	// inGroups are the model groups (model_names without '/') deploying each member: a
	// deployment named with '/' that calls one of them shares its timeouts.
	inGroups := map[string][]string{}
	for _, name := range order {
		if strings.Contains(name, "/") {
			continue
		}
		for _, d := range by[name] {
			if !slices.Contains(inGroups[d.member], name) {
				inGroups[d.member] = append(inGroups[d.member], name)
			}
		}
	}
	for _, name := range order {
		ds := by[name]
		if strings.Contains(name, "/") {
			if len(ds) > 1 {
				return &Error{Path: ds[1].path + ".model_name", Message: fmt.Sprintf("%q names several deployments, which makes a model group, whose name cannot hold '/'", name)}
			}
			// Listed as written, as LiteLLM's /v1/models lists its model_names; requests
			// may send it or the deployment's litellm_params.model (deploymentNames).
			if !slices.Contains(p.cfg.Listed, name) {
				p.cfg.Listed = append(p.cfg.Listed, name)
			}
			switch d := ds[0]; {
			case len(inGroups[d.member]) > 0 && d.limited():
				// One upstream, one count (memberLimits): its limits add to the member's.
				p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s.litellm_params: rpm, tpm and max_parallel_requests of a model_name with '/' are not its own: they add up with those of %s in model group %s (one upstream, one count), for every call of it", d.path, d.member, strings.Join(inGroups[d.member], ", ")))
			case len(inGroups[d.member]) > 0 && slices.ContainsFunc(deps, func(o deployment) bool { return o.member == d.member && o.limited() }):
				// A deployment of the upstream without a bound leaves it unbounded (memberLimits).
				p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s.litellm_params: sets no rpm, tpm or max_parallel_requests, so %s in model group %s is not held to the limits its deployments there set (one upstream, one count: a deployment without a limit leaves it unbounded): give it the same limits or remove it", d.path, d.member, strings.Join(inGroups[d.member], ", ")))
			case d.limited():
				p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s.litellm_params: rpm, tpm and max_parallel_requests are not limits of a model_name with '/' (only a model group's members are limited): give it a name without '/'", d.path))
			}
			if d := ds[0]; !d.params.IsZero() && len(inGroups[d.member]) == 0 {
				p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s.litellm_params: temperature, max_tokens and the other request parameters are not applied to a model_name with '/' (only a model group's members have defaults): give it a name without '/'", d.path))
			}
			switch d := ds[0]; {
			case d.timeouts == (completions.MemberTimeouts{}):
			case len(inGroups[d.member]) == 0:
				p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s.litellm_params: timeout and stream_timeout are not applied to a model_name with '/' (only a model group's members have their own): give it a name without '/'", d.path))
			default:
				// One upstream, one set of timeouts (memberTimeouts), held wherever it is called.
				p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s.litellm_params: timeout and stream_timeout of a model_name with '/' are not its own: they are merged with those of %s in model group %s (one upstream: the longest holds, none where one sets none), for every call of it", d.path, d.member, strings.Join(inGroups[d.member], ", ")))
			}
			continue
		}
		if !groupNameRE.MatchString(name) {
			return &Error{Path: ds[0].path + ".model_name", Message: fmt.Sprintf("%q: a model name is 1-64 letters, digits, '_', '.', ':' or '-'", name)}
		}
		if len(ds) > completions.MaxModels {
			return &Error{Path: ds[completions.MaxModels].path + ".model_name", Message: fmt.Sprintf("%q has more than %d deployments", name, completions.MaxModels)}
		}
		var g completions.ModelGroup
		weights := map[string]float64{}
		share := pickShare(ds, strategy)
		for _, d := range ds {
			if _, dup := weights[d.member]; !dup {
				g.Models = append(g.Models, d.member)
			}
			weights[d.member] += share(d)
		}
		if slices.ContainsFunc(g.Models, func(m string) bool { return limits[m] != (completions.MemberLimits{}) }) {
			for _, m := range g.Models {
				g.Limits = append(g.Limits, limits[m])
			}
		}
		if slices.ContainsFunc(g.Models, func(m string) bool { return timeouts[m] != (completions.MemberTimeouts{}) }) {
			for _, m := range g.Models {
				g.Timeouts = append(g.Timeouts, timeouts[m])
			}
		}
		p.groupParams(&g)
		if err := p.groupTags(&g, name, ds); err != nil {
			return err
		}
		if len(g.Models) > 1 {
			switch strategy {
			case "latency-based-routing":
				g.Fastest = true
			case "cost-based-routing":
				g.Route, g.Tradeoff = true, "cost"
			default:
				g.Shuffle = true
				if total := sum(weights); total > 0 {
					for _, m := range g.Models {
						g.Weights = append(g.Weights, weights[m])
					}
				}
			}
		}
		p.cfg.ModelGroups[name] = g
	}
	return nil
}

// deploymentNames sets Config.DeploymentNames from Config.Deployments (the file's and
// ParseWith's entries), as LiteLLM's proxy serves a name: each model_name with '/' (no
// group can have it) to its deployment, and each other litellm_params.model that is no
// model_name or alias to the deployments giving it (one per member, in order, at most
// completions.MaxModels); a name is kept when one of its deployments is called under
// another or is no model group's member (a group's member called by its own name is
// served as such already).
func (p *parser) deploymentNames() {
	by := map[string][]completions.NamedDeployment{}
	add := func(name string, d Deployment) {
		ds := by[name]
		if len(ds) < completions.MaxModels && !slices.ContainsFunc(ds, func(n completions.NamedDeployment) bool { return n.Member == d.Member }) {
			by[name] = append(ds, completions.NamedDeployment{ModelName: d.ModelName, Member: d.Member})
		}
	}
	for _, d := range p.cfg.Deployments {
		if strings.Contains(d.ModelName, "/") {
			add(d.ModelName, d) // a model_name first, as LiteLLM's proxy tries them first
		}
	}
	names := slices.Collect(maps.Keys(by))
	for _, d := range p.cfg.Deployments {
		if _, isGroup := p.cfg.ModelGroups[d.Model]; !isGroup && d.Model != "" && !slices.Contains(names, d.Model) {
			add(d.Model, d)
		}
	}
	inGroup := func(m string) bool {
		for _, g := range p.cfg.ModelGroups {
			if slices.Contains(g.Models, m) {
				return true
			}
		}
		return false
	}
	for name, ds := range by {
		// A name every deployment of which is called by it and is a group's member is
		// served as such already; a model_name with '/' is listed as written, not by its
		// member, so its litellm_params.model needs its entry here.
		if !slices.ContainsFunc(ds, func(n completions.NamedDeployment) bool { return n.Member != name || !inGroup(n.Member) }) {
			continue
		}
		if p.cfg.DeploymentNames == nil {
			p.cfg.DeploymentNames = map[string][]completions.NamedDeployment{}
		}
		p.cfg.DeploymentNames[name] = ds
	}
}

// deploymentTags reads a deployment's litellm_params.tags at path: a list of tags, each
// as a request's (completions.CheckTags); nil when absent.
func deploymentTags(path string, v any) ([]string, error) {
	tags, err := textList(path, v, "tags")
	if err != nil || tags == nil {
		return nil, err
	}
	if err := completions.CheckDeploymentTags(path, tags); err != nil {
		return nil, fieldError(path, err)
	}
	return completions.AddTags(nil, tags...), nil
}

// textList reads a list of texts (what it holds names them in the error) at path; nil
// when absent.
func textList(path string, v any, what string) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, &Error{Path: path, Message: "must be a list of " + what + ", got " + kind(v)}
	}
	out := make([]string, 0, len(list))
	for i, t := range list {
		s, ok := t.(string)
		if !ok {
			return nil, &Error{Path: fmt.Sprintf("%s[%d]", path, i), Message: "must be text, got " + kind(t)}
		}
		out = append(out, s)
	}
	return out, nil
}

// fieldError is err, a completions check of the value at path, as an *Error naming the
// field the check named (else path).
func fieldError(path string, err error) *Error {
	var ve *completions.ValidationError
	if errors.As(err, &ve) {
		if ve.Field != "" {
			path = ve.Field
		}
		return &Error{Path: path, Message: ve.Message}
	}
	return &Error{Path: path, Message: err.Error()}
}

// proxyBudget reads litellm_settings.max_budget (USD, a number, 0 for no bound as on
// LiteLLM, or text or os.environ/NAME holding one) and budget_duration (text such as "30d", checked where it
// is applied).
func (p *parser) proxyBudget(litellm map[string]any) error {
	if v, ok := litellm["max_budget"]; ok && v != nil {
		n, err := p.share("litellm_settings.max_budget", v)
		if err != nil {
			return err
		}
		if n == 0 { // share refuses a negative one
			// LiteLLM's default (its docs' example writes it): no proxy-wide bound.
			p.cfg.Warnings = append(p.cfg.Warnings, "litellm_settings.max_budget 0 sets no proxy-wide bound (as on LiteLLM)")
		}
		p.cfg.MaxBudget = n
	}
	if v, ok := litellm["budget_duration"]; ok && v != nil {
		d, err := str("litellm_settings.budget_duration", v)
		if err != nil {
			return err
		}
		if p.cfg.MaxBudget == 0 {
			p.cfg.Warnings = append(p.cfg.Warnings, "litellm_settings.budget_duration does nothing without litellm_settings.max_budget")
			return nil
		}
		p.cfg.BudgetDuration = strings.TrimSpace(d)
	}
	return nil
}

// deploymentParams reads the default request parameters among a deployment's
// litellm_params (at path): temperature, top_p, max_tokens (or max_completion_tokens),
// stop (one sequence or a list), seed, frequency_penalty, presence_penalty and
// reasoning_effort, as LiteLLM sends them with each call the request leaves them unset in.
func deploymentParams(path string, params map[string]any) (completions.MemberParams, error) {
	var mp completions.MemberParams
	for _, f := range []struct {
		key string
		to  **float64
	}{{"temperature", &mp.Temperature}, {"top_p", &mp.TopP}, {"frequency_penalty", &mp.FrequencyPenalty}, {"presence_penalty", &mp.PresencePenalty}} {
		if v, ok := params[f.key]; ok && v != nil {
			n, err := number(path+"."+f.key, v)
			if err != nil {
				return mp, err
			}
			*f.to = &n
		}
	}
	for _, key := range []string{"max_tokens", "max_completion_tokens"} {
		v, ok := params[key]
		if !ok || v == nil {
			continue
		}
		n, err := number(path+"."+key, v)
		if err != nil {
			return mp, err
		}
		if n < 1 || n != math.Trunc(n) || n > math.MaxInt32 {
			return mp, &Error{Path: path + "." + key, Message: fmt.Sprintf("must be a whole number of tokens, at least 1, got %g", n)}
		}
		if mp.MaxTokens != 0 && mp.MaxTokens != int(n) {
			return mp, &Error{Path: path + "." + key, Message: fmt.Sprintf("%d differs from max_tokens %d: give one", int(n), mp.MaxTokens)}
		}
		mp.MaxTokens = int(n)
	}
	if v, ok := params["seed"]; ok && v != nil {
		n, err := number(path+".seed", v)
		if err != nil {
			return mp, err
		}
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return mp, &Error{Path: path + ".seed", Message: fmt.Sprintf("must be a whole number, got %g", n)}
		}
		seed := int64(n)
		mp.Seed = &seed
	}
	switch v := params["stop"].(type) {
	case nil:
	case string:
		mp.Stop = []string{v}
	case []any:
		for i, s := range v {
			text, ok := s.(string)
			if !ok {
				return mp, &Error{Path: fmt.Sprintf("%s.stop[%d]", path, i), Message: "must be text, got " + kind(s)}
			}
			mp.Stop = append(mp.Stop, text)
		}
	default:
		return mp, &Error{Path: path + ".stop", Message: "must be text or a list of texts, got " + kind(v)}
	}
	if v, ok := params["reasoning_effort"]; ok && v != nil {
		s, err := str(path+".reasoning_effort", v)
		if err != nil {
			return mp, err
		}
		mp.ReasoningEffort = s
	}
	if err := mp.Check(path); err != nil {
		return mp, fieldError(path, err)
	}
	return mp, nil
}

// deploymentTagRegex reads a deployment's litellm_params.tag_regex at path: a list of
// regular expressions (completions.CheckTagPatterns); nil when absent. A pattern Go's
// RE2 syntax cannot read (a Python lookahead) is skipped with a warning, as LiteLLM skips
// one it cannot compile.
func (p *parser) deploymentTagRegex(path string, v any) ([]string, error) {
	list, err := textList(path, v, "regular expressions")
	if err != nil || list == nil {
		return nil, err
	}
	patterns := make([]string, 0, len(list))
	for i, s := range list {
		if _, err := regexp.Compile(s); err != nil && s != "" {
			p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s[%d] %q is not a regular expression of Go's RE2 syntax (%v): skipped, as LiteLLM skips a pattern it cannot compile", path, i, s, err))
			continue
		}
		patterns = append(patterns, s)
	}
	if err := completions.CheckTagPatterns(path, patterns); err != nil {
		return nil, fieldError(path, err)
	}
	return completions.AddTags(nil, patterns...), nil
}

// groupTags gives the group g (model_name name, deployments ds) its members' tags: a
// member's are those of its deployments together (deployments calling one member are one
// upstream here); none when no deployment has tags. Deployments of one member with
// different tags are warned about: a request selecting one of them reaches the member.
func (p *parser) groupTags(g *completions.ModelGroup, name string, ds []deployment) error {
	if err := p.groupTagRegex(g, name, ds); err != nil {
		return err
	}
	if !slices.ContainsFunc(ds, func(d deployment) bool { return len(d.tags) > 0 }) {
		return nil
	}
	g.Tags = make([][]string, len(g.Models))
	for i, m := range g.Models {
		var first *deployment
		for k := range ds {
			d := &ds[k]
			if d.member != m {
				continue
			}
			if first == nil {
				first = d
			} else if !slices.Equal(first.tags, d.tags) {
				p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s.litellm_params.tags differ from %s's, yet both call %s in model group %s (one upstream): it carries the tags of both", d.path, first.path, m, name))
			}
			g.Tags[i] = completions.AddTags(g.Tags[i], d.tags...)
		}
		if len(g.Tags[i]) > completions.MaxTags {
			return &Error{Path: first.path + ".litellm_params.tags", Message: fmt.Sprintf("the deployments calling %s in model group %s carry more than %d tags together", m, name, completions.MaxTags)}
		}
	}
	return nil
}

// groupTagRegex gives the group g (model_name name, deployments ds) its members' tag
// patterns, those of a member's deployments together, as groupTags its tags.
func (p *parser) groupTagRegex(g *completions.ModelGroup, name string, ds []deployment) error {
	if !slices.ContainsFunc(ds, func(d deployment) bool { return len(d.tagRegex) > 0 }) {
		return nil
	}
	g.TagRegex = make([][]string, len(g.Models))
	for i, m := range g.Models {
		var first *deployment
		for k := range ds {
			if d := &ds[k]; d.member == m {
				if first == nil {
					first = d
				}
				g.TagRegex[i] = completions.AddTags(g.TagRegex[i], d.tagRegex...)
			}
		}
		if len(g.TagRegex[i]) > completions.MaxTagPatterns {
			return &Error{Path: first.path + ".litellm_params.tag_regex", Message: fmt.Sprintf("the deployments calling %s in model group %s carry more than %d patterns together", m, name, completions.MaxTagPatterns)}
		}
	}
	return nil
}

// memberLimits returns the limits of each member (provider/model) of deps: a deployment's
// rpm, tpm and max_parallel_requests (LiteLLM's router holds a deployment to them).
// Deployments that call the same member (the same provider entry and model, in one
// model_name or several) are one upstream with one count: the limits they set add up,
// while one of them without a limit (LiteLLM sends it any number of calls) leaves the
// member without that bound. A value under 1 but above 0 counts as 1, a fraction is
// rounded down; 0 (which LiteLLM reads as "never send") is no bound, with a warning.
func (p *parser) memberLimits(deps []deployment) map[string]completions.MemberLimits {
	out := map[string]completions.MemberLimits{}
	// unbounded are the members a deployment sets no rpm, tpm or max_parallel for.
	type fields struct{ rpm, tpm, maxParallel bool }
	unbounded := map[string]fields{}
	whole := func(d deployment, key string, v *float64) int64 {
		switch {
		case v == nil:
			return 0
		case *v == 0:
			p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s.litellm_params.%s: 0 is no limit here (LiteLLM sends such a deployment nothing): remove the deployment to stop its use", d.path, key))
			return 0
		case *v >= 1e12: // more than any upstream allows; keeps sums far from overflowing
			return 1e12
		}
		return max(int64(*v), 1)
	}
	for _, d := range deps {
		l, u := out[d.member], unbounded[d.member]
		for _, f := range []struct {
			key   string
			v     *float64
			sum   *int64
			unset *bool
		}{{"rpm", d.rpm, &l.RPM, &u.rpm}, {"tpm", d.tpm, &l.TPM, &u.tpm}, {"max_parallel_requests", d.maxParallel, &l.MaxParallel, &u.maxParallel}} {
			n := whole(d, f.key, f.v)
			*f.sum += n
			*f.unset = *f.unset || n == 0
		}
		out[d.member], unbounded[d.member] = l, u
	}
	for m, u := range unbounded {
		l := out[m]
		if u.rpm {
			l.RPM = 0
		}
		if u.tpm {
			l.TPM = 0
		}
		if u.maxParallel {
			l.MaxParallel = 0
		}
		out[m] = l
	}
	return out
}

// memberTimeouts returns the timeouts of each member (provider/model) of deps: a
// deployment's timeout and stream_timeout. Deployments that call the same member (the same
// provider entry and model) are one upstream with one set of timeouts: one of them without
// a timeout (LiteLLM waits as long as the router does) leaves the member without it, and
// of differing ones the longest holds (no call is cut sooner than a deployment allows),
// with a warning.
func (p *parser) memberTimeouts(deps []deployment) map[string]completions.MemberTimeouts {
	out := map[string]completions.MemberTimeouts{}
	unset := map[string][2]bool{}
	differ := map[string]bool{}
	for _, d := range deps {
		t, seen := out[d.member]
		u := unset[d.member]
		// A stream's first chunk waits stream_timeout, else timeout (as LiteLLM reads them):
		// compared so, the longest wait holds.
		first := d.timeouts.StreamTimeout
		if first == 0 {
			first = d.timeouts.Timeout
		}
		for k, f := range []struct{ v, to *float64 }{{&d.timeouts.Timeout, &t.Timeout}, {&first, &t.StreamTimeout}} {
			if seen && *f.v != *f.to {
				differ[d.member] = true
			}
			*f.to = max(*f.to, *f.v)
			u[k] = u[k] || *f.v == 0
		}
		out[d.member], unset[d.member] = t, u
	}
	for m, u := range unset {
		t := out[m]
		if u[0] {
			t.Timeout = 0
		}
		if u[1] || t.StreamTimeout == t.Timeout {
			t.StreamTimeout = 0 // none, or the same as timeout's
		}
		out[m] = t
	}
	for _, m := range slices.Sorted(maps.Keys(differ)) {
		p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("deployments of %s (one upstream) set different timeout or stream_timeout: the longest is used, none where one sets none", m))
	}
	return out
}

// memberParams returns the default request parameters of each member (provider/model) of
// deps. Deployments that call the same member (one provider entry and model) are one
// upstream with one set of parameters: the first one's hold, with a warning when another
// sets different ones.
func (p *parser) memberParams(deps []deployment) map[string]completions.MemberParams {
	out := map[string]completions.MemberParams{}
	first := map[string]string{}
	warned := map[string]bool{}
	for _, d := range deps {
		prev, seen := out[d.member]
		if !seen {
			out[d.member], first[d.member] = d.params, d.path
			continue
		}
		if !prev.Equal(d.params) && !warned[d.member] {
			warned[d.member] = true
			p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s.litellm_params: temperature, max_tokens or another request parameter differs from %s's, yet both call %s (one upstream): %s's hold", d.path, first[d.member], d.member, first[d.member]))
		}
	}
	return out
}

// groupParams gives the group g its members' default request parameters, when one of
// them has any.
func (p *parser) groupParams(g *completions.ModelGroup) {
	if !slices.ContainsFunc(g.Models, func(m string) bool { return !p.params[m].IsZero() }) {
		return
	}
	for _, m := range g.Models {
		g.Params = append(g.Params, p.params[m])
	}
}

// memberPrices sets Config.Prices: each member's own price, from the deployments calling
// it. Deployments calling the same member (one provider entry and model) are one upstream
// priced once: the first one's price holds, with a warning when another sets a different
// one (or none: it is priced as the first says all the same).
func (p *parser) memberPrices(deps []deployment) {
	first := map[string]deployment{}
	var differ []string
	for _, d := range deps {
		if !d.priced {
			continue
		}
		f, seen := first[d.member]
		if !seen {
			first[d.member] = d
			if p.cfg.Prices == nil {
				p.cfg.Prices = map[string]providers.OwnPrice{}
			}
			p.cfg.Prices[d.member] = d.price
			continue
		}
		a, _ := json.Marshal(f.price)
		b, _ := json.Marshal(d.price)
		if string(a) != string(b) && !slices.Contains(differ, d.path) {
			differ = append(differ, d.path)
			p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s sets another price than %s for %s (one upstream, one price): %s's is used", d.path, f.path, d.member, f.path))
		}
	}
	for _, d := range deps {
		if f, ok := first[d.member]; ok && !d.priced {
			p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s sets no price, yet calls %s as %s does (one upstream, one price): it is priced as %s says", d.path, d.member, f.path, f.path))
		}
	}
}

// pickShare returns how a deployment's share of a shuffled group is read: by weight when
// any deployment has one, else rpm, else tpm (LiteLLM's simple-shuffle; usage-based
// routing prefers tpm); nil values count 0.
func pickShare(ds []deployment, strategy string) func(deployment) float64 {
	fields := []func(deployment) *float64{
		func(d deployment) *float64 { return d.weight },
		func(d deployment) *float64 { return d.rpm },
		func(d deployment) *float64 { return d.tpm },
	}
	if strings.HasPrefix(strategy, "usage-based-routing") {
		fields[1], fields[2] = fields[2], fields[1]
	}
	for _, f := range fields {
		if slices.ContainsFunc(ds, func(d deployment) bool { return f(d) != nil }) {
			return func(d deployment) float64 {
				if v := f(d); v != nil {
					return *v
				}
				return 0
			}
		}
	}
	return func(deployment) float64 { return 0 }
}

func sum(m map[string]float64) (s float64) {
	for _, v := range m {
		s += v
	}
	return s
}

// target returns what a fallback or alias naming model_name stands for: the group of that
// name, or the one deployment of a name with '/'.
func (p *parser) target(path, name string, deps []deployment) (string, error) {
	if _, ok := p.cfg.ModelGroups[name]; ok {
		return name, nil
	}
	for _, d := range deps {
		if d.name == name {
			return d.member, nil
		}
	}
	return "", &Error{Path: path, Message: fmt.Sprintf("%q is not a model_name of model_list", name)}
}

// aliases adds router_settings.model_group_alias: another name for a group.
func (p *parser) aliases(v any, deps []deployment) error {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return &Error{Path: "router_settings.model_group_alias", Message: "must be a map of alias to model_name, got " + kind(v)}
	}
	for _, alias := range slices.Sorted(maps.Keys(m)) {
		path := "router_settings.model_group_alias." + alias
		val := m[alias]
		if obj, ok := val.(map[string]any); ok {
			val = obj["model"]
			if obj["hidden"] == true {
				p.ignored = append(p.ignored, path+".hidden")
			}
			path += ".model"
		}
		name, err := str(path, val)
		if err != nil {
			return err
		}
		t, err := p.target(path, name, deps)
		if err != nil {
			return err
		}
		if !groupNameRE.MatchString(alias) {
			return &Error{Path: "router_settings.model_group_alias." + alias, Message: "an alias is 1-64 letters, digits, '_', '.', ':' or '-'"}
		}
		if _, taken := p.cfg.ModelGroups[alias]; taken {
			return &Error{Path: "router_settings.model_group_alias." + alias, Message: "is a model_name already"}
		}
		if g, ok := p.cfg.ModelGroups[t]; ok {
			p.cfg.ModelGroups[alias] = g
			if p.aliasOf == nil {
				p.aliasOf = map[string]string{}
			}
			p.aliasOf[alias] = t // its fallbacks too, once read (fallbacks)
		} else {
			// The deployment's tags come with it: with tag filtering a request naming the
			// alias is routed by them, as LiteLLM routes it by the deployment's.
			g := completions.ModelGroup{Models: []string{t}}
			p.groupParams(&g)
			named := slices.DeleteFunc(slices.Clone(deps), func(d deployment) bool { return d.name != name })
			if err := p.groupTags(&g, alias, named); err != nil {
				return err
			}
			p.cfg.ModelGroups[alias] = g
		}
	}
	return nil
}

// fallbackKinds are the fallback lists read from router_settings and litellm_settings:
// the plain ones and those by kind of failure, and the group's field each sets.
var fallbackKinds = []struct {
	key  string
	list func(*completions.ModelGroup) *[]string
}{
	{"fallbacks", func(g *completions.ModelGroup) *[]string { return &g.Fallbacks }},
	{"context_window_fallbacks", func(g *completions.ModelGroup) *[]string { return &g.ContextWindowFallbacks }},
	{"content_policy_fallbacks", func(g *completions.ModelGroup) *[]string { return &g.ContentPolicyFallbacks }},
}

// fallbacks sets each group's Fallbacks, ContextWindowFallbacks and
// ContentPolicyFallbacks from the lists of those names in router_settings and
// litellm_settings (LiteLLM reads both), the plain ones also from
// litellm_settings.default_fallbacks (fallbacksOf).
func (p *parser) fallbacks(router, litellm map[string]any, deps []deployment) error {
	for _, k := range fallbackKinds {
		if err := p.fallbacksOf(k.key, k.list, router, litellm, deps); err != nil {
			return err
		}
	}
	return nil
}

// fallbacksOf sets the fallbacks of one kind (key: fallbacks, context_window_fallbacks,
// content_policy_fallbacks; list: the group's field) from router_settings.<key> and
// litellm_settings.<key>, each a list of maps of model_name to model_names; a "*" key (and,
// for the plain ones, litellm_settings.default_fallbacks) gives them to every group without
// its own (an empty list is its own: none). An alias without fallbacks keyed on its own
// name has its group's.
func (p *parser) fallbacksOf(key string, list func(*completions.ModelGroup) *[]string, router, litellm map[string]any, deps []deployment) error {
	var defaults []string
	keyed := map[string]bool{} // names with fallbacks of their own
	set := false               // any entry at all, "*" included
	for _, src := range []struct {
		path string
		v    any
	}{{"router_settings." + key, router[key]}, {"litellm_settings." + key, litellm[key]}} {
		if src.v == nil {
			continue
		}
		items, ok := src.v.([]any)
		if !ok {
			return &Error{Path: src.path, Message: `must be a list of maps such as [{"gpt-4o": ["claude-sonnet"]}], got ` + kind(src.v)}
		}
		for i, item := range items {
			m, ok := item.(map[string]any)
			if !ok {
				return &Error{Path: fmt.Sprintf("%s[%d]", src.path, i), Message: "must be a map of model_name to a list of model_names, got " + kind(item)}
			}
			for _, from := range slices.Sorted(maps.Keys(m)) {
				set = true
				path := fmt.Sprintf("%s[%d].%s", src.path, i, from)
				to, err := p.names(path, m[from], deps)
				if err != nil {
					return err
				}
				if from == "*" {
					defaults = append(defaults, to...)
					continue
				}
				g, ok := p.cfg.ModelGroups[from]
				if !ok {
					if _, err := p.target(path, from, deps); err != nil {
						return err
					}
					return &Error{Path: path, Message: fmt.Sprintf("%q is not a model group (a name with '/' cannot be one), so it cannot have fallbacks", from)}
				}
				*list(&g) = appendNew(*list(&g), to...)
				p.cfg.ModelGroups[from] = g
				keyed[from] = true
			}
		}
	}
	if v, ok := litellm["default_fallbacks"]; ok && key == "fallbacks" {
		to, err := p.names("litellm_settings.default_fallbacks", v, deps)
		if err != nil {
			return err
		}
		defaults = append(defaults, to...)
	}
	if len(defaults) > 0 {
		for name, g := range p.cfg.ModelGroups {
			// A name keyed with an empty list ({"gpt-4o": []}) has none: LiteLLM's router
			// finds its entry before "*" and has nothing to try.
			if _, alias := p.aliasOf[name]; len(*list(&g)) == 0 && !alias && !keyed[name] {
				*list(&g) = slices.DeleteFunc(slices.Clone(defaults), func(s string) bool { return s == name })
				p.cfg.ModelGroups[name] = g
			}
		}
	}
	for alias, target := range p.aliasOf {
		if !keyed[alias] {
			g, of := p.cfg.ModelGroups[alias], p.cfg.ModelGroups[target]
			*list(&g) = slices.DeleteFunc(slices.Clone(*list(&of)), func(s string) bool { return s == alias })
			p.cfg.ModelGroups[alias] = g
		}
	}
	if key == "context_window_fallbacks" && set {
		p.cfg.ContextWindowFallbacksSet = true
		// LiteLLM's router with context_window_fallbacks set re-raises a prompt too long
		// for a group without an entry (or with an empty one) rather than going on to
		// its plain fallbacks.
		for name, g := range p.cfg.ModelGroups {
			g.ContextWindowFallbacksSet = true
			p.cfg.ModelGroups[name] = g
		}
	}
	return nil
}

// names reads a list of model_names at path as fallback targets.
func (p *parser) names(path string, v any, deps []deployment) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, &Error{Path: path, Message: "must be a list of model_names, got " + kind(v)}
	}
	var out []string
	for j, item := range list {
		ip := fmt.Sprintf("%s[%d]", path, j)
		name, err := str(ip, item)
		if err != nil {
			return nil, err
		}
		t, err := p.target(ip, name, deps)
		if err != nil {
			return nil, err
		}
		out = appendNew(out, t)
	}
	return out, nil
}

// appendNew appends the items of add not in list yet.
func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	return list
}

// settings reads num_retries, the timeouts and the master key.
func (p *parser) settings(router, litellm, general map[string]any) error {
	for _, src := range []struct {
		path string
		v    any
	}{{"router_settings.num_retries", router["num_retries"]}, {"litellm_settings.num_retries", litellm["num_retries"]}} {
		if src.v == nil || p.cfg.NumRetries != nil {
			continue
		}
		n, err := number(src.path, src.v)
		if err != nil {
			return err
		}
		if n < 0 || n != float64(int(n)) || n > 100 {
			return &Error{Path: src.path, Message: fmt.Sprintf("must be a whole number from 0 to 100, got %g", n)}
		}
		k := int(n)
		if k > completions.MaxRetriesLimit {
			// The most a request may ask for: a default above it retries every model more
			// often than any client could.
			p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s %d is more than Switchyard retries a model (%d): %d is used", src.path, k, completions.MaxRetriesLimit, completions.MaxRetriesLimit))
			k = completions.MaxRetriesLimit
		}
		p.cfg.NumRetries = &k
	}
	for _, src := range []struct {
		path string
		v    any
	}{{"router_settings.timeout", router["timeout"]}, {"litellm_settings.request_timeout", litellm["request_timeout"]}} {
		if src.v == nil || p.cfg.Timeout != 0 {
			continue
		}
		n, err := number(src.path, src.v)
		if err != nil {
			return err
		}
		if n <= 0 || n > 86400 {
			return &Error{Path: src.path, Message: fmt.Sprintf("must be seconds, more than 0 and at most a day, got %g", n)}
		}
		p.cfg.Timeout = time.Duration(n * float64(time.Second))
	}
	if err := p.breaker(router); err != nil {
		return err
	}
	if v, ok := litellm["drop_params"]; ok && v != nil {
		b, isBool := v.(bool)
		if !isBool {
			return &Error{Path: "litellm_settings.drop_params", Message: "must be true or false, got " + kind(v)}
		}
		p.cfg.DropParams = &b
		if b {
			p.cfg.Warnings = append(p.cfg.Warnings, "litellm_settings.drop_params: true is what Switchyard does anyway (a provider without seed, penalties, logit_bias, user, … gets the request without them), except for audio and logprobs: a model that cannot answer aloud (all but OpenAI-format ones) or returns no log probabilities (Anthropic, Bedrock, OpenAI's reasoning models) is skipped, and a request none of whose models can is a 400 naming audio or logprobs")
		} else {
			p.cfg.Warnings = append(p.cfg.Warnings, "litellm_settings.drop_params: false is not followed: a parameter a provider lacks (seed, penalties, logit_bias, user, …) is dropped for it rather than refused; only audio and logprobs are refused (a 400 naming the field), when no model of the request can take them")
		}
	}
	if v, ok := general["master_key"]; ok {
		key, _, err := p.value("general_settings.master_key", v, true)
		if err != nil {
			return err
		}
		if strings.TrimSpace(key) == "" {
			return &Error{Path: "general_settings.master_key", Message: "must not be empty"}
		}
		p.cfg.MasterKey = key
	}
	if v, ok := general["reject_clientside_metadata_tags"]; ok && v != nil {
		b, isBool := v.(bool)
		if !isBool {
			return &Error{Path: "general_settings.reject_clientside_metadata_tags", Message: "must be true or false, got " + kind(v)}
		}
		p.cfg.RejectClientTags = b
	}
	return nil
}

// tagFiltering reads router_settings.enable_tag_filtering, tag_filtering_match_any
// (LiteLLM's default true: a deployment carrying any of the request's tags),
// tag_routing_prefix and the deployments' model_info.allow_fail_open into every model
// group (completions.ModelGroup.TagFiltering, TagMatchAll, TagRoutePrefix, TagFailOpen), and warns about tags
// that select nothing: on deployments while filtering is off, or on a model_name with '/'
// (not a model group here).
func (p *parser) tagFiltering(router map[string]any, deps []deployment) error {
	flag := func(key string, def bool) (bool, error) {
		v, ok := router[key]
		if !ok || v == nil {
			return def, nil
		}
		b, isBool := v.(bool)
		if !isBool {
			return false, &Error{Path: "router_settings." + key, Message: "must be true or false, got " + kind(v)}
		}
		return b, nil
	}
	on, err := flag("enable_tag_filtering", false)
	if err != nil {
		return err
	}
	matchAny, err := flag("tag_filtering_match_any", true)
	if err != nil {
		return err
	}
	// A group's own setting: the first of its deployments' model_info.enable_tag_filtering
	// (LiteLLM's override of the router-wide default); an alias has its group's.
	own := map[string]bool{}
	for _, d := range deps {
		if _, seen := own[d.name]; !seen && d.tagFiltering != nil {
			own[d.name] = *d.tagFiltering
		}
	}
	filtered := func(name string) bool {
		if target, ok := p.aliasOf[name]; ok {
			name = target
		}
		if v, ok := own[name]; ok {
			return v
		}
		return on
	}
	prefix := ""
	if v, ok := router["tag_routing_prefix"]; ok && v != nil {
		s, isString := v.(string)
		if !isString {
			return &Error{Path: "router_settings.tag_routing_prefix", Message: "must be a string, got " + kind(v)}
		}
		if err := completions.CheckTagRoutePrefix(s); err != nil {
			return &Error{Path: "router_settings.tag_routing_prefix", Message: err.Error()}
		}
		prefix = s
	}
	// allow_fail_open: LiteLLM's router checks any one deployment of the group.
	failOpen := map[string]bool{}
	for _, d := range deps {
		failOpen[d.name] = failOpen[d.name] || d.failOpen
	}
	anyOwnOn := slices.Contains(slices.Collect(maps.Values(own)), true)
	if !matchAny && !on && !anyOwnOn {
		p.cfg.Warnings = append(p.cfg.Warnings, "router_settings.tag_filtering_match_any: false does nothing without enable_tag_filtering: true")
	}
	tagged := false
	for _, d := range deps {
		if len(d.tags) == 0 && len(d.tagRegex) == 0 {
			continue
		}
		tagged = true
		if filtered(d.name) && strings.Contains(d.name, "/") {
			p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s.litellm_params.tags select nothing: %q has '/' and is no model group, so tag filtering does not apply to it (give it a name without '/')", d.path, d.name))
		}
	}
	if tagged && !on && !anyOwnOn {
		p.cfg.Warnings = append(p.cfg.Warnings, "litellm_params.tags and tag_regex route nothing without router_settings.enable_tag_filtering: true (requests' tags still label their spend)")
	}
	for name, g := range p.cfg.ModelGroups {
		if filtered(name) {
			g.TagFiltering, g.TagMatchAll, g.TagRoutePrefix = true, !matchAny, prefix
			g.TagFailOpen = failOpen[name]
			if target, ok := p.aliasOf[name]; ok {
				g.TagFailOpen = failOpen[target]
			}
			p.cfg.ModelGroups[name] = g
		}
	}
	for name, open := range failOpen {
		if open && !filtered(name) {
			p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("model_info.allow_fail_open of %q does nothing without tag filtering (router_settings.enable_tag_filtering or its model_info.enable_tag_filtering)", name))
		}
	}
	if prefix != "" && !on && !anyOwnOn {
		p.cfg.Warnings = append(p.cfg.Warnings, "router_settings.tag_routing_prefix does nothing without enable_tag_filtering: true")
	}
	return nil
}

// breaker reads router_settings.allowed_fails, cooldown_time and disable_cooldowns into
// Config.Breaker.
func (p *parser) breaker(router map[string]any) error {
	if v, ok := router["allowed_fails"]; ok && v != nil {
		n, err := p.share("router_settings.allowed_fails", v)
		if err != nil {
			return err
		}
		if n != math.Trunc(n) || n > 1000 {
			return &Error{Path: "router_settings.allowed_fails", Message: fmt.Sprintf("must be a whole number from 0 to 1000, got %g", n)}
		}
		p.cfg.Breaker.Failures = int(n) + 1
		p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("router_settings.allowed_fails %d: a model's circuit breaker opens after %d failures in a row (--breaker-failures %d); LiteLLM counts failures within cooldown_time that successes do not reset, Switchyard consecutive ones, and only those of an outage (rate limit, 5xx, timeout, connection failure), not a rejected key (401) or a missing model (404)", int(n), int(n)+1, int(n)+1))
	}
	if v, ok := router["cooldown_time"]; ok && v != nil {
		n, err := p.share("router_settings.cooldown_time", v)
		if err != nil {
			return err
		}
		switch {
		case n == 0:
			// LiteLLM's router reads 0 as unset (cooldown_time or its default).
			p.cfg.Warnings = append(p.cfg.Warnings, "router_settings.cooldown_time 0: LiteLLM reads it as its default cooldown; --breaker-cooldown's is used")
		case n > 86400:
			return &Error{Path: "router_settings.cooldown_time", Message: fmt.Sprintf("must be seconds, 0 to a day, got %g", n)}
		default:
			p.cfg.Breaker.Cooldown = time.Duration(n * float64(time.Second))
		}
	}
	if v, ok := router["disable_cooldowns"]; ok && v != nil {
		b, isBool := v.(bool)
		if !isBool {
			return &Error{Path: "router_settings.disable_cooldowns", Message: "must be true or false, got " + kind(v)}
		}
		if b {
			if p.cfg.Breaker.Failures > 0 {
				p.cfg.Warnings = append(p.cfg.Warnings, "router_settings.disable_cooldowns: true turns the circuit breakers off: allowed_fails is not used")
			}
			p.cfg.Breaker.Failures = -1
		}
	}
	return nil
}

// validate runs the provider entries and groups through the checks --providers-config and
// --model-groups make, naming the model_list entry a failing provider came from.
func (p *parser) validate() error {
	b, err := json.Marshal(p.cfg.Providers)
	if err != nil {
		return fmt.Errorf("litellm config: providers: %w", err)
	}
	if _, err := providers.ParseConfig(b); err != nil {
		var ce *providers.ConfigError
		if errors.As(err, &ce) {
			var i int
			if _, scanErr := fmt.Sscanf(ce.Field, "providers[%d]", &i); scanErr == nil && i < len(p.origin) {
				field := ce.Field[strings.Index(ce.Field, "]")+1:]
				return &Error{Path: p.origin[i], Message: fmt.Sprintf("provider %q%s: %s", p.cfg.Providers.Providers[i].Name, field, ce.Message)}
			}
		}
		return &Error{Path: "model_list", Message: err.Error()}
	}
	b, err = json.Marshal(p.cfg.ModelGroups)
	if err != nil {
		return fmt.Errorf("litellm config: model groups: %w", err)
	}
	if _, err := completions.ParseModelGroups(b); err != nil {
		return &Error{Path: "model_list", Message: err.Error()}
	}
	return nil
}

// value reads a string value at path, resolving os.environ/NAME; envName is NAME then. A
// variable that is not set is an error for a secret (an API key), and for any other value
// too: a URL or version from nowhere would only fail later.
func (p *parser) value(path string, v any, secret bool) (val, envName string, err error) {
	if v == nil {
		return "", "", nil
	}
	s, err := str(path, v)
	if _, isText := v.(string); err != nil && secret && !isText {
		// Not the value itself: a key YAML read as a number is still a key.
		return "", "", &Error{Path: path, Message: "must be a string (quote it), got a value of another type (not shown: it is a secret)"}
	}
	if err != nil {
		return "", "", err
	}
	name, ok := strings.CutPrefix(s, EnvPrefix)
	if !ok {
		return s, "", nil
	}
	val, set := p.lookupEnv(name)
	if !set || name == "" {
		what := "value"
		if secret {
			what = "key"
		}
		return "", "", &Error{Path: path, Message: fmt.Sprintf("the environment variable %q (%s%s) holding its %s is not set", name, EnvPrefix, name, what), envUnset: true}
	}
	return strings.TrimSpace(val), name, nil
}

// env returns the environment variable name, trimmed ("" when unset).
func (p *parser) env(name string) string {
	v, _ := p.lookupEnv(name)
	return strings.TrimSpace(v)
}

// str reads a string at path (a date YAML read as one, for api_version, back as text).
func str(path string, v any) (string, error) {
	switch s := v.(type) {
	case string:
		return s, nil
	case time.Time:
		return s.Format("2006-01-02"), nil
	case nil:
		return "", &Error{Path: path, Message: "is required"}
	}
	return "", &Error{Path: path, Message: "must be a string, got " + kind(v)}
}

// share reads a deployment's weight, rpm or tpm at path: a number, 0 or more, written as
// one or as text ("600", as LiteLLM's types take it), or os.environ/NAME holding one.
func (p *parser) share(path string, v any) (float64, error) {
	if s, ok := v.(string); ok {
		if strings.HasPrefix(s, EnvPrefix) {
			val, _, err := p.value(path, s, false)
			if err != nil {
				return 0, err
			}
			s = val
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return 0, &Error{Path: path, Message: "must be a number, got " + kind(v)}
		}
		v = n
	}
	n, err := number(path, v)
	if err != nil {
		return 0, err
	}
	if n < 0 || math.IsInf(n, 0) {
		return 0, &Error{Path: path, Message: fmt.Sprintf("must be 0 or more, got %g", n)}
	}
	return n, nil
}

// number reads a number at path.
func number(path string, v any) (float64, error) {
	switch n := v.(type) {
	case int:
		return float64(n), nil
	case int64:
		return float64(n), nil
	case uint64:
		return float64(n), nil
	case float64:
		if n >= 0 || n < 0 { // not NaN
			return n, nil
		}
	}
	return 0, &Error{Path: path, Message: "must be a number, got " + kind(v)}
}

// kind names a YAML value's type for an error.
func kind(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("%t", x)
	case int, int64, uint64, float64:
		return fmt.Sprintf("the number %v", x)
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	}
	return fmt.Sprintf("%T", v)
}

// Summary lists the groups' names, sorted (for logs).
func (c *Config) Summary() []string {
	names := slices.Collect(maps.Keys(c.ModelGroups))
	sort.Strings(names)
	return names
}
