package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
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
