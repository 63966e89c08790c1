// Package sandboxtest is the conformance suite every sandbox backend passes: the happy path
// (with an agent calling a fake gateway through plain urllib), the result validation, and the
// escape and abuse table of the sandbox issue.
package sandboxtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// TableTimeout is the wall-clock limit of the suite's jobs (the timeout cases use less):
// generous, because a WASI CPython job that takes 2 s on a quiet machine took over 10 s
// on one loaded by parallel builds, and a job cut by the limit fails the case.
const TableTimeout = 30 * time.Second

// Run runs the conformance suite against runner.
func Run(t *testing.T, runner sandbox.Runner) {
	t.Run("Happy", func(t *testing.T) { testHappy(t, runner) })
	t.Run("Gateway", func(t *testing.T) { testGateway(t, runner) })
	t.Run("NoGateway", func(t *testing.T) { testNoGateway(t, runner) })
	t.Run("EnvironmentCleared", func(t *testing.T) { testEnvironment(t, runner) })
	t.Run("InvalidJob", func(t *testing.T) { testInvalidJob(t, runner) })
	t.Run("Cancel", func(t *testing.T) { testCancel(t, runner) })
	t.Run("Abuse", func(t *testing.T) { testAbuse(t, runner) })
	t.Run("Integrity", func(t *testing.T) { testIntegrity(t, runner) })
	t.Run("Stdlib", func(t *testing.T) { testStdlib(t, runner) })
	t.Run("Feedback", func(t *testing.T) { testFeedback(t, runner) })
	t.Run("DSPyMetricHint", func(t *testing.T) { testDSPyMetricHint(t, runner) })
	// After the abuse table the host must still run jobs normally.
	t.Run("HealthyAfterAbuse", func(t *testing.T) { testHappy(t, runner) })
}

