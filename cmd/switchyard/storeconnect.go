package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// storeConnectWait is how long a process starting keeps trying a PostgreSQL store that does
// not accept connections yet (started beside it, restarting), and storeConnectRetry how long
// it waits between tries.
const (
	storeConnectWait  = 60 * time.Second
	storeConnectRetry = 2 * time.Second
)

// connectFailure says whether err, a failed connection to the database, may pass by
// itself, and when not, why in words an operator acts on. pgconn joins the errors of every
// address it tried (a name resolving to ::1 and 127.0.0.1, a host list), so the whole tree
// is read, and an answer that cannot pass wins over a refused address beside it: a server
// that refused the login on 127.0.0.1 refuses it again however long ::1 stays closed.
//
// It may pass: a connection refused, unreachable or timed out; a name server not
// answering (a timeout, SERVFAIL); PostgreSQL still starting up or in recovery (SQLSTATE
// 57P03) or out of connection slots (53300). It cannot: a host name that does not exist
// (NXDOMAIN, "no such host"); any other refusal by the server itself — a wrong password or
// user, no pg_hba.conf entry (class 28), a database that does not exist (3D000). Any other
// error (a TLS or URL error) cannot pass either, unless another address's may.
func connectFailure(err error) (transient bool, why string) {
	eachError(err, func(e error) {
		if why != "" {
			return
		}
		switch e := e.(type) {
		case *pgconn.PgError:
			switch {
			case e.Code == "57P03" || e.Code == "53300":
				transient = true
			case strings.HasPrefix(e.Code, "28"):
				why = fmt.Sprintf("the database refused the login (SQLSTATE %s: a wrong user or password, or no pg_hba.conf entry for it)", e.Code)
			case e.Code == "3D000":
				why = "the database named in the URL does not exist (SQLSTATE 3D000)"
			default:
				why = fmt.Sprintf("the database refused the connection (SQLSTATE %s)", e.Code)
			}
		case *net.DNSError:
			if e.IsNotFound {
				why = fmt.Sprintf("the database host %q does not resolve (no such host)", e.Name)
			} else {
				transient = true // the name server did not answer
			}
		case *net.OpError:
			transient = true // a DNS error inside is read on its own
		case net.Error:
			transient = transient || e.Timeout() // connect_timeout: context.DeadlineExceeded
		}
	})
	if why != "" {
		return false, why
	}
	return transient, ""
}

// eachError calls fn with err and every error it wraps, joined ones included.
func eachError(err error, fn func(error)) {
	if err == nil {
		return
	}
	fn(err)
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		eachError(u.Unwrap(), fn)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			eachError(e, fn)
		}
	}
}

// connectRetrying calls open until it succeeds, fails for a reason that cannot pass by
// itself (connectFailure: a wrong password, an unknown database or host fail at once,
// saying so), wait has passed, or ctx ends; each failed try is logged, so an operator
// sees what the process waits for.
func connectRetrying[T any](ctx context.Context, wait, every time.Duration, log *slog.Logger, what string, open func() (T, error)) (T, error) {
	deadline := time.Now().Add(wait)
	for try := 1; ; try++ {
		v, err := open()
		if err == nil {
			return v, nil
		}
		transient, why := connectFailure(err)
		switch {
		case !transient && why != "":
			return v, fmt.Errorf("%s; not retried: %w", why, err)
		case !transient:
			return v, err
		case time.Now().Add(every).After(deadline):
			if try > 1 {
				return v, fmt.Errorf("the database did not accept connections within %s: %w", wait, err)
			}
			return v, err
		}
		log.Warn("waiting for the database to accept connections", "store", what, "try", try, "err", err)
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
	}
}
