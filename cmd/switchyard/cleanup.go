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
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/jobqueue/riverqueue"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/trainer"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// runCleanup runs the router model lifecycle once on a data directory: models unused for a
// year are archived, models archived for 7 days are removed with their weights. Then it runs
// the retention sweeps a server runs hourly (stored responses, cached answers, and with
// their flags conversations and daily spend totals), so that the room of what expired while
// no server ran is freed too. The server must not be running on that directory (it holds
// the database file's lock, and runs the same cleanup itself at start-up and every
// --cleanup-interval, and the sweeps hourly).
func runCleanup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("cleanup", "cleanup [--data DIR | --store postgres://…] [--dry-run] [--conversation-retention D] [--openai-conversation-retention D] [--spend-retention D] [--request-log-retention D]", stderr)
	sf := storeFlags{Workers: 1, JobStaleAfter: riverqueue.DefaultStaleAfter} // cleanup runs no jobs
	sf.register(fs)
	dry := fs.Bool("dry-run", false, "report what would be archived and removed, change nothing (the retention sweeps do not run)")
	var ret retentionFlags
	ret.register(fs)
	if err := parseFlags(fs, args, os.Getenv); err != nil {
		return err
	}
	if err := sf.check(); err != nil {
		return err
	}
	if err := ret.check(); err != nil {
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
	if n := len(rep.UploadsRemoved); n > 0 {
		fmt.Fprintf(stdout, "%s the uploaded datasets of %d ended or deleted training job(s)%s\n", verb[1], n, list(rep.UploadsRemoved))
	}
	if *dry {
		return nil
	}
	return sweepOnce(ctx, st, ret, stdout)
}

// sweepOnce runs each retention sweep a server runs hourly once on st and reports what
// each deleted; a sweep that fails does not keep the others from running. The kinds whose
// retention flag is unset (forever) are not swept.
func sweepOnce(ctx context.Context, st *store.Store, ret retentionFlags, stdout io.Writer) error {
	// A gateway without providers calls no model; its sweeps only need the store and the
	// retention options.
	gw, err := completions.New(completions.Options{
		Providers:                   providers.NewRegistry(),
		Store:                       st,
		ConversationRetention:       libraryRetention(ret.Conversations),
		OpenAIConversationRetention: libraryRetention(ret.OpenAIConversations),
	})
	if err != nil {
		return err
	}
	defer gw.Close(context.WithoutCancel(ctx))
	spend := usagelog.NewRollup(st, usagelog.RollupOptions{Retention: libraryRetention(ret.Spend)})
	defer spend.Close(context.WithoutCancel(ctx))
	history := usagelog.NewHistory(st, usagelog.HistoryOptions{Retention: libraryRetention(ret.Requests)})
	defer history.Close(context.WithoutCancel(ctx))
	sweeps := []struct {
		what  string
		on    bool
		sweep func(context.Context, time.Time) (int, error)
	}{
		{"stored response(s)", true, gw.SweepResponses},
		{"cached answer(s)", true, completions.NewStoreCache(st).Sweep},
		{"conversation(s)", ret.Conversations > 0, gw.SweepConversations},
		{"OpenAI conversation(s)", ret.OpenAIConversations > 0, gw.SweepOpenAIConversations},
		{"daily spend total(s)", ret.Spend > 0, spend.Sweep},
		{"request(s) of the request history", ret.Requests > 0, history.Sweep},
	}
	// Each sweep runs whatever the others did (as serve's do): a failure is reported with
	// the rest once all have run.
	now := time.Now()
	var errs []error
	for _, s := range sweeps {
		if !s.on {
			continue
		}
		n, err := s.sweep(ctx, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("sweeping expired %s (deleted %d): %w", s.what, n, err))
			continue
		}
		fmt.Fprintf(stdout, "deleted %d expired %s\n", n, s.what)
	}
	return errors.Join(errs...)
}

func list(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ": " + strings.Join(ids, ", ")
}
