package client_test

import (
	"context"
	"fmt"
	"log"

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
		fmt.Printf("%s: %.2f → %.2f, %s\n", r.Model, r.BaselineScore, r.TrainScore, r.AgentCodeURL)
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
