package routing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/invopop/jsonschema"

	"github.com/switchyard-ai/switchyard/validation"
)

// MaxTools is the most tools a model selection request may carry (spec: Limits).
const MaxTools = 128

// MaxTimeoutSeconds is the largest timeout a model selection request may set.
const MaxTimeoutSeconds = 600

// MaxCandidates is the most candidates a model selection request may carry: each one is
// ranked and (up to max_model_depth) stored with the session.
const MaxCandidates = 256

// Message is one turn of the conversation to route.
type Message struct {
	// Role is "system", "user" or "assistant".
	Role string `json:"role" jsonschema:"required,enum=system,enum=user,enum=assistant"`
	// Content is the text of the message; it must not be empty.
	Content string `json:"content" jsonschema:"required,minLength=1"`
}

// Tool is a function the caller may let the chosen model call. Only functions are
// supported. On the wire both {"name": ...} and the OpenAI form
// {"type": "function", "function": {"name": ...}} are accepted.
type Tool struct {
	// Name of the function; required.
	Name string `json:"name" jsonschema:"required,minLength=1"`
	// Description of the function.
	Description string `json:"description,omitempty"`
	// Parameters is the free-form (usually JSON Schema) description of the arguments.
	Parameters map[string]any `json:"parameters,omitempty"`
}

// Request is a model selection request. Decode it with [ParseRequest] (or json.Unmarshal,
// then [Request.Validate]); build it in Go directly when using the library.
type Request struct {
	// Messages is the conversation in chat-message format; at least one.
	Messages []Message `json:"messages" jsonschema:"required,minItems=1"`
	// LLMProviders are the candidates to route between.
	LLMProviders []Candidate `json:"llm_providers,omitempty" jsonschema:"description=Candidates to route between (required unless models is given)"`
	// Models is an alias of LLMProviders; give one or the other.
	Models []Candidate `json:"models,omitempty" jsonschema:"description=Alias of llm_providers; entries may be plain provider/model strings"`
	// Tools the chosen model must be able to call; at most 128.
	Tools []Tool `json:"tools,omitempty" jsonschema:"maxItems=128"`
	// MaxModelDepth cuts the ranked list in the response; nil means all candidates.
	MaxModelDepth *int `json:"max_model_depth,omitempty" jsonschema:"minimum=1,maximum=2147483647"`
	// Tradeoff is "", "cost" or "latency".
	Tradeoff string `json:"tradeoff,omitempty" jsonschema:"enum=cost,enum=latency"`
	// TradeoffTolerance (extension) is how much estimated quality, in points of
	// probability of a good answer (0-1), the tradeoff may give up against the best
	// candidate: the pick is the cheapest (fastest) candidate whose estimate is at least
	// the best estimate minus this. nil means the router's learned default. Requires
	// tradeoff.
	TradeoffTolerance *float64 `json:"tradeoff_tolerance,omitempty" jsonschema:"minimum=0,maximum=1"`
	// PreferenceID names a trained router model of the same owner; it replaces the default
	// scorer for the candidates that model knows.
	PreferenceID string `json:"preference_id,omitempty"`
	// HashContent stores SHA-256 hashes of the message contents with the session; when
	// false no content is stored at all.
	HashContent bool `json:"hash_content,omitempty" jsonschema:"default=false"`
	// PreviousSession links this call to an earlier session of the same owner.
	PreviousSession string `json:"previous_session,omitempty"`
	// Metric is what the ranking optimises, as Not Diamond's SDKs send it; "accuracy" (the
	// probability of a good answer) is the only one, and empty means it.
	Metric string `json:"metric,omitempty" jsonschema:"enum=accuracy"`
	// Timeout (seconds; Not Diamond's TypeScript SDK sends 5) bounds the selection: past it
	// the answer is Default when given, else the request fails with ErrTimeout. An unknown
	// pref_ PreferenceID is not found whatever the timeout: it is looked up first.
	Timeout *float64 `json:"timeout,omitempty" jsonschema:"exclusiveMinimum=0,maximum=600"`
	// Default names the candidate to answer with when the selection cannot finish (the
	// timeout passed, or a router failed): a "provider/model" string, a {provider, model}
	// or {name} object, or the candidate's index in the list. It must be one of the
	// candidates. A default the tools or context_length filters removed cannot take the
	// request and is never answered: the remaining candidate with the best prior
	// ([DefaultScorer]) answers in its place (score_source "default_replaced").
	Default *DefaultChoice `json:"default,omitempty" jsonschema:"description=Candidate to answer with when the selection cannot finish (a router fails or timeout passes): one of the candidates or its 0-based index; when the tools or context_length filters removed it the remaining candidate with the best prior answers instead (score_source default_replaced)"`
	// ResponseModel is the structured-output model Not Diamond's TypeScript SDK may send; it
	// is accepted and does not change the ranking.
	ResponseModel json.RawMessage `json:"response_model,omitempty"`
}

