package providers_test

// Review 14b: the Bedrock adapter's wire shape against the official client
// (aws-sdk-go-v2/service/bedrockruntime) pointed at a test server.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go/auth/bearer"
	"github.com/switchyard-ai/switchyard/providers"
)

// r14Time is the signing time of both clients.
var r14Time = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// fixedTimeSigner is the SDK's own SigV4 signer at a fixed time; it records the signer
// options the SDK's middleware asks for.
type fixedTimeSigner struct {
	mu   sync.Mutex
	opts v4.SignerOptions
}

func (s *fixedTimeSigner) SignHTTP(ctx context.Context, c aws.Credentials, r *http.Request, payloadHash, service, region string, _ time.Time, optFns ...func(*v4.SignerOptions)) error {
	s.mu.Lock()
	for _, f := range optFns {
		f(&s.opts)
	}
	s.mu.Unlock()
	return v4.NewSigner().SignHTTP(ctx, c, r, payloadHash, service, region, r14Time, optFns...)
}

// r14Server records every request and answers with body (or with answer, when set).
type r14Server struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []captured
	answer func(w http.ResponseWriter, r *http.Request)
}

func newR14Server(t *testing.T, status int, contentType, body string) *r14Server {
	return newR14ServerTLS(t, false, status, contentType, body)
}

func newR14ServerTLS(t *testing.T, tls bool, status int, contentType, body string) *r14Server {
	s := &r14Server{}
	start := httptest.NewServer
	if tls {
		start = httptest.NewTLSServer
	}
	s.Server = start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, captured{method: r.Method, path: r.URL.RequestURI(), host: r.Host, header: r.Header.Clone(), body: b})
		s.mu.Unlock()
		if s.answer != nil {
			s.answer(w, r)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *r14Server) last(t *testing.T) captured {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		t.Fatal("no request reached the server")
	}
	return s.reqs[len(s.reqs)-1]
}

const (
	r14AKID   = "AKIDEXAMPLE"
	r14Secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	r14Token  = "IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN+/="
)

// sdkClient is the official client at srv with static SigV4 credentials (and a session
// token) in us-east-1, signing at r14Time, without retries.
func sdkClient(srv string, signer *fixedTimeSigner) *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: r14AKID, SecretAccessKey: r14Secret, SessionToken: r14Token}, nil
		}),
		HTTPSignerV4:     signer,
		RetryMaxAttempts: 1,
	})
}

// ourBedrock is the adapter at srv with the same credentials, region and clock.
func ourBedrock(srv string) *providers.Bedrock {
	return providers.NewBedrock(providers.Config{BaseURL: srv, AWS: providers.AWSConfig{Region: "us-east-1",
		AccessKeyID: r14AKID, SecretAccessKey: r14Secret, SessionToken: r14Token, Now: func() time.Time { return r14Time }}})
}

var r14Cfg = providers.AWSConfig{Region: "us-east-1", AccessKeyID: r14AKID, SecretAccessKey: r14Secret, SessionToken: r14Token,
	Now: func() time.Time { return r14Time }}

// r14IDs are model ids whose path escaping matters: ':' in ids and profiles, ':' and '/'
// in ARNs.
var r14IDs = []string{
	"anthropic.claude-3-5-sonnet-20240620-v1:0",
	"us.anthropic.claude-sonnet-4-20250514-v1:0",
	"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-20250514-v1:0",
	"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/mi1dadi0g15f",
	"arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-pro-v1:0",
}

