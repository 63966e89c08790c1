//go:build linux

package process

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// venvBuildTimeout bounds building one virtualenv.
const venvBuildTimeout = 10 * time.Minute

// venvIdle is how long a cached virtualenv must have gone unused before it may be removed:
// longer than any run that started with it may last.
const venvIdle = sandbox.MaxTimeout + time.Hour

// venv returns the host path of a virtualenv holding deps, building it (inside a sandbox
// that may reach the network, with wheels only so no package code runs at install time)
// when it is not cached. Failures are *sandbox.JobError with ReasonDependencies.
func (r *Runner) venv(ctx context.Context, deps []string) (string, error) {
	if err := checkCacheDir(r.cacheDir); err != nil {
		return "", err
	}
	sorted := append([]string(nil), deps...)
	sort.Strings(sorted)
	sum := sha256.Sum256([]byte(r.python + "\x00" + r.index + "\x00" + strings.Join(sorted, "\x00")))
	key := hex.EncodeToString(sum[:8])
	final := filepath.Join(r.cacheDir, key)
	if cachedVenv(final, time.Now()) {
		return final, nil
	}
	select {
	case r.venvLock <- struct{}{}:
	case <-ctx.Done():
		return "", fmt.Errorf("waiting for another run's DEPENDENCIES install: %w", context.Cause(ctx))
	}
	defer func() { <-r.venvLock }()
	if cachedVenv(final, time.Now()) {
		return final, nil
	}
	fail := func(format string, args ...any) (string, error) {
		return "", &sandbox.JobError{Reason: sandbox.ReasonDependencies,
			Message: fmt.Sprintf("cannot install DEPENDENCIES %q: ", deps) + fmt.Sprintf(format, args...)}
	}
	if err := r.indexReachable(ctx); err != nil {
		return fail("the package index %s is unreachable (%v)", r.index, err)
	}
	ctx, cancel := context.WithTimeout(ctx, venvBuildTimeout)
	defer cancel()
	base, err := r.baseVenv(ctx)
	if err != nil {
		return "", err
	}
	build, err := r.newBuildDir(key)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(build)
	if err := r.copyTree(base, build); err != nil {
		return "", fmt.Errorf("%w: venv cache: %v", sandbox.ErrUnavailable, err)
	}
	pip := []string{"/venv/bin/python3", "-I", "-m", "pip"}
	if r.pipWheel != "" {
		pip = []string{"/venv/bin/python3", "-I", r.pipWheel + "/pip"} // pip runs from its wheel
	}
	pip = append(append(pip, "install", "--no-compile", "--no-input", "--disable-pip-version-check",
		"--no-cache-dir", "--only-binary=:all:", "--retries", "1", "--timeout", "30", "--index-url", r.index, "--"), deps...)
	if out, err := r.buildStep(ctx, build, pip); err != nil {
		if ctx.Err() != nil {
			return fail("timed out after %s", venvBuildTimeout)
		}
		return fail("pip install failed (%v): %s", err, lastLines(out, 5))
	}
	if err := r.publish(build, final); err != nil {
		return "", err
	}
	r.evictVenvs(time.Now())
	return final, nil
}

// cachedVenv reports whether the virtualenv at dir is built, and marks it used at now
// (its .complete file's time, which evictVenvs reads, in this process or another).
func cachedVenv(dir string, now time.Time) bool {
	marker := filepath.Join(dir, ".complete")
	if _, err := os.Stat(marker); err != nil {
		return false
	}
	_ = os.Chtimes(marker, now, now)
	return true
}

// evictVenvs removes the least recently used dependency-set virtualenvs beyond r.maxVenvs,
// only those unused for venvIdle: a run still using one keeps it, even over the bound. The
// base virtualenvs and builds in progress are never removed. r.venvLock is held.
func (r *Runner) evictVenvs(now time.Time) {
	if r.maxVenvs < 0 {
		return
	}
	entries, err := os.ReadDir(r.cacheDir)
	if err != nil {
		return
	}
	type cached struct {
		name string
		used time.Time
	}
	var venvs []cached
	for _, e := range entries {
		if strings.Contains(e.Name(), ".evicted-") {
			os.RemoveAll(filepath.Join(r.cacheDir, e.Name())) // left by a removal cut short
			continue
		}
		if !e.IsDir() || strings.HasPrefix(e.Name(), "base-") || strings.Contains(e.Name(), ".") {
			continue // a base, or a build in progress
		}
		if info, err := os.Stat(filepath.Join(r.cacheDir, e.Name(), ".complete")); err == nil {
			venvs = append(venvs, cached{e.Name(), info.ModTime()})
		}
	}
	sort.Slice(venvs, func(i, j int) bool { return venvs[i].used.Before(venvs[j].used) })
	left := len(venvs)
	for i := 0; i < len(venvs) && left > r.maxVenvs && now.Sub(venvs[i].used) >= venvIdle; i++ {
		// Renamed first, so that no one finds it complete while it is being removed.
		dir := filepath.Join(r.cacheDir, venvs[i].name)
		if info, err := os.Stat(filepath.Join(dir, ".complete")); err == nil && now.Sub(info.ModTime()) < venvIdle {
			continue // a run took it up since it was listed (cachedVenv needs no lock): it stays
		}
		gone := dir + ".evicted-" + strconv.FormatInt(now.UnixNano(), 36)
		if err := os.Rename(dir, gone); err != nil {
			r.log.Warn("sandbox: removing a cached virtualenv", "dir", dir, "err", err)
			continue // still there: it still counts
		}
		left--
		if err := os.RemoveAll(gone); err != nil {
			r.log.Warn("sandbox: removing a cached virtualenv", "dir", gone, "err", err)
		}
		r.log.Info("sandbox: removed a cached virtualenv unused since "+venvs[i].used.Format(time.RFC3339), "dir", dir, "kept", r.maxVenvs)
	}
}

