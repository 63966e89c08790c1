package completions

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/switchyard-ai/switchyard/providers"
)

// MaxRetriesLimit is the largest maxRetries a request may ask for.
const MaxRetriesLimit = 10

// target is one model to try.
type target struct {
	name     string // "provider/model"
	provider string
	model    string
	p        providers.Provider
	// unfit says why the model cannot take the request (its adapter's objection to its
	// tools, format, images or files): it is skipped, as long as another model can take it.
	unfit string
	// plain marks a fallback of the named model group's Fallbacks, which its
	// ContextWindowFallbacks or ContentPolicyFallbacks replace (plan.switchFallbacks).
	plain bool
	// group is the name the target was asked by: the model group it is a member of (the
	// request's, one of its fallbacks'), else its own name; "" where the path that made it
	// does not say (Attempt.ModelGroup).
	group string
}

// validate checks req against the spec's rules and resolves its models. A model group's
// member whose provider is gone is read again from the routes in force: the routes were
// swapped after the request read the group and the member's provider then removed (a
// deployment deleted or moved by /model/delete, /model/update), so the member left the
// group before its provider left the registry.
func (g *Gateway) validate(req *Request) (primary, fallback []target, err error) {
	rt := g.routes()
	primary, fallback, err = g.validateOnce(req)
	if errors.Is(err, providers.ErrUnknownProvider) && g.routes() != rt {
		return g.validateOnce(req)
	}
	return primary, fallback, err
}

