package routing_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
)

func TestParseRequestShapes(t *testing.T) {
	cases := []struct {
		name   string
		body   string
		labels []string
		shapes []routing.Shape
	}{
		{"name shape", `{"messages":[{"role":"user","content":"hi"}],
			"llm_providers":[{"name":"openai/gpt-4o","price":5},{"name":"my-local-model"}]}`,
			[]string{"openai/gpt-4o", "my-local-model"}, []routing.Shape{routing.ShapeName, routing.ShapeName}},
		{"provider/model shape", `{"messages":[{"role":"user","content":"hi"}],
			"llm_providers":[{"provider":"openai","model":"gpt-4o"},{"provider":"anthropic","model":"claude-3-opus","latency":1.5}]}`,
			[]string{"openai/gpt-4o", "anthropic/claude-3-opus"}, []routing.Shape{routing.ShapeProviderModel, routing.ShapeProviderModel}},
		{"models alias with strings and objects", `{"messages":[{"role":"user","content":"hi"}],
			"models":["openai/gpt-4o",{"provider":"google","model":"gemini-1.5-pro"}]}`,
			[]string{"openai/gpt-4o", "google/gemini-1.5-pro"}, []routing.Shape{routing.ShapeString, routing.ShapeProviderModel}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := routing.ParseRequest([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			cands, _ := req.Candidates()
			if len(cands) != len(c.labels) {
				t.Fatalf("got %d candidates, want %d", len(cands), len(c.labels))
			}
			for i, cand := range cands {
				if cand.Label() != c.labels[i] || cand.Shape() != c.shapes[i] {
					t.Errorf("candidate %d: label %q shape %v, want %q %v", i, cand.Label(), cand.Shape(), c.labels[i], c.shapes[i])
				}
			}
		})
	}
}

func TestParseRequestNormalises(t *testing.T) {
	req, err := routing.ParseRequest([]byte(`{"messages":[{"role":"user","content":"hi"}],
		"llm_providers":[{"name":"openai/gpt-4o"},{"provider":"openrouter","model":"meta-llama/llama-3.1-8b-instruct"}],
		"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}},{"name":"search"}],
		"max_model_depth":2,"tradeoff":"cost","hash_content":true}`))
	if err != nil {
		t.Fatal(err)
	}
	c := req.LLMProviders
	if c[0].Provider != "openai" || c[0].Model != "gpt-4o" || c[0].Name != "openai/gpt-4o" {
		t.Errorf("name candidate not split: %+v", c[0])
	}
	if c[1].Name != "openrouter/meta-llama/llama-3.1-8b-instruct" || c[1].Model != "meta-llama/llama-3.1-8b-instruct" {
		t.Errorf("provider/model candidate: %+v", c[1])
	}
	if len(req.Tools) != 2 || req.Tools[0].Name != "get_weather" || req.Tools[1].Name != "search" {
		t.Errorf("tools: %+v", req.Tools)
	}
	if *req.MaxModelDepth != 2 || req.Tradeoff != "cost" || !req.HashContent {
		t.Errorf("scalars: %+v", req)
	}
}

func TestValidationErrors(t *testing.T) {
	msg := `"messages":[{"role":"user","content":"hi"}]`
	cand := `"llm_providers":[{"name":"openai/gpt-4o"}]`
	var tools []string
	for i := 0; i < 129; i++ {
		tools = append(tools, fmt.Sprintf(`{"name":"t%d"}`, i))
	}
	cases := []struct {
		name, body, field, contains string
	}{
		{"malformed json", `{"messages": [`, "body", "malformed"},
		{"not an object", `[1,2]`, "body", "object"},
		{"no messages", `{"messages":[],` + cand + `}`, "messages", "at least one"},
		{"messages missing", `{` + cand + `}`, "messages", "at least one"},
		{"empty role", `{"messages":[{"role":"","content":"hi"}],` + cand + `}`, "messages[0].role", "empty"},
		{"bad role", `{"messages":[{"role":"user","content":"a"},{"role":"tool","content":"hi"}],` + cand + `}`, "messages[1].role", "system, user, assistant"},
		{"empty content", `{"messages":[{"role":"user","content":"  "}],` + cand + `}`, "messages[0].content", "empty"},
		{"content not string", `{"messages":[{"role":"user","content":5}],` + cand + `}`, "messages[0].content", "string"},
		{"no candidates", `{` + msg + `,"llm_providers":[]}`, "llm_providers", "at least one"},
		{"candidates missing", `{` + msg + `}`, "llm_providers", "at least one"},
		{"both lists", `{` + msg + `,` + cand + `,"models":["openai/gpt-4o"]}`, "models", "not both"},
		{"empty candidate", `{` + msg + `,"llm_providers":[{}]}`, "llm_providers[0]", "name, or provider and model"},
		{"provider without model", `{` + msg + `,"llm_providers":[{"provider":"openai"}]}`, "llm_providers[0].model", "required"},
		{"string without slash", `{` + msg + `,"models":["gpt-4o"]}`, "models[0]", "provider/model"},
		{"candidate wrong type", `{` + msg + `,"llm_providers":[5]}`, "llm_providers[0]", "object"},
		{"candidate unknown field", `{` + msg + `,"llm_providers":[{"name":"a/b","colour":"red"}]}`, "llm_providers[0].colour", "unknown field"},
		{"price not number", `{` + msg + `,"llm_providers":[{"name":"a/b","price":"cheap"}]}`, "llm_providers[0].price", "number"},
		{"negative price", `{` + msg + `,"llm_providers":[{"name":"a/b","price":-1}]}`, "llm_providers[0].price", ">= 0"},
		{"bad quality", `{` + msg + `,"llm_providers":[{"name":"a/b","attributes":{"quality":"high"}}]}`, "llm_providers[0].attributes.quality", "number"},
		{"name disagrees", `{` + msg + `,"llm_providers":[{"name":"a/b","provider":"c","model":"d"}]}`, "llm_providers[0].name", "disagrees"},
		{"duplicate candidates", `{` + msg + `,"llm_providers":[{"name":"openai/gpt-4o"},{"provider":"openai","model":"gpt-4o"}]}`, "llm_providers[1]", "duplicate"},
		{"duplicate in models", `{` + msg + `,"models":["a/b","c/d","A/B"]}`, "models[2]", "duplicate"},
		{"too many tools", `{` + msg + `,` + cand + `,"tools":[` + strings.Join(tools, ",") + `]}`, "tools", "at most 128"},
		{"tool without name", `{` + msg + `,` + cand + `,"tools":[{"name":"a"},{"description":"x"}]}`, "tools[1].name", "required"},
		{"openai tool without name", `{` + msg + `,` + cand + `,"tools":[{"type":"function","function":{"description":"x"}}]}`, "tools[0].name", "required"},
		{"non-function tool", `{` + msg + `,` + cand + `,"tools":[{"type":"retrieval","name":"x"}]}`, "tools[0].type", "function"},
		{"message not object", `{"messages":["hi"],` + cand + `}`, "messages[0]", "object"},
		{"message unknown field", `{"messages":[{"role":"user","content":"hi","name":"bob"}],` + cand + `}`, "messages[0].name", "unknown field"},
		{"bad tradeoff", `{` + msg + `,` + cand + `,"tradeoff":"speed"}`, "tradeoff", "cost or latency"},
		{"max_model_depth zero", `{` + msg + `,` + cand + `,"max_model_depth":0}`, "max_model_depth", "at least 1"},
		{"max_model_depth negative", `{` + msg + `,` + cand + `,"max_model_depth":-3}`, "max_model_depth", "at least 1"},
		{"max_model_depth above int32", `{` + msg + `,` + cand + `,"max_model_depth":2147483648}`, "max_model_depth", "at most 2147483647"},
		{"max_model_depth not int", `{` + msg + `,` + cand + `,"max_model_depth":"two"}`, "max_model_depth", "integer"},
		{"hash_content not bool", `{` + msg + `,` + cand + `,"hash_content":"yes"}`, "hash_content", "boolean"},
		{"unknown top-level field", `{` + msg + `,` + cand + `,"temperature":1}`, "temperature", "unknown field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := routing.ParseRequest([]byte(c.body))
			if !errors.Is(err, routing.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			var ve *routing.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err %T is not a *ValidationError", err)
			}
			if ve.Field != c.field {
				t.Errorf("field = %q, want %q (message %q)", ve.Field, c.field, ve.Message)
			}
			if !strings.Contains(err.Error(), c.contains) || !strings.HasPrefix(err.Error(), c.field) {
				t.Errorf("message %q should start with %q and mention %q", err.Error(), c.field, c.contains)
			}
		})
	}
}

