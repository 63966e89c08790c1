package completions

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/switchyard-ai/switchyard/providers"
)

// validName reports whether s follows OpenAI's rule for function and schema names:
// 1 to 64 letters, digits, '_' or '-'.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validateTools checks the tool-calling and structured-output parts of req: function
// names, parameter and output schemas (compiled as JSON Schemas), tool_choice against the
// declared tools, and every tool call and tool result in the messages. Field names are
// those of the OpenAI chat-completions request.
func validateTools(req *Request, known *schemaSet) error {
	names := make(map[string]bool, len(req.Tools))
	for i, t := range req.Tools {
		if !validName(t.Name) {
			return invalid(fmt.Sprintf("tools[%d].function.name", i), "must be 1 to 64 letters, digits, '_' or '-', got %q", t.Name)
		}
		if names[t.Name] {
			return invalid(fmt.Sprintf("tools[%d].function.name", i), "%q is declared twice", t.Name)
		}
		names[t.Name] = true
		if t.Parameters != nil {
			if err := known.check(t.Parameters, true); err != nil {
				return invalid(fmt.Sprintf("tools[%d].function.parameters", i), "%v", err)
			}
		}
	}
	if err := applyToolAllowList(req, names); err != nil {
		return err
	}
	if c := req.ToolChoice; c != nil {
		switch c.Mode {
		case providers.ToolChoiceRequired:
			if len(req.Tools) == 0 {
				return invalid("tool_choice", `"required" needs tools`)
			}
		case providers.ToolChoiceFunction:
			if !names[c.Name] {
				declared := "tools"
				if req.legacyFunctions {
					declared = "functions" // function_call.name, as the caller gave it
				}
				return invalid("tool_choice.function.name", "%q is not one of the %s", c.Name, declared)
			}
		case providers.ToolChoiceAuto, providers.ToolChoiceNone:
		default:
			return invalid("tool_choice", "unknown mode %q", c.Mode)
		}
	}
	if f := req.ResponseFormat; f != nil {
		switch f.Type {
		case providers.ResponseText, providers.ResponseJSONObject:
		case providers.ResponseJSONSchema:
			if !validName(f.Name) {
				return invalid("response_format.json_schema.name", "must be 1 to 64 letters, digits, '_' or '-', got %q", f.Name)
			}
			if f.Schema != nil {
				if err := known.check(f.Schema, false); err != nil {
					return invalid("response_format.json_schema.schema", "%v", err)
				}
			}
		default:
			return invalid("response_format.type", "unknown type %q", f.Type)
		}
	}
	calls := map[string]bool{}
	for i, m := range req.Messages {
		for j, c := range m.ToolCalls {
			field := fmt.Sprintf("messages[%d].tool_calls[%d]", i, j)
			if m.Role != "assistant" {
				return invalid(fmt.Sprintf("messages[%d].tool_calls", i), "only assistant messages have tool calls")
			}
			if c.ID == "" {
				return invalid(field+".id", "is required")
			}
			if c.Name == "" {
				return invalid(field+".function.name", "is required")
			}
			calls[c.ID] = true
		}
		if m.Role == "tool" {
			if m.ToolCallID == "" {
				return invalid(fmt.Sprintf("messages[%d].tool_call_id", i), "is required in a tool message")
			}
			if !calls[m.ToolCallID] {
				return invalid(fmt.Sprintf("messages[%d].tool_call_id", i), "%q answers no tool call of an earlier assistant message", m.ToolCallID)
			}
		}
	}
	return nil
}

// errNotObject is the cause of a schema that is not a JSON object.
var errNotObject = errors.New("must be a JSON Schema object")

// check compiles raw as a JSON Schema (draft 2020-12 unless it names another
// draft with $schema) with santhosh-tekuri/jsonschema, which checks it against its
// metaschema. References outside the document are refused: nothing is fetched or read.
// A function's parameters must describe an object.
func (s *schemaSet) check(raw json.RawMessage, parameters bool) error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return errNotObject
	}
	key := sha256.Sum256(append(t[:len(t):len(t)], boolByte(parameters)))
	if s.has(key) {
		return nil
	}
	if err := compileSchema(t, parameters); err != nil {
		return err
	}
	s.add(key)
	return nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// schemaSet remembers schemas that compiled, by digest: agents send the same tools with
