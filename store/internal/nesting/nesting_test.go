package nesting

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"sync"
	"testing"
	"time"

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
	// The mark must be Run's own code: were Run inlined (its //go:noinline dropped), its
	// call of fn would be in runCode's initialiser's code, and calls of Run elsewhere (the
	// drivers') would not be found nested.
	if mark, run := runtime.FuncForPC(runCode.start), runtime.FuncForPC(reflect.ValueOf((*Marker).Run).Pointer()); mark == nil || run == nil || mark.Entry() != run.Entry() || runCode.end <= runCode.start {
		t.Fatalf("the mark [%#x, %#x) is not Run's own code (%v), so Inside would miss the drivers' calls", runCode.start, runCode.end, mark.Name())
	}
	var m Marker
	if m.Inside() {
		t.Fatal("Inside outside any function")
	}
	for _, depth := range []int{0, 63, 64, 200} {
		var got bool
		m.Run(func(store.Tx) error {
			deep(depth, func() { got = m.Inside() })
			return nil
		}, nil)
		if !got {
			t.Errorf("Inside %d frames below Run's function = false, want true", depth)
		}
	}
	if m.Inside() {
		t.Fatal("Inside after the function returned")
	}
	// Another goroutine's function running makes no other goroutine inside.
	in, out := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		m.Run(func(store.Tx) error { close(in); <-out; return nil }, nil)
	}()
	<-in
	if m.Inside() {
		t.Error("Inside while another goroutine's function runs = true, want false")
	}
	close(out)
	wg.Wait()
	// A function that panics leaves the goroutine outside.
	func() {
		defer func() { recover() }()
		m.Run(func(store.Tx) error { panic("boom") }, nil)
	}()
	if m.running.Load() != 0 || running.Load() != 0 || m.Inside() {
		t.Errorf("after a panicking function: running %d (all %d), Inside %v; want 0, 0, false", m.running.Load(), running.Load(), m.Inside())
	}
}

// TestInsideOtherStore: one store's Update inside another store's function was refused
// (the mark was one for the process), though nothing of the outer store is waited for.
// Each store's Marker now says inside only for its own functions, unless one of its own
// runs on another goroutine at the time (the stack cannot tell whose Run it shows: then
// it says inside, the safe answer).
func TestInsideOtherStore(t *testing.T) {
	var a, b Marker
	var bInA, aInA bool
	a.Run(func(store.Tx) error { bInA, aInA = b.Inside(), a.Inside(); return nil }, nil)
	if bInA || !aInA {
		t.Errorf("inside a's function: b.Inside %v, a.Inside %v; want false, true", bInA, aInA)
	}
	in, out := make(chan struct{}), make(chan struct{})
	go b.Run(func(store.Tx) error { close(in); <-out; return nil }, nil)
	<-in
	a.Run(func(store.Tx) error { bInA = b.Inside(); return nil }, nil)
	close(out)
	if !bInA {
		t.Error("inside a's function while b's runs on another goroutine: b.Inside false, want true (which Run is on the stack cannot be told)")
	}
}

// pgoProbeEnv selects TestPGOProbe's part when TestInsideUnderPGO runs the test binary.
const pgoProbeEnv = "SWITCHYARD_NESTING_PGO_PROBE"

var (
	probeMarker Marker
	probeSink   int
	probeSeen   bool
)

// probeHot is the function TestPGOProbe makes hot at Run's call of fn: a function (not a
// closure) of the package Run is compiled in, which a build with the profile may call
// directly, past a "fn == probeHot" test, from a second call site in Run.
func probeHot(store.Tx) error {
	for i := range 64 {
		probeSink += i
	}
	if probeSink < 0 {
		probeSeen = probeMarker.Inside()
	}
	return nil
}

// TestPGOProbe is TestInsideUnderPGO's program, run in a binary of its own: "hot" makes
// Run's call of probeHot hot (for the CPU profile the binary writes), "check" fails when
// Inside misses probeHot's call nested.
func TestPGOProbe(t *testing.T) {
	switch os.Getenv(pgoProbeEnv) {
	case "hot":
		for end := time.Now().Add(time.Second); time.Now().Before(end); {
			for range 10000 {
				probeMarker.Run(probeHot, nil)
			}
		}
	case "check":
		probeSink = -1 << 40
		probeMarker.Run(probeHot, nil)
		if !probeSeen {
			t.Fatal("Inside is false in the hot function Run runs: a call site the profile added is not found")
		}
	default:
		t.Skip("run by TestInsideUnderPGO")
	}
}