// DefaultChoice is the request's default: a candidate named as the candidates are, or
// its position in the list (0-based).
type DefaultChoice struct {
	// Candidate is set when the default was given as a name or object.
	Candidate *Candidate
	// Index is set when the default was given as a number.
	Index *int
	// resolved is the candidate's position once Validate matched it.
	resolved int
}

// UnmarshalJSON accepts an integer index or any candidate shape.
func (d *DefaultChoice) UnmarshalJSON(data []byte) error { return d.decode(data, "default") }

func (d *DefaultChoice) decode(data []byte, field string) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && (data[0] == '-' || (data[0] >= '0' && data[0] <= '9')) {
		var i int
		if err := json.Unmarshal(data, &i); err != nil {
			return invalid(field, "must be a candidate (\"provider/model\" or an object) or its index in the list (an integer)")
		}
		*d = DefaultChoice{Index: &i}
		return nil
	}
	var c Candidate
	if err := c.decode(data, field); err != nil {
		return err
	}
	*d = DefaultChoice{Candidate: &c}
	return nil
}

// MarshalJSON writes the default as it was given.
func (d DefaultChoice) MarshalJSON() ([]byte, error) {
	if d.Index != nil {
		return json.Marshal(*d.Index)
	}
	return json.Marshal(d.Candidate)
}

// JSONSchema describes the default's shapes for invopop/jsonschema.
func (DefaultChoice) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Description: "candidate to answer with when the selection cannot finish (a router fails or timeout passes): one of the candidates or its 0-based index; " +
			"when the tools or context_length filters removed it the remaining candidate with the best prior answers instead (score_source default_replaced)",
		OneOf: []*jsonschema.Schema{{Type: "integer", Minimum: json.Number("0")},
			{Type: "string"}, {Type: "object"}},
	}
}

// resolve matches the default against the normalised candidates.
func (d *DefaultChoice) resolve(cands []Candidate, field string) error {
	if d.Index != nil {
		if *d.Index < 0 || *d.Index >= len(cands) {
			return invalid("default", "index %d is outside the %d candidates of %s", *d.Index, len(cands), field)
		}
		d.resolved = *d.Index
		return nil
	}
	if d.Candidate == nil {
		return invalid("default", "is empty")
	}
	c := *d.Candidate
	if err := c.normalise("default"); err != nil {
		return err
	}
	for i := range cands {
		if strings.EqualFold(cands[i].Name, c.Name) {
			d.resolved = i
			return nil
		}
	}
	return invalid("default", "%q is not one of the candidates in %s", c.Name, field)
}

// ParseRequest decodes a JSON model selection request and validates it. Every error is a
// *ValidationError (matching ErrInvalid) naming the field.
func ParseRequest(data []byte) (*Request, error) {
	var r Request
	if err := json.Unmarshal(data, &r); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			return nil, ve
		}
		return nil, jsonError("body", err)
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// Candidates returns the candidate list, whichever of llm_providers or models was given,
// and the JSON name of that field.
func (r *Request) Candidates() ([]Candidate, string) {
	if len(r.LLMProviders) == 0 && len(r.Models) > 0 {
		return r.Models, "models"
	}
	return r.LLMProviders, "llm_providers"
}

var validRoles = map[string]bool{"system": true, "user": true, "assistant": true}

