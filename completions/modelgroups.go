package completions

import (
	"bytes"
	"context"
	cryptorand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/validation"
)

// ModelGroup is a model name that stands for several models (Options.ModelGroups), as
// LiteLLM's model aliases and Not Diamond's router model do: a request to the
// OpenAI-compatible or Messages surfaces naming the group is answered by the first of
// Models that succeeds — in the order given, or, with Route, best first for the request's
// messages as the gateway's Ranker (the learned router) orders them. Clients that can name
// only one model (Claude Code, an OpenAI SDK app) get routing and fallbacks that way.
type ModelGroup struct {
	// Models are "provider/model" names, at least one.
	Models []string `json:"models"`
	// Route orders Models per request with the gateway's Ranker; without it (and without
	// Shuffle) they are tried in the given order.
	Route bool `json:"route,omitempty"`
	// Shuffle tries Models in a random order drawn for each request, spreading the load
	// over deployments of the same model (two keys, two providers of one model; LiteLLM's
	// simple-shuffle); the rest stay fallbacks. Not with Route.
	Shuffle bool `json:"shuffle,omitempty"`
	// Fastest tries Models fastest first by how they answered this process's recent
	// requests (LiteLLM's latency-based routing): a streamed request by their time to first
	// token, a whole one by their time per output token (moving averages of about the last
	// ten answers; a timeout, a 429 or a 5xx counts as at least the first-token timeout).
	// Models not measured yet go first, so each gets measured. Not with Route or Shuffle.
	Fastest bool `json:"fastest,omitempty"`
	// Tradeoff, with Route, is "cost" or "latency": the cheapest model, or the fastest by
	// the same measurements as Fastest (an unmeasured one counting as fastest), whose
	// estimated quality is within the router's tolerance of the best comes first.
	Tradeoff string `json:"tradeoff,omitempty"`
	// Weights, with Shuffle, are the members' shares of the requests: one per model, in
	// the order of Models, none negative and at least one positive (LiteLLM's simple-shuffle
	// by weight, rpm or tpm). Each request draws its first model with probability weight
	// over the sum, then the next among the rest likewise; members of weight 0 come after
	// the weighted ones, in a random order. Without Weights every order is equally likely.
	Weights []float64 `json:"weights,omitempty"`
	// Limits, when given, are the members' limits: one per model, in the order of Models
	// (a zero MemberLimits bounds nothing), in any order of the group (LiteLLM's
	// deployment rpm, tpm and max_parallel_requests). A member at a limit is skipped for
	// the next model, as an open circuit breaker is; a request whose every model (its
	// fallbacks too) is at a limit fails with a *LimitedError, except that one at
	// max_parallel queues for a slot until the request's deadline (MemberLimits.MaxParallel).
	// A model's limits hold
	// wherever it is called, so two groups may not give one model different limits.
	Limits []MemberLimits `json:"limits,omitempty"`
	// Fallbacks are tried, in order, after the group's own members when a request names
	// the group: "provider/model" names or other groups' names (a group stands for its
	// members, shuffled or fastest first as when it is named itself; its own fallbacks are
	// not followed), before the request's fallback_models
	// (LiteLLM's router fallbacks, [{"gpt-4o": ["claude-sonnet"]}]).
	Fallbacks []string `json:"fallbacks,omitempty"`
	// ContextWindowFallbacks, written as Fallbacks are, are tried when the prompt is too
	// long (LiteLLM's context_window_fallbacks, [{"gpt-3.5-turbo": ["gpt-3.5-turbo-16k"]}]):
	// the first member to fail with a context-length error ends the members, as in
	// LiteLLM's router (those not yet tried are not called: deployments of one model would
	// fail alike; a member with a larger window goes at the head of this list), and these
	// are tried in order in place of Fallbacks, then the request's fallback_models. A
	// member that fails otherwise (a timeout, a 429, a 5xx) hands over to the next member
	// as usual. Models already tried are not tried again. Without them a prompt too long
	// goes on to the next member, then to Fallbacks.
	ContextWindowFallbacks []string `json:"context_window_fallbacks,omitempty"`
	// ContextWindowFallbacksSet says context window fallbacks are configured for the
	// server, if not for this group (LiteLLM's router with context_window_fallbacks set,
	// as --litellm-config reads them): a prompt too long for a member then ends the
	// members and the plain Fallbacks even when ContextWindowFallbacks are empty, its
	// error standing unless the request named fallbacks of its own — LiteLLM's router
	// re-raises a ContextWindowExceededError when its context_window_fallbacks have no
	// entry for the model group, or an empty one.
	ContextWindowFallbacksSet bool `json:"context_window_fallbacks_set,omitempty"`
	// ContentPolicyFallbacks, written as Fallbacks are, are tried when a provider's content
	// filter refuses the request (LiteLLM's content_policy_fallbacks): the first member so
	// refused ends the members, as for ContextWindowFallbacks, and these are tried in order
	// in place of Fallbacks (a refusal by one of them goes on to the next; the last one's
	// stands), then the request's fallback_models. Without them a refusal ends the request
	// (unless it asks for fallback_on_content_filter).
	ContentPolicyFallbacks []string `json:"content_policy_fallbacks,omitempty"`
	// Timeouts, when given, are the members' own time limits: one per model, in the order
	// of Models (a zero MemberTimeouts keeps the gateway's), as LiteLLM's deployment
	// timeout and stream_timeout. A member that runs out of its time fails with a timeout
	// and the next model is tried. A model's timeouts hold wherever it is called, so two
	// groups may not give one model different timeouts.
	Timeouts []MemberTimeouts `json:"timeouts,omitempty"`
	// Tags, when given, are the members' tags: one list per model, in the order of Models,
	// each checked as a request's tags are (CheckTags) — LiteLLM's deployment
	// litellm_params.tags. They select members only with TagFiltering.
	Tags [][]string `json:"tags,omitempty"`
	// TagFiltering routes a request naming the group only to the members its tags select
	// (LiteLLM's router_settings.enable_tag_filtering): a request with tags to the members
	// carrying one of them, else to those tagged "default" (DefaultTag) when none of its
	// tags is a member's; a request without tags to the members tagged "default", else to
	// all. A request no member fits fails with a *TagRoutingError. The filter applies
	// before the group's order (route, shuffle, fastest) and its retries; a fallback naming
	// the group gives only the members the request's tags select (none: it is passed over).
	TagFiltering bool `json:"tag_filtering,omitempty"`
	// TagMatchAll, with TagFiltering, selects only the members carrying every tag of the
	// request (LiteLLM's router_settings.tag_filtering_match_any: false).
	TagMatchAll bool `json:"tag_match_all,omitempty"`
	// TagRegex, when given, are the members' tag patterns (LiteLLM's deployment
	// litellm_params.tag_regex): one list per model, in the order of Models, each a
	// regular expression (Go's RE2 syntax) searched in "User-Agent: " and the caller's
	// User-Agent (Scope.UserAgent). With TagFiltering, a member one of whose patterns
	// matches is selected as a member carrying one of the request's tags is; a caller
	// whose User-Agent matches none, and who sends no tag a member carries, gets the
	// members tagged "default" (none: a *TagRoutingError), as on LiteLLM.
	TagRegex [][]string `json:"tag_regex,omitempty"`
	// TagFailOpen, with TagFiltering, routes a request whose "!tag" or "&tag" marks (or
	// plain tags) leave no member to the members tagged "default" (else all) instead of
	// failing it (LiteLLM's model_info.allow_fail_open): the request's own marks are then
	// dropped, but never those of its key or team (Scope.InheritedTags), and never when an
	// "&tag" no member carries hides members the request's other marks select (an invented
	// tag is not a reason to degrade). A request the kept marks leave no member still fails.
	TagFailOpen bool `json:"tag_fail_open,omitempty"`
	// TagRoutePrefix, with TagFiltering, marks the request tags meant for routing (LiteLLM's
	// router_settings.tag_routing_prefix, e.g. "route:"; it must end with ':'): a tag
	// starting with it is matched without it ("route:!provider:openai" leaves out the
	// members tagged provider:openai), and counts as one the group knows even when no
	// member carries it — an unmatched plain one fails the request rather than falling
	// back to the "default" members, and an "&" one never stops TagFailOpen. Tags without
	// it are matched as they are.
	TagRoutePrefix string `json:"tag_routing_prefix,omitempty"`
	// Params, when given, are the members' default request parameters: one per model, in
	// the order of Models (a zero MemberParams sets none), as LiteLLM's deployment
	// temperature, max_tokens and the like. A model's parameters hold wherever it is
	// called, so two groups may not give one model different ones.
	Params []MemberParams `json:"params,omitempty"`
	// tagRegexps are TagRegex compiled (newRouteTable).
	tagRegexps [][]*regexp.Regexp
}

