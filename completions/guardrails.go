package completions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"
)

// Guardrails are checks the gateway runs on a chat request before any upstream call
// (GuardrailPreCall) or on its whole answer before it is returned (GuardrailPostCall), in
// LiteLLM's terms. Each is configured by name (Options.Guardrails); a DefaultOn one applies
// to every chat request, the others to the requests that name them (Request.Guardrails,
// the "guardrails" field of every chat surface's body). A guardrail may block (the request
// fails with a *GuardrailError, which the server answers 400 naming it) or, for a pre_call
// secrets or pii guardrail with action mask, rewrite what is sent upstream.
//
// Streams: a post_call guardrail checks a streamed answer once it is whole; its text has
// then reached the client, so a block ends the stream with the *GuardrailError in place of
// its normal end (the surfaces write it as their error event), the answer is not saved,
// cached or stored, and the client must discard what it got. A client that must never see
// a blocked answer asks without streaming.

// Guardrail modes (GuardrailConfig.Mode).
const (
	// GuardrailPreCall checks the request's messages before any upstream call.
	GuardrailPreCall = "pre_call"
	// GuardrailPostCall checks the whole answer (text, tool-call arguments, reasoning text
	// and refusal; a spoken answer's transcript).
	GuardrailPostCall = "post_call"
)

// Guardrail kinds (GuardrailConfig.Kind).
const (
	// GuardrailModeration classifies the text with a moderation model through the
	// gateway's own moderation path (Gateway.Moderate) and blocks what it flags.
	GuardrailModeration = "moderation"
	// GuardrailSecrets finds API keys and private keys (entities api_key, private_key by
	// default) and masks or blocks them.
	GuardrailSecrets = "secrets"
	// GuardrailPII finds personal data (entities email, phone, credit_card, iban by
	// default) and masks or blocks it.
	GuardrailPII = "pii"
	// GuardrailBannedWords blocks text holding any of Words (whole words, any case).
	GuardrailBannedWords = "banned_words"
	// GuardrailRegex blocks text matching any of Patterns (Go regular expressions).
	GuardrailRegex = "regex"
	// GuardrailCustom is a library caller's own Guardrail (GuardrailConfig.Custom).
	GuardrailCustom = "custom"
)

// Guardrail actions and error policies.
const (
	// GuardrailMask replaces what a secrets or pii guardrail found with its label
	// ("[EMAIL]") in the text sent upstream (pre_call only).
	GuardrailMask = "mask"
	// GuardrailBlock refuses the request; as OnError, a guardrail that fails to run
	// refuses it too (fail closed, the default).
	GuardrailBlock = "block"
	// GuardrailAllow, as OnError, lets the request through when the guardrail fails to
	// run (fail open); the failure is logged.
	GuardrailAllow = "allow"
)

