package fetch

import (
	"errors"
	"fmt"
)

// Errors a Fetcher returns. Every error from [Fetcher.Get] and [Fetcher.Fetch] is an [*Error]
// naming the URL; compare its kind with errors.Is.
var (
	// ErrFetch matches every error a Fetcher returns (the URL could not be read).
	ErrFetch = errors.New("fetch failed")
	// ErrInvalidURL means the URL does not parse or has no host.
	ErrInvalidURL = errors.New("invalid URL")
	// ErrUnsupportedScheme means the scheme is not http or https (or file, when allowed).
	ErrUnsupportedScheme = errors.New("unsupported URL scheme")
	// ErrBlocked means the host resolved to an address the SSRF guard refuses (loopback,
	// private, link-local, metadata, unspecified, CGNAT, multicast or reserved).
	ErrBlocked = errors.New("address is not allowed")
	// ErrTooLarge means the body is larger than the Fetcher's MaxBytes.
	ErrTooLarge = errors.New("body too large")
	// ErrStatus means the server answered with a non-2xx status.
	ErrStatus = errors.New("unexpected HTTP status")
	// ErrStalled means the server sent nothing for the Fetcher's IdleTimeout (while
	// connecting, before the response headers, or in the middle of the body).
	ErrStalled = errors.New("download stalled")
	// ErrTooManyRedirects means more than MaxRedirects redirects were followed.
	ErrTooManyRedirects = errors.New("too many redirects")
)

// Error is the error type a Fetcher returns: the URL that failed and why. Its message
// prints the URL through [Redact], and any URL the cause embeds (such as a *url.Error's)
// too, so user info and query values (presigned signatures) never reach logs or job
// error messages.
type Error struct {
	// URL is the URL as the caller gave it, secrets included; print it through [Redact].
	URL string
	// Err is the cause; it matches one of the package's sentinel errors.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	cause := "<nil>"
	if e.Err != nil {
		cause = redactMessage(e.Err.Error(), e.URL, e.Err)
	}
	return fmt.Sprintf("fetch %s: %s", Redact(e.URL), cause)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes every *Error match ErrFetch.
func (e *Error) Is(target error) bool { return target == ErrFetch }
