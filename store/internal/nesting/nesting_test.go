package nesting

import (
	"reflect"
	"runtime"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// deep calls f n frames below its caller, so a mark far up the stack must be found past
// the first page of callers Inside reads.
func deep(n int, f func()) {
	if n == 0 {
		f()
		return
	}
	deep(n-1, f)
}

func TestInside(t *testing.T) {
	// markPC must be the return address of a call in Run's own frame: were Run inlined
	// (its //go:noinline dropped), it would be in markPC's initialiser's code, and calls of
	// Run elsewhere (the drivers') would not be found nested.
	if mark, run := runtime.FuncForPC(markPC), runtime.FuncForPC(reflect.ValueOf(Run).Pointer()); mark == nil || run == nil || mark.Entry() != run.Entry() {
		t.Fatalf("markPC %#x is not in Run's own code (%v), so Inside would miss the drivers' calls", markPC, mark.Name())
	}
	if Inside() {
		t.Fatal("Inside outside any function")
	}
	for _, depth := range []int{0, 63, 64, 200} {
		var got bool
		Run(func(store.Tx) error {
			deep(depth, func() { got = Inside() })
			return nil
		}, nil)
		if !got {
			t.Errorf("Inside %d frames below Run's function = false, want true", depth)
		}
	}
	if Inside() {
		t.Fatal("Inside after the function returned")
	}
	// Another goroutine's function running makes no other goroutine inside.
	in, out := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		Run(func(store.Tx) error { close(in); <-out; return nil }, nil)
	}()
	<-in
	if Inside() {
		t.Error("Inside while another goroutine's function runs = true, want false")
	}
	close(out)
	wg.Wait()
	// A function that panics leaves the goroutine outside.
	func() {
		defer func() { recover() }()
		Run(func(store.Tx) error { panic("boom") }, nil)
	}()
	if running.Load() != 0 || Inside() {
		t.Errorf("after a panicking function: running %d, Inside %v; want 0, false", running.Load(), Inside())
	}
}

func BenchmarkInside(b *testing.B) {
	b.Run("none running", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Inside()
		}
	})
	b.Run("another goroutine's running", func(b *testing.B) {
		in, out := make(chan struct{}), make(chan struct{})
		go Run(func(store.Tx) error { close(in); <-out; return nil }, nil)
		<-in
		defer close(out)
		b.ReportAllocs()
		deep(30, func() {
			for b.Loop() {
				Inside()
			}
		})
	})
}