// GuardrailConfig configures one guardrail (the serve flag --guardrails reads a JSON
// array of them). Name, Kind and Mode are required; the other fields belong to kinds.
type GuardrailConfig struct {
	// Name is how requests name the guardrail and how a block names it.
	Name string `json:"name"`
	// Kind is moderation, secrets, pii, banned_words, regex, or custom (library only).
	Kind string `json:"kind"`
	// Mode is pre_call or post_call.
	Mode string `json:"mode"`
	// DefaultOn applies the guardrail to every chat request; otherwise only requests
	// naming it in their "guardrails" field are checked.
	DefaultOn bool `json:"default_on,omitempty"`
	// OnError is what a guardrail that fails to run (its moderation model down) does:
	// block (the default: fail closed) or allow (fail open).
	OnError string `json:"on_error,omitempty"`
	// OnUnchecked is what a pre_call guardrail does with a request holding parts no text
	// stands for (input_audio recordings, images, files), which it cannot check: allow (the
	// default, as LiteLLM's guardrails pass what they do not read: the parts go upstream
	// unchecked, and the log says so) or block (a guardrail required to see all the input
	// refuses the request, naming the part).
	OnUnchecked string `json:"on_unchecked,omitempty"`
	// Timeout bounds one check, in seconds: a check not answered by then failed to run
	// (OnError decides). 0 means DefaultModerationGuardrailTimeout for the moderation kind
	// (a call to a model) and no bound of its own for the others (the request's time
	// bounds them).
	Timeout float64 `json:"timeout,omitempty"`
	// Action is what a secrets or pii guardrail does with what it finds: mask (the
	// default for pre_call) or block (the only action of post_call).
	Action string `json:"action,omitempty"`
	// Entities narrows or widens what a secrets or pii guardrail looks for: api_key,
	// private_key, email, phone, credit_card (Luhn-checked), iban (checksum-checked).
	Entities []string `json:"entities,omitempty"`
	// Model is a moderation guardrail's model (DefaultModerationModel when empty): a
	// "provider/model", a bare OpenAI moderation model or a model group.
	Model string `json:"model,omitempty"`
	// Categories, when set, make a moderation guardrail block only when one of them is
	// flagged (OpenAI's names: "violence", "hate", "self-harm/intent", …); otherwise any
	// flag blocks.
	Categories []string `json:"categories,omitempty"`
	// Words are a banned_words guardrail's words or phrases.
	Words []string `json:"words,omitempty"`
	// Patterns are a regex guardrail's Go regular expressions (RE2 syntax).
	Patterns []string `json:"patterns,omitempty"`
	// Custom is the Guardrail of kind custom (a library caller's own check).
	Custom Guardrail `json:"-"`
}

// Guardrail is one check. Check returns the verdict on in; an error means the check could
// not run (the guardrail's OnError decides). More kinds implement it.
type Guardrail interface {
	Check(ctx context.Context, in GuardrailInput) (GuardrailVerdict, error)
}

// GuardrailInput is what a guardrail checks.
type GuardrailInput struct {
	// Mode is GuardrailPreCall (Texts are the request's message texts, in order) or
	// GuardrailPostCall (Texts are the answer's text, a spoken answer's transcript, its tool
	// calls' arguments, its reasoning texts and its refusal).
	Mode string
	// Texts are the texts to check.
	Texts []string
	// Unchecked names the request's parts the texts leave out (pre_call): its recordings,
	// images and files, as fields ("messages[0].content[1].input_audio", "….image_url",
	// "….file"); a Custom guardrail may refuse them.
	Unchecked []string
	// Scope is the caller's (a moderation guardrail's call is recorded under its owner).
	Scope Scope
}

// GuardrailVerdict is a guardrail's decision.
type GuardrailVerdict struct {
	// Blocked refuses the request; Reason says why (without the offending text).
	Blocked bool
	Reason  string
	// Texts, when not nil, replace the input's texts one for one (masking).
	Texts []string
}

// ErrGuardrailBlocked is matched by *GuardrailError.
var ErrGuardrailBlocked = errors.New("completions: blocked by a guardrail")

// GuardrailError is a request a guardrail refused (LiteLLM's "Violated guardrail
// policy"): by its verdict, or because it failed to run and its OnError is block (Err is
// then the failure). It matches ErrGuardrailBlocked.
type GuardrailError struct {
	// Guardrail is the refusing guardrail's name; Mode its mode.
	Guardrail string
	Mode      string
	// Reason is the verdict's reason.
	Reason string
	// Err is why the guardrail could not run (nil for a verdict).
	Err error
}

// Error names the guardrail and the reason.
func (e *GuardrailError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("Violated guardrail policy: guardrail %q (%s) could not run and fails closed: %v", e.Guardrail, e.Mode, e.Err)
	}
	return fmt.Sprintf("Violated guardrail policy: guardrail %q (%s): %s", e.Guardrail, e.Mode, e.Reason)
}

// Is makes a *GuardrailError match ErrGuardrailBlocked.
func (e *GuardrailError) Is(target error) bool { return target == ErrGuardrailBlocked }

// Unwrap returns the failure of a guardrail that could not run.
func (e *GuardrailError) Unwrap() error { return e.Err }