// TestReview14bPathAndSignatureMatchTheSDK: for each id, the adapter calls the path the
// SDK calls (Converse and ConverseStream), both signatures verify under the same
// canonical-URI rule (the escaped path encoded once more), and the SDK's signer options
// do not disable path escaping.
func TestReview14bPathAndSignatureMatchTheSDK(t *testing.T) {
	srv := newR14Server(t, 200, "application/json", converseHello)
	signer := &fixedTimeSigner{}
	client := sdkClient(srv.URL, signer)
	ours := ourBedrock(srv.URL)
	for _, id := range r14IDs {
		msgs := []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hello"}}}}
		if _, err := client.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String(id), Messages: msgs}); err != nil {
			t.Fatalf("SDK Converse %s: %v", id, err)
		}
		sdk := srv.last(t)
		if _, err := ours.Complete(context.Background(), hello(id)); err != nil {
			t.Fatalf("adapter %s: %v", id, err)
		}
		our := srv.last(t)
		if sdk.path != our.path {
			t.Errorf("%s: adapter path %q, SDK path %q", id, our.path, sdk.path)
		}
		t.Logf("%s: SDK path %s", id, sdk.path)
		for who, c := range map[string]captured{"SDK": sdk, "adapter": our} {
			for _, p := range sigV4Problems(c, r14Cfg, "us-east-1") {
				t.Errorf("%s %s: %s", who, id, p)
			}
		}
		if sdk.header.Get("Content-Type") != our.header.Get("Content-Type") {
			t.Errorf("%s: Content-Type %q, SDK %q", id, our.header.Get("Content-Type"), sdk.header.Get("Content-Type"))
		}
	}
	if signer.opts.DisableURIPathEscaping {
		t.Error("the SDK disables URI path escaping for Bedrock: the adapter double-encodes")
	}
	// The stream operation's path.
	srv.answer = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		io.WriteString(w, bedrockPartialStream()+bedrockStreamEnd())
	}
	id := r14IDs[2]
	out, err := client.ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{ModelId: aws.String(id),
		Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hello"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	for range out.GetStream().Events() {
	}
	out.GetStream().Close()
	sdk := srv.last(t)
	s, err := ours.Stream(context.Background(), hello(id))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := s.Recv(); err != nil {
			break
		}
	}
	s.Close()
	our := srv.last(t)
	if sdk.path != our.path {
		t.Errorf("stream: adapter path %q, SDK path %q", our.path, sdk.path)
	}
	for _, p := range sigV4Problems(our, r14Cfg, "us-east-1") {
		t.Errorf("stream adapter: %s", p)
	}
	t.Logf("SDK stream headers: %v", sdk.header)
	t.Logf("adapter stream headers: %v", our.header)
}

// TestReview14bBearerLikeTheSDK: with a Bedrock API key both clients send "Authorization:
// Bearer <key>" and neither signs (no X-Amz-Date, no X-Amz-Security-Token, no
// X-Amz-Content-Sha256), even with SigV4 credentials configured too.
func TestReview14bBearerLikeTheSDK(t *testing.T) {
	srv := newR14ServerTLS(t, true, 200, "application/json", converseHello)
	const key = "ABSKQmVkcm9ja0FQSUtleS1leGFtcGxl"
	client := bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), RetryMaxAttempts: 1, HTTPClient: srv.Client(),
		BearerAuthTokenProvider: bearer.TokenProviderFunc(func(context.Context) (bearer.Token, error) { return bearer.Token{Value: key}, nil }),
		AuthSchemePreference:    []string{"httpBearerAuth"}})
	if _, err := client.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String(r14IDs[0]),
		Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hello"}}}}}); err != nil {
		t.Fatal(err)
	}
	sdk := srv.last(t)
	p := providers.NewBedrock(providers.Config{BaseURL: srv.URL, APIKey: key, AWS: r14Cfg, HTTPClient: srv.Client()})
	if _, err := p.Complete(context.Background(), hello(r14IDs[0])); err != nil {
		t.Fatal(err)
	}
	our := srv.last(t)
	if sdk.header.Get("Authorization") != "Bearer "+key || our.header.Get("Authorization") != sdk.header.Get("Authorization") {
		t.Errorf("Authorization: adapter %q, SDK %q", our.header.Get("Authorization"), sdk.header.Get("Authorization"))
	}
	for _, h := range []string{"X-Amz-Date", "X-Amz-Security-Token", "X-Amz-Content-Sha256"} {
		if our.header.Get(h) != "" {
			t.Errorf("adapter's bearer request has %s", h)
		}
	}
	if our.path != sdk.path {
		t.Errorf("path %q, SDK %q", our.path, sdk.path)
	}
}

