package optimizer

import (
	"context"
	"testing"
)

// TestResultsReportTheSplit: the results gave the scores but not how many rows they were
// measured on, so a DSPy user (who sizes trainset and valset) could not tell a test_score
// on 10 held-out rows from one on 1,000, nor which seed drew the split. Each model's
// result now has train_rows, test_rows and seed, those of the split the job ran on.
func TestResultsReportTheSplit(t *testing.T) {
	e := newEnv(t, &fakeRunner{}, nil, WithSeed(7))
	e.start(t)
	ctx := context.Background()
	sub, err := e.svc.Submit(ctx, "alice", request(e.url, 1))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, e.svc, sub.JobID)
	res, err := e.svc.Results(ctx, "alice", sub.JobID)
	if err != nil {
		t.Fatal(err)
	}
	train, test := Split(scriptedDataset(), 7)
	r := res.Results[0]
	if r.TrainRows != len(train) || r.TestRows != len(test) || r.Seed == nil || *r.Seed != 7 {
		t.Fatalf("train_rows %d test_rows %d seed %v; want %d, %d, 7", r.TrainRows, r.TestRows, r.Seed, len(train), len(test))
	}
	if r.History[0].RowsRun != r.TrainRows {
		t.Errorf("the baseline ran %d rows, train_rows is %d", r.History[0].RowsRun, r.TrainRows)
	}
}
