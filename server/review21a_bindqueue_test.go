package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/trainer"
)

// review21aDownQueue is a fake jobqueue.Queue whose Enqueue fails (a queue backend that is
// down): the trainer stores a job, cannot queue it, and deletes it again.
type review21aDownQueue struct{}

func (review21aDownQueue) Register(string, jobqueue.Kind) error { return nil }
func (review21aDownQueue) Enqueue(context.Context, string, string) error {
	return errors.New("queue backend unavailable")
}
func (review21aDownQueue) Cancel(context.Context, string, string) error { return nil }
func (review21aDownQueue) StaleAfter() time.Duration                    { return time.Minute }

// TestReview21aRetrainNotQueuedLeavesPreferenceAlone: a retrain whose job is stored but
// cannot be queued is refused and its job deleted; the preference must not stay bound to
// that deleted job (router_model_id cleared, training_job_id naming a job that is gone).
func TestReview21aRetrainNotQueuedLeavesPreferenceAlone(t *testing.T) {
	st := store.New(newTestDriver(t))
	srv, sel := trainingServer(t, st, trainer.WithQueue(review21aDownQueue{}))

	owner := ownerOfKey(t, testKey)
	pref, err := sel.CreatePreference(context.Background(), owner, routing.PreferenceRequest{Name: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	ctype, body := multipartBody(t, append(sdkFields("True"), [2]string{"preference_id", pref.ID}), "dataset_file", "joint.csv", ndJointCSV(t, 20, false))
	r := postTrainForm(t, srv, "/v2/pzn/trainCustomRouter", testKey, ctype, body)
	if r.status < 500 {
		t.Fatalf("a job that could not be queued answered %d %s", r.status, r.raw)
	}
	es, err := st.List(context.Background(), store.TrainingJobs, store.ListOptions{})
	if err != nil || len(es) != 0 {
		t.Fatalf("jobs left: %d %v", len(es), err)
	}
	p, err := sel.Preference(context.Background(), owner, pref.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.RouterModelID != "" || p.RouterTrainingJobID != "" || p.PreviousRouterModelID != "" {
		t.Fatalf("preference after the refused retrain: %+v; want it unbound as before", p)
	}
}
