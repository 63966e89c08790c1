package jobqueue

import "fmt"

// LimitError is a job service's answer to an owner who already has Limit jobs queued or
// running (trainer and optimizer return it from Submit). It matches Kind via errors.Is
// (trainer.ErrTooManyJobs, optimizer.ErrTooManyJobs).
type LimitError struct {
	// Limit is the per-owner maximum of queued plus running jobs.
	Limit int
	// Active is how many the owner has.
	Active int
	// Jobs names the kind of job in the message: "training", "optimization".
	Jobs string
	// Kind is the raising service's sentinel.
	Kind error
}

// Error says how many jobs the key has, the limit, and what to do.
func (e *LimitError) Error() string {
	return fmt.Sprintf("this key already has %d %s jobs queued or running; the limit is %d per key: wait for one to finish or cancel one", e.Active, e.Jobs, e.Limit)
}

// Is reports whether target is the raising service's sentinel.
func (e *LimitError) Is(target error) bool { return e.Kind != nil && target == e.Kind }
