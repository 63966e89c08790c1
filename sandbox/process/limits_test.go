//go:build linux

package process_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/sandbox/process"
	"github.com/switchyard-ai/switchyard/sandbox/sandboxtest"
)

// forkAndTouch forks children that each write childMiB of memory, wait until all have (or
// one died, or 20 s passed), and exit; run_batch reports how each child ended.
const forkAndTouch = `
import os, select, time

def run_batch(inputs, api_key):
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pids = []
    for _ in range(%[1]d):
        pid = os.fork()
        if pid == 0:
            os.close(go_w)
            data = b"x" * (%[2]d << 20)
            os.write(ready_w, b".")
            os.read(go_r, 1)
            os._exit(len(data) & 1)
        pids.append(pid)
    os.close(ready_w)
    got, ended = 0, {}
    deadline = time.monotonic() + 20
    while got + len(ended) < len(pids) and time.monotonic() < deadline:
        r, _, _ = select.select([ready_r], [], [], 0.1)
        if r and os.read(ready_r, 1):
            got += 1
        for pid in pids:
            if pid not in ended and os.waitpid(pid, os.WNOHANG)[0] == pid:
                ended[pid] = "died early"
    os.close(go_w)
    statuses = [ended.get(pid) or os.waitpid(pid, 0)[1] for pid in pids]
    return ["%%d ready, statuses %%r" %% (got, statuses)] * len(inputs), {}
`

func cgroupRunner(t *testing.T) *process.Runner {
	t.Helper()
	r := newRunner(t, process.Options{WorkDir: workDir(t)})
	t.Logf("run limiting: %s", r.Limiting())
	if r.Limiting() != process.LimitCgroupV1 && r.Limiting() != process.LimitCgroupV2 {
		t.Skipf("no usable cgroup here (%s): the whole-run memory limit needs a cgroup v2 with the memory and pids controllers delegated, or v1 as root", r.Limiting())
	}
	return r
}

// TestRunMemoryLimitCoversChildren: three children touching 400 MiB each stay under the
// per-process address-space limit (768 MiB) but not under the run's limit; the run fails
// with a clear memory error instead of holding 1.2 GiB.
func TestRunMemoryLimitCoversChildren(t *testing.T) {
	r := cgroupRunner(t)
	limits := sandbox.Limits{MemoryBytes: 768 << 20, Timeout: 60 * time.Second}
	res, err := r.Run(context.Background(), sandbox.Job{Files: sandboxtest.Bundle(fmt.Sprintf(forkAndTouch, 3, 400), sandboxtest.ExactEval),
		Rows: sandboxtest.Rows(1), Limits: limits})
	var je *sandbox.JobError
	if !errors.As(err, &je) || je.Reason != sandbox.ReasonMemoryLimit {
		if res != nil {
			t.Logf("predictions %q", res.Predictions)
		}
		t.Fatalf("err = %v, want a %s job error", err, sandbox.ReasonMemoryLimit)
	}
	if !strings.Contains(je.Message, "768 MiB") {
		t.Errorf("message %q does not state the limit", je.Message)
	}
	// Within the limit, the same agent runs.
	res, err = r.Run(context.Background(), sandbox.Job{Files: sandboxtest.Bundle(fmt.Sprintf(forkAndTouch, 3, 100), sandboxtest.ExactEval),
		Rows: sandboxtest.Rows(1), Limits: limits})
	if err != nil || !strings.HasPrefix(res.Predictions[0], "3 ready, statuses [0, 0, 0]") {
		t.Fatalf("run within the limit: %v, %+v", err, res)
	}
}