// ParseGuardrails reads a JSON array of GuardrailConfig (the serve flag --guardrails) and
// checks it: unknown fields and invalid values are a *ValidationError naming the field
// ("guardrails[1].mode"). New checks the same, and also that a moderation guardrail's
// model is one its providers can serve.
func ParseGuardrails(data []byte) ([]GuardrailConfig, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, invalid("guardrails", "must be a JSON array of guardrail objects: %v", err)
	}
	out := make([]GuardrailConfig, len(raw))
	for i, r := range raw {
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&out[i]); err != nil {
			return nil, invalid(fmt.Sprintf("guardrails[%d]", i), "%v", err)
		}
	}
	if _, err := buildGuardrails(nil, out); err != nil {
		return nil, err
	}
	return out, nil
}

// guardrail is one configured guardrail, ready to run.
type guardrail struct {
	GuardrailConfig
	check   Guardrail
	timeout time.Duration // 0: none of its own
}

// DefaultModerationGuardrailTimeout bounds a moderation guardrail's check (retries
// included) when its configuration does not.
const DefaultModerationGuardrailTimeout = 10 * time.Second

// buildGuardrails checks cfgs and builds their checks (g runs the moderation kind's; nil
// when only validating).
func buildGuardrails(g *Gateway, cfgs []GuardrailConfig) (map[string]*guardrail, error) {
	out := make(map[string]*guardrail, len(cfgs))
	for i, c := range cfgs {
		field := func(f string) string { return fmt.Sprintf("guardrails[%d].%s", i, f) }
		if c.Name == "" {
			return nil, invalid(field("name"), "is required")
		}
		if out[c.Name] != nil {
			return nil, invalid(field("name"), "%q is configured twice", c.Name)
		}
		switch c.Mode {
		case GuardrailPreCall, GuardrailPostCall:
		case "":
			return nil, invalid(field("mode"), "is required: pre_call or post_call")
		default:
			return nil, invalid(field("mode"), "must be pre_call or post_call, got %q", c.Mode)
		}
		switch c.OnError {
		case "":
			c.OnError = GuardrailBlock
		case GuardrailBlock, GuardrailAllow:
		default:
			return nil, invalid(field("on_error"), "must be block or allow, got %q", c.OnError)
		}
		switch {
		case c.OnUnchecked == "": // allow
		case c.Mode != GuardrailPreCall:
			return nil, invalid(field("on_unchecked"), "belongs to pre_call guardrails (a post_call one checks a spoken answer's transcript)")
		case c.OnUnchecked != GuardrailBlock && c.OnUnchecked != GuardrailAllow:
			return nil, invalid(field("on_unchecked"), "must be block or allow, got %q", c.OnUnchecked)
		}
		if err := foreignFields(c, field); err != nil {
			return nil, err
		}
		if c.Timeout < 0 || c.Timeout > MaxRequestSeconds || math.IsNaN(c.Timeout) {
			return nil, invalid(field("timeout"), "must be a number of seconds from 0 to %d, got %g", MaxRequestSeconds, c.Timeout)
		}
		gr := &guardrail{GuardrailConfig: c, timeout: time.Duration(c.Timeout * float64(time.Second))}
		if gr.timeout == 0 && c.Kind == GuardrailModeration {
			gr.timeout = DefaultModerationGuardrailTimeout
		}
		var err error
		switch c.Kind {
		case GuardrailModeration:
			gr.check, err = newModerationGuardrail(g, c, field)
		case GuardrailSecrets, GuardrailPII:
			gr.check, err = newSensitiveDataGuardrail(&gr.GuardrailConfig, field)
		case GuardrailBannedWords:
			gr.check, err = newBannedWordsGuardrail(c, field)
		case GuardrailRegex:
			gr.check, err = newRegexGuardrail(c, field)
		case GuardrailCustom:
			if c.Custom == nil {
				return nil, invalid(field("kind"), "custom needs GuardrailConfig.Custom (a library caller's Guardrail)")
			}
			gr.check = c.Custom
		case "":
			return nil, invalid(field("kind"), "is required: moderation, secrets, pii, banned_words or regex")
		default:
			return nil, invalid(field("kind"), "must be moderation, secrets, pii, banned_words or regex, got %q", c.Kind)
		}
		if err != nil {
			return nil, err
		}
		out[c.Name] = gr
	}
	return out, nil
}

