package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"

	"github.com/switchyard-ai/switchyard/client"
)

// moderationUpstream answers OpenAI's POST /moderations as OpenAI does: a result per
// string of the input (one for a string or an array of parts), flagged when the text says
// "kill"; it keeps the bodies it was sent.
type moderationUpstream struct {
	mu     sync.Mutex
	bodies []map[string]any
	srv    *httptest.Server
}

func newModerationUpstream(t *testing.T) *moderationUpstream {
	u := &moderationUpstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/moderations" || r.Header.Get("Authorization") != "Bearer sk-test" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		u.mu.Lock()
		u.bodies = append(u.bodies, body)
		u.mu.Unlock()
		var texts []string
		switch in := body["input"].(type) {
		case string:
			texts = []string{in}
		case []any:
			joined := ""
			for _, it := range in {
				switch v := it.(type) {
				case string:
					texts = append(texts, v)
				case map[string]any:
					joined += fmt.Sprint(v["text"]) + " "
				}
			}
			if len(texts) == 0 {
				texts = []string{joined}
			}
		}
		results := make([]string, len(texts))
		for i, text := range texts {
			bad := strings.Contains(text, "kill")
			score := 0.0001
			if bad {
				score = 0.93
			}
			results[i] = fmt.Sprintf(`{"flagged":%t,"categories":{"harassment":false,"violence":%t,"self-harm":false},`+
				`"category_scores":{"harassment":0.0002,"violence":%g,"self-harm":0.00001},`+
				`"category_applied_input_types":{"harassment":["text"],"violence":["text"],"self-harm":["text"]}}`, bad, bad, score)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"modr-5bb0","model":"omni-moderation-2024-09-26","results":[%s]}`, strings.Join(results, ","))
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *moderationUpstream) last() map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.bodies[len(u.bodies)-1]
}

// TestOfficialGoSDKModerations drives POST /v1/moderations with the official Go SDK: a
// string (the default model, omni-moderation-latest, sent to OpenAI), an array of strings
// (a result each), text and image parts (passed on as sent, one result), the server's root
// as base URL, and refusals naming their field.
func TestOfficialGoSDKModerations(t *testing.T) {
	up := newModerationUpstream(t)
	_, base := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.srv.URL}))
	ctx := context.Background()
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))

	res, err := c.Moderations.New(ctx, openai.ModerationNewParams{Input: openai.ModerationNewParamsInputUnion{OfString: openai.String("I will kill them all.")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ID != "modr-5bb0" || res.Model != "openai/omni-moderation-latest" || len(res.Results) != 1 || !res.Results[0].Flagged ||
		!res.Results[0].Categories.Violence || res.Results[0].CategoryScores.Violence != 0.93 || res.Results[0].Categories.Harassment {
		t.Errorf("moderation %+v", res)
	}
	if b := up.last(); b["model"] != "omni-moderation-latest" || b["input"] != "I will kill them all." {
		t.Errorf("upstream got %v", b)
	}

	res, err = c.Moderations.New(ctx, openai.ModerationNewParams{Model: openai.ModerationModelTextModerationLatest,
		Input: openai.ModerationNewParamsInputUnion{OfStringArray: []string{"hello", "kill", "bye"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 3 || res.Results[0].Flagged || !res.Results[1].Flagged || res.Results[2].Flagged || res.Model != "openai/text-moderation-latest" {
		t.Errorf("three strings: %+v", res)
	}

	parts := []openai.ModerationMultiModalInputUnionParam{
		{OfText: &openai.ModerationTextInputParam{Text: "a picture of a cat"}},
		{OfImageURL: &openai.ModerationImageURLInputParam{ImageURL: openai.ModerationImageURLInputImageURLParam{URL: "https://example.com/cat.png"}}},
	}
	root := openai.NewClient(option.WithBaseURL(base+"/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	res, err = root.Moderations.New(ctx, openai.ModerationNewParams{Model: "openai/omni-moderation-latest",
		Input: openai.ModerationNewParamsInputUnion{OfModerationMultiModalArray: parts}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 1 || res.Results[0].Flagged {
		t.Errorf("parts: %+v", res)
	}
	got, _ := json.Marshal(up.last()["input"])
	if string(got) != `[{"text":"a picture of a cat","type":"text"},{"image_url":{"url":"https://example.com/cat.png"},"type":"image_url"}]` {
		t.Errorf("parts sent upstream: %s", got)
	}

	var apiErr *openai.Error
	for _, tc := range []struct {
		in    openai.ModerationNewParamsInputUnion
		model string
		param string
	}{
		{openai.ModerationNewParamsInputUnion{OfString: openai.String("")}, "", "input"},
		{openai.ModerationNewParamsInputUnion{OfStringArray: []string{"a", ""}}, "", "input[1]"},
		{openai.ModerationNewParamsInputUnion{OfModerationMultiModalArray: []openai.ModerationMultiModalInputUnionParam{{OfText: &openai.ModerationTextInputParam{Text: ""}}}}, "", "input[0].text"},
		{openai.ModerationNewParamsInputUnion{OfString: openai.String("hi")}, "anthropic/claude-3-5-haiku-latest", "model"},
	} {
		_, err := c.Moderations.New(ctx, openai.ModerationNewParams{Input: tc.in, Model: openai.ModerationModel(tc.model)})
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != tc.param {
			t.Errorf("want a 400 naming %s, got %v", tc.param, err)
		}
	}
	if n := len(up.bodies); n != 3 {
		t.Errorf("upstream called %d times, want 3 (refusals must not reach it)", n)
	}
}

// TestClientModerate: the Go client's Moderate sends a string and parts, reads the
// categories and scores, and surfaces a refusal as an *Error naming the field.
func TestClientModerate(t *testing.T) {
	up := newModerationUpstream(t)
	c, _ := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.srv.URL}))
	ctx := context.Background()
	res, err := c.Moderate(ctx, &client.ModerationRequest{Input: []string{"hello", "kill"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 2 || res.Results[0].Flagged || !res.Results[1].Flagged || !res.Results[1].Categories["violence"] ||
		res.Results[1].CategoryScores["violence"] != 0.93 || res.Model != "openai/omni-moderation-latest" ||
		len(res.Results[1].CategoryAppliedInputTypes["violence"]) != 1 {
		t.Errorf("moderation %+v", res)
	}
	res, err = c.Moderate(ctx, &client.ModerationRequest{Model: "omni-moderation-latest", Input: []client.ModerationPart{
		{Type: "text", Text: "a cat"}, {Type: "image_url", ImageURL: &client.ModerationImageURL{URL: "data:image/png;base64,iVBO"}}}})
	if err != nil || len(res.Results) != 1 {
		t.Fatalf("parts: %+v %v", res, err)
	}
	_, err = c.Moderate(ctx, &client.ModerationRequest{Input: []client.ModerationPart{{Type: "text"}}})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || !strings.Contains(apiErr.Message, "input[0].text") {
		t.Errorf("refusal: %v", err)
	}
}