// LatencyRanker is a Ranker that can put the fastest model within its tolerance of the best
// first, given each model's measured latency (routing.CompletionsRanker); a routed group
// with tradeoff "latency" uses it.
type LatencyRanker interface {
	RankFastest(ctx context.Context, messages []providers.Message, models []string, latencies map[string]float64) ([]string, error)
}

// TradeoffRanker is a Ranker that can put the cheapest or fastest model within its
// tolerance of the best first (routing.CompletionsRanker).
type TradeoffRanker interface {
	RankTradeoff(ctx context.Context, messages []providers.Message, models []string, tradeoff string) ([]string, error)
}

// groupNameRE is a group name: no "/" (which would read as provider/model).
var groupNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`)

// checkModelGroups validates groups; errors wrap ErrInvalid and name the group.
func checkModelGroups(groups map[string]ModelGroup) error {
	for name, g := range groups {
		if !groupNameRE.MatchString(name) {
			return fmt.Errorf("%w: model group %q: a name is 1-64 letters, digits, '_', '.', ':' or '-' (no '/')", ErrInvalid, name)
		}
		if len(g.Models) == 0 || len(g.Models) > MaxModels {
			return fmt.Errorf("%w: model group %q: 1 to %d models, got %d", ErrInvalid, name, MaxModels, len(g.Models))
		}
		for _, m := range g.Models {
			if _, _, err := providers.ParseModel(m); err != nil {
				return fmt.Errorf("%w: model group %q: %q is not of the form provider/model", ErrInvalid, name, m)
			}
		}
		if err := checkWeights(name, g); err != nil {
			return err
		}
		if err := checkLimits(name, g); err != nil {
			return err
		}
		if err := checkTimeouts(name, g); err != nil {
			return err
		}
		if err := checkTagRouting(name, g); err != nil {
			return err
		}
		if err := checkParams(name, g); err != nil {
			return err
		}
		for _, f := range []struct {
			field string
			list  []string
		}{{"fallbacks", g.Fallbacks}, {"context_window_fallbacks", g.ContextWindowFallbacks}, {"content_policy_fallbacks", g.ContentPolicyFallbacks}} {
			if err := checkFallbacks(name, f.field, f.list, groups); err != nil {
				return err
			}
		}
		switch {
		case g.Tradeoff != "" && g.Tradeoff != "cost" && g.Tradeoff != "latency":
			return fmt.Errorf("%w: model group %q: tradeoff must be cost or latency, got %q", ErrInvalid, name, g.Tradeoff)
		case g.Tradeoff != "" && !g.Route:
			return fmt.Errorf("%w: model group %q: tradeoff needs route: true", ErrInvalid, name)
		case g.Shuffle && g.Route, g.Fastest && g.Route, g.Fastest && g.Shuffle:
			return fmt.Errorf("%w: model group %q: route, shuffle and fastest are three orders; give one", ErrInvalid, name)
		}
	}
	return nil
}

// checkWeights validates the Weights of the group name; errors wrap ErrInvalid.
func checkWeights(name string, g ModelGroup) error {
	if len(g.Weights) == 0 {
		return nil
	}
	if !g.Shuffle {
		return fmt.Errorf("%w: model group %q: weights need shuffle: true", ErrInvalid, name)
	}
	if len(g.Weights) != len(g.Models) {
		return fmt.Errorf("%w: model group %q: weights: one per model, got %d for %d models", ErrInvalid, name, len(g.Weights), len(g.Models))
	}
	sum := 0.0
	for i, w := range g.Weights {
		if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return fmt.Errorf("%w: model group %q: weights[%d]: must be a finite number, 0 or more, got %g", ErrInvalid, name, i, w)
		}
		sum += w
	}
	if sum <= 0 || math.IsInf(sum, 0) {
		return fmt.Errorf("%w: model group %q: weights: at least one must be positive (and their sum finite)", ErrInvalid, name)
	}
	return nil
}

// checkFallbacks validates list, the group name's fallbacks of the kind field names
// (fallbacks, context_window_fallbacks, content_policy_fallbacks), among groups: each a
// provider/model or another group, at most MaxModels once groups are expanded. Errors
// wrap ErrInvalid and name the field.
func checkFallbacks(name, field string, list []string, groups map[string]ModelGroup) error {
	if len(list) > MaxModels {
		return fmt.Errorf("%w: model group %q: %s: at most %d, got %d", ErrInvalid, name, field, MaxModels, len(list))
	}
	n := 0
	for i, f := range list {
		if other, ok := groups[f]; ok {
			if f == name {
				return fmt.Errorf("%w: model group %q: %s[%d]: names the group itself", ErrInvalid, name, field, i)
			}
			n += len(other.Models)
			continue
		}
		if _, _, err := providers.ParseModel(f); err != nil {
			return fmt.Errorf("%w: model group %q: %s[%d]: %q is neither provider/model nor a model group", ErrInvalid, name, field, i, f)
		}
		n++
	}
	if n > MaxModels {
		return fmt.Errorf("%w: model group %q: %s: at most %d models once groups are expanded, got %d", ErrInvalid, name, field, MaxModels, n)
	}
	return nil
}

// weightedOrder returns the indexes 0..len(weights)-1 in a random order where each next
// index is drawn among those left with probability its weight over their sum (sampling
// without replacement); indexes of weight 0 follow in a uniformly random order. float64
// returns numbers in [0, 1) (math/rand/v2's Float64, or a seeded generator's in tests).
func weightedOrder(weights []float64, rnd func() float64) []int {
	order := make([]int, 0, len(weights))
	left := make([]int, 0, len(weights))
	var zero []int
	total := 0.0
	for i, w := range weights {
		if w > 0 {
			left = append(left, i)
			total += w
		} else {
			zero = append(zero, i)
		}
	}
	for len(left) > 0 {
		x := rnd() * total
		pick := len(left) - 1 // rounding may leave x at the sum: the last one
		for k, i := range left {
			if x < weights[i] {
				pick = k
				break
			}
			x -= weights[i]
		}
		i := left[pick]
		order = append(order, i)
		total -= weights[i]
		left = slices.Delete(left, pick, pick+1)
	}
	for k := len(zero) - 1; k > 0; k-- { // Fisher-Yates
		j := int(rnd() * float64(k+1))
		zero[k], zero[j] = zero[j], zero[k]
	}
	return append(order, zero...)
}

// shuffleWeighted reorders ts (a shuffled group's members) by the group's Weights,
// matched by name (a member not among Models, which cannot happen, weighs 0).
func shuffleWeighted(ts []target, grp *ModelGroup, rnd func() float64) []target {
	weights := make([]float64, len(ts))
	for k, t := range ts {
		for i, m := range grp.Models {
			if m == t.name {
				weights[k] += grp.Weights[i]
			}
		}
	}
	out := make([]target, 0, len(ts))
	for _, k := range weightedOrder(weights, rnd) {
		out = append(out, ts[k])
	}
	return out
}

// draws are a gateway's random draws for shuffled groups (Options.Rand), one at a time.
type draws struct {
	mu sync.Mutex
	r  *rand.Rand
}

// newDraws draws from src; nil: a ChaCha8 source seeded from crypto/rand.
func newDraws(src rand.Source) *draws {
	if src == nil {
		var seed [32]byte
		_, _ = cryptorand.Read(seed[:]) // never fails (crypto/rand panics instead)
		src = rand.NewChaCha8(seed)
	}
	return &draws{r: rand.New(src)}
}

// float64 is a number in [0, 1).
func (d *draws) float64() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.r.Float64()
}

// shuffleGroup reorders ts, the members of the shuffled group grp, for one request: by
// its Weights when it has them, else every order equally likely; the draws are g's
// (Options.Rand).
func (g *Gateway) shuffleGroup(ts []target, grp *ModelGroup) []target {
	if len(grp.Weights) > 0 {
		return shuffleWeighted(ts, grp, g.shuffle.float64)
	}
	g.shuffle.mu.Lock()
	defer g.shuffle.mu.Unlock()
	g.shuffle.r.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
	return ts
}

// groupFallbacks resolves list, fallbacks of the group req names (its Fallbacks,
// ContextWindowFallbacks or ContentPolicyFallbacks), in order: a fallback naming a group
// stands for its members, ordered for this request as that group orders them when named
// itself (shuffled, by weight, or fastest first), so that fallback traffic spreads over it
// as its own does.
func (g *Gateway) groupFallbacks(list []string, req *Request) ([]target, error) {
	var out []target
	for _, f := range list {
		fg, isGroup := g.routes().groups[f]
		models := []string{f}
		if isGroup {
			models, _ = fg.tagMembers(req.tagAsk()) // none fit: the group is passed over
		}
		ts, err := g.resolve("model", models, req.Search, req.ephemeral)
		if err != nil {
			return nil, err
		}
		for i := range ts {
			ts[i].group = ts[i].name
			if isGroup {
				ts[i].group = f
			}
		}
		switch {
		case isGroup && fg.Shuffle:
			ts = g.shuffleGroup(ts, &fg)
		case isGroup && fg.Fastest:
			ts = g.latency.fastestFirst(ts, req.Stream)
		}
		out = append(out, ts...)
	}
	return out, nil
}

// ParseModelGroups reads a model groups document: a JSON object of group name to group
// ({"smart": {"models": ["openai/gpt-4o", "anthropic/claude-sonnet-4-5"], "route": true}}).
// Errors say where (line and column) or which group.
func ParseModelGroups(b []byte) (map[string]ModelGroup, error) {
	var groups map[string]ModelGroup
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(&groups)
	if err == nil {
		if _, tokErr := dec.Token(); tokErr != io.EOF {
			err = fmt.Errorf("data after the object (%s)", validation.LineCol(b, dec.InputOffset()))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: invalid JSON: %s", ErrInvalid, validation.DescribeJSONError(b, err))
	}
	if err := checkModelGroups(groups); err != nil {
		return nil, err
	}
	if _, err := memberLimitsOf(groups); err != nil {
		return nil, err
	}
	if _, err := memberTimeoutsOf(groups); err != nil {
		return nil, err
	}
	return groups, nil
}

// utf8BOM is the byte order mark Windows editors (Notepad, PowerShell's Out-File) put at
// the start of a UTF-8 file; the files loaded here skip it, as JSON itself has none.
var utf8BOM = []byte("\ufeff")

// LoadModelGroups reads ParseModelGroups' document from path (a leading UTF-8 byte order
// mark skipped).
func LoadModelGroups(path string) (map[string]ModelGroup, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("completions: reading model groups: %w", err)
	}
	b = bytes.TrimPrefix(b, utf8BOM)
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("%w: %s is empty (a JSON object of group name to group is expected)", ErrInvalid, path)
	}
	return ParseModelGroups(b)
}

// IsModelGroup reports whether name is one of the gateway's model groups.
func (g *Gateway) IsModelGroup(name string) bool {
	_, ok := g.routes().groups[name]
	return ok
}

// IsDeploymentName reports whether name is a deployment's own name the gateway serves it
// by (Options.DeploymentNames: a LiteLLM config deployment's litellm_params.model).
func (g *Gateway) IsDeploymentName(name string) bool {
	return g.routes().namedMembers(name) != nil
}

// ModelGroups lists the gateway's model group names, sorted.
func (g *Gateway) ModelGroups() []string {
	groups := g.routes().groups
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// expandGroups returns models with each model group's name (on the OpenAI-compatible and
// Messages surfaces) replaced by its models — those the request's tags select of a
// tag-filtered group (ModelGroup.TagFiltering) — and a deployment's own name
// (Options.DeploymentNames, on every surface) by its deployments' members, where each
// returned model came from in
// models (nil when nothing was replaced), and the group of a request whose models are one
// group (its routing preferences apply) with its name, else nil. Repeats are removed once
// the names are resolved (dedupeTargets). A group the tags select no member of is left out;
// when it is the only one of models, the error is a *TagRoutingError, returned with the
// group and its name (and no models): its fallbacks may still fit the tags.
func (g *Gateway) expandGroups(models []string, bare bool, ask tagAsk) (out []string, origin []int, only *ModelGroup, name string, err error) {
	rt := g.routes()
	group := func(m string) (ModelGroup, bool) {
		grp, ok := rt.groups[m]
		return grp, ok && bare
	}
	// A deployment's own name (Options.DeploymentNames) stands for its deployments' members
	// on every surface: the provider of that name is never what it means.
	named := rt.namedMembers
	if !slices.ContainsFunc(models, func(m string) bool { _, ok := group(m); return ok || named(m) != nil }) {
		return models, nil, nil, "", nil
	}
	for i, m := range models {
		grp, ok := group(m)
		if !ok {
			members := named(m)
			if members == nil {
				members = []string{m}
			}
			for _, nm := range members {
				out, origin = append(out, nm), append(origin, i)
			}
			continue
		}
		members, fit := grp.tagMembers(ask)
		if !fit && len(models) == 1 {
			return nil, nil, &grp, m, &TagRoutingError{Model: m, Tags: routingTags(ask.tags)}
		}
		for _, gm := range members {
			out, origin = append(out, gm), append(origin, i)
		}
		if len(models) == 1 {
			only, name = &grp, m
		}
	}
	return out, origin, only, name, nil
}

// originField renames field (models[i] of the expanded list) to the entry of the request's
// list it came from.
func originField(err error, field string, origin []int) error {
	if err == nil || origin == nil {
		return err
	}
	ve := (*ValidationError)(nil)
	if !errors.As(err, &ve) || !strings.HasPrefix(ve.Field, field+"[") {
		return err
	}
	rest := ve.Field[len(field)+1:]
	end := strings.IndexByte(rest, ']')
	if i, convErr := strconv.Atoi(rest[:max(end, 0)]); end > 0 && convErr == nil && i < len(origin) {
		ve.Field = fmt.Sprintf("%s[%d]%s", field, origin[i], rest[end+1:])
	}
	return err
}

// dedupeTargets leaves out of primary and fallback every model a target before it names
// (however the request spelled it: a bare name, a group's member): each model is tried
// once, its retries being max_retries' business. Lists without repeats (the usual case)
// come back as they are, without allocating.
func dedupeTargets(primary, fallback []target) ([]target, []target) {
	if !hasRepeats(primary, fallback) {
		return primary, fallback
	}
	seen := map[string]bool{}
	keep := func(ts []target) (out []target) {
		for _, t := range ts {
			if !seen[t.name] {
				seen[t.name] = true
				out = append(out, t)
			}
		}
		return out
	}
	return keep(primary), keep(fallback)
}

// hasRepeats reports whether a model is named twice across primary and fallback (at most
// 10 each: comparing every pair is cheaper than a map).
func hasRepeats(primary, fallback []target) bool {
	named := func(ts []target, name string) bool {
		for _, u := range ts {
			if u.name == name {
				return true
			}
		}
		return false
	}
	for i, t := range primary {
		if named(primary[i+1:], t.name) || named(fallback, t.name) {
			return true
		}
	}
	for i, t := range fallback {
		if named(fallback[i+1:], t.name) {
			return true
		}
	}
	return false
}

// checkGroupMembers reports what New can tell about the groups' members: a provider it does
// not know is an error (every request would fail on it); one without a key, and a group
// name that hides a catalogued model of that name, are logged as warnings.
func (g *Gateway) checkGroupMembers(groups map[string]ModelGroup) error {
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		grp := groups[name]
		for _, m := range slices.Concat(grp.Models, grp.Fallbacks, grp.ContextWindowFallbacks, grp.ContentPolicyFallbacks) {
			if _, isGroup := groups[m]; isGroup {
				continue // a fallback naming a group: its members are checked as its own
			}
			prov, _, _ := providers.ParseModel(m)
			p, err := g.opts.Providers.Lookup(prov)
			switch {
			case err != nil || p == nil:
				return fmt.Errorf("%w: model group %q: unknown provider %q in %q", ErrInvalid, name, prov, m)
			case !providers.IsConfigured(p):
				g.log.Warn("completions: a model group names a provider without an API key; its calls will fail and fall back", "group", name, "model", m)
			}
		}
		g.indexModels()
		if len(g.bareIndex[name]) > 0 || g.vendorModel(name) != "" { // a wildcard's match is no model's name
			g.log.Warn("completions: a model group's name is also a model's name; requests naming it get the group", "group", name)
		}
	}
	return nil
}