// kindFields are the fields each kind takes besides name, kind, mode, default_on,
// on_error, on_unchecked and timeout; the kinds they belong to name them in the error of a guardrail of another.
var kindFields = []struct {
	field string
	kinds []string
	set   func(GuardrailConfig) bool
}{
	{"action", []string{GuardrailSecrets, GuardrailPII}, func(c GuardrailConfig) bool { return c.Action != "" }},
	{"entities", []string{GuardrailSecrets, GuardrailPII}, func(c GuardrailConfig) bool { return len(c.Entities) > 0 }},
	{"model", []string{GuardrailModeration}, func(c GuardrailConfig) bool { return c.Model != "" }},
	{"categories", []string{GuardrailModeration}, func(c GuardrailConfig) bool { return len(c.Categories) > 0 }},
	{"words", []string{GuardrailBannedWords}, func(c GuardrailConfig) bool { return len(c.Words) > 0 }},
	{"patterns", []string{GuardrailRegex}, func(c GuardrailConfig) bool { return len(c.Patterns) > 0 }},
}

// foreignFields refuses a field c's kind does not take (an operator would believe a check
// configured that never runs), naming it. An unknown or empty kind is left to its own error.
func foreignFields(c GuardrailConfig, field func(string) string) error {
	switch c.Kind {
	case GuardrailModeration, GuardrailSecrets, GuardrailPII, GuardrailBannedWords, GuardrailRegex, GuardrailCustom:
	default:
		return nil
	}
	for _, f := range kindFields {
		if f.set(c) && !slices.Contains(f.kinds, c.Kind) {
			return invalid(field(f.field), "belongs to the %s kind(s), not %s", strings.Join(f.kinds, " and "), c.Kind)
		}
	}
	return nil
}

// guardrailsFor returns the guardrails of mode that apply to req in scope: the
// default_on ones, the scope's and those req names, in configuration order. A name
// nothing configures is a *ValidationError naming "guardrails" (the scope's: saying the
// key requires it).
func (g *Gateway) guardrailsFor(scope Scope, req *Request, mode string) ([]*guardrail, error) {
	if err := g.CheckGuardrailNames("guardrails", req.Guardrails); err != nil {
		return nil, err
	}
	for _, name := range scope.Guardrails {
		if g.guardrails[name] == nil {
			return nil, invalid("guardrails", "the calling key requires the guardrail %q, which the server no longer configures: the request is refused (configured: %s)", name, g.guardrailList())
		}
	}
	var out []*guardrail
	for _, c := range g.opts.Guardrails {
		gr := g.guardrails[c.Name]
		if gr.Mode == mode && (gr.DefaultOn || slices.Contains(req.Guardrails, gr.Name) || slices.Contains(scope.Guardrails, gr.Name)) {
			out = append(out, gr)
		}
	}
	return out, nil
}

// CheckGuardrailNames reports, as a *ValidationError naming field[i], the first of names
// that no configured guardrail has: how a request's guardrails and a virtual key's are
// checked.
func (g *Gateway) CheckGuardrailNames(field string, names []string) error {
	for i, name := range names {
		if g.guardrails[name] == nil {
			return invalid(fmt.Sprintf("%s[%d]", field, i), "no guardrail is named %q (configured: %s)", name, g.guardrailList())
		}
	}
	return nil
}

// Guardrails returns copies of the configured guardrails, in configuration order (Custom
// left out): what a caller may name in a request's or a key's guardrails.
func (g *Gateway) Guardrails() []GuardrailConfig {
	out := make([]GuardrailConfig, len(g.opts.Guardrails))
	for i, c := range g.opts.Guardrails {
		c.Custom = nil
		c.Entities, c.Categories = slices.Clone(c.Entities), slices.Clone(c.Categories)
		c.Words, c.Patterns = slices.Clone(c.Words), slices.Clone(c.Patterns)
		out[i] = c
	}
	return out
}

