package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchyard-ai/switchyard/jobqueue/riverqueue"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/trainer"
)

// runCleanup runs the router model lifecycle once on a data directory: models unused for a
// year are archived, models archived for 7 days are removed with their weights. The server
// must not be running on that directory (it holds the database file's lock, and runs the
// same cleanup itself at start-up and every --cleanup-interval).
func runCleanup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("cleanup", "cleanup [--data DIR | --store postgres://…] [--dry-run]", stderr)
	sf := storeFlags{Workers: 1, JobStaleAfter: riverqueue.DefaultStaleAfter} // cleanup runs no jobs
	sf.register(fs)
	dry := fs.Bool("dry-run", false, "report what would be archived and removed, change nothing")
	if err := parseFlags(fs, args, os.Getenv); err != nil {
		return err
	}
	if err := sf.check(); err != nil {
		return err
	}
	if !sf.postgres() {
		if _, err := os.Stat(filepath.Join(sf.DataDir, "switchyard.db")); err != nil {
			return fmt.Errorf("--data %s: no Switchyard database there: %w", sf.DataDir, err)
		}
	}
	// PostgreSQL is shared: the cleanup may run beside the servers (each update is one
	// transaction). A bbolt file is held by its one server.
	be, err := sf.open(ctx, nil, nil)
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			return fmt.Errorf("%s is in use by a running server, which runs this cleanup itself (at start-up and every --cleanup-interval); stop it first: %w", be.where, err)
		}
		return err
	}
	st := be.store
	defer st.Close()
	svc, err := trainer.New(st, trainer.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return err
	}
	var rep trainer.CleanupReport
	if *dry {
		rep, err = svc.CleanupDryRun(ctx)
	} else {
		rep, err = svc.Cleanup(ctx)
	}
	if err != nil {
		return err
	}
	verb := map[bool][2]string{false: {"archived", "removed"}, true: {"would archive", "would remove"}}[*dry]
	fmt.Fprintf(stdout, "%s %d router model(s)%s\n", verb[0], rep.Archived, list(rep.ArchivedIDs))
	fmt.Fprintf(stdout, "%s %d router model(s)%s\n", verb[1], rep.Removed, list(rep.RemovedIDs))
	return nil
}

func list(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ": " + strings.Join(ids, ", ")
}
