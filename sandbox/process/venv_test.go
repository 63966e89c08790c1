//go:build linux

package process_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/sandbox/process"
	"github.com/switchyard-ai/switchyard/sandbox/sandboxtest"
)

// fakeWheel builds a pure-Python wheel for package name, version 1.0, whose module defines
// VALUE = value.
func fakeWheel(t *testing.T, name, value string) []byte {
	t.Helper()
	files := []struct{ path, body string }{
		{name + "/__init__.py", fmt.Sprintf("VALUE = %q\n", value)},
		{name + "-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n"},
		{name + "-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: switchyard-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		w, err := zw.Create(f.path)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f.body))
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.path, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	recordPath := name + "-1.0.dist-info/RECORD"
	fmt.Fprintf(&record, "%s,,\n", recordPath)
	w, err := zw.Create(recordPath)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(record.String()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fakeIndex is a PEP 503 "simple" package index serving one wheel; a fake for tests.
func fakeIndex(t *testing.T, name string, wheel []byte) (url string, requests *atomic.Int64) {
	requests = new(atomic.Int64)
	sum := sha256.Sum256(wheel)
	file := name + "-1.0-py3-none-any.whl"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		switch r.URL.Path {
		case "/simple/" + name + "/":
			fmt.Fprintf(w, `<html><body><a href="/files/%s#sha256=%s">%s</a></body></html>`, file, hex.EncodeToString(sum[:]), file)
		case "/files/" + file:
			w.Write(wheel)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/simple", requests
}

func TestDependenciesInstalledOnceFromTheIndex(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import ensurepip").Run(); err != nil {
		t.Fatalf("python3 cannot create virtualenvs (install the Debian package python3-venv): %v", err)
	}
	index, requests := fakeIndex(t, "swytestpkg", fakeWheel(t, "swytestpkg", "from-the-wheel"))
	r := newRunner(t, process.Options{WorkDir: workDir(t), CacheDir: workDir(t), PackageIndex: index})
	agent := `
DEPENDENCIES = ["swytestpkg==1.0"]
import swytestpkg
def run_batch(inputs, api_key):
    return [swytestpkg.VALUE] * len(inputs), {}
`
	job := sandbox.Job{Files: sandboxtest.Bundle(agent, sandboxtest.ExactEval), Rows: sandboxtest.Rows(2)}
	res, err := r.Run(context.Background(), job)
	if err != nil {
		t.Fatalf("Run: %v (stderr %s)", err, res.Stderr)
	}
	if res.Predictions[0] != "from-the-wheel" {
		t.Fatalf("predictions = %q", res.Predictions)
	}
	before := requests.Load()
	if before == 0 {
		t.Fatal("the index was never asked")
	}
	if _, err := r.Run(context.Background(), job); err != nil {
		t.Fatalf("second Run: %v", err)
	}
	if after := requests.Load(); after != before {
		t.Errorf("the second run asked the index again (%d requests, then %d): the virtualenv is not cached", before, after)
	}

	// A package the index does not have fails with a clear dependencies error.
	missing := sandbox.Job{Files: sandboxtest.Bundle("DEPENDENCIES = ['swymissing==2.0']\n"+sandboxtest.EmptyAgent, sandboxtest.ExactEval),
		Rows: sandboxtest.Rows(1)}
	_, err = r.Run(context.Background(), missing)
	var je *sandbox.JobError
	if !errors.As(err, &je) || je.Reason != sandbox.ReasonDependencies || !strings.Contains(je.Message, "swymissing") {
		t.Fatalf("err = %v, want a dependencies JobError naming swymissing", err)
	}
	t.Log(je.Message)
}

func TestPlantedCacheDirRefused(t *testing.T) {
	cache := workDir(t)
	if err := os.Chmod(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, process.Options{WorkDir: workDir(t), CacheDir: cache, PackageIndex: "http://127.0.0.1:1/simple"})
	job := sandbox.Job{Files: sandboxtest.Bundle("DEPENDENCIES = ['x==1']\n"+sandboxtest.EmptyAgent, sandboxtest.ExactEval),
		Rows: sandboxtest.Rows(1)}
	_, err := r.Run(context.Background(), job)
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "venv cache") {
		t.Fatalf("err = %v, want ErrUnavailable about the venv cache", err)
	}
}

// TestUnreachableIndex: with the package index down, a bundle declaring DEPENDENCIES fails
// with a dependencies error that says the index is unreachable.
func TestUnreachableIndex(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/simple"
	ln.Close() // nothing listens there any more
	r := newRunner(t, process.Options{WorkDir: workDir(t), CacheDir: workDir(t), PackageIndex: dead})
	job := sandbox.Job{Files: sandboxtest.Bundle("DEPENDENCIES = ['swytestpkg==1.0']\n"+sandboxtest.EmptyAgent, sandboxtest.ExactEval),
		Rows: sandboxtest.Rows(1)}
	_, err = r.Run(context.Background(), job)
	var je *sandbox.JobError
	if !errors.As(err, &je) || je.Reason != sandbox.ReasonDependencies || !strings.Contains(je.Message, "unreachable") {
		t.Fatalf("err = %v, want a dependencies JobError saying the index is unreachable", err)
	}
}