// guardrailList is the configured guardrails' names, sorted and comma-separated.
func (g *Gateway) guardrailList() string {
	known := make([]string, 0, len(g.guardrails))
	for n := range g.guardrails {
		known = append(known, n)
	}
	slices.Sort(known)
	if len(known) == 0 {
		return "none"
	}
	return strings.Join(known, ", ")
}

// runGuardrail runs gr on in: its verdict as a *GuardrailError when it blocks, the texts it
// masked (nil when unchanged), or, when it fails to run, a *GuardrailError (OnError
// block) or nothing (allow, logged).
func (g *Gateway) runGuardrail(ctx context.Context, gr *guardrail, in GuardrailInput) ([]string, error) {
	cctx := ctx
	if gr.timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, gr.timeout)
		defer cancel()
	}
	v, err := gr.check.Check(cctx, in)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil && gr.OnError == GuardrailAllow:
		g.log.WarnContext(ctx, "completions: a guardrail failed to run; on_error allow lets the request through", "guardrail", gr.Name, "err", err)
		return nil, nil
	case err != nil:
		return nil, &GuardrailError{Guardrail: gr.Name, Mode: gr.Mode, Err: err}
	case v.Blocked:
		return nil, &GuardrailError{Guardrail: gr.Name, Mode: gr.Mode, Reason: v.Reason}
	case v.Texts != nil && len(v.Texts) != len(in.Texts):
		return nil, &GuardrailError{Guardrail: gr.Name, Mode: gr.Mode, Err: fmt.Errorf("returned %d texts for %d", len(v.Texts), len(in.Texts))}
	}
	return v.Texts, nil
}

