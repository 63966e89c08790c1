package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
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

// connectRefused: err is a connection refused or unreachable, or PostgreSQL still starting
// up (SQLSTATE 57P03, cannot_connect_now).
func connectRefused(err error) bool {
	var ne *net.OpError
	var pe *pgconn.PgError
	return errors.As(err, &ne) || errors.As(err, &pe) && pe.Code == "57P03"
}

// connectRetrying calls open until it succeeds, fails for another reason than a refused or
// unreachable connection (a wrong password or URL fails at once), wait has passed, or ctx
// ends; each failed try is logged, so an operator sees what the process waits for.
func connectRetrying[T any](ctx context.Context, wait, every time.Duration, log *slog.Logger, what string, open func() (T, error)) (T, error) {
	deadline := time.Now().Add(wait)
	for try := 1; ; try++ {
		v, err := open()
		if err == nil || !connectRefused(err) || time.Now().Add(every).After(deadline) {
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
