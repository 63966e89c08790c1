package providers_test

// Review 14b: the gateway's retries and fallbacks for Bedrock failures, side by side with
// the same failures from Anthropic.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

type r14Failure struct {
	name      string
	bedrock   func(w http.ResponseWriter, stream bool)
	anthropic func(w http.ResponseWriter, stream bool)
}

func jsonError(w http.ResponseWriter, status int, header map[string]string, body string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

var r14Failures = []r14Failure{
	{"throttled",
		func(w http.ResponseWriter, _ bool) {
			jsonError(w, 429, map[string]string{"X-Amzn-Errortype": "ThrottlingException"}, `{"message":"Too many requests, please wait before trying again."}`)
		},
		func(w http.ResponseWriter, _ bool) {
			jsonError(w, 429, nil, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`)
		}},
	{"throttled with retry-after",
		func(w http.ResponseWriter, _ bool) {
			jsonError(w, 429, map[string]string{"X-Amzn-Errortype": "ThrottlingException", "Retry-After-Ms": "20"}, `{"message":"Too many requests"}`)
		},
		func(w http.ResponseWriter, _ bool) {
			jsonError(w, 429, map[string]string{"Retry-After-Ms": "20"}, `{"type":"error","error":{"type":"rate_limit_error","message":"rate limited"}}`)
		}},
	{"overloaded",
		func(w http.ResponseWriter, _ bool) {
			jsonError(w, 503, map[string]string{"X-Amzn-Errortype": "ServiceUnavailableException"}, `{"message":"Bedrock is unable to process your request."}`)
		},
		func(w http.ResponseWriter, _ bool) {
			jsonError(w, 529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		}},
	{"too long",
		func(w http.ResponseWriter, _ bool) {
			jsonError(w, 400, map[string]string{"X-Amzn-Errortype": "ValidationException"}, `{"message":"Input is too long for requested model."}`)
		},
		func(w http.ResponseWriter, _ bool) {
			jsonError(w, 400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`)
		}},
	{"access denied",
		func(w http.ResponseWriter, _ bool) {
			jsonError(w, 403, map[string]string{"X-Amzn-Errortype": "AccessDeniedException"}, `{"message":"You don't have access to the model with the specified model ID."}`)
		},
		func(w http.ResponseWriter, _ bool) {
			jsonError(w, 403, nil, `{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}`)
		}},
	{"overloaded mid-stream",
		func(w http.ResponseWriter, stream bool) {
			if !stream {
				jsonError(w, 503, map[string]string{"X-Amzn-Errortype": "ServiceUnavailableException"}, `{"message":"unavailable"}`)
				return
			}
			w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
			io.WriteString(w, bedrockEvent("messageStart", `{"role":"assistant"}`)+
				bedrockException("serviceUnavailableException", `{"message":"Bedrock is unable to process your request."}`))
		},
		func(w http.ResponseWriter, stream bool) {
			if !stream {
				jsonError(w, 529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"+
				"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")
		}},
}

// r14Gateway is a gateway over one server: the primary (bedrock or anthropic) fails as f
// says, every time; the fallback (openai/gpt-4o-mini) answers.
func r14Gateway(t *testing.T, f r14Failure, primary string, calls *atomic.Int32) *completions.Gateway {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		stream := strings.HasSuffix(r.URL.Path, "converse-stream") || strings.Contains(string(b), `"stream":true`)
		switch {
		case strings.HasPrefix(r.URL.Path, "/model/"):
			calls.Add(1)
			f.bedrock(w, stream)
		case r.URL.Path == "/v1/messages":
			calls.Add(1)
			f.anthropic(w, stream)
		default:
			if stream {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"fallback"},"finish_reason":null}]}`+"\n\n"+
					`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n"+
					`data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`+"\n\ndata: [DONE]\n\n")
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"c","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"fallback"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
		}
	}))
	t.Cleanup(srv.Close)
	reg := providers.NewRegistry(
		providers.NewBedrock(providers.Config{Name: "bedrock", BaseURL: srv.URL, APIKey: "ABSKkey"}),
		providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: srv.URL, APIKey: "sk-ant"}),
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk"}),
	)
	g, err := completions.New(completions.Options{Providers: reg, Backoff: completions.Backoff{Initial: 10 * time.Millisecond, Max: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestReview14bGatewayTreatsBedrockFailuresAsAnthropics: for each failure, a request whose
// primary is Claude on Bedrock gets the same attempts (kinds, outcomes, retries) and the
// same answer as one whose primary is Claude on Anthropic, streamed or not.
func TestReview14bGatewayTreatsBedrockFailuresAsAnthropics(t *testing.T) {
	for _, f := range r14Failures {
		for _, stream := range []bool{false, true} {
			var got [2]string
			for i, primary := range []string{"bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", "anthropic/claude-3-5-sonnet-20240620"} {
				var calls atomic.Int32
				g := r14Gateway(t, f, primary, &calls)
				req := &completions.Request{Models: []string{primary}, FallbackModels: []string{"openai/gpt-4o-mini"}, Stream: stream,
					Messages: []completions.Message{{Role: "user", Content: []completions.ContentBlock{{Type: "text", Text: "hi"}}}}}
				var text string
				var attempts []completions.Attempt
				var err error
				if stream {
					var s *completions.ResponseStream
					s, err = g.Stream(context.Background(), completions.Scope{}, req)
					if err == nil {
						for {
							fr, e := s.Recv()
							if e != nil {
								if e != io.EOF {
									err = e
								}
								break
							}
							if fr.Type == completions.EventText {
								text += fr.Text
							}
						}
						if r := s.Response(); r != nil {
							attempts = r.Attempts
						}
						s.Close()
					}
				} else {
					var resp *completions.Response
					resp, err = g.Complete(context.Background(), completions.Scope{}, req)
					if err == nil {
						for _, c := range resp.Message.Content {
							text += c.Text
						}
						attempts = resp.Attempts
					}
				}
				var b strings.Builder
				fmt.Fprintf(&b, "err=%v text=%q primary calls=%d attempts=", err != nil, text, calls.Load())
				for _, a := range attempts {
					fmt.Fprintf(&b, "[%s %s] ", a.Outcome, a.Kind)
				}
				got[i] = b.String()
			}
			if got[0] != got[1] {
				t.Errorf("%s (stream %v): bedrock %s\n anthropic %s", f.name, stream, got[0], got[1])
			} else {
				t.Logf("%s (stream %v): %s", f.name, stream, got[0])
			}
		}
	}
}

// TestReview14bDocumentedModelStringsAreRoutable: the model strings the README's "Amazon
// Bedrock" section documents — a leading region, an inference profile's ARN, an
// application inference profile's ARN, LiteLLM's converse/ prefix — are routable names
// (Gateway.HasModel, which GET /v1/models/{id}, a scoped key's model list and the metrics'
// model label go by), as the catalogued bare ids are: Bedrock now counts as catalogued
// (ChatModels("bedrock") lists its bare ids), so only those pass.
func TestReview14bDocumentedModelStringsAreRoutable(t *testing.T) {
	reg := providers.NewRegistry(providers.NewBedrock(providers.Config{Name: "bedrock", APIKey: "ABSKkey", AWS: providers.AWSConfig{Region: "us-east-1"}}))
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	if !g.HasModel("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0") {
		t.Fatal("a catalogued bare id is not routable")
	}
	for _, m := range []string{
		"bedrock/us-west-2/meta.llama3-1-70b-instruct-v1:0",
		"bedrock/converse/amazon.nova-pro-v1:0",
		"bedrock/arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-20250514-v1:0",
		"bedrock/arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/mi1dadi0g15f",
	} {
		if !g.HasModel(m) {
			t.Errorf("%s: not routable (HasModel false)", m)
		}
	}
}
