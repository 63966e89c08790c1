package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
)

// backupFlags are serve's backups of the bbolt file: a copy as one transaction sees it,
// written while the server runs (bbolt's lock keeps other processes from reading the file
// then), on a schedule and at SIGUSR1.
type backupFlags struct {
	Every time.Duration
	Keep  int
	Dir   string
	// given names the backup flags set on the command line or in the environment: with a
	// PostgreSQL store they are refused rather than silently ignored.
	given []string
}

func (b *backupFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&b.Every, "backup-every", 24*time.Hour, "with the bbolt store: how often serve writes a whole, consistent copy of the database to --backup-dir while it runs (one at start too when the newest there is older than this; SIGUSR1 writes one at once); 0: only at SIGUSR1. Restore one with switchyard restore")
	fs.IntVar(&b.Keep, "backup-keep", 7, "backups kept in --backup-dir (the oldest are removed after each new one); 0 keeps them all")
	fs.StringVar(&b.Dir, "backup-dir", "", "directory of serve's backups (default: backups under --data)")
}

// noteGiven records which backup flags fs set.
func (b *backupFlags) noteGiven(fs *flag.FlagSet) {
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "backup-every", "backup-keep", "backup-dir":
			b.given = append(b.given, "--"+f.Name)
		}
	})
}

// check refuses values out of range, and backup flags beside a PostgreSQL store (whose
// backups are PostgreSQL's own tools' job).
func (b *backupFlags) check(postgres bool) error {
	if postgres && len(b.given) > 0 {
		return fmt.Errorf("%s: serve's backups are of the bbolt file under --data; back a PostgreSQL --store up with PostgreSQL's tools (pg_dump, or the database service's snapshots)", b.given[0])
	}
	if b.Every < 0 {
		return fmt.Errorf("--backup-every must be 0 (only at SIGUSR1) or positive, got %s", b.Every)
	}
	if b.Keep < 0 {
		return fmt.Errorf("--backup-keep must be 0 (keep all) or more, got %d", b.Keep)
	}
	return nil
}

// dir is where the backups go.
func (b *backupFlags) dir(dataDir string) string {
	if b.Dir != "" {
		return b.Dir
	}
	return filepath.Join(dataDir, "backups")
}

// startBackups runs serve's backups of d until ctx ends (stop waits for a backup under
// way). SIGUSR1 asks for one at once.
func (b *backupFlags) startBackups(ctx context.Context, d *boltstore.Driver, dataDir string, log *slog.Logger, reg prometheus.Registerer) (stop func()) {
	snaps := &boltstore.Snapshots{Driver: d, Dir: b.dir(dataDir), Every: b.Every, Keep: b.Keep, Logger: log}
	if reg != nil {
		snaps.Done = backupMetrics(reg)
	}
	usr1 := make(chan os.Signal, 1)
	notifyBackup(usr1) // not on Windows, which has no SIGUSR1
	asked := make(chan struct{})
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{}, 2)
	go func() {
		defer func() { done <- struct{}{} }()
		for {
			select {
			case <-ctx.Done():
				return
			case <-usr1:
				select {
				case asked <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		snaps.Run(ctx, asked)
	}()
	return func() {
		signal.Stop(usr1)
		cancel()
		<-done
		<-done
	}
}

// backupMetrics registers serve's backup metrics on reg and returns what counts a backup
// in them: an alert on the last success's age catches a schedule that stopped working.
func backupMetrics(reg prometheus.Registerer) func(boltstore.Snapshot, error) {
	total := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_backups_total",
		Help: "Backups of the bbolt database serve wrote (outcome ok) or failed to write (outcome failed)."}, []string{"outcome"})
	last := prometheus.NewGauge(prometheus.GaugeOpts{Name: "switchyard_backup_last_success_timestamp_seconds",
		Help: "Unix time of the last backup serve wrote (0: none since start)."})
	size := prometheus.NewGauge(prometheus.GaugeOpts{Name: "switchyard_backup_last_size_bytes",
		Help: "Size of the last backup serve wrote."})
	total.WithLabelValues("ok")
	total.WithLabelValues("failed")
	reg.MustRegister(total, last, size)
	return func(s boltstore.Snapshot, err error) {
		if err != nil {
			total.WithLabelValues("failed").Inc()
			return
		}
		total.WithLabelValues("ok").Inc()
		last.Set(float64(time.Now().UnixNano()) / 1e9)
		size.Set(float64(s.Size))
	}
}

// runBackup is `switchyard backup`: a copy of a stopped server's bbolt file, or a check of
// a backup file.
func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("backup", "backup [--data DIR] [--out FILE] | backup --verify FILE", stderr)
	data := fs.String("data", "./switchyard-data", "the data directory of a stopped server (a running one writes its own backups: serve --backup-every, or SIGUSR1 now)")
	out := fs.String("out", "", "the copy to write (default: a new switchyard-<UTC time>.db under backups in --data, where serve keeps its own)")
	verify := fs.String("verify", "", "check this backup file (whole, every page consistent) and change nothing")
	if err := parseFlags(fs, args, os.Getenv); err != nil {
		return err
	}
	if *verify != "" {
		if err := boltstore.Verify(ctx, *verify, boltstore.Options{}); err != nil {
			return err
		}
		fi, _ := os.Stat(*verify)
		fmt.Fprintf(stdout, "%s: a whole database, every page consistent (%d bytes)\n", *verify, fi.Size())
		return nil
	}
	src := filepath.Join(*data, "switchyard.db")
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("--data %s: no Switchyard database there: %w", *data, err)
	}
	dst, n := *out, int64(0)
	var err error
	if dst == "" {
		// Among serve's own, recorded as the newest (serve keeps the newest --backup-keep).
		var snap boltstore.Snapshot
		snap, err = boltstore.SnapshotFile(ctx, src, filepath.Join(*data, "backups"), boltstore.Options{})
		dst, n = snap.Path, snap.Size
	} else {
		n, err = boltstore.BackupFile(ctx, src, dst, boltstore.Options{})
	}
	if errors.Is(err, store.ErrLocked) {
		return fmt.Errorf("%s is in use by a running server, which writes its own backups (serve --backup-every, into %s): %s: %w",
			src, filepath.Join(*data, "backups"), backupNowHint, err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes)\n", dst, n)
	return nil
}

// runRestore is `switchyard restore`: puts a backup in place of a stopped server's bbolt
// file, keeping the file it replaces beside it.
func runRestore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("restore", "restore --from FILE [--data DIR]", stderr)
	data := fs.String("data", "./switchyard-data", "the data directory of a stopped server whose database the backup replaces")
	from := fs.String("from", "", "the backup file (serve's backups are in backups under --data): checked whole before anything changes")
	if err := parseFlags(fs, args, os.Getenv); err != nil {
		return err
	}
	if *from == "" {
		return &usageError{err: errors.New("--from: the backup file to restore is required")}
	}
	dst := filepath.Join(*data, "switchyard.db")
	// Its log: the partial copy of an earlier restore cut short, removed.
	aside, err := boltstore.Restore(ctx, *from, dst, boltstore.Options{Logger: slog.New(slog.NewTextHandler(stderr, nil))})
	if errors.Is(err, store.ErrLocked) {
		return fmt.Errorf("%s is in use by a running server: stop it first (nothing was changed): %w", dst, err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored %s from %s\n", dst, *from)
	if aside != "" {
		fmt.Fprintf(stdout, "the database it replaced is kept as %s\n", aside)
	}
	return nil
}
