package client_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

// jointCSV is Not Diamond's joint CSV: prompts of three topics, each answered fastest by
// one model (scores are latencies in ms: lower is better).
func jointCSV(rows int) []byte {
	topics := []struct{ model, words string }{
		{"openai/gpt-4o", "integral derivative equation algebra matrix"},
		{"anthropic/claude-3-5-sonnet-20240620", "python function compile golang recursion"},
		{"mistral/mistral-large-latest", "poem sonnet rhyme verse haiku"},
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	header := []string{"prompt"}
	for _, tp := range topics {
		header = append(header, tp.model+"/response", tp.model+"/score")
	}
	w.Write(header)
	for i := range rows {
		k := i % len(topics)
		words := strings.Fields(topics[k].words)
		row := []string{fmt.Sprintf("%s %s %s please (%d)", words[i%5], words[(i+1)%5], words[(i+3)%5], i)}
		for j, tp := range topics {
			lat := "850"
			if j == k {
				lat = "95"
			}
			row = append(row, "answer of "+tp.model, lat)
		}
		w.Write(row)
	}
	w.Flush()
	return b.Bytes()
}

func TestRouterTrainerTrainUpload(t *testing.T) {
	c, _ := realServer(t, trainerOptions(t))
	ctx := context.Background()
	tr := c.RouterTrainer()

	// Not Diamond's joint CSV, lower scores better.
	job, err := tr.TrainUpload(ctx, "latency.csv", bytes.NewReader(jointCSV(45)), &client.UploadOptions{
		PromptColumn: "prompt", Minimize: true,
		LLMProviders: []string{"openai/gpt-4o", "anthropic/claude-3-5-sonnet-20240620", "mistral/mistral-large-latest"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if job.TrainingJobID == "" || tr.JobID() != job.TrainingJobID || job.Status != client.TrainQueued {
		t.Fatalf("job %+v", job)
	}
	st, err := tr.Wait(ctx, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != client.TrainCompleted || st.Upload == nil || st.Upload.Format != client.FormatNotDiamond || st.Upload.Filename != "latency.csv" {
		t.Fatalf("status %+v (%s)", st, st.ErrorMessage)
	}
	p, err := tr.Predict(ctx, []string{"derivative of this algebra equation", "a haiku in verse"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Predictions[0].TopModel != "openai/gpt-4o" || p.Predictions[1].TopModel != "mistral/mistral-large-latest" {
		t.Errorf("predictions %+v: the fastest model of each topic should win", p.Predictions)
	}

	// A records file, detected, with prices.
	records, err := os.ReadFile(filepath.Join("..", "examples", "data", "routing_train.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.TrainUpload(ctx, "routing_train.json", bytes.NewReader(records), &client.UploadOptions{ModelPrices: map[string]float64{"qwen/qwen2.5-7b-instruct": 0.2}}); err != nil {
		t.Fatal(err)
	}
	if st, err := tr.Wait(ctx, 20*time.Millisecond); err != nil || st.Status != client.TrainCompleted || st.Upload == nil || st.Upload.Format != "json" {
		t.Fatalf("records upload: %+v, %v", st, err)
	}

	// A bad row is refused at once, naming the line and the column.
	bad := bytes.Replace(jointCSV(12), []byte(",95\n"), []byte(",fast\n"), 1)
	_, err = tr.TrainUpload(ctx, "bad.csv", bytes.NewReader(bad), &client.UploadOptions{PromptColumn: "prompt"})
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != 422 || !strings.Contains(ae.Message, `bad.csv: line`) || !strings.Contains(ae.Message, `/score": the score "fast" is not a number`) {
		t.Fatalf("bad row: %v", err)
	}
}