func TestValidateGoRequest(t *testing.T) {
	// Requests built in Go get the same checks and normalisation.
	req := &routing.Request{
		Messages:     []routing.Message{{Role: "user", Content: "hello"}},
		LLMProviders: []routing.Candidate{{Provider: "openai", Model: "gpt-4o"}, {Name: "local"}},
	}
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}
	if req.LLMProviders[0].Name != "openai/gpt-4o" || req.LLMProviders[0].Shape() != routing.ShapeProviderModel {
		t.Errorf("provider/model candidate: %+v", req.LLMProviders[0])
	}
	if req.LLMProviders[1].Label() != "local" || req.LLMProviders[1].Shape() != routing.ShapeName {
		t.Errorf("name candidate: %+v", req.LLMProviders[1])
	}
}

// TestBareNameSurvivesRevalidation: ParseRequest validates, and Select validates again; a
// candidate named without a provider ("my-local-llm") must pass both times.
func TestBareNameSurvivesRevalidation(t *testing.T) {
	req, err := routing.ParseRequest([]byte(`{"messages":[{"role":"user","content":"hi"}],
		"llm_providers":[{"provider":"openai","model":"gpt-4o"},{"name":"my-local-llm","price":0.1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := req.Validate(); err != nil {
		t.Fatalf("second validation: %v", err)
	}
}
