package providers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// Google AI Studio's SafetySetting has only category and threshold (method is Vertex AI's,
// and AI Studio answers 400 "Unknown name" to it): a setting with a method is refused before
// any call with an error naming the field, never sent to AI Studio.
func TestReview19dAIStudioRefusesSafetyMethod(t *testing.T) {
	var bodies []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b json.RawMessage
		_ = json.NewDecoder(r.Body).Decode(&b)
		bodies = append(bodies, string(b))
		if strings.Contains(string(b), `"method"`) {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"method\" at 'safety_settings[0]': Cannot find field.","status":"INVALID_ARGUMENT"}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`)
	}))
	t.Cleanup(up.Close)
	g := providers.NewGemini(providers.Config{Name: "gemini", BaseURL: up.URL, APIKey: "k"})
	req := &providers.Request{Model: "gemini-2.5-flash", Messages: []providers.Message{{Role: "user", Content: "hi"}},
		SafetySettings: []providers.SafetySetting{{Category: "HARM_CATEGORY_HARASSMENT", Threshold: "BLOCK_NONE", Method: "SEVERITY"}}}
	err := providers.Check(g, req.Model, req)
	var ue *providers.UnsupportedError
	if !errors.As(err, &ue) || ue.Field != "safety_settings[0].method" {
		t.Errorf("Check = %v, want an UnsupportedError on safety_settings[0].method", err)
	}
	if _, err := g.Complete(context.Background(), req); err == nil {
		t.Errorf("Complete sent method to AI Studio and succeeded: bodies %v", bodies)
	}
	for _, b := range bodies {
		if strings.Contains(b, `"method"`) {
			t.Errorf("AI Studio was sent a safety setting's method: %s", b)
		}
	}

	// Vertex AI takes it.
	var vbody string
	vs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b json.RawMessage
		_ = json.NewDecoder(r.Body).Decode(&b)
		vbody = string(b)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`)
	}))
	t.Cleanup(vs.Close)
	v, err := providers.NewVertex(providers.VertexConfig{Config: providers.Config{BaseURL: vs.URL}, AccessToken: "tok", Project: "p", Location: "us-central1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := providers.Check(v, req.Model, req); err != nil {
		t.Fatalf("Vertex Check = %v, want nil", err)
	}
	if _, err := v.Complete(context.Background(), req); err != nil || !strings.Contains(vbody, `"method":"SEVERITY"`) {
		t.Errorf("Vertex: %v, body %s, want the method sent", err, vbody)
	}
}