// converseBody is what the adapter sends for req (captured from a Complete call).
func converseBody(t *testing.T, req *providers.Request) map[string]any {
	t.Helper()
	srv := newR14Server(t, 200, "application/json", converseHello)
	if _, err := ourBedrock(srv.URL).Complete(context.Background(), req); err != nil {
		t.Fatalf("adapter: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(srv.last(t).body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// sdkBody is what the SDK sends for in.
func sdkBody(t *testing.T, in *bedrockruntime.ConverseInput) map[string]any {
	t.Helper()
	srv := newR14Server(t, 200, "application/json", converseHello)
	if _, err := sdkClient(srv.URL, &fixedTimeSigner{}).Converse(context.Background(), in); err != nil {
		t.Fatalf("SDK: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(srv.last(t).body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const r14PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
const r14PDF = "JVBERi0xLjQKJcfsj6IK"

func b64(t *testing.T, s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReview14bBodyMatchesTheSDK: a request with a system prompt, text, an image, a PDF,
// tool calls and their results, tools with a forced function, sampling settings, stop
// sequences, cache points and Claude's thinking serializes to the body the SDK sends for
// the same ConverseInput: the same field names and shapes, member for member.
func TestReview14bBodyMatchesTheSDK(t *testing.T) {
	id := "us.anthropic.claude-3-5-sonnet-20240620-v1:0"
	temp, topP := 0.5, 0.9
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)
	req := &providers.Request{Model: id, MaxTokens: 300, Temperature: &temp, TopP: &topP, Stop: []string{"END"}, PromptCache: true,
		Tools:      []providers.Tool{{Name: "get_weather", Description: "Weather", Parameters: schema}},
		ToolChoice: &providers.ToolChoice{Mode: providers.ToolChoiceFunction, Name: "get_weather"},
		Messages: []providers.Message{
			{Role: "system", Content: "Be brief."},
			{Role: "user", Content: "Look", Parts: []providers.Part{{Text: "Look"}, {Image: &providers.Image{URL: "data:image/png;base64," + r14PNG}},
				{File: &providers.File{URL: "data:application/pdf;base64," + r14PDF, Filename: "report.pdf"}}}},
			{Role: "assistant", Content: "Checking.", ToolCalls: []providers.ToolCall{{ID: "tooluse_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
			{Role: "tool", ToolCallID: "tooluse_1", Content: "sunny"},
			{Role: "user", Content: "Thanks"},
		}}
	ours := converseBody(t, req)

	in := &bedrockruntime.ConverseInput{
		ModelId: aws.String(id),
		System:  []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "Be brief."}, &types.SystemContentBlockMemberCachePoint{Value: types.CachePointBlock{Type: types.CachePointTypeDefault}}},
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(300), Temperature: aws.Float32(0.5), TopP: aws.Float32(0.9),
			StopSequences: []string{"END"}},
		Messages: []types.Message{
			{Role: types.ConversationRoleUser, Content: []types.ContentBlock{
				&types.ContentBlockMemberText{Value: "Look"},
				&types.ContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormatPng, Source: &types.ImageSourceMemberBytes{Value: b64(t, r14PNG)}}},
				&types.ContentBlockMemberDocument{Value: types.DocumentBlock{Format: types.DocumentFormatPdf, Name: aws.String("report"), Source: &types.DocumentSourceMemberBytes{Value: b64(t, r14PDF)}}},
			}},
			{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{
				&types.ContentBlockMemberText{Value: "Checking."},
				&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("tooluse_1"), Name: aws.String("get_weather"), Input: document.NewLazyDocument(map[string]any{"city": "Paris"})}},
			}},
			{Role: types.ConversationRoleUser, Content: []types.ContentBlock{
				&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: aws.String("tooluse_1"), Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "sunny"}}}},
				&types.ContentBlockMemberText{Value: "Thanks"},
				&types.ContentBlockMemberCachePoint{Value: types.CachePointBlock{Type: types.CachePointTypeDefault}},
			}},
		},
		ToolConfig: &types.ToolConfiguration{
			Tools: []types.Tool{
				&types.ToolMemberToolSpec{Value: types.ToolSpecification{Name: aws.String("get_weather"), Description: aws.String("Weather"),
					InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(map[string]any{"type": "object",
						"properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}})}}},
				&types.ToolMemberCachePoint{Value: types.CachePointBlock{Type: types.CachePointTypeDefault}},
			},
			ToolChoice: &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String("get_weather")}},
		},
	}
	sdk := sdkBody(t, in)
	if g, w := canonicalValue(ours), canonicalValue(sdk); g != w {
		t.Errorf("body differs from the SDK's:\n ours %s\n  sdk %s", g, w)
	}
}

