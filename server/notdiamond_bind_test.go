package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/trainer"
)

// deleteBeforeJobDriver is an in-memory store driver (test fake) whose transactions, once
// armed with a preference id, delete that preference just before they first store a
// training job: a delete that lands between trainCustomRouter's check and its bind.
type deleteBeforeJobDriver struct {
	store.Driver
	pref atomic.Value // string
}

func (d *deleteBeforeJobDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return d.Driver.Update(ctx, func(tx store.Tx) error { return fn(&deleteBeforeJobTx{Tx: tx, d: d}) })
}

type deleteBeforeJobTx struct {
	store.Tx
	d *deleteBeforeJobDriver
}

func (t *deleteBeforeJobTx) Put(ctx context.Context, c store.Collection, key string, value []byte) error {
	if id, _ := t.d.pref.Load().(string); id != "" && c == store.TrainingJobs {
		if err := t.Tx.Delete(ctx, store.Preferences, id); err != nil {
			return err
		}
	}
	return t.Tx.Put(ctx, c, key, value)
}

// TestNotDiamondRetrainPreferenceDeletedMeanwhile: a preference deleted between
// trainCustomRouter's check and the queueing of the job refuses the request with 400
// naming preference_id, and no job or uploaded file is left behind; the check and the
// bind are one store transaction.
func TestNotDiamondRetrainPreferenceDeletedMeanwhile(t *testing.T) {
	drv := &deleteBeforeJobDriver{Driver: newTestDriver(t)}
	st := store.New(drv)
	srv, sel := trainingServer(t, st) // not started: jobs stay queued

	ctype, body := multipartBody(t, sdkFields("True"), "dataset_file", "joint.csv", ndJointCSV(t, 20, false))
	r := postTrainForm(t, srv, "/v2/pzn/trainCustomRouter", testKey, ctype, body)
	pref, _ := r.body["preference_id"].(string)
	if r.status != http.StatusOK || pref == "" {
		t.Fatalf("first fit: %d %s", r.status, r.raw)
	}
	count := func(c store.Collection) int {
		es, err := st.List(context.Background(), c, store.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	jobs, uploads := count(store.TrainingJobs), count(store.TrainingUploads)

	drv.pref.Store(pref)
	ctype, body = multipartBody(t, append(sdkFields("True"), [2]string{"preference_id", pref}), "dataset_file", "joint.csv", ndJointCSV(t, 20, false))
	wantError(t, postTrainForm(t, srv, "/v2/pzn/trainCustomRouter", testKey, ctype, body), http.StatusBadRequest, KindBadRequest, "preference_id: no preference")
	drv.pref.Store("")
	if j, u := count(store.TrainingJobs), count(store.TrainingUploads); j != jobs || u != uploads {
		t.Errorf("a refused retrain left %d jobs and %d uploads behind", j-jobs, u-uploads)
	}
	// The refused transaction is discarded whole: its delete too, so the preference is
	// still bound to its first job.
	p, err := sel.Preference(context.Background(), ownerOfKey(t, testKey), pref)
	if err != nil || p.RouterTrainingJobID != r.body["training_job_id"] {
		t.Errorf("preference after the refused retrain: %+v, %v", p, err)
	}
}

// trainingServer serves custom routers and model selection on st with a trainer that is
// not started (jobs stay queued) and the options given; it returns the server and selector.
func trainingServer(t *testing.T, st *store.Store, opts ...trainer.Option) (*Server, *routing.Selector) {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	svc, err := trainer.New(st, append([]trainer.Option{trainer.WithLogger(quiet)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	sel := routing.NewSelector(routing.Options{Store: st, CustomModels: routing.TrainerModels(svc), Logger: quiet})
	srv, err := New(Config{Store: st, APIKeys: []string{testKey}, Logger: quiet}, CustomRouters(svc), ModelSelection(sel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	return srv, sel
}