// Validate checks every rule of the spec and normalises the candidates in place. It returns
// a *ValidationError naming the first offending field (field "body" for a nil request).
func (r *Request) Validate() error {
	if r == nil {
		return invalid("body", "the request is missing")
	}
	if len(r.Messages) == 0 {
		return invalid("messages", "at least one message is required")
	}
	for i, m := range r.Messages {
		f := fmt.Sprintf("messages[%d]", i)
		switch {
		case m.Role == "":
			return invalid(f+".role", "must not be empty")
		case !validRoles[m.Role]:
			return invalid(f+".role", "must be one of system, user, assistant (got %q)", m.Role)
		case strings.TrimSpace(m.Content) == "":
			return invalid(f+".content", "must not be empty")
		}
	}
	if len(r.LLMProviders) > 0 && len(r.Models) > 0 {
		return invalid("models", "give llm_providers or its alias models, not both")
	}
	cands, field := r.Candidates()
	if len(cands) == 0 {
		return invalid("llm_providers", "at least one candidate is required (llm_providers or models)")
	}
	if len(cands) > MaxCandidates {
		return invalid(field, "at most %d candidates are allowed (got %d)", MaxCandidates, len(cands))
	}
	seen := make(map[string]int, len(cands))
	for i := range cands {
		f := fmt.Sprintf("%s[%d]", field, i)
		if err := cands[i].normalise(f); err != nil {
			return err
		}
		key := strings.ToLower(cands[i].Name)
		if j, dup := seen[key]; dup {
			return invalid(f, "duplicate candidate %q (same as %s[%d])", cands[i].Name, field, j)
		}
		seen[key] = i
	}
	if len(r.Tools) > MaxTools {
		return invalid("tools", "at most %d tools are allowed (got %d)", MaxTools, len(r.Tools))
	}
	for i, t := range r.Tools {
		if strings.TrimSpace(t.Name) == "" {
			return invalid(fmt.Sprintf("tools[%d].name", i), "is required")
		}
	}
	switch r.Tradeoff {
	case "", "cost", "latency":
	default:
		return invalid("tradeoff", "must be cost or latency (got %q)", r.Tradeoff)
	}
	if t := r.TradeoffTolerance; t != nil {
		if !(*t >= 0 && *t <= 1) {
			return invalid("tradeoff_tolerance", "must be a number from 0 to 1 (quality points the tradeoff may give up), got %v", *t)
		}
		if r.Tradeoff == "" {
			return invalid("tradeoff_tolerance", "applies only with tradeoff cost or latency")
		}
	}
	if r.Metric != "" && r.Metric != "accuracy" {
		return invalid("metric", "must be accuracy, the only metric (got %q)", r.Metric)
	}
	if t := r.Timeout; t != nil && !(*t > 0 && *t <= MaxTimeoutSeconds) {
		return invalid("timeout", "must be a number of seconds above 0 and at most %d, got %v", MaxTimeoutSeconds, *t)
	}
	if r.Default != nil {
		if err := r.Default.resolve(cands, field); err != nil {
			return err
		}
	}
	if r.MaxModelDepth != nil && *r.MaxModelDepth < 1 {
		return invalid("max_model_depth", "must be at least 1 (got %d)", *r.MaxModelDepth)
	}
	if r.MaxModelDepth != nil && *r.MaxModelDepth > math.MaxInt32 {
		// The spec's integer is 32-bit: clients in typed languages cannot send more.
		return invalid("max_model_depth", "must be at most %d (got %d)", math.MaxInt32, *r.MaxModelDepth)
	}
	return nil
}

// wireRequest holds the raw fields so each can be decoded with its own error message.
type wireRequest struct {
	Messages        json.RawMessage `json:"messages"`
	LLMProviders    json.RawMessage `json:"llm_providers"`
	Models          json.RawMessage `json:"models"`
	Tools           json.RawMessage `json:"tools"`
	MaxModelDepth   json.RawMessage `json:"max_model_depth"`
	Tradeoff        json.RawMessage `json:"tradeoff"`
	Tolerance       json.RawMessage `json:"tradeoff_tolerance"`
	PreferenceID    json.RawMessage `json:"preference_id"`
	HashContent     json.RawMessage `json:"hash_content"`
	PreviousSession json.RawMessage `json:"previous_session"`
	Metric          json.RawMessage `json:"metric"`
	Timeout         json.RawMessage `json:"timeout"`
	Default         json.RawMessage `json:"default"`
	ResponseModel   json.RawMessage `json:"response_model"`
}