// every request, and compiling a schema costs far more than hashing it.
type schemaSet struct {
	mu   sync.Mutex
	seen map[[32]byte]struct{}
}

// maxKnownSchemas bounds the set; when full it starts over.
const maxKnownSchemas = 4096

func (s *schemaSet) has(k [32]byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.seen[k]
	return ok
}

func (s *schemaSet) add(k [32]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil || len(s.seen) >= maxKnownSchemas {
		s.seen = make(map[[32]byte]struct{})
	}
	s.seen[k] = struct{}{}
}

// compileSchema compiles t (see check).
func compileSchema(t []byte, parameters bool) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(t))
	if err != nil {
		return fmt.Errorf("%w: %v", errNotJSON, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{}) // no file or network references
	const loc = "urn:switchyard:schema"
	if err := c.AddResource(loc, doc); err != nil {
		return fmt.Errorf("not a valid JSON Schema: %v", err)
	}
	if _, err := c.Compile(loc); err != nil {
		return fmt.Errorf("not a valid JSON Schema: %s", schemaErrorText(err))
	}
	if parameters {
		if ty, ok := doc.(map[string]any)["type"]; ok && ty != "object" {
			return fmt.Errorf(`must describe an object ("type": "object"), got type %v`, ty)
		}
	}
	return nil
}

// schemaErrorText is the compiler's complaint on one line, without the internal location.
func schemaErrorText(err error) string {
	s := strings.ReplaceAll(err.Error(), "urn:switchyard:schema", "schema")
	return strings.Join(strings.Fields(s), " ")
}

// checkProviders asks each model's adapter whether it can map the request's tools, stop sequences,
// response format, log probabilities, images and files (see providers.RequestChecker). A model that cannot is
// marked unfit — skipped when its turn comes, recorded in the attempts — while another can
// (a model group's member, a fallback); when none can, the first objection is the answer:
// a validation error naming the field, before any upstream call.
func checkProviders(req *Request, targets ...[]target) error {
	// The turns' images and files, and the encrypted reasoning that takes an OpenAI model to
	// its Responses API, for adapters that check them.
	var media []providers.Message
	for i := range req.Messages {
		m := &req.Messages[i]
		parts := m.parts()
		encrypted := m.Role == "assistant" && slices.ContainsFunc(m.Reasoning, func(b providers.ReasoningBlock) bool { return b.Encrypted != "" })
		if parts != nil || encrypted || m.AudioID != "" {
			if media == nil {
				media = make([]providers.Message, len(req.Messages))
			}
			media[i] = providers.Message{Role: m.Role, Parts: parts, AudioID: m.AudioID}
			if encrypted {
				media[i].Reasoning = m.Reasoning
			}
		}
	}
	if len(req.Tools) == 0 && req.ResponseFormat == nil && req.ToolChoice == nil && media == nil && len(req.Stop) == 0 && !req.codeExecution && !req.urlContext && !req.Logprobs && req.audio == nil {
		return nil
	}
	preq := &providers.Request{Tools: req.Tools, ToolChoice: req.ToolChoice, ParallelToolCalls: req.ParallelToolCalls,
		ResponseFormat: req.ResponseFormat, Search: req.Search, Messages: media, Stop: req.Stop, Thinking: req.Thinking,
		CodeExecution: req.codeExecution, URLContext: req.urlContext, Logprobs: req.Logprobs, TopLogprobs: req.TopLogprobs,
		Modalities: req.modalities, Audio: req.audio}
	var refusal error
	fit := 0
	for _, ts := range targets {
		for i := range ts {
			preq.Model = ts[i].model
			err := checkTarget(ts[i], preq)
			if err == nil {
				fit++
				continue
			}
			if refusal == nil {
				refusal = err
			}
			ts[i].unfit = err.(*ValidationError).Message
		}
	}
	if fit == 0 {
		return refusal
	}
	return nil
}

// checkTarget is t's adapter's objection to preq as a validation error, or nil.
func checkTarget(t target, preq *providers.Request) error {
	err := providers.Check(t.p, t.model, preq)
	var ue *providers.UnsupportedError
	if errors.As(err, &ue) {
		return invalid(ue.Field, "model %s cannot take it: %s", t.name, ue.Reason)
	}
	if err != nil {
		return invalid("model", "model %s cannot take this request: %v", t.name, err)
	}
	return nil
}
