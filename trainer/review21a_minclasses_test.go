package trainer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReview21aUploadNamingOneModelRefusedAtSubmit: an upload whose usable rows name only
// one model cannot train a router (the job fails with "at least 2 are needed to route
// between"), so it is refused at submit like one with too few rows, and nothing is queued.
func TestReview21aUploadNamingOneModelRefusedAtSubmit(t *testing.T) {
	s, err := New(memstore.New(), WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var b strings.Builder
	b.WriteString("problem,correct_models\n")
	for i := range 20 {
		fmt.Fprintf(&b, "question number %d,openai/gpt-4o\n", i)
	}
	_, err = s.SubmitUpload(context.Background(), "k", Upload{Filename: "one.csv", Data: []byte(b.String())}, JobOptions{})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "upload" || !strings.Contains(err.Error(), "openai/gpt-4o") {
		t.Fatalf("err = %v, want a *ValidationError naming upload and the only model", err)
	}
	if page, err := s.ListJobs(context.Background(), "k", ListOptions{}); err != nil || len(page.Data) != 0 {
		t.Fatalf("jobs after a refused upload: %+v %v", page, err)
	}
}
