package trainer

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
)

// txOnlyQueue is a fake jobqueue.Queue that accepts jobs only inside the store
// transaction that creates them (EnqueueTx) and refuses Enqueue after the commit.
type txOnlyQueue struct {
	mu  sync.Mutex
	ids []string
}

func (q *txOnlyQueue) Register(string, jobqueue.Kind) error { return nil }
func (q *txOnlyQueue) Enqueue(context.Context, string, string) error {
	return errors.New("Enqueue after the commit: the record and its queue entry were not written together")
}
func (q *txOnlyQueue) Cancel(context.Context, string, string) error { return nil }
func (q *txOnlyQueue) StaleAfter() time.Duration                    { return time.Minute }
func (q *txOnlyQueue) EnqueueTx(_ context.Context, tx store.Tx, _, id string) (bool, error) {
	if tx == nil {
		return false, nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ids = append(q.ids, id)
	return true, nil
}

// TestSubmitEnqueuesInTheRecordsTransaction: with a queue that can, Submit enqueues inside
// the Update that stores the job (a crash cannot separate them).
func TestSubmitEnqueuesInTheRecordsTransaction(t *testing.T) {
	q := &txOnlyQueue{}
	s := newService(t, nil, WithQueue(q), WithWorkers(0))
	job, err := s.Submit(context.Background(), "key-a", []string{"https://example.com/a.json"})
	if err != nil {
		t.Fatal(err)
	}
	if len(q.ids) != 1 || q.ids[0] != job.TrainingJobID {
		t.Fatalf("enqueued in the transaction: %v, want [%s]", q.ids, job.TrainingJobID)
	}
}