// guardInput runs req's pre_call guardrails (once: a request they ran on is marked) and
// returns the request to send: req itself, or a copy whose messages carry the masked texts.
// It keeps the post_call guardrails on the request for its answer.
//
// The guardrails see every text sent upstream: the stored conversation's history
// (ConversationID, loaded here and kept on the request masked for prepare; the store is not
// changed), the messages' text blocks and the arguments of earlier assistant turns' tool
// calls. Tool-call arguments are JSON: a mask (a label such as "[API_KEY]") inside a
// string value keeps them valid; a masking that leaves them invalid JSON (a number taken
// for a phone number) cannot be sent and blocks the request instead.
func (g *Gateway) guardInput(ctx context.Context, scope Scope, req *Request) (*Request, error) {
	if req.guarded || len(g.guardrails) == 0 && len(req.Guardrails) == 0 && len(scope.Guardrails) == 0 {
		return req, nil
	}
	pre, err := g.guardrailsFor(scope, req, GuardrailPreCall)
	if err != nil {
		return nil, err
	}
	post, err := g.guardrailsFor(scope, req, GuardrailPostCall)
	if err != nil {
		return nil, err
	}
	out := *req
	out.guarded, out.postGuards = true, post
	if len(pre) == 0 {
		return &out, nil
	}
	if req.ConversationID != "" && req.conv == nil {
		c, history, err := g.scopeConversation(ctx, scope, req.ConversationID)
		if err != nil {
			return nil, err
		}
		out.conv, out.history = c, history
	}
	// Where each text checked comes from: a history message's or a message's content
	// block (call < 0) or a message's tool call.
	type origin struct {
		history    bool
		i, j, call int
	}
	var texts []string
	var from []origin
	for i, m := range out.history {
		for j, b := range m.Content {
			if b.Text != "" {
				texts, from = append(texts, b.Text), append(from, origin{history: true, i: i, j: j, call: -1})
			}
		}
	}
	for i, m := range req.Messages {
		for j, b := range m.Content {
			if b.Text != "" {
				texts, from = append(texts, b.Text), append(from, origin{i: i, j: j, call: -1})
			}
		}
		for k, c := range m.ToolCalls {
			if c.Arguments != "" {
				texts, from = append(texts, c.Arguments), append(from, origin{i: i, call: k})
			}
		}
	}
	unchecked := uncheckedParts(req)
	if len(unchecked) > 0 {
		for _, gr := range pre {
			if gr.OnUnchecked == GuardrailBlock {
				return nil, &GuardrailError{Guardrail: gr.Name, Mode: GuardrailPreCall,
					Reason: fmt.Sprintf("%s cannot be checked (the guardrail reads text only) and on_unchecked is block", unchecked[0])}
			}
		}
		names := make([]string, len(pre))
		for i, gr := range pre {
			names[i] = gr.Name
		}
		g.log.InfoContext(ctx, "completions: pre_call guardrails checked the request's text only; its recordings, images and files went upstream unchecked",
			"guardrails", names, "unchecked", unchecked, "request_id", scope.RequestID)
	}
	masked := false
	var masker *guardrail
	for _, gr := range pre {
		changed, err := g.runGuardrail(ctx, gr, GuardrailInput{Mode: GuardrailPreCall, Texts: texts, Unchecked: unchecked, Scope: scope})
		if err != nil {
			return nil, err
		}
		if changed != nil {
			texts, masked, masker = changed, true, gr
		}
	}
	if !masked {
		return &out, nil
	}
	// Copies of the messages with the masked texts: the caller's request (and the
	// conversation as stored) are not changed.
	out.Messages = slices.Clone(req.Messages)
	out.history = slices.Clone(out.history)
	cloned := map[origin]bool{}
	for k, o := range from {
		if !o.history && texts[k] != origOf(req, o.i, o.j, o.call) {
			if out.masked == nil {
				out.masked = map[string]string{}
			}
			out.masked[origOf(req, o.i, o.j, o.call)] = texts[k]
		}
		switch {
		case o.history:
			m := &out.history[o.i]
			if !cloned[origin{history: true, i: o.i}] {
				m.Content, cloned[origin{history: true, i: o.i}] = slices.Clone(m.Content), true
			}
			m.Content[o.j].Text = texts[k]
		case o.call < 0:
			m := &out.Messages[o.i]
			if !cloned[origin{i: o.i}] {
				m.Content, cloned[origin{i: o.i}] = slices.Clone(m.Content), true
			}
			m.Content[o.j].Text = texts[k]
		default:
			m := &out.Messages[o.i]
			if !cloned[origin{i: o.i, call: 1}] {
				m.ToolCalls, cloned[origin{i: o.i, call: 1}] = slices.Clone(m.ToolCalls), true
			}
			old := m.ToolCalls[o.call].Arguments
			if texts[k] != old && json.Valid([]byte(old)) && !json.Valid([]byte(texts[k])) {
				return nil, &GuardrailError{Guardrail: masker.Name, Mode: GuardrailPreCall,
					Reason: "found data to mask in a tool call's arguments where a mask would not keep them valid JSON"}
			}
			m.ToolCalls[o.call].Arguments = texts[k]
		}
	}
	return &out, nil
}

// uncheckedParts names the parts of req's messages no text stands for, which guardrails
// cannot check: recordings (input_audio), images (image_url) and files, as the chat
// surface names them, or as the caller's surface does when it names fields its own way
// (Request.fieldName: a /v1/messages image or document block's source); nil when there
// is none.
func uncheckedParts(req *Request) []string {
	var out []string
	for i, m := range req.Messages {
		for j, b := range m.Content {
			kind := ""
			switch {
			case b.Audio != nil:
				kind = "input_audio"
			case b.Image != nil:
				kind = "image_url"
			case b.File != nil:
				kind = "file"
			default:
				continue
			}
			name := fmt.Sprintf("messages[%d].content[%d].%s", i, j, kind)
			if req.fieldName != nil {
				// In the caller's terms: its request's block (a /v1/messages image or
				// document block's source, its turn counted without the system prompt).
				name = req.fieldName(name)
			}
			out = append(out, name)
		}
	}
	return out
}

// origOf is the text of req's message i: content block j, or tool call call (>= 0).
func origOf(req *Request, i, j, call int) string {
	if call >= 0 {
		return req.Messages[i].ToolCalls[call].Arguments
	}
	return req.Messages[i].Content[j].Text
}

