// Command client walks through Switchyard's HTTP API with the Go client: it trains a custom
// router from the bundled example dataset, waits for it, prints its metrics, predicts, asks
// model selection to route a prompt with the trained router, and (with --complete) streams
// an answer from openai/gpt-4o-mini through the completions gateway.
//
// Start a server first (the dataset is served from this machine, so the server must allow
// local URLs), then run the example from the repository root:
//
//	switchyard serve --allow-local-urls          # prints an API key on first start
//	export SERVICE_API_KEY=sy-...                # SWITCHYARD_BASE_URL defaults to http://127.0.0.1:8080
//	go run ./examples/client
//	go run ./examples/client --data-url https://example.com/datasets   # files hosted elsewhere
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var o options
	flag.StringVar(&o.dataURL, "data-url", "", "base URL serving routing_train.json and routing_train.csv (default: serve --data locally)")
	flag.StringVar(&o.dataDir, "data", "examples/data", "directory served when --data-url is not given")
	flag.BoolVar(&o.complete, "complete", false, "also stream a completion from the routed model (needs its provider's key on the server)")
	flag.DurationVar(&o.poll, "poll", time.Second, "how often to poll the training job")
	flag.Parse()
	c, err := client.New() // SWITCHYARD_BASE_URL and SERVICE_API_KEY
	if err == nil {
		err = run(ctx, c, o, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "client example:", err)
		os.Exit(1)
	}
}

type options struct {
	dataURL, dataDir string
	complete         bool
	poll             time.Duration
}

func run(ctx context.Context, c *client.Client, o options, out io.Writer) error {
	if o.dataURL == "" {
		// Serve the bundled dataset over HTTP on a loopback port.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		hs := &http.Server{Handler: http.FileServer(http.Dir(o.dataDir)), ReadHeaderTimeout: 5 * time.Second}
		go hs.Serve(ln)
		defer hs.Close()
		o.dataURL = "http://" + ln.Addr().String()
	}

	// 1. Train. The trainer remembers the job id, then the model id.
	tr := c.RouterTrainer()
	job, err := tr.Train(ctx, o.dataURL+"/routing_train.json", o.dataURL+"/routing_train.csv")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "training job %s: %s\n", job.TrainingJobID, job.Status)
	last := ""
	for st, err := range tr.Watch(ctx, o.poll) {
		if err != nil {
			return err
		}
		if st.Status != last {
			fmt.Fprintf(out, "  status %s\n", st.Status)
			last = st.Status
		}
		if st.Status == client.TrainFailed {
			return errors.New("training failed: " + st.ErrorMessage)
		}
	}

	// 2. Details and metrics of the trained router.
	m, err := tr.Model(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "router %s: %d models, %s\n", m.ModelID, m.NumClasses, m.EmbeddingModel)
	if mt := m.Metrics; mt != nil {
		fmt.Fprintf(out, "  held-out top-1 %.1f%%, top-3 %.1f%%, accuracy %.1f%% (always %s: top-1 %.1f%%)\n",
			100*mt.Top1HitRate, 100*mt.Top3HitRate, 100*mt.Accuracy, mt.BaselineModel, 100*mt.BaselineTop1HitRate)
	}

	// 3. Predict (lists over 500 inputs are split by the client).
	prompts := []string{
		"What is the derivative of x^3 + 2x?",
		"Name a word that rhymes with 'light'.",
	}
	pred, err := tr.Predict(ctx, prompts)
	if err != nil {
		return err
	}
	for i, p := range pred.Predictions {
		fmt.Fprintf(out, "  %q → %s (%.2f)\n", prompts[i], p.TopModel, p.TopProb)
	}

	// 4. Model selection with the trained router as preference.
	sel, err := c.ModelSelect(ctx, &client.ModelSelectRequest{
		Messages: []client.Message{{Role: "user", Content: prompts[0]}},
		LLMProviders: []client.Provider{
			{Provider: "qwen", Model: "qwen2.5-7b-instruct"},
			{Provider: "meta", Model: "llama-3.1-8b-instruct"},
			{Provider: "openai", Model: "gpt-4o-mini"},
		},
		PreferenceID: m.ModelID,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "model selection → %s (session %s)\n", sel.LLMLabel, sel.SessionID)

	// 5. Stream an answer (needs OPENAI_API_KEY, or another provider, on the server).
	if !o.complete {
		return nil
	}
	st, err := c.CompleteStream(ctx, &client.CompletionRequest{
		Messages: []client.ChatMessage{client.TextMessage("user", prompts[0])},
		Models:   []string{"openai/gpt-4o-mini"},
	})
	if err != nil {
		return err
	}
	defer st.Close()
	for ch, err := range st.Chunks() {
		if err != nil {
			return err
		}
		fmt.Fprint(out, ch.Text)
	}
	f := st.Final()
	fmt.Fprintf(out, "\n[%s, %d tokens, $%.6f, %d ms]\n", f.Model, f.Usage.TotalTokens, f.Usage.Costs.TotalTokensCost, f.Latency)
	return nil
}