// UnmarshalJSON decodes a request, accepting both candidate shapes, plain "provider/model"
// strings and the models alias. Unknown fields and wrong types are *ValidationError values
// naming the field. It does not apply the rules of [Request.Validate].
func (r *Request) UnmarshalJSON(data []byte) error {
	var w wireRequest
	if err := strictDecode(data, &w); err != nil {
		return jsonError("body", err)
	}
	var out Request
	var err error
	if out.Messages, err = decodeMessages(w.Messages); err != nil {
		return err
	}
	if out.LLMProviders, err = decodeCandidates(w.LLMProviders, "llm_providers"); err != nil {
		return err
	}
	if out.Models, err = decodeCandidates(w.Models, "models"); err != nil {
		return err
	}
	if out.Tools, err = decodeTools(w.Tools); err != nil {
		return err
	}
	if isSet(w.MaxModelDepth) {
		d, err := decodeInt(w.MaxModelDepth, "max_model_depth")
		if err != nil {
			return err
		}
		out.MaxModelDepth = &d
	}
	if isSet(w.Tolerance) {
		var t float64
		if err := decodeField(w.Tolerance, "tradeoff_tolerance", &t); err != nil {
			return err
		}
		out.TradeoffTolerance = &t
	}
	if isSet(w.Timeout) {
		var t float64
		if err := decodeField(w.Timeout, "timeout", &t); err != nil {
			return err
		}
		out.Timeout = &t
	}
	if isSet(w.Default) {
		out.Default = new(DefaultChoice)
		if err := out.Default.decode(w.Default, "default"); err != nil {
			return err
		}
	}
	if isSet(w.ResponseModel) {
		if b := bytes.TrimSpace(w.ResponseModel); b[0] != '{' {
			return invalid("response_model", "must be an object")
		}
		out.ResponseModel = w.ResponseModel
	}
	for _, f := range []struct {
		raw  json.RawMessage
		name string
		dst  any
	}{
		{w.Tradeoff, "tradeoff", &out.Tradeoff},
		{w.PreferenceID, "preference_id", &out.PreferenceID},
		{w.HashContent, "hash_content", &out.HashContent},
		{w.PreviousSession, "previous_session", &out.PreviousSession},
		{w.Metric, "metric", &out.Metric},
	} {
		if err := decodeField(f.raw, f.name, f.dst); err != nil {
			return err
		}
	}
	*r = out
	return nil
}

func isSet(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON value")
	}
	return exactNames(data, v)
}

// exactNames refuses member names that encoding/json matched without regard to case
// ("MAX_MODEL_DEPTH" would set max_model_depth) or that repeat: decoded again with exact
// names, such a member is unknown.
func exactNames(data []byte, v any) error {
	fresh := reflect.New(reflect.TypeOf(v).Elem()).Interface()
	err := jsonv2.Unmarshal(data, fresh, jsonv2.RejectUnknownMembers(true))
	var se *jsonv2.SemanticError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se) && errors.Is(se.Err, jsonv2.ErrUnknownName):
		name := string(se.JSONPointer)
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		}
		return fmt.Errorf("json: unknown field %q", name)
	case errors.Is(err, jsontext.ErrDuplicateName):
		return errors.New("a field appears more than once")
	}
	return nil // anything else was judged by the decoding above
}

// decodeField decodes raw into dst (strictly), naming field in any error. Absent or null
// leaves dst untouched.
func decodeField(raw json.RawMessage, field string, dst any) error {
	if !isSet(raw) {
		return nil
	}
	if err := strictDecode(raw, dst); err != nil {
		return jsonError(field, err)
	}
	return nil
}

// decodeInt decodes the integer field raw. An integral number written with a fraction part
// or an exponent (2.0, 1e0) is an integer, as JSON Schema (and so the OpenAPI document)
// counts it, read exactly from its digits (validation.ParseIntegral), never rounded through
// float64; a fraction (however small), a non-number or a number past int is refused as
// decodeField refuses it. Bounds are the caller's to check.
func decodeInt(raw json.RawMessage, field string) (int, error) {
	var n int
	err := strictDecode(raw, &n)
	if err == nil {
		return n, nil
	}
	if v, perr := validation.ParseIntegral(string(bytes.TrimSpace(raw)), strconv.IntSize); perr == nil {
		return int(v), nil
	}
	return 0, jsonError(field, err)
}

// jsonError turns an encoding/json error into a *ValidationError under field.
func jsonError(field string, err error) *ValidationError {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		f := field
		if te.Field != "" {
			if field == "body" {
				f = te.Field
			} else {
				f = field + "." + te.Field
			}
		}
		return invalid(f, "must be %s (got JSON %s)", jsonTypeName(te.Type.Kind().String()), te.Value)
	case errors.As(err, &se):
		return invalid(field, "malformed JSON at byte %d: %v", se.Offset, se)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		name = strings.Trim(name, `"`)
		if field == "body" {
			return invalid(name, "unknown field")
		}
		return invalid(field+"."+name, "unknown field")
	}
	return invalid(field, "malformed JSON: %v", err)
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "int", "int32", "int64", "uint", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	}
	return "of type " + kind
}

