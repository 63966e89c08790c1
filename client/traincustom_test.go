package client_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

// TestTrainCustomRouterAgainstServer: RouterTrainer.TrainCustomRouter posts Not Diamond's
// joint CSV to the real server's POST /v2/pzn/trainCustomRouter as CustomRouter.fit does
// (and the Python client's train_custom_router): without a preference it answers a new one,
// whose selections rank with the trained router once the job completes; with that
// preference it retrains it (a new job, the same preference); another key's preference is
// a 400 naming preference_id.
func TestTrainCustomRouterAgainstServer(t *testing.T) {
	c, _ := realServer(t, trainerOptions(t))
	ctx := context.Background()
	tr := c.RouterTrainer()
	models := []string{"openai/gpt-4o", "anthropic/claude-3-5-sonnet-20240620", "mistral/mistral-large-latest"}

	first, err := tr.TrainCustomRouter(ctx, "", bytes.NewReader(jointCSV(45)), "prompt", &client.CustomRouterOptions{Minimize: true, LLMProviders: models})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.PreferenceID, "pref_") || first.TrainingJobID == "" || tr.JobID() != first.TrainingJobID || first.Version == "" {
		t.Fatalf("first answer %+v (job remembered %q)", first, tr.JobID())
	}
	if st, err := tr.Wait(ctx, 20*time.Millisecond); err != nil || st.Status != client.TrainCompleted {
		t.Fatalf("first job: %+v, %v", st, err)
	}
	p, err := c.Preference(ctx, first.PreferenceID)
	if err != nil || p.RouterTrainingJobID != first.TrainingJobID {
		t.Fatalf("the preference made: %+v, %v; want it bound to job %s", p, err, first.TrainingJobID)
	}
	sel, err := c.ModelSelect(ctx, &client.ModelSelectRequest{
		Messages:     []client.Message{{Role: "user", Content: "a haiku in verse about the sea"}},
		LLMProviders: []client.Provider{{Provider: "openai", Model: "gpt-4o"}, {Provider: "mistral", Model: "mistral-large-latest"}},
		PreferenceID: first.PreferenceID,
	})
	if err != nil || sel.LLMLabel != "mistral/mistral-large-latest" {
		t.Fatalf("selection under the trained preference: %+v, %v; want the fastest model of the topic", sel, err)
	}

	again, err := tr.TrainCustomRouter(ctx, "joint_v2.csv", bytes.NewReader(jointCSV(30)), "prompt", &client.CustomRouterOptions{PreferenceID: first.PreferenceID, Minimize: true})
	if err != nil {
		t.Fatal(err)
	}
	if again.PreferenceID != first.PreferenceID || again.TrainingJobID == first.TrainingJobID || tr.JobID() != again.TrainingJobID {
		t.Fatalf("retrain %+v: want preference %s and a new job", again, first.PreferenceID)
	}
	if st, err := tr.Wait(ctx, 20*time.Millisecond); err != nil || st.Status != client.TrainCompleted || st.Upload == nil || st.Upload.Filename != "joint_v2.csv" {
		t.Fatalf("retrain job: %+v, %v", st, err)
	}

	other, err := client.New(client.WithBaseURL(c.BaseURL()), client.WithAPIKey(otherKey))
	if err != nil {
		t.Fatal(err)
	}
	otr := other.RouterTrainer()
	_, err = otr.TrainCustomRouter(ctx, "x.csv", bytes.NewReader(jointCSV(30)), "prompt", &client.CustomRouterOptions{PreferenceID: first.PreferenceID})
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != 400 || !errors.Is(err, client.ErrInvalid) || !strings.Contains(ae.Message, "preference_id") || otr.JobID() != "" {
		t.Fatalf("another key's preference: %v (job remembered %q); want a 400 naming preference_id", err, otr.JobID())
	}
}
