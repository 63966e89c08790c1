package client_test

// Tests of client-side logic (stream parsing, id memory, splitting) against small fake
// handlers. Each fake is named fake*; the same calls are also tested against the real
// server package where it has the capability.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

func fakeServer(t *testing.T, h http.HandlerFunc) *client.Client {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	c, err := client.New(client.WithBaseURL(ts.URL), client.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fakeSSE answers every request with the given event-stream body.
func fakeSSE(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		if req["stream"] != true {
			http.Error(w, "stream not requested", 400)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}
}

const chunkA = `{"provider":"openai","model":"gpt-4o","responseMessageId":"m1","type":"text","text":"Hel","message":{"role":"assistant","type":"text","content":[{"type":"text","text":"Hel"}]}}`
const chunkB = `{"provider":"openai","model":"gpt-4o","responseMessageId":"m1","type":"text","text":"lo","message":{"role":"assistant","type":"text","content":[{"type":"text","text":"lo"}]}}`
const finalEv = `{"type":"text","text":"","final":true,"provider":"openai","model":"gpt-4o","responseMessageId":"m1","message":{"role":"assistant","type":"text","content":[{"type":"text","text":"Hello"}]},"conversationId":"c1","conversationTitle":"Hi","usage":{"promptTokens":3,"completionTokens":2,"totalTokens":5,"costs":{"total_tokens_cost":0.001}},"latency":12,"ttft":4}`

func TestStreamParsesChunksAndFinal(t *testing.T) {
	c := fakeServer(t, fakeSSE(": keep-alive\n\ndata: "+chunkA+"\n\ndata: "+chunkB+"\n\ndata: "+finalEv+"\n\ndata: [DONE]\n\n"))
	st, err := c.CompleteStream(context.Background(), &client.CompletionRequest{Models: []string{"openai/gpt-4o"}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var text strings.Builder
	for ch, err := range st.Chunks() {
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(ch.Text)
	}
	f := st.Final()
	if text.String() != "Hello" || f == nil || f.Text() != "Hello" || f.Usage.TotalTokens != 5 || f.ConversationID != "c1" || st.Err() != nil {
		t.Fatalf("text %q final %+v err %v", text.String(), f, st.Err())
	}
}

func TestStreamErrorEventAndTruncation(t *testing.T) {
	c := fakeServer(t, fakeSSE("data: "+chunkA+"\n\nevent: error\ndata: {\"type\":\"error\",\"error\":\"Stream Error\",\"message\":\"upstream cut\",\"attempts\":[{\"model\":\"openai/gpt-4o\",\"outcome\":\"error\"}]}\n\n"))
	st, err := c.CompleteStream(context.Background(), &client.CompletionRequest{Models: []string{"openai/gpt-4o"}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for st.Next() {
		n++
	}
	var se *client.StreamError
	if n != 1 || !errors.As(st.Err(), &se) || se.Message != "upstream cut" || len(se.Attempts) != 1 || st.Final() != nil {
		t.Fatalf("chunks %d err %v", n, st.Err())
	}

	// A stream that stops without [DONE] is never a success.
	c = fakeServer(t, fakeSSE("data: "+chunkA+"\n\ndata: "+chunkB+"\n\n"))
	st, err = c.CompleteStream(context.Background(), &client.CompletionRequest{Models: []string{"openai/gpt-4o"}})
	if err != nil {
		t.Fatal(err)
	}
	for st.Next() {
	}
	if !errors.Is(st.Err(), client.ErrStreamTruncated) {
		t.Fatalf("truncated: %v", st.Err())
	}

	// [DONE] without the final response is a truncation too (a proxy dropped an event).
	c = fakeServer(t, fakeSSE("data: "+chunkA+"\n\ndata: [DONE]\n\n"))
	st, err = c.CompleteStream(context.Background(), &client.CompletionRequest{Models: []string{"openai/gpt-4o"}})
	if err != nil {
		t.Fatal(err)
	}
	for st.Next() {
	}
	if !errors.Is(st.Err(), client.ErrStreamTruncated) || st.Final() != nil {
		t.Fatalf("no final event: err %v final %v", st.Err(), st.Final())
	}
}

func TestPredictSplitsOver500InOrder(t *testing.T) {
	var mu sync.Mutex
	var sizes []int
	c := fakeServer(t, func(w http.ResponseWriter, r *http.Request) { // fake predict endpoint
		var req struct {
			ModelID string   `json:"model_id"`
			Inputs  []string `json:"inputs"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if r.URL.Path != "/api/v1/routers/predict" || req.ModelID != "m-1" || len(req.Inputs) > 500 {
			w.WriteHeader(422)
			fmt.Fprintf(w, `{"error":"Validation Error","message":"inputs: at most 500 (got %d)"}`, len(req.Inputs))
			return
		}
		mu.Lock()
		sizes = append(sizes, len(req.Inputs))
		mu.Unlock()
		var out client.PredictResponse
		for _, in := range req.Inputs {
			out.Predictions = append(out.Predictions, client.Prediction{TopModel: "echo/" + in})
		}
		json.NewEncoder(w).Encode(out)
	})
	tr := c.RouterTrainer()
	if _, err := tr.Predict(context.Background(), []string{"x"}); err == nil {
		t.Fatal("predict without a model id")
	}
	tr.UseModel("m-1")
	inputs := make([]string, 1234)
	for i := range inputs {
		inputs[i] = fmt.Sprint(i)
	}
	res, err := tr.Predict(context.Background(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(sizes) != "[500 500 234]" || len(res.Predictions) != 1234 {
		t.Fatalf("batches %v, %d predictions", sizes, len(res.Predictions))
	}
	for i, p := range res.Predictions {
		if p.TopModel != "echo/"+inputs[i] {
			t.Fatalf("prediction %d out of order: %s", i, p.TopModel)
		}
	}
}

func TestWaitStopsOnCancelledContext(t *testing.T) {
	c := fakeServer(t, func(w http.ResponseWriter, r *http.Request) { // fake: always running
		io.WriteString(w, `{"status":"running","current_iteration":1,"n_iterations":5}`)
	})
	o := c.AgentOptimizer()
	o.UseJob("j1")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	st, err := o.Wait(ctx, 10*time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) || st == nil || st.Status != "running" {
		t.Fatalf("wait: %+v %v", st, err)
	}
}
