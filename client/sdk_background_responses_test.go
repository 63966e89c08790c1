package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/responses"
)

// TestOfficialGoSDKBackgroundResponses: the official Go SDK's background mode — New with
// Background true answers at once queued; Get polls it to completed with the answer; Cancel
// of a long one answers cancelled and the upstream call is cut; store false is an
// *openai.Error 400 naming background.
func TestOfficialGoSDKBackgroundResponses(t *testing.T) {
	var mu sync.Mutex
	cut := 0
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string `json:"model"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		wait := 200 * time.Millisecond
		if req.Model == "gpt-4o" {
			wait = time.Hour
		}
		select {
		case <-r.Context().Done():
			mu.Lock()
			cut++
			mu.Unlock()
			return
		case <-time.After(wait):
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Forty-two."},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`)
	}))
	t.Cleanup(up.Close)
	_, base := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.URL}))
	ctx := context.Background()
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))

	started, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "openai/gpt-4o-mini", Background: openai.Bool(true),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("The answer?")}})
	if err != nil {
		t.Fatal(err)
	}
	if started.Status != responses.ResponseStatusQueued && started.Status != responses.ResponseStatusInProgress || !started.Background {
		t.Fatalf("started %s background %v", started.Status, started.Background)
	}
	got := started
	for deadline := time.Now().Add(5 * time.Second); got.Status == responses.ResponseStatusQueued || got.Status == responses.ResponseStatusInProgress; {
		if time.Now().After(deadline) {
			t.Fatalf("still %s", got.Status)
		}
		time.Sleep(20 * time.Millisecond)
		if got, err = c.Responses.Get(ctx, started.ID, responses.ResponseGetParams{}); err != nil {
			t.Fatal(err)
		}
	}
	if got.Status != responses.ResponseStatusCompleted || got.OutputText() != "Forty-two." || got.Usage.TotalTokens != 12 {
		t.Fatalf("ended %s %q %+v", got.Status, got.OutputText(), got.Usage)
	}

	long, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "openai/gpt-4o", Background: openai.Bool(true),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Think forever.")}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	cancelled, err := c.Responses.Cancel(ctx, long.ID)
	if err != nil || cancelled.Status != responses.ResponseStatusCancelled {
		t.Fatalf("Cancel: %v %+v", err, cancelled)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := cut
		mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the upstream call was not cut")
		}
	}

	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "openai/gpt-4o-mini", Background: openai.Bool(true), Store: openai.Bool(false),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "background" {
		t.Fatalf("store false: %v", err)
	}
}
