package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestConnectRetryingWaitsForTheDatabase: a replica started while its PostgreSQL was down
// (started beside it, restarting) exited at once with "connect: no such file or directory";
// it now keeps trying a refused or unreachable connection, and still fails at once on
// another error (a wrong password) and once the wait is over.
func TestConnectRetryingWaitsForTheDatabase(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	refused := &net.OpError{Op: "dial", Net: "unix", Err: syscall.ECONNREFUSED}
	tries := 0
	v, err := connectRetrying(ctx, time.Hour, time.Nanosecond, log, "db", func() (int, error) {
		switch tries++; tries {
		case 1:
			return 0, errors.Join(errors.New("failed to connect"), refused)
		case 2:
			return 0, fmt.Errorf("failed to connect: %w", &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"})
		}
		return 7, nil
	})
	if err != nil || v != 7 || tries != 3 {
		t.Fatalf("a database that comes up on the third try: %d, %v after %d tries", v, err, tries)
	}
	tries = 0
	bad := errors.New("password authentication failed")
	if _, err := connectRetrying(ctx, time.Hour, time.Nanosecond, log, "db", func() (int, error) { tries++; return 0, bad }); !errors.Is(err, bad) || tries != 1 {
		t.Fatalf("a wrong password: %v after %d tries", err, tries)
	}
	tries = 0
	if _, err := connectRetrying(ctx, 0, time.Nanosecond, log, "db", func() (int, error) { tries++; return 0, refused }); err == nil || tries != 1 {
		t.Fatalf("no wait left: %v after %d tries", err, tries)
	}
}

// TestConnectRetryingFailsFastOnLastingErrors: a wrong password, an unknown database or an
// unknown host of a --store URL whose name also resolves to an address that refuses
// connections (localhost as ::1 and 127.0.0.1, PostgreSQL listening on one) kept the
// process waiting the whole 60 s, as pgconn joins the errors of every address and the
// refused one looked transient; a name server that did not answer failed at once. The
// errors are fakes shaped as pgconn returns them (ConnectError: every address's error
// joined, or "hostname resolving error: ..."). What cannot pass by itself now fails at
// the first try naming why; what may pass is still tried again.
func TestConnectRetryingFailsFastOnLastingErrors(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	connect := func(errs ...error) error {
		return fmt.Errorf("failed to connect to `user=switchyard database=sy`: %w", errors.Join(errs...))
	}
	for _, c := range []struct {
		name  string
		err   error
		tries int    // 1: failed at once; 3: tried until the fake database came up
		why   string // in the error of a failure at once
	}{
		{"wrong password beside a refused ::1", connect(refused, &pgconn.PgError{Severity: "FATAL", Code: "28P01", Message: `password authentication failed for user "switchyard"`}), 1, "refused the login (SQLSTATE 28P01"},
		{"no pg_hba.conf entry", connect(refused, &pgconn.PgError{Severity: "FATAL", Code: "28000", Message: `no pg_hba.conf entry for host "10.0.0.5"`}), 1, "refused the login (SQLSTATE 28000"},
		{"unknown database beside a refused ::1", connect(refused, &pgconn.PgError{Severity: "FATAL", Code: "3D000", Message: `database "sy" does not exist`}), 1, "does not exist (SQLSTATE 3D000)"},
		{"no such host", fmt.Errorf("hostname resolving error: %w", errors.Join(&net.DNSError{Err: "no such host", Name: "db.internall", IsNotFound: true})), 1, `host "db.internall" does not resolve`},
		{"no such host inside a dial error", connect(&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "db", IsNotFound: true}}), 1, `host "db" does not resolve`},
		{"name server timeout", fmt.Errorf("hostname resolving error: %w", errors.Join(&net.DNSError{Err: "i/o timeout", Name: "db", IsTimeout: true})), 3, ""},
		{"too many connections", connect(&pgconn.PgError{Severity: "FATAL", Code: "53300", Message: "sorry, too many clients already"}), 3, ""},
		{"connect_timeout", connect(fmt.Errorf("timeout: %w", context.DeadlineExceeded)), 3, ""},
		{"refused on every address", connect(refused, refused), 3, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tries := 0
			_, err := connectRetrying(ctx, time.Hour, time.Nanosecond, log, "db", func() (int, error) {
				if tries++; tries < 3 {
					return 0, c.err
				}
				return 7, nil
			})
			if tries != c.tries {
				t.Fatalf("%d tries (%v), want %d", tries, err, c.tries)
			}
			if c.tries == 1 && (!errors.Is(err, c.err) || !strings.Contains(err.Error(), c.why) || !strings.Contains(err.Error(), "not retried")) {
				t.Fatalf("error %q: want it to name %q, say it was not retried and wrap the cause", err, c.why)
			}
		})
	}
}
