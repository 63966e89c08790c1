package optimizer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// UnavailableRunner is the sandbox.Runner to give New when no sandbox backend works on this
// machine (for example process.New failed with sandbox.ErrUnavailable): the server still
// accepts jobs, and each one ends failed with an error_message saying why no sandbox is
// available, instead of the optimizer being missing altogether.
type UnavailableRunner struct {
	// Err is why no backend could be started.
	Err error
}

// Name implements sandbox.Runner.
func (UnavailableRunner) Name() string { return "unavailable" }

// Run implements sandbox.Runner; it always fails with an error matching
// sandbox.ErrUnavailable.
func (u UnavailableRunner) Run(context.Context, sandbox.Job) (*sandbox.Result, error) {
	return nil, fmt.Errorf("%w: %v", sandbox.ErrUnavailable, u.Err)
}

// DefaultProbeEvery is how often a ProbingRunner without its own Every looks again for a
// sandbox backend.
const DefaultProbeEvery = 30 * time.Second

// ProbingRunner is the sandbox.Runner to give New when no backend worked at start but one
// may later (the user installs bubblewrap or python3 after reading the warning): a job run
// while none works fails as with UnavailableRunner, saying why; but a run looks again with
// Open, at most once per Every, and once a backend opens every later job runs in it,
// without a restart. It is safe for concurrent use.
type ProbingRunner struct {
	// Open makes the backend (the one --sandbox names).
	Open func() (sandbox.Runner, error)
	// Every is the least time between two looks (0: DefaultProbeEvery).
	Every time.Duration
	// Logger notes a backend that opened (nil: slog.Default()).
	Logger *slog.Logger

	mu     sync.Mutex
	runner sandbox.Runner
	err    error
	looked time.Time
}

// NewProbingRunner returns a ProbingRunner whose first look, at start, failed with err.
func NewProbingRunner(err error, open func() (sandbox.Runner, error), every time.Duration, log *slog.Logger) *ProbingRunner {
	return &ProbingRunner{Open: open, Every: every, Logger: log, err: err, looked: time.Now()}
}

// current is the backend, opened now if the last look is old enough; or why there is none,
// and whether this call looked again.
func (p *ProbingRunner) current() (r sandbox.Runner, looked bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	every := p.Every
	if every <= 0 {
		every = DefaultProbeEvery
	}
	if p.runner == nil && (p.looked.IsZero() || time.Since(p.looked) >= every) {
		looked = true
		p.looked = time.Now()
		if r, err := p.Open(); err != nil {
			p.err = err
		} else {
			p.runner, p.err = r, nil
			log := p.Logger
			if log == nil {
				log = slog.Default()
			}
			log.Info("sandbox backend now available: optimization jobs run again", "backend", r.Name())
		}
	}
	if p.runner == nil && p.err == nil {
		p.err = errors.New("no sandbox backend opened yet")
	}
	return p.runner, looked, p.err
}

// Name implements sandbox.Runner: the backend's name, "unavailable" while there is none.
func (p *ProbingRunner) Name() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.runner != nil {
		return p.runner.Name()
	}
	return "unavailable"
}

// Run implements sandbox.Runner: in the backend, or an error matching
// sandbox.ErrUnavailable saying why there is none.
func (p *ProbingRunner) Run(ctx context.Context, job sandbox.Job) (*sandbox.Result, error) {
	r, looked, err := p.current()
	if r == nil {
		when := "looked for again at this job"
		if !looked {
			when = fmt.Sprintf("looked for at most every %s, the last time less than that ago", p.every())
		}
		return nil, fmt.Errorf("%w: %v (%s; install what is missing and a job after %s runs, no restart needed)",
			sandbox.ErrUnavailable, err, when, p.every())
	}
	return r.Run(ctx, job)
}

func (p *ProbingRunner) every() time.Duration {
	if p.Every <= 0 {
		return DefaultProbeEvery
	}
	return p.Every
}