// validateOnce is validate against the routes it reads.
func (g *Gateway) validateOnce(req *Request) (primary, fallback []target, err error) {
	if req.fieldName != nil {
		defer func() {
			if ve := (*ValidationError)(nil); errors.As(err, &ve) {
				ve.Field = req.fieldName(ve.Field)
			}
		}()
	}
	if len(req.Models) == 0 {
		return nil, nil, invalid("models", "at least one model is required")
	}
	if len(req.Models) > MaxModels {
		return nil, nil, invalid("models", "at most %d models, got %d", MaxModels, len(req.Models))
	}
	if len(req.FallbackModels) > MaxModels {
		return nil, nil, invalid("fallback_models", "at most %d models, got %d", MaxModels, len(req.FallbackModels))
	}
	if err := req.Cache.check("cache"); err != nil {
		return nil, nil, err
	}
	if err := CheckTags("tags", req.Tags); err != nil {
		return nil, nil, err
	}
	if err := req.FaultPolicy.validate(); err != nil {
		return nil, nil, err
	}
	if err := g.checkServed(req); err != nil {
		return nil, nil, err
	}
	models, modelsFrom, group, groupName, err := g.expandGroups(req.Models, req.ephemeral, req.tagAsk())
	// A group none of whose members the tags select: as LiteLLM's router, whose tag error
	// goes on to the group's fallbacks (and the request's) as any other failure does, its
	// fallbacks that fit the tags are tried; the error stands when none does.
	var unfit *TagRoutingError
	if err != nil {
		if unfit = asTagRoutingError(err); unfit == nil {
			return nil, nil, err
		}
	}
	if len(models) == 0 && unfit == nil {
		// Several groups, none of whose members the tags select: as one such group, the
		// request's fallbacks that fit are tried, and the error names them all.
		unfit = &TagRoutingError{Model: strings.Join(req.Models, ","), Tags: routingTags(req.Tags)}
	}
	// A fallback group none of whose members the tags select is passed over.
	fallbacks, fallbacksFrom, _, _, _ := g.expandGroups(req.FallbackModels, req.ephemeral, req.tagAsk())
	req.group, req.groupName = group, groupName
	if len(models) > MaxModels {
		return nil, nil, invalid("models", "at most %d models once model groups are expanded, got %d", MaxModels, len(models))
	}
	if len(fallbacks) > MaxModels {
		return nil, nil, invalid("fallback_models", "at most %d models once model groups are expanded, got %d", MaxModels, len(fallbacks))
	}
	primary, err = g.resolve("models", models, req.Search, req.ephemeral)
	err = originField(err, "models", modelsFrom)
	if err != nil {
		if ve := (*ValidationError)(nil); req.ephemeral && errors.As(err, &ve) && ve.Field == "models[0]" {
			ve.Field = "model" // the OpenAI-compatible request's name for it
		}
		return nil, nil, err
	}
	g.askedBy(primary, req.Models, modelsFrom, req.ephemeral)
	fallback, err = g.resolve("fallback_models", fallbacks, req.Search, req.ephemeral)
	err = originField(err, "fallback_models", fallbacksFrom)
	if err != nil {
		return nil, nil, err
	}
	g.askedBy(fallback, req.FallbackModels, fallbacksFrom, req.ephemeral)
	// The plain fallbacks, LiteLLM's order, whole lists: the request's own (above; named
	// when its FallbackModels are not nil), else the scope's (a key's or team's
	// router_settings), else the group's (the server's), tried after its members.
	plain, plainOf := []string(nil), ""
	switch {
	case req.namedFallbacks() || req.scopeReplaces:
		plain, plainOf = req.scopeFallbacks, "the key's router_settings.fallbacks"
	case group != nil:
		plain, plainOf = group.Fallbacks, fmt.Sprintf("model group %q's fallbacks", groupName)
	}
	if len(plain) > 0 {
		ts, err := g.groupFallbacks(plain, req)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", plainOf, err)
		}
		for i := range ts {
			// One the request's fallback_models name too is the request's as well: it stays
			// when fallbacks by kind of failure replace the plain ones.
			ts[i].plain = !slices.ContainsFunc(fallback, func(f target) bool { return f.name == ts[i].name })
		}
		fallback = append(ts, fallback...)
	}
	req.windowFallbacks, req.policyFallbacks = nil, nil
	var window, policy []string
	windowOf := func() string { return fmt.Sprintf("model group %q's context_window_fallbacks", groupName) } // named in a refusal only
	if group != nil {
		window, policy = group.ContextWindowFallbacks, group.ContentPolicyFallbacks
	}
	if req.scopeWindowSet {
		// The scope's replace the group's, as LiteLLM's key settings its router's (and
		// the request's own the scope's: addScopeFallbacks).
		window, windowOf = req.scopeWindow, func() string { return "the key's router_settings.context_window_fallbacks" }
		if req.ownWindow {
			windowOf = func() string { return "the request's " + req.windowEntryField(req.windowKey) }
		}
	}
	// A scope with context window fallbacks but none for the model asked (no entry, an
	// empty one, or only fallbacks it may not call) still switches, to nothing: the prompt
	// too long ends the models asked and the plain fallbacks, and its error stands unless
	// the request named fallbacks of its own, as LiteLLM's router
	// (async_function_with_fallbacks_common_utils) re-raises a ContextWindowExceededError
	// when context_window_fallbacks are set without an entry for the model group. A group
	// marked ContextWindowFallbacksSet (the server's are set, if not for it) does alike, and
	// so does any model when the gateway's are set (Options.ContextWindowFallbacksSet: a
	// model served through a wildcard deployment has no group to mark). Those marks are
	// LiteLLM's, whose request names one model: a request naming several (the native
	// API's models) goes on to its next model on a prompt too long, as on any failure,
	// unless there are context window fallbacks to switch to.
	several := len(req.Models) > 1
	req.windowSwitch = len(window) > 0 || !several && (req.scopeWindowSet || group != nil && group.ContextWindowFallbacksSet || g.routes().windowSet)
	// The fallbacks by kind of failure, put in place of the models asked left and the
	// plain fallbacks when one fails so (plan.switchFallbacks).
	for _, f := range []struct {
		of   func() string
		list []string
		to   *[]target
		own  bool // the request's own: an unknown model is a 400 naming the entry
	}{{windowOf, window, &req.windowFallbacks, req.ownWindow}, {func() string { return fmt.Sprintf("model group %q's content_policy_fallbacks", groupName) }, policy, &req.policyFallbacks, false}} {
		if len(f.list) == 0 {
			continue
		}
		if *f.to, err = g.groupFallbacks(f.list, req); err != nil {
			if ve := (*ValidationError)(nil); f.own && errors.As(err, &ve) {
				ve.Field = req.windowEntryField(req.windowKey)
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("%s: %w", f.of(), err)
		}
	}
	// Not for fallbacks written in LiteLLM's router format, which its router takes as its
	// own: after the fallbacks by the error's kind.
	ownFirst := req.namedFallbacks() && len(req.FallbackModels) > 0 && !req.fallbacksMapped
	if ownFirst {
		// The request's own fallbacks (a list of models: LiteLLM's client-side format) are
		// what a prompt too long goes to, in place of any context window fallbacks: LiteLLM's
		// router (async_function_with_fallbacks_common_utils) runs a request's list of
		// model names before it looks at the error's kind. The switch still ends the models
		// asked, as LiteLLM's retries stop at a ContextWindowExceededError once
		// context_window_fallbacks are set (should_retry_this_error).
		req.windowFallbacks = nil
	}
	primary, fallback = dedupeTargets(primary, fallback)
	if ownFirst {
		// So for a content filter's refusal: the request's own are what the group's
		// content_policy_fallbacks switch to, in their place (a refusal by one goes on to
		// the next, as LiteLLM's run_async_fallback tries each in turn; the group's other
		// members are still left out, should_retry_this_error raising the
		// ContentPolicyViolationError once content_policy_fallbacks are set).
		req.policyFallbacks = nil
		for _, t := range fallback {
			if !t.plain {
				req.policyFallbacks = append(req.policyFallbacks, t)
			}
		}
	}
	if unfit != nil && len(fallback) == 0 {
		return nil, nil, unfit
	}
	if len(req.Messages) == 0 {
		return nil, nil, invalid("messages", "at least one message is required")
	}
	for i, m := range req.Messages {
		switch {
		case m.Role == "system" || m.Role == "user" || m.Role == "assistant":
		case m.Role == "tool" && (req.ephemeral || m.ToolCallID != ""): // a library caller's tool result
		case req.ephemeral:
			return nil, nil, invalid(fmt.Sprintf("messages[%d].role", i), "must be system, user, assistant or tool, got %q", m.Role)
		default:
			return nil, nil, invalid(fmt.Sprintf("messages[%d].role", i), "must be system, user or assistant, got %q", m.Role)
		}
		// A tool result may be empty, and an assistant turn that called tools may have no text.
		// On the OpenAI-compatible surfaces an assistant turn may be empty too: agents send
		// back the gateway's own answers, and a refusal or an answer cut at max tokens has no
		// content (adapters whose API refuses empty turns leave them out).
		mayBeEmpty := m.Role == "tool" || len(m.ToolCalls) > 0 || req.ephemeral && m.Role == "assistant"
		if len(m.Content) == 0 && !mayBeEmpty {
			return nil, nil, invalid(fmt.Sprintf("messages[%d].content", i), "must hold at least one content block")
		}
		blank := true
		for j, c := range m.Content {
			media := c.Type == "image" || c.Type == "file" || c.Type == "audio"
			switch {
			case c.Type == "text" && c.Image == nil && c.File == nil && c.Audio == nil:
			case c.Type == "image" && c.Image != nil && req.ephemeral && m.Role == "user":
				if err := providers.CheckImage(*c.Image); err != nil {
					return nil, nil, imageFieldError(fmt.Sprintf("messages[%d].content[%d].image_url", i, j), err)
				}
				blank = false
				continue
			case c.Type == "file" && c.File != nil && req.ephemeral && m.Role == "user":
				if err := providers.CheckFile(*c.File); err != nil {
					return nil, nil, imageFieldError(fmt.Sprintf("messages[%d].content[%d].file", i, j), err)
				}
				blank = false
				continue
			case c.Type == "audio" && c.Audio != nil && req.ephemeral && m.Role == "user":
				if err := providers.CheckAudio(*c.Audio); err != nil {
					return nil, nil, imageFieldError(fmt.Sprintf("messages[%d].content[%d].input_audio", i, j), err)
				}
				blank = false
				continue
			case media && req.ephemeral:
				return nil, nil, invalid(fmt.Sprintf("messages[%d].content[%d].type", i, j), "images, files and audio are accepted in user messages only, got one in a %q message", m.Role)
			case media:
				return nil, nil, invalid(fmt.Sprintf("messages[%d].content[%d].type", i, j), "images, files and audio are accepted by the OpenAI-compatible surfaces only (stored conversations hold text)")
			default:
				return nil, nil, invalid(fmt.Sprintf("messages[%d].content[%d].type", i, j), "must be text, got %q", c.Type)
			}
			if strings.TrimSpace(c.Text) != "" {
				blank = false
			}
		}
		if blank && !mayBeEmpty {
			return nil, nil, invalid(fmt.Sprintf("messages[%d].content", i), "must not be empty")
		}
	}
	if err := validateTools(req, &g.schemas); err != nil {
		return nil, nil, err
	}
	if err := checkOpenAIOptions(&req.OpenAIOptions); err != nil { // as a library caller sets them
		return nil, nil, err
	}
	if req.TopLogprobs < 0 || req.TopLogprobs > providers.MaxTopLogprobs {
		return nil, nil, invalid("top_logprobs", "must be between 0 and %d, got %d", providers.MaxTopLogprobs, req.TopLogprobs)
	}
	if req.TopLogprobs > 0 && !req.Logprobs {
		return nil, nil, invalid("top_logprobs", "needs logprobs: true")
	}
	if err := checkProviders(req, primary, fallback); err != nil {
		return nil, nil, err
	}
	if req.windowFallbacks != nil || req.policyFallbacks != nil {
		// Those that cannot take the request are marked, to be skipped if their turn comes;
		// whether any model can take it is the answer above's (those may never be tried).
		_ = checkProviders(req, req.windowFallbacks, req.policyFallbacks)
	}
	maxT := req.maxTemperature
	if maxT == 0 {
		maxT = 1
	}
	if t := req.Temperature; t != nil && (math.IsNaN(*t) || *t < 0 || *t > maxT) {
		return nil, nil, invalid("temperature", "must be between 0 and %g, got %g", maxT, *t)
	}
	if req.MaxTokens < 0 {
		return nil, nil, invalid("maxTokens", "must not be negative, got %d", req.MaxTokens)
	}
	// TopP and Stop as a library caller sets them (the OpenAI surface checked its own).
	if t := req.TopP; t != nil && (math.IsNaN(*t) || *t < 0 || *t > 1) {
		return nil, nil, invalid("top_p", "must be between 0 and 1, got %g", *t)
	}
	if len(req.Stop) > MaxAnyStopSequences || slices.Contains(req.Stop, "") {
		return nil, nil, invalid("stop", "must be at most %d non-empty sequences", MaxAnyStopSequences)
	}
	if r := req.MaxRetries; r != nil && (*r < 0 || *r > MaxRetriesLimit) {
		field := "maxRetries"
		if req.ephemeral {
			field = "max_retries"
		}
		return nil, nil, invalid(field, "must be between 0 and %d, got %d", MaxRetriesLimit, *r)
	}
	if id := req.ConversationID; id != "" && !isUUID(id) {
		return nil, nil, invalid("conversationId", "must be a UUID, got %q", id)
	}
	return primary, fallback, nil
}

