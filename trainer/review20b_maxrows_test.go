package trainer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReview20bUploadMaxRows: a job reads at most MaxRows rows. The URL path counts them
// after each file, and Not Diamond's joint CSV counts its own, but a records file (JSON,
// JSONL or CSV) uploaded with the request was never counted: SubmitUpload accepted it and
// the job trained on every row.
func TestReview20bUploadMaxRows(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	s, err := New(st, WithLogger(quietLogger())) // not started: a job would stay queued
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var b strings.Builder
	b.WriteString("problem,correct_models\n")
	for i := range MaxRows + 1 {
		fmt.Fprintf(&b, "question %d,openai/m%d\n", i, i%3)
	}
	job, err := s.SubmitUpload(ctx, "k", Upload{Filename: "many.csv", Data: []byte(b.String())}, JobOptions{})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "upload" || !strings.Contains(err.Error(), fmt.Sprint(MaxRows)) {
		t.Fatalf("SubmitUpload of %d rows = %+v, %v; want a *ValidationError naming upload and the limit of %d rows", MaxRows+1, job, err, MaxRows)
	}
	if es, _ := st.List(ctx, store.TrainingJobs, store.ListOptions{}); len(es) != 0 {
		t.Errorf("the refused upload stored %d jobs", len(es))
	}
}