// TestReview14bThinkingBodyMatchesTheSDK: Claude's thinking with a signed reasoning block
// of the history, as the SDK sends it (reasoningContent.reasoningText{text, signature};
// redactedContent as base64), with additionalModelRequestFields.
func TestReview14bThinkingBodyMatchesTheSDK(t *testing.T) {
	id := "us.anthropic.claude-sonnet-4-20250514-v1:0"
	req := &providers.Request{Model: id, MaxTokens: 4000, Thinking: &providers.Thinking{BudgetTokens: 2000},
		Tools: []providers.Tool{{Name: "now"}},
		Messages: []providers.Message{
			{Role: "user", Content: "time?"},
			{Role: "assistant", Reasoning: []providers.ReasoningBlock{{Text: "I should call now.", Signature: "c2lnbmF0dXJl"}, {Redacted: "cmVkYWN0ZWQ="}},
				ToolCalls: []providers.ToolCall{{ID: "tooluse_1", Name: "now", Arguments: "{}"}}},
			{Role: "tool", ToolCallID: "tooluse_1", Content: "noon"},
		}}
	ours := converseBody(t, req)
	in := &bedrockruntime.ConverseInput{
		ModelId:                      aws.String(id),
		InferenceConfig:              &types.InferenceConfiguration{MaxTokens: aws.Int32(4000)},
		AdditionalModelRequestFields: document.NewLazyDocument(map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 2000}}),
		Messages: []types.Message{
			{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "time?"}}},
			{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{
				&types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{Value: types.ReasoningTextBlock{Text: aws.String("I should call now."), Signature: aws.String("c2lnbmF0dXJl")}}},
				&types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberRedactedContent{Value: b64(t, "cmVkYWN0ZWQ=")}},
				&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("tooluse_1"), Name: aws.String("now"), Input: document.NewLazyDocument(map[string]any{})}},
			}},
			{Role: types.ConversationRoleUser, Content: []types.ContentBlock{
				&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: aws.String("tooluse_1"), Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "noon"}}}},
			}},
		},
		ToolConfig: &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{Name: aws.String("now"),
			InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(map[string]any{"type": "object"})}}}}},
	}
	sdk := sdkBody(t, in)
	if g, w := canonicalValue(ours), canonicalValue(sdk); g != w {
		t.Errorf("body differs from the SDK's:\n ours %s\n  sdk %s", g, w)
	}
}

