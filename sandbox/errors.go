package sandbox

// Reasons a job fails, carried by [JobError.Reason]. The optimizer shows them to the user;
// tests use them to check that each abuse is caught for the right reason.
const (
	// ReasonException: the user's code raised (import, run_batch or score).
	ReasonException = "exception"
	// ReasonInvalidResult: run_batch or score returned something the contract forbids
	// (wrong number of predictions, a score that is not a number or is outside [0, 1], ...).
	ReasonInvalidResult = "invalid_result"
	// ReasonTimeout: the wall-clock deadline (Limits.Timeout) or the CPU limit was reached.
	ReasonTimeout = "timeout"
	// ReasonMemoryLimit: the run's processes together used more than Limits.MemoryBytes and
	// the kernel killed one (process backend with a per-run cgroup).
	ReasonMemoryLimit = "memory_limit"
	// ReasonOutputLimit: the code printed more than Limits.MaxOutputBytes.
	ReasonOutputLimit = "output_limit"
	// ReasonExit: the interpreter exited (or was killed) without producing a result.
	ReasonExit = "exit"
	// ReasonDependencies: the DEPENDENCIES declared in agent.py cannot be used.
	ReasonDependencies = "dependencies"
)

// JobError is a failure of the user's code. It matches [ErrJob] with errors.Is, and its
// message says what the code did, e.g. "run_batch raised ValueError: boom".
type JobError struct {
	// Reason is one of the Reason* constants.
	Reason string
	// Message describes the failure for a human.
	Message string
}

// Error implements error.
func (e *JobError) Error() string { return "sandbox: job failed: " + e.Message }

// Is reports whether target is [ErrJob].
func (e *JobError) Is(target error) bool { return target == ErrJob }