// pgoProfile is a CPU profile of TestPGOProbe's "hot" part, kept so that the build with
// it is cached from one run to the next. When Run's code changes, the profile may no
// longer match it (the compiler then devirtualises nothing): the test makes a new one
// (which costs a build of everything with it), and says how to keep it.
const pgoProfile = "testdata/run_hot.pprof"

// TestInsideUnderPGO: the mark was the one return address of Run's call of fn, so a
// build with a profile (-pgo, or a default.pgo in a main package's directory) whose hot
// function Run calls it devirtualised ("fn == hot function", a direct call, here inlined:
// a second call site) would not see that function's Updates as nested. The mark is now
// Run's code; this builds the package's tests with a profile in which Run's call of
// probeHot is hot, checks the compiler did devirtualise it, and that Inside finds the
// call nested. Slow the first time (a build of everything with the profile): skipped with
// -short.
func TestInsideUnderPGO(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the package's tests with a profile: slow")
	}
	if os.Getenv(pgoProbeEnv) != "" {
		t.Skip("in the probe")
	}
	// The build with a profile recompiles the standard library (about 75 s on 2 cores with
	// a cold cache), so the suite runs it only when the module builds with a profile — a
	// default.pgo beside a main package — or when asked.
	if pgo := moduleDefaultPGO(t); pgo == "" && os.Getenv("SWITCHYARD_PGO_CHECK") == "" {
		t.Skip("no default.pgo in the module: set SWITCHYARD_PGO_CHECK=1 to check Inside under a profile-guided build anyway")
	}
	gobin, err := exec.LookPath("go") // go test puts its own first in PATH
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	dir := t.TempDir()
	probe := filepath.Join(dir, "probe.test")
	pkg := reflect.TypeFor[Marker]().PkgPath()
	devirtualised := func(profile string) bool {
		build := exec.Command(gobin, "test", "-c", "-o", probe, "-pgo="+profile, "-gcflags="+pkg+"=-m", ".")
		out, err := build.CombinedOutput()
		if err != nil {
			t.Fatalf("building with the profile: %v\n%s", err, out)
		}
		return regexp.MustCompile(`PGO devirtualizing function call fn to .*probeHot`).Match(out)
	}
	if !devirtualised(pgoProfile) {
		profile := filepath.Join(dir, "run_hot.pprof")
		hot := exec.Command(os.Args[0], "-test.run=^TestPGOProbe$", "-test.cpuprofile="+profile)
		hot.Env = append(os.Environ(), pgoProbeEnv+"=hot")
		if out, err := hot.CombinedOutput(); err != nil {
			t.Fatalf("profiling the hot call: %v\n%s", err, out)
		}
		if !devirtualised(profile) {
			t.Fatal("a build with a profile in which Run's call of probeHot is hot did not devirtualise it, so this test checks nothing")
		}
		t.Logf("%s no longer matches Run's code: keep a new one with\n\t%s=hot go test ./store/internal/nesting -run '^TestPGOProbe$' -count=1 -cpuprofile store/internal/nesting/%s", pgoProfile, pgoProbeEnv, pgoProfile)
	}
	check := exec.Command(probe, "-test.run=^TestPGOProbe$", "-test.v")
	check.Env = append(os.Environ(), pgoProbeEnv+"=check")
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("in the build with the profile: %v\n%s", err, out)
	}
}

func BenchmarkInside(b *testing.B) {
	var m Marker
	b.Run("none running", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.Inside()
		}
	})
	b.Run("another store's running", func(b *testing.B) {
		var other Marker
		in, out := make(chan struct{}), make(chan struct{})
		go other.Run(func(store.Tx) error { close(in); <-out; return nil }, nil)
		<-in
		defer close(out)
		b.ReportAllocs()
		for b.Loop() {
			m.Inside()
		}
	})
	b.Run("another goroutine's running", func(b *testing.B) {
		in, out := make(chan struct{}), make(chan struct{})
		go m.Run(func(store.Tx) error { close(in); <-out; return nil }, nil)
		<-in
		defer close(out)
		b.ReportAllocs()
		deep(30, func() {
			for b.Loop() {
				m.Inside()
			}
		})
	})
}

// moduleDefaultPGO returns the first default.pgo file in the module (the profile `go build`
// applies to the main package beside it), or "" when there is none.
func moduleDefaultPGO(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root is not three levels up: %v", err)
	}
	found := ""
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		switch {
		case found != "":
			return filepath.SkipAll
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata"):
			return filepath.SkipDir
		case !d.IsDir() && d.Name() == "default.pgo":
			found = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