// baseVenv returns a cached empty virtualenv, built once; dependency sets start from a copy
// of it. It holds pip only when python ships no pip wheel to run pip from. r.venvLock is held.
func (r *Runner) baseVenv(ctx context.Context) (string, error) {
	sum := sha256.Sum256([]byte(r.python))
	key := "base-" + hex.EncodeToString(sum[:8])
	final := filepath.Join(r.cacheDir, key)
	if _, err := os.Stat(filepath.Join(final, ".complete")); err == nil {
		return final, nil
	}
	build, err := r.newBuildDir(key)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(build)
	venv := []string{r.python, "-I", "-m", "venv", "/venv"}
	if r.pipWheel != "" {
		venv = []string{r.python, "-I", "-m", "venv", "--without-pip", "/venv"}
	}
	if out, err := r.buildStep(ctx, build, venv); err != nil {
		return "", fmt.Errorf("%w: cannot create a virtualenv with %s -m venv (is the Debian package python3-venv installed?) (%v): %s",
			sandbox.ErrUnavailable, r.python, err, lastLines(out, 5))
	}
	return final, r.publish(build, final)
}

// newBuildDir creates an empty directory in the cache that the sandbox's host uid can write.
func (r *Runner) newBuildDir(key string) (string, error) {
	if _, err := os.Stat(r.cacheDir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(r.cacheDir, 0o755); err != nil {
			return "", fmt.Errorf("%w: venv cache: %v", sandbox.ErrUnavailable, err)
		}
		if err := os.Chmod(r.cacheDir, 0o755); err != nil { // whatever the umask
			return "", fmt.Errorf("%w: venv cache: %v", sandbox.ErrUnavailable, err)
		}
	}
	build, err := os.MkdirTemp(r.cacheDir, key+".build-*")
	if err == nil {
		err = os.Chmod(build, 0o755)
	}
	if err == nil && r.cred != nil {
		err = os.Chown(build, int(r.cred.Uid), int(r.cred.Gid))
	}
	if err != nil {
		os.RemoveAll(build)
		return "", fmt.Errorf("%w: venv cache: %v", sandbox.ErrUnavailable, err)
	}
	return build, nil
}

// publish marks build complete and moves it to final.
func (r *Runner) publish(build, final string) error {
	if err := os.WriteFile(filepath.Join(build, ".complete"), nil, 0o644); err != nil {
		return fmt.Errorf("%w: venv cache: %v", sandbox.ErrUnavailable, err)
	}
	if err := os.Rename(build, final); err != nil {
		return fmt.Errorf("%w: venv cache: %v", sandbox.ErrUnavailable, err)
	}
	return nil
}

// copyTree copies the virtualenv src into the existing directory dst (regular files,
// directories and symlinks; ".complete" excluded), owned by the sandbox's host uid.
func (r *Runner) copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil || rel == "." || rel == ".complete" {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			err = os.Symlink(link, target)
			if err != nil {
				return err
			}
		case d.IsDir():
			if err := os.Mkdir(target, info.Mode().Perm()); err != nil {
				return err
			}
		case d.Type().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if err := os.WriteFile(target, data, info.Mode().Perm()); err != nil {
				return err
			}
		default:
			return nil
		}
		if r.cred != nil {
			return os.Lchown(target, int(r.cred.Uid), int(r.cred.Gid))
		}
		return nil
	})
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
	closeFilter, err := r.attachSeccomp(cmd, r.seccomp)
	if err != nil {
		return nil, err
	}
	defer closeFilter()
	err = cmd.Run()
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

// findPipWheel returns the pip wheel that ensurepip would install (Debian keeps it in
// /usr/share/python-wheels, upstream in ensurepip/_bundled), or "". pip runs straight from
// it, which saves building pip into every virtualenv.
func findPipWheel(stdlib string) string {
	for _, pattern := range []string{
		"/usr/share/python-wheels/pip-*-py3-none-any.whl",
		filepath.Join(stdlib, "ensurepip", "_bundled", "pip-*-py3-none-any.whl"),
	} {
		if matches, _ := filepath.Glob(pattern); len(matches) > 0 {
			return matches[len(matches)-1]
		}
	}
	return ""
}

// checkCacheDir refuses a cache directory that another user could have planted or can
// write (the default lives in the shared temporary directory): it must be a real directory
// owned by this process's user and not writable by group or others.
func checkCacheDir(dir string) error {
	info, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: venv cache %s: %v", sandbox.ErrUnavailable, dir, err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !info.IsDir() || !ok || int(st.Uid) != os.Getuid() || info.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%w: venv cache %s must be a directory owned by uid %d and writable only by it",
			sandbox.ErrUnavailable, dir, os.Getuid())
	}
	return nil
}