func decodeMessages(raw json.RawMessage) ([]Message, error) {
	if !isSet(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, invalid("messages", "must be an array of messages")
	}
	out := make([]Message, len(items))
	for i, it := range items {
		f := fmt.Sprintf("messages[%d]", i)
		var w wireMessage
		if err := strictDecode(it, &w); err != nil {
			return nil, jsonError(f, err)
		}
		if err := decodeField(w.Role, f+".role", &out[i].Role); err != nil {
			return nil, err
		}
		content, err := decodeContent(w.Content, f+".content")
		if err != nil {
			return nil, err
		}
		out[i].Content = content
	}
	return out, nil
}

// wireMessage is a message as the wire gives it: content is a string or, as in OpenAI's
// chat format (and Not Diamond's SDKs), an array of content parts.
type wireMessage struct {
	Role    json.RawMessage `json:"role"`
	Content json.RawMessage `json:"content"`
}

// wireContentPart is one part of an array content.
type wireContentPart struct {
	Type string          `json:"type"`
	Text json.RawMessage `json:"text"`
}

// decodeContent reads a message's content: a string, or an array of text parts
// ({"type": "text", "text": ...}) joined by newlines. A part of another type is refused
// naming it: routing reads text only.
func decodeContent(raw json.RawMessage, field string) (string, error) {
	if !isSet(raw) {
		return "", nil
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		var s string
		if err := decodeField(raw, field, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", jsonError(field, err)
	}
	texts := make([]string, 0, len(parts))
	for j, pr := range parts {
		pf := fmt.Sprintf("%s[%d]", field, j)
		var p wireContentPart
		if err := json.Unmarshal(pr, &p); err == nil && p.Type != "text" {
			return "", invalid(pf+".type", "only text parts can be routed (got %q)", p.Type)
		}
		if err := strictDecode(pr, &p); err != nil {
			return "", jsonError(pf, err)
		}
		var t string
		if !isSet(p.Text) {
			return "", invalid(pf+".text", "is required")
		}
		if err := decodeField(p.Text, pf+".text", &t); err != nil {
			return "", err
		}
		texts = append(texts, t)
	}
	return strings.Join(texts, "\n"), nil
}

func decodeCandidates(raw json.RawMessage, field string) ([]Candidate, error) {
	if !isSet(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, invalid(field, "must be an array of candidates")
	}
	out := make([]Candidate, len(items))
	for i, it := range items {
		if err := out[i].decode(it, fmt.Sprintf("%s[%d]", field, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

type wireTool struct {
	Type        string          `json:"type"`
	Name        json.RawMessage `json:"name"`
	Description json.RawMessage `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Function    json.RawMessage `json:"function"`
	Strict      json.RawMessage `json:"strict"`
}

func decodeTools(raw json.RawMessage) ([]Tool, error) {
	if !isSet(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, invalid("tools", "must be an array of tools")
	}
	out := make([]Tool, len(items))
	for i, it := range items {
		f := fmt.Sprintf("tools[%d]", i)
		var w wireTool
		if err := strictDecode(it, &w); err != nil {
			return nil, jsonError(f, err)
		}
		if w.Type != "" && w.Type != "function" {
			return nil, invalid(f+".type", "only function tools are supported (got %q)", w.Type)
		}
		if isSet(w.Function) { // OpenAI form
			var fn wireTool
			if err := strictDecode(w.Function, &fn); err != nil {
				return nil, jsonError(f+".function", err)
			}
			w, f = fn, f+".function"
		}
		if err := decodeField(w.Name, f+".name", &out[i].Name); err != nil {
			return nil, err
		}
		if err := decodeField(w.Description, f+".description", &out[i].Description); err != nil {
			return nil, err
		}
		if err := decodeField(w.Parameters, f+".parameters", &out[i].Parameters); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Shape is the wire form a candidate was given in; the response writes labels back in it.
type Shape int

// The candidate shapes.
const (
	// ShapeAuto infers the shape: Name set and Provider empty means ShapeName, else
	// ShapeProviderModel.
	ShapeAuto Shape = iota
	// ShapeName is {"name": "..."}; the label is the name as given.
	ShapeName
	// ShapeProviderModel is {"provider": "...", "model": "..."}; the label is provider/model.
	ShapeProviderModel
	// ShapeString is a plain "provider/model" string; the label is provider/model.
	ShapeString
)

// Candidate is one LLM to route between, normalised from any of the accepted shapes.
type Candidate struct {
	// Provider is the part before the first "/" of the name ("openai"); empty when the name
	// has no slash.
	Provider string
	// Model is the part after the first "/" ("gpt-4o"), or the whole name when it has none.
	Model string
	// Name is the full identifier: "provider/model", or the name exactly as given.
	Name string
	// Price is the caller's price for this candidate (any unit, the same for all candidates;
	// the catalogue fallback uses USD per 1M tokens, mean of input and output). Nil: unknown.
	Price *float64
	// Latency is the caller's latency for this candidate (any unit, lower is faster). Nil:
	// unknown.
	Latency *float64
	// InputPrice and OutputPrice are Not Diamond's per-candidate prices (USD per 1M input
	// and output tokens). Without Price, their mean (or the one given) is the candidate's
	// price, the unit of the catalogue fallback.
	InputPrice, OutputPrice *float64
	// ContextLength is the candidate's context window in tokens (Not Diamond's
	// context_length); a candidate whose window is smaller than the conversation's
	// estimated size, tool definitions included ([EstimateTokens]), is not ranked. Nil:
	// unknown, never filtered.
	ContextLength *int
	// IsCustom marks the caller's own model (Not Diamond's is_custom): no router or table
	// matches it by name, so it is ranked by its attributes or the unknown prior.
	IsCustom bool
	// Attributes are free-form. Keys the default scorer reads: "quality" (number, 0-1 or
	// 0-100), "quality_code", "quality_math" (same scale) and "supports_tools" /
	// "function_calling" / "supports_function_calling" (boolean).
	Attributes map[string]any
	shape      Shape
}

// Shape returns the wire shape the candidate was given in.
func (c Candidate) Shape() Shape {
	if c.shape != ShapeAuto {
		return c.shape
	}
	if c.Name != "" && c.Provider == "" {
		return ShapeName
	}
	return ShapeProviderModel
}

// Label is the candidate written back in the caller's shape: the name for ShapeName,
// "provider/model" otherwise.
func (c Candidate) Label() string {
	if c.Shape() == ShapeName {
		return c.Name
	}
	if c.Provider == "" {
		return c.Model
	}
	return c.Provider + "/" + c.Model
}

type wireCandidate struct {
	Name          *string         `json:"name"`
	Provider      *string         `json:"provider"`
	Model         *string         `json:"model"`
	Price         json.RawMessage `json:"price"`
	Latency       json.RawMessage `json:"latency"`
	Attributes    json.RawMessage `json:"attributes"`
	InputPrice    json.RawMessage `json:"input_price"`
	OutputPrice   json.RawMessage `json:"output_price"`
	ContextLength json.RawMessage `json:"context_length"`
	IsCustom      json.RawMessage `json:"is_custom"`
}

// UnmarshalJSON accepts {"name": ...}, {"provider": ..., "model": ...} or a plain
// "provider/model" string.
func (c *Candidate) UnmarshalJSON(data []byte) error { return c.decode(data, "candidate") }

func (c *Candidate) decode(data []byte, field string) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return jsonError(field, err)
		}
		*c = Candidate{Name: s, shape: ShapeString}
		return nil
	}
	if len(data) == 0 || data[0] != '{' {
		return invalid(field, "must be an object with name, or provider and model, or a \"provider/model\" string")
	}
	var w wireCandidate
	if err := strictDecode(data, &w); err != nil {
		return jsonError(field, err)
	}
	var out Candidate
	if w.Name != nil {
		out.Name, out.shape = *w.Name, ShapeName
	}
	if w.Provider != nil || w.Model != nil {
		if w.Name != nil {
			out.shape = ShapeName // written back as given; consistency checked in normalise
		} else {
			out.shape = ShapeProviderModel
		}
		if w.Provider != nil {
			out.Provider = *w.Provider
		}
		if w.Model != nil {
			out.Model = *w.Model
		}
	}
	for _, f := range []struct {
		raw  json.RawMessage
		name string
		dst  **float64
	}{{w.Price, "price", &out.Price}, {w.Latency, "latency", &out.Latency},
		{w.InputPrice, "input_price", &out.InputPrice}, {w.OutputPrice, "output_price", &out.OutputPrice}} {
		if isSet(f.raw) {
			var v float64
			if err := decodeField(f.raw, field+"."+f.name, &v); err != nil {
				return err
			}
			*f.dst = &v
		}
	}
	if isSet(w.ContextLength) {
		n, err := decodeInt(w.ContextLength, field+".context_length")
		if err != nil {
			return err
		}
		out.ContextLength = &n
	}
	if err := decodeField(w.IsCustom, field+".is_custom", &out.IsCustom); err != nil {
		return err
	}
	if err := decodeField(w.Attributes, field+".attributes", &out.Attributes); err != nil {
		return err
	}
	*c = out
	return nil
}

// MarshalJSON writes the candidate in its shape.
func (c Candidate) MarshalJSON() ([]byte, error) {
	if c.shape == ShapeString {
		return json.Marshal(c.Name)
	}
	w := struct {
		Name          string         `json:"name,omitempty"`
		Provider      string         `json:"provider,omitempty"`
		Model         string         `json:"model,omitempty"`
		Price         *float64       `json:"price,omitempty"`
		Latency       *float64       `json:"latency,omitempty"`
		InputPrice    *float64       `json:"input_price,omitempty"`
		OutputPrice   *float64       `json:"output_price,omitempty"`
		ContextLength *int           `json:"context_length,omitempty"`
		IsCustom      bool           `json:"is_custom,omitempty"`
		Attributes    map[string]any `json:"attributes,omitempty"`
	}{Price: c.Price, Latency: c.Latency, InputPrice: c.InputPrice, OutputPrice: c.OutputPrice,
		ContextLength: c.ContextLength, IsCustom: c.IsCustom, Attributes: c.Attributes}
	if c.Shape() == ShapeName {
		w.Name = c.Name
	} else {
		w.Provider, w.Model = c.Provider, c.Model
	}
	return json.Marshal(w)
}

// JSONSchemaExtend makes the reflected schema require the candidates (llm_providers, or its
// alias models) and gives max_model_depth the spec's int32 format.
func (Request) JSONSchemaExtend(s *jsonschema.Schema) {
	s.AnyOf = []*jsonschema.Schema{{Required: []string{"llm_providers"}}, {Required: []string{"models"}}}
	if d, ok := s.Properties.Get("max_model_depth"); ok {
		d.Format = "int32"
	}
	s.Properties.Set("response_model", &jsonschema.Schema{Type: "object",
		Description: "structured-output model (Not Diamond's SDK); accepted and not used for ranking"})
}

// JSONSchema describes the three accepted shapes for invopop/jsonschema.
func (Candidate) JSONSchema() *jsonschema.Schema {
	num := func(desc string) *jsonschema.Schema { return &jsonschema.Schema{Type: "number", Description: desc} }
	common := func(s *jsonschema.Schema) *jsonschema.Schema {
		s.Properties.Set("price", num("price of the candidate (same unit for all candidates)"))
		s.Properties.Set("latency", num("latency of the candidate (same unit for all candidates)"))
		s.Properties.Set("input_price", num("USD per 1M input tokens (Not Diamond); with output_price the price when price is absent"))
		s.Properties.Set("output_price", num("USD per 1M output tokens (Not Diamond)"))
		s.Properties.Set("context_length", &jsonschema.Schema{Type: "integer", Minimum: json.Number("1"),
			Description: "context window in tokens; a conversation estimated larger (its messages and tool definitions) skips the candidate"})
		s.Properties.Set("is_custom", &jsonschema.Schema{Type: "boolean",
			Description: "the caller's own model: ranked by its attributes or the unknown prior and never matched by name"})
		s.Properties.Set("attributes", &jsonschema.Schema{Type: "object",
			Description: "free-form attributes; read: quality, quality_code, quality_math, supports_tools"})
		s.AdditionalProperties = jsonschema.FalseSchema
		return s
	}
	byName := &jsonschema.Schema{Type: "object", Properties: jsonschema.NewProperties(), Required: []string{"name"}}
	byName.Properties.Set("name", &jsonschema.Schema{Type: "string", MinLength: ptr(uint64(1)), Description: "name of the LLM, e.g. openai/gpt-4o"})
	byPM := &jsonschema.Schema{Type: "object", Properties: jsonschema.NewProperties(), Required: []string{"provider", "model"}}
	byPM.Properties.Set("provider", &jsonschema.Schema{Type: "string", MinLength: ptr(uint64(1))})
	byPM.Properties.Set("model", &jsonschema.Schema{Type: "string", MinLength: ptr(uint64(1))})
	return &jsonschema.Schema{
		Description: "LLM provider entry: {name}, {provider, model} or a \"provider/model\" string",
		OneOf: []*jsonschema.Schema{common(byName), common(byPM),
			{Type: "string", Pattern: "^[^/]+/.+$"}},
	}
}

func ptr[T any](v T) *T { return &v }

// normalise fills Provider/Model/Name consistently and checks the candidate's own rules.
func (c *Candidate) normalise(field string) error {
	c.shape = c.Shape() // fix the inferred shape before Provider/Model are filled in
	c.Name = strings.TrimSpace(c.Name)
	c.Provider = strings.TrimSpace(c.Provider)
	c.Model = strings.TrimSpace(c.Model)
	switch {
	case c.Name == "" && c.Provider == "" && c.Model == "":
		if c.shape == ShapeString {
			return invalid(field, "must be a non-empty \"provider/model\" string")
		}
		return invalid(field, "needs name, or provider and model")
	case c.Name == "" && c.Provider == "":
		return invalid(field+".provider", "is required with model")
	case c.Name == "" && c.Model == "":
		return invalid(field+".model", "is required with provider")
	case c.Name == "":
		c.Name = c.Provider + "/" + c.Model
	default:
		p, m, ok := strings.Cut(c.Name, "/")
		if c.shape == ShapeString && (!ok || p == "" || m == "") {
			return invalid(field, "must be a \"provider/model\" string (got %q)", c.Name)
		}
		// A bare name normalises to Provider "" and Model = Name; seeing that again (a
		// request validated twice) is not a disagreement.
		bare := c.Provider == "" && c.Model == c.Name
		if (c.Provider != "" || c.Model != "") && !bare {
			if !strings.EqualFold(c.Name, c.Provider+"/"+c.Model) {
				return invalid(field+".name", "%q disagrees with provider %q and model %q", c.Name, c.Provider, c.Model)
			}
		}
		if ok && p != "" && m != "" {
			c.Provider, c.Model = p, m
		} else {
			c.Provider, c.Model = "", c.Name
		}
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"price", c.Price}, {"latency", c.Latency}, {"input_price", c.InputPrice}, {"output_price", c.OutputPrice}} {
		if f.v != nil && (*f.v < 0 || math.IsNaN(*f.v) || math.IsInf(*f.v, 0)) {
			return invalid(field+"."+f.name, "must be a finite number >= 0")
		}
	}
	if c.ContextLength != nil && *c.ContextLength < 1 {
		return invalid(field+".context_length", "must be at least 1 token (got %d)", *c.ContextLength)
	}
	if c.Price == nil {
		switch {
		case c.InputPrice != nil && c.OutputPrice != nil:
			p := (*c.InputPrice + *c.OutputPrice) / 2
			c.Price = &p
		case c.InputPrice != nil:
			c.Price = c.InputPrice
		case c.OutputPrice != nil:
			c.Price = c.OutputPrice
		}
	}
	for _, k := range []string{"quality", "quality_code", "quality_math"} {
		if v, ok := c.Attributes[k]; ok {
			if _, err := qualityValue(v); err != nil {
				return invalid(field+".attributes."+k, "%v", err)
			}
		}
	}
	for _, k := range toolAttributeKeys {
		if v, ok := c.Attributes[k]; ok {
			if _, isBool := v.(bool); !isBool {
				return invalid(field+".attributes."+k, "must be a boolean")
			}
		}
	}
	return nil
}

// qualityValue reads a quality attribute: a number in [0,1], or in (1,100] read as percent.
func qualityValue(v any) (float64, error) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, fmt.Errorf("must be a number")
		}
	default:
		return 0, fmt.Errorf("must be a number (0-1, or 0-100 as percent)")
	}
	switch {
	case math.IsNaN(f) || f < 0 || f > 100:
		return 0, fmt.Errorf("must be between 0 and 1 (or 0 and 100 as percent)")
	case f > 1:
		return f / 100, nil
	}
	return f, nil
}