// resolve finds each model's provider. With bare (the OpenAI-compatible surfaces, whose
// clients send OpenAI's model names), a name without a provider is looked up among the
// configured providers' catalogued models ("gpt-4o-mini" → "openai/gpt-4o-mini").
func (g *Gateway) resolve(field string, models []string, search, bare bool) ([]target, error) {
	out := make([]target, 0, len(models))
	for i, s := range models {
		f := func() string { return fmt.Sprintf("%s[%d]", field, i) } // spelled out in a refusal only
		if bare && strings.Contains(s, "/") && !g.IsModelGroup(s) {
			if full := g.providerWildcard(s); full != "" {
				s = full // a wildcard's name of no provider ("custom/*")
			}
		}
		pn, m, err := providers.ParseModel(s)
		if err != nil && bare && !strings.Contains(s, "/") {
			full, choices := g.bareModel(s)
			switch {
			case full != "":
				s = full
				pn, m, err = providers.ParseModel(s)
			case len(choices) > 1:
				return nil, invalid(f(), "%q is served by several providers; name one: %s", s, strings.Join(choices, ", "))
			}
		}
		if err != nil && bare && !strings.Contains(s, "/") {
			ve := invalid(f(), "the model %q does not exist or no configured provider serves it; name it as provider/model", s)
			ve.Err = ErrUnknownModel
			return nil, ve
		}
		if err != nil && g.IsModelGroup(s) {
			return nil, invalid(f(), "%q is a model group, which the OpenAI-compatible and Messages surfaces take; name provider/model models here", s)
		}
		if err != nil {
			return nil, invalid(f(), "%q is not of the form provider/model", s)
		}
		p, err := g.opts.Providers.Lookup(pn)
		if err != nil || p == nil {
			ve := invalid(f(), "unknown provider %q in %q", pn, s)
			ve.Err = providers.ErrUnknownProvider
			return nil, ve
		}
		if !providers.ServesChat(p) {
			return nil, invalid(f(), "provider %q serves %s only, not chat (%q)", pn, servedAPIs(p), s)
		}
		if search {
			if !providers.SupportsSearch(p, m) {
				return nil, invalid("search", "model %s does not support search", s)
			}
		}
		out = append(out, target{name: s, provider: pn, model: m, p: p})
	}
	return out, nil
}