// TestConcurrentRunsDoNotShareProcessLimit: run A holds 20 processes while run B, with the
// same 32-process limit, starts 20 of its own. A limit shared between runs (one host uid's
// RLIMIT_NPROC) would refuse B's forks.
func TestConcurrentRunsDoNotShareProcessLimit(t *testing.T) {
	r := newRunner(t, process.Options{WorkDir: workDir(t)})
	if r.Limiting() == process.LimitOneProcess {
		t.Skipf("runs here are one process each (%s): nothing to share", r.Limiting())
	}
	held, release := make(chan struct{}, 1), make(chan struct{})
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		held <- struct{}{}
		select {
		case <-release:
		case <-req.Context().Done():
		}
		w.Write([]byte("released"))
	}))
	defer gw.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	holder := `
import os, urllib.request

def run_batch(inputs, api_key):
    go_r, go_w = os.pipe()
    pids = []
    for _ in range(20):
        pid = os.fork()
        if pid == 0:
            os.close(go_w)
            os.read(go_r, 1)
            os._exit(0)
        pids.append(pid)
    with urllib.request.urlopen(os.environ["OPENAI_BASE_URL"] + "/hold", timeout=60) as resp:
        text = resp.read().decode()
    os.close(go_w)
    for pid in pids:
        os.waitpid(pid, 0)
    return [text] * len(inputs), {}
`
	limits := sandbox.Limits{MaxProcesses: 32, Timeout: 60 * time.Second}
	type outcome struct {
		res *sandbox.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := r.Run(context.Background(), sandbox.Job{Files: sandboxtest.Bundle(holder, sandboxtest.ExactEval), Rows: sandboxtest.Rows(1),
			Limits: limits, Gateway: sandbox.Gateway{BaseURL: gw.URL + "/v1", APIKey: "k", Model: "m"}})
		done <- outcome{res, err}
	}()
	select {
	case <-held:
	case o := <-done:
		t.Fatalf("run A ended before holding its processes: %v %+v", o.err, o.res)
	}
	res, err := r.Run(context.Background(), sandbox.Job{Files: sandboxtest.Bundle(fmt.Sprintf(forkAndTouch, 20, 1), sandboxtest.ExactEval),
		Rows: sandboxtest.Rows(1), Limits: limits})
	close(release)
	if err != nil || !strings.HasPrefix(res.Predictions[0], "20 ready") {
		t.Errorf("run B while A holds 20 processes: %v %+v", err, res)
	}
	o := <-done
	if o.err != nil || o.res.Predictions[0] != "released" {
		t.Errorf("run A: %v %+v", o.err, o.res)
	}
}

// TestOneProcessPerRun: without a cgroup a run is one process (threads allowed): fork fails
// with a clear error, and the conformance suite still passes.
func TestOneProcessPerRun(t *testing.T) {
	work := workDir(t)
	r := newRunner(t, process.Options{WorkDir: work, CacheDir: workDir(t), PackageIndex: "http://127.0.0.1:1/simple", Cgroups: process.CgroupsOff})
	if r.Limiting() != process.LimitOneProcess {
		t.Skipf("no system call filter on this architecture: %s", r.Limiting())
	}
	agent := `
import os, threading, subprocess

def run_batch(inputs, api_key):
    box = []
    t = threading.Thread(target=lambda: box.append("thread ran"))
    t.start()
    t.join()
    errors = []
    for name, action in [("fork", os.fork), ("subprocess", lambda: subprocess.run(["/bin/true"]))]:
        try:
            if action() == 0:
                os._exit(0)
            errors.append(name + " worked")
        except OSError as exc:
            errors.append("%s refused: %s" % (name, exc))
    return ["; ".join(box + errors)] * len(inputs), {}
`
	res, err := r.Run(context.Background(), sandbox.Job{Files: sandboxtest.Bundle(agent, sandboxtest.ExactEval), Rows: sandboxtest.Rows(1)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := res.Predictions[0]
	if !strings.Contains(got, "thread ran") || !strings.Contains(got, "fork refused") || !strings.Contains(got, "subprocess refused") {
		t.Fatalf("prediction %q: want threads allowed and fork and subprocess refused", got)
	}
	sandboxtest.Run(t, r)
}