// guardOutput runs the request's post_call guardrails on its answer resp.
func (g *Gateway) guardOutput(ctx context.Context, p *plan, resp *Response) error {
	if len(p.req.postGuards) == 0 {
		return nil
	}
	texts := []string{resp.Text()}
	if resp.Audio != nil && resp.Audio.Transcript != "" {
		// A spoken answer has no text (content null): what it says is its transcript.
		texts = append(texts, resp.Audio.Transcript)
	}
	for _, c := range resp.ToolCalls {
		texts = append(texts, c.Arguments)
	}
	// What else the client receives: the reasoning (reasoning_content, thinking blocks,
	// reasoning summaries) and a refusal.
	for _, r := range resp.Reasoning {
		if r.Text != "" {
			texts = append(texts, r.Text)
		}
	}
	if resp.Refusal != "" {
		texts = append(texts, resp.Refusal)
	}
	for _, gr := range p.req.postGuards {
		if _, err := g.runGuardrail(ctx, gr, GuardrailInput{Mode: GuardrailPostCall, Texts: texts, Scope: p.scope}); err != nil {
			return err
		}
	}
	return nil
}

// guardRequest is guardInput, with a block reported to the Observer (outcome
// RequestBlocked; primary, when known, names the model the request asked for).
func (g *Gateway) guardRequest(ctx context.Context, scope Scope, req *Request, primary []target) (*Request, error) {
	out, err := g.guardInput(ctx, scope, req)
	if err == nil || !errors.Is(err, ErrGuardrailBlocked) || g.opts.Observer == nil {
		return out, err
	}
	start := scope.Received
	if start.IsZero() {
		start = g.opts.Now()
	}
	r := RequestRecord{Owner: scope.Owner, Tag: scope.Tag, Stream: req.Stream, Outcome: RequestBlocked, Attempts: []Attempt{},
		Start: start, Latency: g.opts.Now().Sub(start), Tags: req.Tags, Err: err}
	if len(primary) > 0 {
		r.Requested = primary[0].name
	} else if len(req.Models) > 0 {
		r.Requested = req.Models[0]
	}
	g.observe(ctx, &plan{rt: g.routes(), scope: scope, req: req, targets: primary}, r)
	return nil, err
}

// guardAnswer runs the post_call guardrails on a stream's whole answer resp: a block
// ends the stream with the *GuardrailError instead of io.EOF (the answer was accounted
// and is not saved, cached or stored).
func (s *ResponseStream) guardAnswer(resp *Response) error {
	err := s.g.guardOutput(s.ctx, s.p, resp)
	if err == nil {
		return nil
	}
	s.err = err
	s.observed.Do(func() {
		var ttft time.Duration
		if !s.firstAt.IsZero() {
			ttft = s.firstAt.Sub(s.p.start)
		}
		s.g.observeBlockedAnswer(s.ctx, s.p, !s.p.collected, resp, ttft, err)
	})
	return err
}

// observeBlockedAnswer reports an answer a post_call guardrail refused: outcome
// RequestBlocked, with the answer's model and usage (it was paid for).
func (g *Gateway) observeBlockedAnswer(ctx context.Context, p *plan, stream bool, resp *Response, ttft time.Duration, err error) {
	p.ended()
	if g.opts.Observer == nil {
		return
	}
	r := g.answerRecord(p, stream, resp, ttft, RequestBlocked)
	r.Err = err
	if len(p.targets) > 0 {
		r.Requested = p.targets[0].name
	}
	g.observe(ctx, p, r)
}

// LoadGuardrails reads and checks a JSON file of guardrails (ParseGuardrails; a leading
// UTF-8 byte order mark skipped).
func LoadGuardrails(path string) ([]GuardrailConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("completions: reading guardrails: %w", err)
	}
	b = bytes.TrimPrefix(b, utf8BOM)
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, invalid("guardrails", "%s is empty (a JSON array of guardrail objects is expected)", path)
	}
	return ParseGuardrails(b)
}
