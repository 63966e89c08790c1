package sandbox

import (
	"errors"
	"testing"
)

func TestJobErrorMatchesErrJob(t *testing.T) {
	var err error = &JobError{Reason: ReasonTimeout, Message: "slow"}
	if !errors.Is(err, ErrJob) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("JobError must match ErrJob only")
	}
	if err.Error() != "sandbox: job failed: slow" {
		t.Fatalf("Error() = %q", err.Error())
	}
}
