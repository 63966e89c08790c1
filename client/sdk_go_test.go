package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/responses"
	"github.com/openai/openai-go/shared"
)

// TestOfficialGoSDK drives the server with the official OpenAI Go SDK
// (github.com/openai/openai-go): a tool call on /v1/chat/completions, a function call on
// /v1/responses, and the SDK's *openai.Error for an unknown model (404, model_not_found), an
// invalid request (400, param temperature), a wrong key (401, invalid_api_key) and an
// unknown route (404, image generation).
func TestOfficialGoSDK(t *testing.T) {
	up := newToolUpstream(t)
	_, base := realServerURL(t, up.options(t))
	ctx := context.Background()
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(2))

	params := shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}
	chat, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "gpt-4o-mini", // OpenAI's bare name: the configured openai provider serves it
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
		Tools: []openai.ChatCompletionToolParam{{Function: shared.FunctionDefinitionParam{Name: "get_weather",
			Description: openai.String("Current weather of a city"), Parameters: params}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ch := chat.Choices[0]; ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 ||
		ch.Message.ToolCalls[0].Function.Name != "get_weather" || ch.Message.ToolCalls[0].Function.Arguments != `{"city": "Paris"}` {
		t.Fatalf("chat answer %+v", ch)
	}

	resp, err := c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "openai/gpt-4o-mini",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris?")},
		Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "get_weather", Parameters: params, Strict: openai.Bool(false)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Output) != 1 || resp.Output[0].Type != "function_call" || resp.Output[0].CallID != "call_1" || resp.Output[0].Arguments != `{"city": "Paris"}` {
		t.Fatalf("responses output %+v", resp.Output)
	}

	var apiErr *openai.Error
	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "no-such-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Param != "model" || apiErr.Code != "model_not_found" {
		t.Errorf("unknown model: %v", err)
	}
	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "openai/gpt-4o-mini", Temperature: openai.Float(5),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "temperature" || apiErr.Type != "invalid_request_error" {
		t.Errorf("invalid request: %v", err)
	}
	bad := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("wrong"), option.WithMaxRetries(2))
	_, err = bad.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "openai/gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Code != "invalid_api_key" {
		t.Errorf("wrong key: %v", err)
	}
	// Vector stores are a route the server does not have (moderations, then image
	// generation, were this check's route until the server served them).
	_, err = c.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("docs")})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "unknown_url" {
		t.Errorf("unknown route: %v", err)
	}
}

// TestOfficialGoSDKImages: images the official Go SDK sends — image_url parts on
// /v1/chat/completions, input_image parts on /v1/responses — reach an OpenAI upstream as
// image_url parts, in order with the text; an image in a malformed data URL is a 400
// naming the part.
func TestOfficialGoSDKImages(t *testing.T) {
	up := newToolUpstream(t)
	_, base := realServerURL(t, up.options(t))
	ctx := context.Background()
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	const dataURL = "data:image/png;base64,iVBORw0KGgo="
	want := `[{"text":"Which is larger?","type":"text"},{"image_url":{"detail":"low","url":"https://example.com/a.png"},"type":"image_url"},` +
		`{"image_url":{"url":"` + dataURL + `"},"type":"image_url"}]`
	sentParts := func() string {
		msgs := up.last()["messages"].([]any)
		b, _ := json.Marshal(msgs[len(msgs)-1].(map[string]any)["content"])
		return string(b)
	}

	_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "openai/gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.TextContentPart("Which is larger?"),
			openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "https://example.com/a.png", Detail: "low"}),
			openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL}),
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := sentParts(); got != want {
		t.Errorf("chat: upstream got content\n%s\nwant\n%s", got, want)
	}

	_, err = c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "openai/gpt-4o-mini",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{{OfMessage: &responses.EasyInputMessageParam{
			Role: responses.EasyInputMessageRoleUser,
			Content: responses.EasyInputMessageContentUnionParam{OfInputItemContentList: responses.ResponseInputMessageContentListParam{
				{OfInputText: &responses.ResponseInputTextParam{Text: "Which is larger?"}},
				{OfInputImage: &responses.ResponseInputImageParam{ImageURL: openai.String("https://example.com/a.png"), Detail: responses.ResponseInputImageDetailLow}},
				{OfInputImage: &responses.ResponseInputImageParam{ImageURL: openai.String(dataURL), Detail: responses.ResponseInputImageDetailAuto}},
			}},
		}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, w := sentParts(), strings.Replace(want, `{"url":"`+dataURL+`"}`, `{"detail":"auto","url":"`+dataURL+`"}`, 1); got != w {
		t.Errorf("responses: upstream got content\n%s\nwant\n%s", got, w)
	}

	var apiErr *openai.Error
	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "openai/gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.TextContentPart("What is it?"),
			openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64,not base64"}),
		})}})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "messages[0].content[1].image_url.url" || !strings.Contains(apiErr.Message, "not base64") {
		t.Errorf("malformed data URL: %v", err)
	}
}

// TestOfficialGoSDKFiles: PDFs the official Go SDK sends — file parts on
// /v1/chat/completions, input_file parts on /v1/responses — reach an OpenAI upstream as
// file parts with file_data and filename.
func TestOfficialGoSDKFiles(t *testing.T) {
	up := newToolUpstream(t)
	_, base := realServerURL(t, up.options(t))
	ctx := context.Background()
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	const pdf = "data:application/pdf;base64,JVBERi0xLjQK"
	want := `[{"text":"Summarise","type":"text"},{"file":{"file_data":"` + pdf + `","filename":"q3.pdf"},"type":"file"}]`
	sent := func() string {
		msgs := up.last()["messages"].([]any)
		b, _ := json.Marshal(msgs[len(msgs)-1].(map[string]any)["content"])
		return string(b)
	}
	_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "openai/gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.TextContentPart("Summarise"),
			openai.FileContentPart(openai.ChatCompletionContentPartFileFileParam{FileData: openai.String(pdf), Filename: openai.String("q3.pdf")}),
		})}})
	if err != nil {
		t.Fatal(err)
	}
	if got := sent(); got != want {
		t.Errorf("chat: upstream got\n%s\nwant\n%s", got, want)
	}
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "openai/gpt-4o-mini",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{{OfMessage: &responses.EasyInputMessageParam{
			Role: responses.EasyInputMessageRoleUser,
			Content: responses.EasyInputMessageContentUnionParam{OfInputItemContentList: responses.ResponseInputMessageContentListParam{
				{OfInputText: &responses.ResponseInputTextParam{Text: "Summarise"}},
				{OfInputFile: &responses.ResponseInputFileParam{FileData: openai.String(pdf), Filename: openai.String("q3.pdf")}},
			}},
		}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := sent(); got != want {
		t.Errorf("responses: upstream got\n%s\nwant\n%s", got, want)
	}
}

// TestOfficialGoSDKAtTheRoot: the official Go SDK given the server's root as its base URL,
// as LiteLLM's documentation gives it the proxy's, reaches the /v1 routes (chat, models).
func TestOfficialGoSDKAtTheRoot(t *testing.T) {
	up := newToolUpstream(t)
	_, base := realServerURL(t, up.options(t))
	ctx := context.Background()
	c := openai.NewClient(option.WithBaseURL(base+"/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	chat, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "openai/gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(chat.Choices) != 1 || chat.Model == "" {
		t.Fatalf("chat answer %+v", chat)
	}
	if _, err := c.Models.Get(ctx, "openai/gpt-4o-mini"); err != nil {
		t.Fatal(err)
	}
}
