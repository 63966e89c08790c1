package trainer

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/store/memstore"
)

// Jobs cancelled or deleted while queued give their queue slots back: one key cycling
// submit and cancel while the workers were busy filled the bounded queue with dead ids,
// and every key's submission was refused with ErrQueueFull until the workers drained them.
func TestReview22cCancelledQueuedJobsFreeTheQueue(t *testing.T) {
	// Not started: nothing drains the queue, as when the workers are busy.
	s, err := New(memstore.New(), WithQueueSize(2), WithJobsPerOwner(1), WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for i := range 5 {
		j, err := s.Submit(ctx, "greedy", []string{"https://x.test/a.json"})
		if err != nil {
			t.Fatalf("submission %d after %d cancelled queued jobs: %v", i+1, i, err)
		}
		if i%2 == 0 {
			if _, err := s.Cancel(ctx, "greedy", j.TrainingJobID); err != nil {
				t.Fatal(err)
			}
		} else if _, err := s.DeleteJob(ctx, "greedy", j.TrainingJobID); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		if _, err := s.Submit(ctx, "k"+string(rune('a'+i)), []string{"https://x.test/a.json"}); err != nil {
			t.Fatalf("another key after cancelled queued jobs: %v", err)
		}
	}
	// The bound still holds for live jobs.
	if _, err := s.Submit(ctx, "kc", []string{"https://x.test/a.json"}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("third live job: %v, want ErrQueueFull", err)
	}
}