// askedBy sets each target's group: the model group of asked (the request's list the
// targets were expanded from) it came from, origin[i] being its entry (nil: none was a
// group), the model group of the deployment a deployment's own name (Options.DeploymentNames)
// stands for, else its own name. Groups are expanded on the bare (OpenAI-compatible)
// surfaces only, deployments' own names on all, as expandGroups does.
func (g *Gateway) askedBy(ts []target, asked []string, origin []int, bare bool) {
	rt := g.routes()
	for i := range ts {
		ts[i].group = ts[i].name
		if origin == nil || i >= len(origin) || origin[i] >= len(asked) {
			continue
		}
		n := asked[origin[i]]
		if bare && g.IsModelGroup(n) {
			ts[i].group = n
			continue
		}
		for _, d := range rt.deploymentsNamed(n) {
			if d.Member == ts[i].name {
				ts[i].group = d.ModelName // its id is the one it has there
				break
			}
		}
	}
}

// isUUID accepts the canonical 8-4-4-4-12 hexadecimal form only.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

// servedAPIs names what a provider that serves no chat answers, and where.
func servedAPIs(p providers.Provider) string {
	var apis []string
	if providers.ServesEmbeddings(p) {
		apis = append(apis, "embeddings (POST /v1/embeddings)")
	}
	if providers.ServesRerank(p) {
		apis = append(apis, "rerank (POST /v1/rerank)")
	}
	if len(apis) == 0 {
		return "other requests"
	}
	return strings.Join(apis, " and ")
}