func run(t *testing.T, runner sandbox.Runner, job sandbox.Job) (*sandbox.Result, error) {
	t.Helper()
	if job.Limits.Timeout == 0 {
		job.Limits.Timeout = TableTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return runner.Run(ctx, job)
}

// testFeedback: a scorer returning (score, feedback) pairs gives both, row by row.
func testFeedback(t *testing.T, runner sandbox.Runner) {
	rows := Rows(2)
	rows[1].Answer = "other"
	res, err := run(t, runner, sandbox.Job{Files: Bundle(EchoAgent, FeedbackEval), Rows: rows})
	if err != nil {
		t.Fatalf("Run: %v (stderr: %s)", err, stderrOf(res))
	}
	if !slices.Equal(res.Scores, []float64{1, 0}) {
		t.Errorf("scores = %v, want [1 0]", res.Scores)
	}
	want := []string{"", "expected 'other', got 'QUESTION 1'"}
	if !slices.Equal(res.Feedback, want) {
		t.Errorf("feedback = %q, want %q", res.Feedback, want)
	}
	// Plain numbers: no feedback at all.
	res, err = run(t, runner, sandbox.Job{Files: Bundle(EchoAgent, ExactEval), Rows: rows})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Feedback != nil {
		t.Errorf("feedback = %q with a scorer returning numbers, want nil", res.Feedback)
	}
}

// testDSPyMetricHint: a DSPy metric(example, pred, trace=None) pasted as score fails on
// the answer strings it gets; the message says what score is given instead.
func testDSPyMetricHint(t *testing.T, runner sandbox.Runner) {
	eval := "def score(example, pred, trace=None):\n    return example.answer == pred.answer\n"
	_, err := run(t, runner, sandbox.Job{Files: Bundle(EchoAgent, eval), Rows: Rows(1)})
	je := wantJobError(t, err, sandbox.ReasonException)
	if je != nil && (!strings.Contains(je.Message, "score (row 0) raised AttributeError") ||
		!strings.Contains(je.Message, "use expected for example.answer and predicted for pred.answer")) {
		t.Errorf("message %q, want the AttributeError and the hint", je.Message)
	}
}

func testHappy(t *testing.T, runner sandbox.Runner) {
	rows := Rows(3)
	rows[2].Answer = "something else"
	res, err := run(t, runner, sandbox.Job{Files: Bundle(EchoAgent, ExactEval), Rows: rows})
	if err != nil {
		t.Fatalf("Run: %v (stderr: %s)", err, stderrOf(res))
	}
	want := []string{"QUESTION 0", "QUESTION 1", "QUESTION 2"}
	if !slices.Equal(res.Predictions, want) {
		t.Errorf("predictions = %q, want %q", res.Predictions, want)
	}
	if !slices.Equal(res.Scores, []float64{1, 1, 0}) {
		t.Errorf("scores = %v, want [1 1 0]", res.Scores)
	}
	if res.Usage != (sandbox.Usage{Tokens: 15, Cost: 0.5}) {
		t.Errorf("usage = %+v, want {15 0.5}", res.Usage)
	}
	if got := res.Mean(); got < 0.66 || got > 0.67 {
		t.Errorf("mean = %v, want 2/3", got)
	}
	if !strings.Contains(res.Stdout, "echo agent: 3 inputs") {
		t.Errorf("stdout tail %q lacks the agent's print", res.Stdout)
	}
	if strings.Contains(res.Stdout, "SWITCHYARD") {
		t.Errorf("stdout tail %q contains the harness frame", res.Stdout)
	}
	if !strings.Contains(res.Stderr, "echo agent warning") {
		t.Errorf("stderr tail %q lacks the agent's warning", res.Stderr)
	}
	if res.Duration <= 0 {
		t.Errorf("duration = %v", res.Duration)
	}
}

func testGateway(t *testing.T, runner sandbox.Runner) {
	gw := NewFakeGateway(t)
	rows := Rows(4)
	res, err := run(t, runner, sandbox.Job{Files: Bundle(GatewayAgent, ExactEval), Rows: rows, Gateway: gw.Gateway})
	if err != nil {
		t.Fatalf("Run: %v (stderr: %s)", err, stderrOf(res))
	}
	if gw.Calls() != len(rows) {
		t.Errorf("gateway served %d calls, want %d", gw.Calls(), len(rows))
	}
	if m := gw.Models(); m[gw.Gateway.Model] != len(rows) {
		t.Errorf("gateway saw models %v, want %d calls for %s", m, len(rows), gw.Gateway.Model)
	}
	for i, p := range res.Predictions {
		if p != rows[i].Answer {
			t.Errorf("prediction %d = %q, want %q", i, p, rows[i].Answer)
		}
	}
	if res.Mean() != 1 {
		t.Errorf("mean = %v, want 1", res.Mean())
	}
	if res.Usage.Tokens != int64(10*len(rows)) {
		t.Errorf("usage tokens = %d, want %d", res.Usage.Tokens, 10*len(rows))
	}
}

// testNoGateway: without a gateway the agent has no network at all.
func testNoGateway(t *testing.T, runner sandbox.Runner) {
	_, err := run(t, runner, sandbox.Job{Files: Bundle(GatewayAgent, ExactEval), Rows: Rows(1)})
	wantJobError(t, err, sandbox.ReasonException)
}

func testEnvironment(t *testing.T, runner sandbox.Runner) {
	t.Setenv("SWITCHYARD_SANDBOX_HOST_SECRET", "hunter2")
	agent := `
import os
def run_batch(inputs, api_key):
    return [" ".join(sorted(os.environ)) + " key=" + api_key] * len(inputs), {}
`
	gw := NewFakeGateway(t)
	res, err := run(t, runner, sandbox.Job{Files: Bundle(agent, ExactEval), Rows: Rows(1), Gateway: gw.Gateway})
	if err != nil {
		t.Fatalf("Run: %v (stderr: %s)", err, stderrOf(res))
	}
	got := res.Predictions[0]
	if strings.Contains(got, "SWITCHYARD_SANDBOX_HOST_SECRET") {
		t.Errorf("host environment leaked into the sandbox: %s", got)
	}
	for _, want := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "SWITCHYARD_MODEL", "key=" + gw.Gateway.APIKey} {
		if !strings.Contains(got, want) {
			t.Errorf("sandbox environment %q lacks %s", got, want)
		}
	}
}