// TestReview14bRequestBlocksThroughTheSDKDeserializer: every content block of the
// adapter's request messages, served back as a Converse answer's message, is read by the
// SDK's own deserializer as the member it is meant to be (no unknown union members, the
// fields filled).
func TestReview14bRequestBlocksThroughTheSDKDeserializer(t *testing.T) {
	req := &providers.Request{Model: "us.anthropic.claude-sonnet-4-20250514-v1:0", MaxTokens: 4000, PromptCache: true,
		Thinking: &providers.Thinking{BudgetTokens: 2000}, Tools: []providers.Tool{{Name: "now"}},
		Messages: []providers.Message{
			{Role: "user", Content: "x", Parts: []providers.Part{{Text: "look"}, {Image: &providers.Image{URL: "data:image/png;base64," + r14PNG}},
				{File: &providers.File{URL: "data:application/pdf;base64," + r14PDF, Filename: "a.pdf"}}}},
			{Role: "assistant", Reasoning: []providers.ReasoningBlock{{Text: "think", Signature: "c2ln"}, {Redacted: "cmVk"}},
				ToolCalls: []providers.ToolCall{{ID: "tooluse_1", Name: "now", Arguments: `{"tz":"UTC"}`}}},
			{Role: "tool", ToolCallID: "tooluse_1", Content: "noon"},
		}}
	body := converseBody(t, req)
	msgs := body["messages"].([]any)
	want := map[string]int{}
	for _, m := range msgs {
		for _, b := range m.(map[string]any)["content"].([]any) {
			for k := range b.(map[string]any) {
				want[k]++
			}
		}
	}
	got := map[string]int{}
	for i, m := range msgs {
		answer, _ := json.Marshal(map[string]any{"output": map[string]any{"message": map[string]any{"role": "assistant", "content": m.(map[string]any)["content"]}},
			"stopReason": "end_turn", "usage": map[string]any{"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, "metrics": map[string]any{"latencyMs": 1}})
		srv := newR14Server(t, 200, "application/json", string(answer))
		out, err := sdkClient(srv.URL, &fixedTimeSigner{}).Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String("m"),
			Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "x"}}}}})
		if err != nil {
			t.Fatalf("message %d: SDK cannot read it: %v", i, err)
		}
		for j, b := range out.Output.(*types.ConverseOutputMemberMessage).Value.Content {
			switch v := b.(type) {
			case *types.ContentBlockMemberText:
				got["text"]++
			case *types.ContentBlockMemberImage:
				src, ok := v.Value.Source.(*types.ImageSourceMemberBytes)
				if v.Value.Format != types.ImageFormatPng || !ok || len(src.Value) == 0 {
					t.Errorf("message %d block %d: image %+v", i, j, v.Value)
				}
				got["image"]++
			case *types.ContentBlockMemberDocument:
				src, ok := v.Value.Source.(*types.DocumentSourceMemberBytes)
				if v.Value.Format != types.DocumentFormatPdf || v.Value.Name == nil || !ok || string(src.Value[:4]) != "%PDF" {
					t.Errorf("message %d block %d: document %+v", i, j, v.Value)
				}
				got["document"]++
			case *types.ContentBlockMemberToolUse:
				var in map[string]any
				if v.Value.Input == nil || v.Value.Input.UnmarshalSmithyDocument(&in) != nil || in["tz"] != "UTC" || aws.ToString(v.Value.Name) != "now" {
					t.Errorf("message %d block %d: toolUse %+v", i, j, v.Value)
				}
				got["toolUse"]++
			case *types.ContentBlockMemberToolResult:
				if len(v.Value.Content) != 1 || aws.ToString(v.Value.ToolUseId) == "" {
					t.Errorf("message %d block %d: toolResult %+v", i, j, v.Value)
				}
				got["toolResult"]++
			case *types.ContentBlockMemberReasoningContent:
				switch r := v.Value.(type) {
				case *types.ReasoningContentBlockMemberReasoningText:
					if aws.ToString(r.Value.Signature) != "c2ln" {
						t.Errorf("reasoning text %+v", r.Value)
					}
				case *types.ReasoningContentBlockMemberRedactedContent:
					if string(r.Value) != "red" {
						t.Errorf("redacted content %q, want the base64-decoded bytes", r.Value)
					}
				default:
					t.Errorf("message %d block %d: reasoning member %T", i, j, r)
				}
				got["reasoningContent"]++
			case *types.ContentBlockMemberCachePoint:
				if v.Value.Type != types.CachePointTypeDefault {
					t.Errorf("cache point %+v", v.Value)
				}
				got["cachePoint"]++
			default:
				t.Errorf("message %d block %d: the SDK read %T", i, j, b)
			}
		}
	}
	if canonicalValue(got) != canonicalValue(want) {
		t.Errorf("the SDK read blocks %v, the adapter sent %v", got, want)
	}
}

