package client_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

// Train a router from dataset URLs, wait for it and predict. The trainer remembers the job
// id and then the model id.
func ExampleRouterTrainer() {
	ctx := context.Background()
	c, err := client.New() // SWITCHYARD_BASE_URL, SERVICE_API_KEY
	if err != nil {
		log.Fatal(err)
	}
	tr := c.RouterTrainer()
	if _, err := tr.Train(ctx, "https://example.com/train.json", "https://example.com/train.csv"); err != nil {
		log.Fatal(err)
	}
	st, err := tr.Wait(ctx, 0) // every 10 s until completed or failed
	if err != nil || st.Status != client.TrainCompleted {
		log.Fatal(err, st.ErrorMessage)
	}
	m, _ := tr.Model(ctx)
	fmt.Println(m.Metrics.Top1HitRate)
	res, _ := tr.Predict(ctx, []string{"What is 17 * 23?"}) // more than 500 inputs are split
	fmt.Println(res.Predictions[0].TopModel)
}

// Not Diamond's journey: select a model, call it with the rest of the ranking as
// fallbacks, then rate the choice so a preference learns from it.
func ExampleModelSelectResponse_Chosen() {
	ctx := context.Background()
	c, err := client.New()
	if err != nil {
		log.Fatal(err)
	}
	sel, err := c.ModelSelect(ctx, &client.ModelSelectRequest{
		Messages:     []client.Message{{Role: "user", Content: "Prove that sqrt(2) is irrational."}},
		LLMProviders: []client.Provider{{Provider: "openai", Model: "gpt-4o"}, {Provider: "openai", Model: "gpt-4o-mini"}},
		PreferenceID: "pref_...", // from CreatePreference
	})
	if err != nil {
		log.Fatal(err)
	}
	labels := sel.Labels() // best first
	ans, err := c.Complete(ctx, &client.CompletionRequest{Models: labels[:1], FallbackModels: labels[1:],
		Messages: []client.ChatMessage{client.TextMessage("user", "Prove that sqrt(2) is irrational.")}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ans.Text())
	// session_id, provider = client.model_select(...) in Not Diamond's SDK
	if _, err := c.Feedback(ctx, &client.FeedbackRequest{SessionID: sel.SessionID, Provider: sel.Chosen(),
		Feedback: client.FeedbackAccuracy{Accuracy: 1}}); err != nil {
		log.Fatal(err)
	}
}

// Optimize an agent's system prompt for one model and print the outcome.
func ExampleAgentOptimizer() {
	ctx := context.Background()
	c, _ := client.New()
	o := c.AgentOptimizer()
	if _, err := o.Submit(ctx, &client.OptimizeRequest{InputURL: "https://example.com/bundle.zip", TargetModel: "openai/gpt-4o-mini", NIterations: 10}); err != nil {
		log.Fatal(err)
	}
	st, _ := o.Wait(ctx, 0) // every 30 s until completed, failed or interrupted
	if st.Status == client.OptimizeFailed {
		log.Fatal(st.ErrorMessage)
	}
	res, _ := o.Results(ctx)
	for _, r := range res.Results {
		if r.BaselineScore != nil && r.TrainScore != nil { // absent when the job ended before its baseline
			fmt.Printf("%s: %.2f → %.2f, %s\n", r.Model, *r.BaselineScore, *r.TrainScore, r.AgentCodeURL)
		}
	}
}

// Stream a completion: chunks as they arrive, then the full response with usage.
func ExampleStream() {
	ctx := context.Background()
	c, _ := client.New()
	st, err := c.CompleteStream(ctx, &client.CompletionRequest{
		Messages: []client.ChatMessage{client.TextMessage("user", "Write a haiku about routers.")},
		Models:   []string{"openai/gpt-4o-mini"},
	})
	if err != nil {
		log.Fatal(err) // *client.Error: validation, key, every model failing before the first token
	}
	defer st.Close()
	for ch, err := range st.Chunks() {
		if err != nil {
			log.Fatal(err) // *client.StreamError or client.ErrStreamTruncated
		}
		fmt.Print(ch.Text)
	}
	fmt.Println("\n", st.Final().Usage.TotalTokens, "tokens")
}

// Ask the OpenAI-compatible endpoint for a chat completion; Model is "provider/model".
func ExampleClient_ChatCompletion() {
	ctx := context.Background()
	c, err := client.New()
	if err != nil {
		log.Fatal(err)
	}
	maxTokens := 200
	res, err := c.ChatCompletion(ctx, &client.ChatCompletionRequest{
		Model: "openai/gpt-4o-mini",
		Messages: []client.ChatCompletionMessage{
			{Role: "system", Content: "You answer in one sentence."},
			{Role: "user", Content: "What does an LLM router do?"},
		},
		MaxTokens:      &maxTokens,
		FallbackModels: []string{"anthropic/claude-3-5-haiku-latest"},
	})
	if err != nil {
		log.Fatal(err) // *client.Error; Kind is OpenAI's error type, e.g. "invalid_request_error"
	}
	fmt.Println(res.Text())
	fmt.Println(res.Usage.TotalTokens, "tokens,", res.Switchyard.Costs.TotalTokensCost, "USD")
}

// Stream a chat completion as OpenAI chunks, with the usage chunk at the end.
func ExampleClient_ChatCompletionStream() {
	ctx := context.Background()
	c, _ := client.New()
	st, err := c.ChatCompletionStream(ctx, &client.ChatCompletionRequest{
		Model:         "openai/gpt-4o-mini",
		Messages:      []client.ChatCompletionMessage{{Role: "user", Content: "Write a haiku about routers."}},
		StreamOptions: &client.ChatStreamOptions{IncludeUsage: true},
	})
	if err != nil {
		log.Fatal(err) // failures before the first chunk, after the client's retries
	}
	defer st.Close()
	for ck, err := range st.Chunks() {
		if err != nil {
			log.Fatal(err) // *client.ChatStreamError or client.ErrStreamTruncated
		}
		fmt.Print(ck.Text())
	}
	if u := st.Usage(); u != nil {
		fmt.Println("\n", u.TotalTokens, "tokens")
	}
}

// Configure retries of transient failures (429, 502, 503, 504, connection errors).
func ExampleWithRetry() {
	// Up to 5 retries, backoff from 500ms doubling up to 10s, and a Retry-After of up to
	// a minute honoured; zero fields keep the defaults of DefaultRetryPolicy.
	c, err := client.New(client.WithRetry(client.RetryPolicy{
		MaxRetries:    5,
		Initial:       500 * time.Millisecond,
		Max:           10 * time.Second,
		MaxRetryAfter: time.Minute,
	}))
	if err != nil {
		log.Fatal(err)
	}
	_ = c

	// Or no retries at all: every failure is returned as it happens.
	once, _ := client.New(client.WithoutRetry())
	_ = once
}