func testInvalidJob(t *testing.T, runner sandbox.Runner) {
	for name, job := range map[string]sandbox.Job{
		"no agent.py":  {Files: map[string][]byte{"eval.py": []byte(ExactEval)}, Rows: Rows(1)},
		"no rows":      {Files: Bundle(EchoAgent, ExactEval)},
		"dotdot name":  {Files: map[string][]byte{"agent.py": nil, "eval.py": nil, "../x.py": nil}, Rows: Rows(1)},
		"absolute":     {Files: map[string][]byte{"agent.py": nil, "eval.py": nil, "/etc/x.py": nil}, Rows: Rows(1)},
		"bad gateway":  {Files: Bundle(EchoAgent, ExactEval), Rows: Rows(1), Gateway: sandbox.Gateway{BaseURL: "ftp://x"}},
		"bad deps":     {Files: Bundle("DEPENDENCIES = ['--index-url=http://evil']\n"+EchoAgent, ExactEval), Rows: Rows(1)},
		"neg timeouts": {Files: Bundle(EchoAgent, ExactEval), Rows: Rows(1), Limits: sandbox.Limits{Timeout: -1}},
	} {
		_, err := runner.Run(context.Background(), job)
		if !errors.Is(err, sandbox.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

// testCancel: cancelling the caller's context stops the run and is not a job error.
func testCancel(t *testing.T, runner sandbox.Runner) {
	agent := "import time\ndef run_batch(inputs, api_key):\n    time.sleep(3600)\n"
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	_, err := runner.Run(ctx, sandbox.Job{Files: Bundle(agent, ExactEval), Rows: Rows(1),
		Limits: sandbox.Limits{Timeout: 30 * time.Second}})
	if !errors.Is(err, context.Canceled) || errors.Is(err, sandbox.ErrJob) {
		t.Errorf("err = %v, want context.Canceled and not ErrJob", err)
	}
}

// abuse is one row of the escape and abuse table.
type abuse struct {
	name    string
	agent   string // attemptPrelude is prepended
	eval    string // default ExactEval
	limits  sandbox.Limits
	reasons []string // accepted JobError reasons
	message string   // substring the message must contain ("" = any)
	check   func(t *testing.T)
}

func testAbuse(t *testing.T, runner sandbox.Runner) {
	// Host-side targets the code must not reach.
	hostDir := t.TempDir()
	secret := filepath.Join(hostDir, "secret.txt")
	if err := os.WriteFile(secret, []byte("host secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := listener.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := listener.Addr().(*net.TCPAddr).Port
	hostIP := "127.0.0.1"
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
				hostIP = ipn.IP.String()
				break
			}
		}
	}
	unixSock := filepath.Join(hostDir, "host.sock")
	if ul, err := net.Listen("unix", unixSock); err == nil {
		defer ul.Close()
	}
	outside := filepath.Join(hostDir, "written.txt")
	marker := randomMarker()
	rel := strings.Repeat("../", 12) + strings.TrimPrefix(secret, "/")

	table := []abuse{
		{name: "SocketToHost", reasons: []string{sandbox.ReasonException}, message: "contained", agent: fmt.Sprintf(`
def run_batch(inputs, api_key):
    return attempt(inputs, [
        ("loopback", lambda: socket.create_connection(("127.0.0.1", %[1]d), timeout=1)),
        ("host ip", lambda: socket.create_connection(("%[2]s", %[1]d), timeout=1)),
        ("unix", lambda: socket.socket(socket.AF_UNIX).connect(%[3]q)),
    ])
`, port, hostIP, unixSock), check: func(t *testing.T) {
			select {
			case <-accepted:
				t.Errorf("the host listener accepted a connection from the sandbox")
			default:
			}
		}},
		{name: "SocketToInternet", reasons: []string{sandbox.ReasonException}, message: "contained", agent: `
import urllib.request
def run_batch(inputs, api_key):
    return attempt(inputs, [
        ("ip", lambda: socket.create_connection(("1.1.1.1", 53), timeout=1)),
        ("dns", lambda: socket.getaddrinfo("example.com", 80)),
        ("urllib", lambda: urllib.request.urlopen("http://example.com/", timeout=1).read()),
    ])
`},
		{name: "ReadPasswd", reasons: []string{sandbox.ReasonException}, message: "contained", agent: `
def run_batch(inputs, api_key):
    return attempt(inputs, [
        ("passwd", lambda: open("/etc/passwd").read()),
        ("shadow", lambda: open("/etc/shadow").read()),
        ("dotdot passwd", lambda: open("../../../../etc/passwd").read()),
        ("root home", lambda: os.listdir("/root")),
    ])
`},
		{name: "ReadOutsideJobDir", reasons: []string{sandbox.ReasonException}, message: "contained", agent: fmt.Sprintf(`
def run_batch(inputs, api_key):
    return attempt(inputs, [
        ("absolute", lambda: open(%[1]q).read()),
        ("dotdot", lambda: open(%[2]q).read()),
        ("job dotdot", lambda: open("/job/../" + %[2]q).read()),
    ])
`, secret, rel)},
		{name: "WriteOutsideTmp", reasons: []string{sandbox.ReasonException}, message: "contained", agent: fmt.Sprintf(`
def write(path):
    with open(path, "w") as f:
        f.write("pwned")
    return path
def run_batch(inputs, api_key):
    return attempt(inputs, [
        ("host dir", lambda: write(%[1]q)),
        ("job dir", lambda: write("/job/agent.py")),
        ("new file in job dir", lambda: write("/job/new.py")),
        ("root", lambda: write("/pwned")),
        ("usr", lambda: write("/usr/pwned")),
        ("dotdot", lambda: write("../pwned")),
    ])
`, outside), check: func(t *testing.T) {
			if _, err := os.Stat(outside); err == nil {
				t.Errorf("the sandbox wrote %s on the host", outside)
			}
		}},
		{name: "SymlinkOutOfTmp", reasons: []string{sandbox.ReasonException}, message: "contained", agent: fmt.Sprintf(`
def link_and_read(target, name):
    os.symlink(target, name)
    return open(name).read()
def run_batch(inputs, api_key):
    return attempt(inputs, [
        ("passwd", lambda: link_and_read("/etc/passwd", "/tmp/l1")),
        ("host secret", lambda: link_and_read(%[1]q, "/tmp/l2")),
        ("dotdot", lambda: link_and_read(%[2]q, "/tmp/l3")),
    ])
`, secret, rel)},
		// Kernel interfaces an agent never needs, reached through ctypes (absent under WASI):
		// each succeeds in a plain user namespace, so only a system call filter stops them.
		{name: "DangerousSyscalls", reasons: []string{sandbox.ReasonException}, message: "contained", agent: `
def syscall(nr, *args):
    import ctypes, platform
    if platform.machine() != "x86_64":
        raise OSError("x86_64 system call numbers")
    libc = ctypes.CDLL(None, use_errno=True)
    ret = libc.syscall(nr, *args)
    if ret < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return ret
def buf(n):
    import ctypes
    return ctypes.create_string_buffer(n)
def run_batch(inputs, api_key):
    return attempt(inputs, [
        ("personality", lambda: syscall(135, 0xffffffff)),
        ("ptrace", lambda: syscall(101, 0, 0, 0, 0)),
        ("io_uring_setup", lambda: syscall(425, 1, buf(120))),
        ("keyctl", lambda: syscall(250, 0, -3, 0)),
        ("unshare user namespace", lambda: syscall(272, 0x10000000)),
    ])
`},
		{name: "BigTmpFile", reasons: []string{sandbox.ReasonException},
			limits: sandbox.Limits{MaxFileBytes: 4 << 20}, agent: `
def run_batch(inputs, api_key):
    import tempfile
    with open(os.path.join(tempfile.gettempdir(), "big"), "wb") as f:
        for _ in range(64):
            f.write(b"x" * (1 << 20))
    return [""] * len(inputs), {}
`},
		{name: "ForkBomb", reasons: []string{sandbox.ReasonException, sandbox.ReasonTimeout},
			limits: sandbox.Limits{Timeout: 10 * time.Second}, agent: `
def run_batch(inputs, api_key):
    while True:
        os.fork()
`},
		{name: "Allocate4GiB", reasons: []string{sandbox.ReasonException}, message: "MemoryError",
			limits: sandbox.Limits{MemoryBytes: 1 << 30}, agent: `
def run_batch(inputs, api_key):
    blocks = [bytearray(1 << 30) for _ in range(4)]
    return [str(len(blocks))] * len(inputs), {}
`},
		{name: "SpinForever", reasons: []string{sandbox.ReasonTimeout},
			limits: sandbox.Limits{Timeout: 1500 * time.Millisecond}, agent: `
def run_batch(inputs, api_key):
    while True:
        pass
`},
		{name: "SleepPastDeadline", reasons: []string{sandbox.ReasonTimeout},
			limits: sandbox.Limits{Timeout: 1500 * time.Millisecond}, agent: `
def run_batch(inputs, api_key):
    time.sleep(3600)
    return [""] * len(inputs), {}
`},
		// The harness process vanishes after detaching a grandchild into its own session;
		// the grandchild must die with the sandbox instead of outliving it.
		{name: "DetachWithSetsid", reasons: []string{sandbox.ReasonExit, sandbox.ReasonException}, agent: fmt.Sprintf(`
def run_batch(inputs, api_key):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)", %q])
        os._exit(0)
    time.sleep(0.3)
    os._exit(0)
`, marker), check: func(t *testing.T) { waitNoProcess(t, marker) }},
		{name: "Print1GiB", reasons: []string{sandbox.ReasonOutputLimit},
			limits: sandbox.Limits{MaxOutputBytes: 1 << 20}, agent: `
def run_batch(inputs, api_key):
    chunk = "x" * (1 << 20)
    for _ in range(1024):
        sys.stdout.write(chunk)
    return [""] * len(inputs), {}
`},
		{name: "ScoreNotANumber", reasons: []string{sandbox.ReasonInvalidResult}, message: "score", agent: EchoAgent,
			eval: "def score(expected, predicted):\n    return 'high'\n"},
		{name: "ScoreNaN", reasons: []string{sandbox.ReasonInvalidResult}, message: "score", agent: EchoAgent,
			eval: "def score(expected, predicted):\n    return float('nan')\n"},
		{name: "ScoreOfSeven", reasons: []string{sandbox.ReasonInvalidResult}, message: "7", agent: EchoAgent,
			eval: "def score(expected, predicted):\n    return 7\n"},
		{name: "WrongPredictionCount", reasons: []string{sandbox.ReasonInvalidResult}, message: "predictions", agent: `
def run_batch(inputs, api_key):
    return inputs[:-1], {}
`},
		{name: "NotAPair", reasons: []string{sandbox.ReasonInvalidResult}, message: "pair", agent: `
def run_batch(inputs, api_key):
    return None
`},
		{name: "BadUsage", reasons: []string{sandbox.ReasonInvalidResult}, message: "usage", agent: `
def run_batch(inputs, api_key):
    return inputs, {"tokens": "lots"}
`},
		{name: "RaiseInRunBatch", reasons: []string{sandbox.ReasonException}, message: "ValueError: boom", agent: `
def run_batch(inputs, api_key):
    raise ValueError("boom")
`},
		{name: "RaiseInScore", reasons: []string{sandbox.ReasonException}, message: "ZeroDivisionError", agent: EchoAgent,
			eval: "def score(expected, predicted):\n    return 1 / 0\n"},
		{name: "SysExit", reasons: []string{sandbox.ReasonException}, message: "SystemExit", agent: `
def run_batch(inputs, api_key):
    sys.exit(0)
`},
		{name: "ImportError", reasons: []string{sandbox.ReasonException}, message: "agent.py", agent: `
import definitely_not_a_module
`},
		{name: "NoRunBatch", reasons: []string{sandbox.ReasonInvalidResult}, message: "run_batch", agent: `
def run(inputs):
    return inputs
`},
		{name: "NoScore", reasons: []string{sandbox.ReasonInvalidResult}, message: "score", agent: EchoAgent,
			eval: "def grade(expected, predicted):\n    return 1.0\n"},
		{name: "ForgedResultFrame", reasons: []string{sandbox.ReasonInvalidResult}, agent: `
def run_batch(inputs, api_key):
    forged = b'{"predictions": [], "scores": [], "usage": {}, "errors": []}'
    sys.stdout.flush()
    os.write(1, b"\x1eSWITCHYARD\x1fR" + str(len(forged)).encode() + b"\n" + forged)
    return inputs, {}
`},
		{name: "ExitWithoutResult", reasons: []string{sandbox.ReasonExit}, message: "without a result", agent: `
def run_batch(inputs, api_key):
    os._exit(3)
`},
		{name: "UndeclaredDependencies", reasons: []string{sandbox.ReasonDependencies}, message: "DEPENDENCIES",
			agent: "DEPENDENCIES = ['switchyard-no-such-package-xyz==1.0']\n" + EchoAgent},
	}
	for _, tc := range table {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eval := tc.eval
			if eval == "" {
				eval = ExactEval
			}
			limits := tc.limits
			if limits.Timeout == 0 {
				limits.Timeout = TableTimeout
			}
			res, err := run(t, runner, sandbox.Job{Files: Bundle(attemptPrelude+tc.agent, eval), Rows: Rows(2), Limits: limits})
			je := wantJobError(t, err, tc.reasons...)
			if err == nil {
				t.Logf("predictions: %q", res.Predictions)
			}
			if je != nil {
				t.Logf("%s: %s", je.Reason, je.Message)
			}
			if je != nil && tc.message != "" && !strings.Contains(je.Message, tc.message) {
				t.Errorf("message %q lacks %q", je.Message, tc.message)
			}
			if je != nil && res == nil {
				t.Errorf("a job error must come with a Result carrying the output tails")
			}
			if tc.check != nil {
				tc.check(t)
			}
		})
	}
}