// TestReview14bErrorCodesAsTheSDKReadsThem: each error the SDK knows for Converse, served
// as its own snapshot shape ({"__type": …, "message": …} with the status the service
// model gives it), is read by the SDK as that error type and by the adapter as the kind
// the adapter's docs give; the same with only the x-amzn-errortype header.
func TestReview14bErrorCodesAsTheSDKReadsThem(t *testing.T) {
	for _, c := range []struct {
		status int
		typ    string
		msg    string
		kind   providers.ErrorKind
	}{
		{429, "ThrottlingException", "Too many tokens, please wait before trying again.", providers.KindRateLimited},
		{400, "ValidationException", "Input is too long for requested model.", providers.KindContextLength},
		{400, "ValidationException", "The model returned the following errors: prompt is too long: 220000 tokens > 200000 maximum", providers.KindContextLength},
		{400, "ValidationException", "messages: text content blocks must be non-empty", providers.KindBadRequest},
		{400, "ServiceQuotaExceededException", "Your request exceeds the service quota for your account.", providers.KindRateLimited},
		{429, "ModelNotReadyException", "Model is not ready for inference.", providers.KindOverloaded},
		{403, "AccessDeniedException", "You don't have access to the model with the specified model ID.", providers.KindAuth},
		{404, "ResourceNotFoundException", "Could not resolve the foundation model from the provided model identifier.", providers.KindModelNotFound},
		{424, "ModelErrorException", "The system encountered an unexpected error during processing.", providers.KindOverloaded},
		{500, "InternalServerException", "The system encountered an unexpected error during processing. Try your request again.", providers.KindOverloaded},
		{503, "ServiceUnavailableException", "Service is unavailable", providers.KindOverloaded},
		{408, "ModelTimeoutException", "The request took too long to process.", providers.KindTimeout},
	} {
		for _, viaHeader := range []bool{false, true} {
			body := `{"__type":"` + c.typ + `","message":"` + c.msg + `"}`
			srv := newR14Server(t, c.status, "application/json", body)
			if viaHeader {
				srv.answer = func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("X-Amzn-Errortype", c.typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
					w.WriteHeader(c.status)
					io.WriteString(w, `{"message":"`+c.msg+`"}`)
				}
			}
			_, err := sdkClient(srv.URL, &fixedTimeSigner{}).Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String("m"),
				Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "x"}}}}})
			if err == nil || !strings.Contains(err.Error(), c.typ) {
				t.Errorf("%s (header %v): the SDK read %v", c.typ, viaHeader, err)
			}
			_, err = ourBedrock(srv.URL).Complete(context.Background(), hello("m"))
			if k := providers.KindOf(err); k != c.kind {
				t.Errorf("%s %q (header %v): adapter kind %s, want %s (%v)", c.typ, c.msg, viaHeader, k, c.kind, err)
			}
		}
	}
}

// TestReview14bSigV4NonASCIIBodyAndToken: a body with non-ASCII text (sent as UTF-8) and a
// session token whose characters need no escaping in a header verify with the test's own
// SigV4 (double-encoded canonical URI), the token signed; the body the SDK sends for the
// same text carries the same characters once decoded.
func TestReview14bSigV4NonASCIIBodyAndToken(t *testing.T) {
	const text = "Grüße aus 東京 🚀 \"quoted\" \\ \u2028"
	srv := newR14Server(t, 200, "application/json", converseHello)
	if _, err := ourBedrock(srv.URL).Complete(context.Background(), hello(r14IDs[2])); err != nil {
		t.Fatal(err)
	}
	req := hello(r14IDs[2])
	req.Messages[0].Content = text
	if _, err := ourBedrock(srv.URL).Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	our := srv.last(t)
	for _, p := range sigV4Problems(our, r14Cfg, "us-east-1") {
		t.Error(p)
	}
	var body struct {
		Messages []struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(our.body, &body) != nil || body.Messages[0].Content[0].Text != text {
		t.Errorf("body %s", our.body)
	}
	if !strings.Contains(our.header.Get("Authorization"), "x-amz-security-token") {
		t.Errorf("session token not signed: %s", our.header.Get("Authorization"))
	}
}
