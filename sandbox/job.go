package sandbox

import (
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"
)

// Defaults applied by [Limits.WithDefaults] to zero fields.
const (
	DefaultTimeout        = 600 * time.Second
	DefaultMemoryBytes    = 2 << 30
	DefaultMaxProcesses   = 64
	DefaultMaxFileBytes   = 64 << 20
	DefaultMaxOutputBytes = 8 << 20
)

// Bounds on a job's shape, checked by [Job.Validate].
const (
	MaxFiles      = 256
	MaxBundleSize = 64 << 20
	MaxRows       = 100_000
	MaxTimeout    = 2 * time.Hour
)

// WithDefaults returns l with every zero field set to its default (CPUTime defaults to
// Timeout).
func (l Limits) WithDefaults() Limits {
	if l.Timeout == 0 {
		l.Timeout = DefaultTimeout
	}
	if l.CPUTime == 0 {
		l.CPUTime = l.Timeout
	}
	if l.MemoryBytes == 0 {
		l.MemoryBytes = DefaultMemoryBytes
	}
	if l.MaxProcesses == 0 {
		l.MaxProcesses = DefaultMaxProcesses
	}
	if l.MaxFileBytes == 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxOutputBytes == 0 {
		l.MaxOutputBytes = DefaultMaxOutputBytes
	}
	return l
}

// Validate checks the job's shape: file names are clean relative paths, agent.py and eval.py
// are present, there is at least one row, limits are not negative and the gateway URL (if
// any) is an absolute http(s) URL. Errors match [ErrInvalid] and name the field.
func (j *Job) Validate() error {
	if _, ok := j.Files["agent.py"]; !ok {
		return fmt.Errorf("%w: files: agent.py is required", ErrInvalid)
	}
	if _, ok := j.Files["eval.py"]; !ok {
		return fmt.Errorf("%w: files: eval.py is required", ErrInvalid)
	}
	if len(j.Files) > MaxFiles {
		return fmt.Errorf("%w: files: %d files, at most %d allowed", ErrInvalid, len(j.Files), MaxFiles)
	}
	var total int
	for name, data := range j.Files {
		if err := checkFileName(name); err != nil {
			return err
		}
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			if _, clash := j.Files[dir]; clash {
				return fmt.Errorf("%w: files: %q is both a file and the directory of %q", ErrInvalid, dir, name)
			}
		}
		total += len(data)
	}
	if total > MaxBundleSize {
		return fmt.Errorf("%w: files: bundle is %d bytes, at most %d allowed", ErrInvalid, total, MaxBundleSize)
	}
	if len(j.Rows) == 0 {
		return fmt.Errorf("%w: rows: at least one row is required", ErrInvalid)
	}
	if len(j.Rows) > MaxRows {
		return fmt.Errorf("%w: rows: %d rows, at most %d allowed", ErrInvalid, len(j.Rows), MaxRows)
	}
	l := j.Limits
	switch {
	case l.Timeout < 0 || l.Timeout > MaxTimeout:
		return fmt.Errorf("%w: limits.timeout: must be between 0 and %s", ErrInvalid, MaxTimeout)
	case l.CPUTime < 0:
		return fmt.Errorf("%w: limits.cpu_time: must not be negative", ErrInvalid)
	case l.MemoryBytes < 0:
		return fmt.Errorf("%w: limits.memory_bytes: must not be negative", ErrInvalid)
	case l.MaxProcesses < 0:
		return fmt.Errorf("%w: limits.max_processes: must not be negative", ErrInvalid)
	case l.MaxFileBytes < 0:
		return fmt.Errorf("%w: limits.max_file_bytes: must not be negative", ErrInvalid)
	case l.MaxOutputBytes < 0:
		return fmt.Errorf("%w: limits.max_output_bytes: must not be negative", ErrInvalid)
	}
	if j.Gateway.BaseURL != "" {
		u, err := url.Parse(j.Gateway.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%w: gateway.base_url: %q is not an absolute http(s) URL", ErrInvalid, j.Gateway.BaseURL)
		}
	}
	return nil
}

// checkFileName accepts clean, relative, slash-separated names without "..", so that writing
// the bundle to disk can never leave the job directory.
func checkFileName(name string) error {
	bad := func(rule string) error {
		return fmt.Errorf("%w: files: name %q %s", ErrInvalid, name, rule)
	}
	switch {
	case name == "" || len(name) > 255:
		return bad("must be 1-255 bytes")
	case strings.ContainsAny(name, "\\\x00"):
		return bad("must not contain a backslash or NUL")
	case strings.HasPrefix(name, "/"):
		return bad("must be relative")
	case path.Clean(name) != name:
		return bad("must be a clean path")
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." || part == "." {
			return bad(`must not contain "." or ".." elements`)
		}
		if strings.HasPrefix(part, ".") {
			return bad("must not contain hidden elements")
		}
	}
	return nil
}
