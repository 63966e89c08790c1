package client_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

func TestListAndDeleteAgainstServer(t *testing.T) {
	data := dataServer(t)
	withTrainer := trainerOptions(t)
	withCompletions := completionsOptions(t)
	c, _ := realServer(t, func(st *store.Store, base string) []server.Option {
		return append(withTrainer(st, base), withCompletions(st, base)...)
	})
	ctx := context.Background()

	// Three conversations, walked in pages of two.
	var convs []string
	for _, q := range []string{"one", "two", "three"} {
		res, err := c.Complete(ctx, &client.CompletionRequest{Messages: []client.ChatMessage{client.TextMessage("user", q)}, Models: []string{"openai/gpt-4o-mini"}})
		if err != nil {
			t.Fatal(err)
		}
		convs = append([]string{res.ConversationID}, convs...)
		time.Sleep(2 * time.Millisecond)
	}
	var got []string
	for conv, err := range client.All(ctx, &client.ListOptions{Limit: 2}, c.ListConversations) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, conv.ID)
	}
	if len(got) != 3 || got[0] != convs[0] || got[2] != convs[2] {
		t.Fatalf("conversations %v, want %v", got, convs)
	}
	conv, err := c.Conversation(ctx, convs[2])
	if err != nil || conv.Title != "one" || conv.MessageCount != 2 {
		t.Fatalf("conversation %+v %v", conv, err)
	}
	msgs, err := c.ConversationMessages(ctx, convs[2], nil)
	if err != nil || len(msgs.Data) != 2 || msgs.Data[0].Role != "user" || msgs.Data[1].Model != "openai/gpt-4o-mini" {
		t.Fatalf("messages %+v %v", msgs, err)
	}
	d, err := c.DeleteConversation(ctx, convs[2])
	if err != nil || !d.Deleted || d.Messages != 2 {
		t.Fatalf("delete %+v %v", d, err)
	}
	var apiErr *client.Error
	if _, err := c.Conversation(ctx, convs[2]); !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Fatalf("deleted conversation: %v", err)
	}
	if _, err := c.ListConversations(ctx, &client.ListOptions{Limit: 500}); !errors.As(err, &apiErr) || apiErr.Status != 422 {
		t.Fatalf("limit 500: %v", err)
	}

	// A training job and its model: listed, then deleted.
	tr := c.RouterTrainer()
	if _, err := tr.Train(ctx, data+"/routing_train.json"); err != nil {
		t.Fatal(err)
	}
	st, err := tr.Wait(ctx, 20*time.Millisecond)
	if err != nil || st.Status != client.TrainCompleted {
		t.Fatalf("job %+v %v", st, err)
	}
	jobs, err := c.ListTrainingJobs(ctx, &client.ListOptions{Status: []string{client.TrainCompleted}})
	if err != nil || len(jobs.Data) != 1 || jobs.Data[0].TrainingJobID != st.TrainingJobID {
		t.Fatalf("jobs %+v %v", jobs, err)
	}
	models, err := c.ListRouterModels(ctx, nil)
	if err != nil || len(models.Data) != 1 || models.Data[0].ModelID != st.ModelID || models.Data[0].Metrics == nil {
		t.Fatalf("models %+v %v", models, err)
	}
	if d, err := c.DeleteRouterModel(ctx, st.ModelID); err != nil || d.Object != "router_model" {
		t.Fatalf("delete model %+v %v", d, err)
	}
	if d, err := c.DeleteTrainingJob(ctx, st.TrainingJobID); err != nil || d.Object != "training_job" {
		t.Fatalf("delete job %+v %v", d, err)
	}
	if jobs, err := c.ListTrainingJobs(ctx, nil); err != nil || len(jobs.Data) != 0 {
		t.Fatalf("jobs after delete %+v %v", jobs, err)
	}
	if _, err := c.DeleteRouterModel(ctx, ""); err == nil {
		t.Fatal("delete without an id")
	}
}