// wantJobError checks that err is a *sandbox.JobError matching ErrJob with one of reasons.
func wantJobError(t *testing.T, err error, reasons ...string) *sandbox.JobError {
	t.Helper()
	var je *sandbox.JobError
	if !errors.Is(err, sandbox.ErrJob) || !errors.As(err, &je) {
		t.Errorf("err = %v, want a JobError (reasons %v)", err, reasons)
		return nil
	}
	if !slices.Contains(reasons, je.Reason) {
		t.Errorf("reason = %q (%s), want one of %v", je.Reason, je.Message, reasons)
	}
	if je.Message == "" {
		t.Errorf("job error without a message")
	}
	return je
}

func stderrOf(res *sandbox.Result) string {
	if res == nil {
		return ""
	}
	return res.Stderr
}

func randomMarker() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "switchyard-detach-" + hex.EncodeToString(b)
}

// waitNoProcess fails the test if a process whose command line holds marker is still alive
// a few seconds after the run (it may take the kernel a moment to reap the namespace).
func waitNoProcess(t *testing.T, marker string) {
	t.Helper()
	var pids []string
	for range 40 {
		pids = processesWith(marker)
		if len(pids) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("processes %v outlived the sandbox", pids)
}

func processesWith(marker string) []string {
	entries, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), marker) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
