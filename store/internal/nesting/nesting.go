// Package nesting tells a store driver that it is called from inside a transaction's
// function (store.Driver.Update's fn) on the same goroutine, which the driver contract
// forbids: such a call would wait for ever for what the outer transaction holds (a mutex,
// bbolt's writer lock, a row or an advisory lock) while the outer transaction waits for
// it. A driver runs every fn with its Marker's Run and refuses an Update (or a write of
// its own) when its Marker's Inside reports true, with an error matching store.ErrNested.
//
// The mark is a call of fn from Run, found on the calling goroutine's stack: Go gives no
// goroutine-local state, fn gets a Tx (not a context the driver could mark), and a
// goroutine's id costs a formatted stack trace (microseconds, growing with its depth, and
// an allocation). A count of the functions each Marker runs, anywhere, keeps the common
// case to one atomic load: when none of a store's runs, no call of it can be nested, and
// no stack is walked. One store's Update inside another's function therefore goes on
// unless the inner store is running a function of its own at the time (on another
// goroutine): the stack cannot tell whose Run it shows, so it is refused then, as a
// nested one (which also keeps two goroutines nesting two stores in turn from waiting
// for each other).
package nesting

import (
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/switchyard-ai/switchyard/store"
)

// Marker marks the transaction functions of one store: a driver instance, or the
// instances that may wait for each other's locks (pgstore's, on one database). The zero
// value is ready.
type Marker struct {
	running atomic.Int64 // functions Run runs for this Marker, on any goroutine
}

// running counts the transaction functions running in the process, of every Marker.
var running atomic.Int64

// runCode is the range [start, end) of Run's machine code: a goroutine one of whose
// callers' return addresses lies in it is inside a function Run runs. A range, not the
// one return address of Run's call of fn, so that a second call site the compiler adds
// in Run (a build with a profile, -pgo or a main package's default.pgo, devirtualising
// "fn == hot function" into a direct call, or inlining that function) is found as well.
var runCode = func() (r struct{ start, end uintptr }) {
	var m Marker
	var pc uintptr
	m.Run(func(store.Tx) error {
		var pcs [1]uintptr
		// 0 is runtime.Callers, 1 this function, 2 Run (at the return of its call of fn).
		if runtime.Callers(2, pcs[:]) == 1 {
			pc = pcs[0]
		}
		return nil
	}, nil)
	f := runtime.FuncForPC(pc - 1)
	if f == nil {
		panic("store/internal/nesting: cannot read the stack")
	}
	r.start, r.end = f.Entry(), pc
	for {
		// Entry, not the *Func: at code inlined into Run FuncForPC gives another one.
		if g := runtime.FuncForPC(r.end); g == nil || g.Entry() != r.start {
			return r
		}
		r.end++
	}
}()

// inRun reports whether pc, a return address read by runtime.Callers, is of a call made
// in Run's code.
func inRun(pc uintptr) bool { return pc-1 >= runCode.start && pc-1 < runCode.end }

// Run runs fn(tx) as a transaction's function of m's store: until it returns, m's Inside
// is true on the calling goroutine.
//
// Run is never inlined (//go:noinline; its defer blocks inlining today too): an inlined
// copy would put its code, and so the mark, in each caller's (TestInside checks the mark
// is in Run's own code, TestInsideUnderPGO a build with a profile).
//
//go:noinline
func (m *Marker) Run(fn func(tx store.Tx) error, tx store.Tx) error {
	running.Add(1)
	m.running.Add(1)
	defer func() {
		m.running.Add(-1)
		running.Add(-1)
	}()
	return fn(tx)
}

// Inside reports whether the calling goroutine may be inside a function m's Run runs:
// true when it is; true too when it is inside another Marker's function while one of m's
// runs on another goroutine (which Run called the one on its stack cannot be told then).
// It costs one atomic load unless one of m's functions runs; then a walk of the caller's
// stack, without allocating.
func (m *Marker) Inside() bool {
	if m.running.Load() == 0 {
		return false
	}
	return insideRun()
}

// insideRun reports whether a caller of its caller is a function Run runs (of any Marker).
func insideRun() bool {
	var pcs [64]uintptr
	for skip := 3; ; skip += len(pcs) {
		n := runtime.Callers(skip, pcs[:])
		if slices.ContainsFunc(pcs[:n], inRun) {
			return true
		}
		if n < len(pcs) {
			return false
		}
	}
}

// InsideRunBy reports whether the calling goroutine is inside a function Run runs (of any
// Marker) that the function whose entry PC is caller called Run for (a driver's own
// Update: a driver tells its reads nested in its own transaction's function, which would
// wait for its write lock, from reads nested in another driver's, which may go on). It
// costs one atomic load unless some function runs; then a walk of the stack and, at each
// mark, a look-up of the frame above it.
func InsideRunBy(caller uintptr) bool {
	if running.Load() == 0 {
		return false
	}
	var pcs [64]uintptr
	atMark := false // the last frame of the previous page was a mark
	for skip := 2; ; skip += len(pcs) {
		n := runtime.Callers(skip, pcs[:])
		for _, pc := range pcs[:n] {
			if atMark {
				if f := runtime.FuncForPC(pc - 1); f != nil && f.Entry() == caller {
					return true
				}
			}
			atMark = inRun(pc)
		}
		if n < len(pcs) {
			return false
		}
	}
}
