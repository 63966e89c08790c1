package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/responses"
	"github.com/openai/openai-go/shared"
)

// TestOfficialGoSDKStoredResponses: an agent's tool loop through the official Go SDK by
// previous_response_id alone — the second request sends only the tool's output — reaches
// the model with the whole conversation; the SDK reads the answer back, pages its input
// items, deletes it, and gets its *openai.Error for a deleted answer and for one it may not
// continue.
func TestOfficialGoSDKStoredResponses(t *testing.T) {
	up := newToolUpstream(t)
	_, base := realServerURL(t, up.options(t))
	ctx := context.Background()
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	params := shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}
	tools := []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "get_weather", Parameters: params, Strict: openai.Bool(false)}}}

	first, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "openai/gpt-4o-mini", Tools: tools,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris?")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Output) != 1 || first.Output[0].Type != "function_call" {
		t.Fatalf("first answer: %+v", first.Output)
	}
	second, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "openai/gpt-4o-mini", Tools: tools,
		PreviousResponseID: openai.String(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfFunctionCallOutput(first.Output[0].CallID, "18°C")}}})
	if err != nil {
		t.Fatal(err)
	}
	if second.OutputText() != "It is 18°C in Paris." || second.PreviousResponseID != first.ID {
		t.Fatalf("second answer %q previous %q", second.OutputText(), second.PreviousResponseID)
	}
	if msgs := up.last()["messages"].([]any); len(msgs) != 3 {
		t.Fatalf("the upstream got %d messages, want the question, the call and its result: %v", len(msgs), msgs)
	}

	got, err := c.Responses.Get(ctx, second.ID, responses.ResponseGetParams{})
	if err != nil || got.OutputText() != "It is 18°C in Paris." {
		t.Fatalf("Get: %v %+v", err, got)
	}
	var types []string
	iter := c.Responses.InputItems.ListAutoPaging(ctx, second.ID, responses.InputItemListParams{Limit: openai.Int(1), Order: responses.InputItemListParamsOrderAsc})
	for iter.Next() {
		types = append(types, iter.Current().Type)
	}
	if err := iter.Err(); err != nil || len(types) != 3 || types[0] != "message" || types[1] != "function_call" || types[2] != "function_call_output" {
		t.Fatalf("input items %v %v", types, err)
	}

	if err := c.Responses.Delete(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	var apiErr *openai.Error
	if _, err := c.Responses.Get(ctx, first.ID, responses.ResponseGetParams{}); !errors.As(err, &apiErr) || apiErr.StatusCode != 404 {
		t.Errorf("Get of a deleted answer: %v", err)
	}
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "openai/gpt-4o-mini", PreviousResponseID: openai.String(second.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("And tomorrow?")}})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "previous_response_not_found" || apiErr.Param != "previous_response_id" {
		t.Errorf("continuing past a deleted answer: %v", err)
	}
}
