package process

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// venvBuildTimeout bounds building one virtualenv.
const venvBuildTimeout = 10 * time.Minute

// venv returns the host path of a virtualenv holding deps, building it (inside a sandbox
// that may reach the network, with wheels only so no package code runs at install time)
// when it is not cached. Failures are *sandbox.JobError with ReasonDependencies.
func (r *Runner) venv(ctx context.Context, deps []string) (string, error) {
	sorted := append([]string(nil), deps...)
	sort.Strings(sorted)
	sum := sha256.Sum256([]byte(r.python + "\x00" + r.index + "\x00" + strings.Join(sorted, "\x00")))
	key := hex.EncodeToString(sum[:8])
	final := filepath.Join(r.cacheDir, key)
	if _, err := os.Stat(filepath.Join(final, ".complete")); err == nil {
		return final, nil
	}
	r.venvMu.Lock()
	defer r.venvMu.Unlock()
	if _, err := os.Stat(filepath.Join(final, ".complete")); err == nil {
		return final, nil
	}
	fail := func(format string, args ...any) (string, error) {
		return "", &sandbox.JobError{Reason: sandbox.ReasonDependencies,
			Message: fmt.Sprintf("cannot install DEPENDENCIES %q: ", deps) + fmt.Sprintf(format, args...)}
	}
	if err := r.indexReachable(ctx); err != nil {
		return fail("the package index %s is unreachable (%v)", r.index, err)
	}
	if err := os.MkdirAll(r.cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("%w: venv cache: %v", sandbox.ErrUnavailable, err)
	}
	build, err := os.MkdirTemp(r.cacheDir, key+".build-*")
	if err != nil {
		return "", fmt.Errorf("%w: venv cache: %v", sandbox.ErrUnavailable, err)
	}
	defer os.RemoveAll(build)
	if err := os.Chmod(build, 0o755); err != nil {
		return "", fmt.Errorf("%w: venv cache: %v", sandbox.ErrUnavailable, err)
	}
	if r.cred != nil {
		if err := os.Chown(build, int(r.cred.Uid), int(r.cred.Gid)); err != nil {
			return "", fmt.Errorf("%w: venv cache: %v", sandbox.ErrUnavailable, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, venvBuildTimeout)
	defer cancel()
	steps := []struct {
		name string
		argv []string
	}{
		{"python3 -m venv", []string{r.python, "-I", "-m", "venv", "/venv"}},
		{"pip install", append([]string{"/venv/bin/python3", "-I", "-m", "pip", "install", "--no-input", "--disable-pip-version-check",
			"--no-cache-dir", "--only-binary=:all:", "--retries", "1", "--timeout", "30", "--index-url", r.index, "--"}, deps...)},
	}
	for _, step := range steps {
		if out, err := r.buildStep(ctx, build, step.argv); err != nil {
			if ctx.Err() != nil {
				return fail("timed out after %s", venvBuildTimeout)
			}
			return fail("%s failed (%v): %s", step.name, err, lastLines(out, 5))
		}
	}
	if err := os.WriteFile(filepath.Join(build, ".complete"), nil, 0o644); err != nil {
		return "", fmt.Errorf("%w: venv cache: %v", sandbox.ErrUnavailable, err)
	}
	if err := os.Rename(build, final); err != nil {
		return "", fmt.Errorf("%w: venv cache: %v", sandbox.ErrUnavailable, err)
	}
	return final, nil
}

// buildStep runs one install command in a sandbox that shares the host network and has the
// build directory writable at /venv.
func (r *Runner) buildStep(ctx context.Context, build string, command []string) ([]byte, error) {
	args := r.isolationArgs(sandbox.Limits{MaxFileBytes: 1 << 30})
	args = append(args, "--share-net",
		"--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf",
		"--ro-bind-try", "/etc/hosts", "/etc/hosts",
		"--ro-bind-try", "/etc/ssl", "/etc/ssl",
		"--ro-bind-try", "/etc/ca-certificates", "/etc/ca-certificates",
		"--bind", build, "/venv", "--remount-ro", "/", "--chdir", "/tmp")
	args = append(args, command...)
	cmd := exec.CommandContext(ctx, r.bwrap, args...)
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: r.cred}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// indexReachable dials the package index's host.
func (r *Runner) indexReachable(ctx context.Context) error {
	u, err := url.Parse(r.index)
	if err != nil || u.Host == "" {
		return fmt.Errorf("bad index URL %q", r.index)
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return err
	}
	return conn.Close()
}

func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	s := strings.Join(lines, " | ")
	if len(s) > 1500 {
		s = s[len(s)-1500:]
	}
	return s
}
