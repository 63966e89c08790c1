// Package nesting tells a store driver that it is called from inside a transaction's
// function (store.Driver.Update's fn) on the same goroutine, which the driver contract
// forbids: such a call would wait for ever for what the outer transaction holds (a mutex,
// bbolt's writer lock, a row or an advisory lock) while the outer transaction waits for
// it. Drivers run every fn with Run and refuse an Update (or a write of their own) when
// Inside reports true, with an error matching store.ErrNested.
//
// The mark is the call of fn in Run, found on the calling goroutine's stack: Go gives no
// goroutine-local state, fn gets a Tx (not a context the driver could mark), and a
// goroutine's id costs a formatted stack trace (microseconds, growing with its depth, and
// an allocation). A count of the functions running anywhere keeps the common case to one
// atomic load: when none runs, no call can be nested, and no stack is walked.
package nesting

import (
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/switchyard-ai/switchyard/store"
)

// running counts the transaction functions running in the process, on any goroutine.
var running atomic.Int64

// markPC is the return address of Run's call of fn: found among a goroutine's callers, it
// says that goroutine is inside a transaction's function.
var markPC = func() uintptr {
	var pc uintptr
	Run(func(store.Tx) error {
		var pcs [1]uintptr
		// 0 is runtime.Callers, 1 this function, 2 Run (at the return of its call of fn).
		if runtime.Callers(2, pcs[:]) == 1 {
			pc = pcs[0]
		}
		return nil
	}, nil)
	if pc == 0 {
		panic("store/internal/nesting: cannot read the stack")
	}
	return pc
}()

// Run runs fn(tx) as a transaction's function: until it returns, Inside is true on the
// calling goroutine.
//
// The detection depends on the call of fn below being Run's only call site of fn, in Run's
// own frame: markPC is that one return address. So Run is never inlined (//go:noinline;
// its defer blocks inlining today too: an inlined copy would put the call in each caller's
// code), and a build with a profile
// (-pgo, or a default.pgo in a main package's directory) must not devirtualise it: a
// "fn == hot function" test would add a second call site whose functions Inside would not
// see as nested (TestInside checks markPC is in Run's own code, not the inlining).
//
//go:noinline
func Run(fn func(tx store.Tx) error, tx store.Tx) error {
	running.Add(1)
	defer running.Add(-1)
	return fn(tx)
}

// Inside reports whether the calling goroutine is inside a function Run runs, of any
// driver of the process. It costs one atomic load unless some function runs (on any
// goroutine); then a walk of the caller's stack, without allocating.
func Inside() bool {
	if running.Load() == 0 {
		return false
	}
	var pcs [64]uintptr
	for skip := 2; ; skip += len(pcs) {
		n := runtime.Callers(skip, pcs[:])
		if slices.Contains(pcs[:n], markPC) {
			return true
		}
		if n < len(pcs) {
			return false
		}
	}
}

// InsideRunBy reports whether the calling goroutine is inside a function Run runs that the
// function whose entry PC is caller called Run for (a driver's own Update: a driver tells
// its reads nested in its own transaction's function, which would wait for its write lock,
// from reads nested in another driver's, which may go on). Like Inside it costs one
// atomic load unless some function runs; then a walk of the stack and, at each mark, a
// look-up of the frame above it.
func InsideRunBy(caller uintptr) bool {
	if running.Load() == 0 {
		return false
	}
	var pcs [64]uintptr
	atMark := false // the last frame of the previous page was the mark
	for skip := 2; ; skip += len(pcs) {
		n := runtime.Callers(skip, pcs[:])
		for _, pc := range pcs[:n] {
			if atMark {
				if f := runtime.FuncForPC(pc - 1); f != nil && f.Entry() == caller {
					return true
				}
			}
			atMark = pc == markPC
		}
		if n < len(pcs) {
			return false
		}
	}
}
