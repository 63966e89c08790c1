package boltstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Snapshots keeps backups of a running database in a directory: one every Every (the
// first at Run's start unless the newest one kept is younger than Every), one on each
// request sent to Run's now channel, and only the newest Keep. Each is a whole bbolt file
// named switchyard-<UTC time>.db, written as BackupTo writes (never a partial file under
// that name). A failed backup is logged and leaves the ones kept as they were.
//
// Its fields are read when Run starts; Driver and Dir are required.
type Snapshots struct {
	// Driver is the database to copy.
	Driver *Driver
	// Dir is where the backups go (created 0700).
	Dir string
	// Every is the time between backups; 0 or less: only those asked for on now.
	Every time.Duration
	// Keep is how many backups are kept; 0 or less keeps every one.
	Keep int
	// Logger receives a line per backup written or failed (default: none).
	Logger *slog.Logger
	// Now is the clock (default time.Now); tests set it.
	Now func() time.Time
	// Done, when set, is called after each backup Run takes, with it or its error (not
	// for one a context's end stopped): serve counts them in its metrics.
	Done func(Snapshot, error)
}

const (
	snapshotPrefix = "switchyard-"
	snapshotSuffix = ".db"
	snapshotLayout = "20060102T150405.000Z"
)

// SnapshotPath is the path of a backup taken at t in dir, named as Snapshots names (and
// List and Keep count) its own: switchyard-<UTC time to the millisecond>.db.
func SnapshotPath(dir string, t time.Time) string {
	return filepath.Join(dir, snapshotPrefix+t.UTC().Format(snapshotLayout)+snapshotSuffix)
}

// Snapshot is one backup Snapshots keeps.
type Snapshot struct {
	Path  string
	Taken time.Time // from its name
	Size  int64
}

// List returns the backups in Dir, oldest first. A missing Dir holds none.
func (s *Snapshots) List() ([]Snapshot, error) {
	entries, err := os.ReadDir(s.Dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fileError("read", s.Dir, err)
	}
	var out []Snapshot
	for _, e := range entries {
		name := e.Name()
		stamp, ok := strings.CutPrefix(name, snapshotPrefix)
		if !ok || e.IsDir() {
			continue
		}
		if stamp, ok = strings.CutSuffix(stamp, snapshotSuffix); !ok {
			continue
		}
		t, err := time.Parse(snapshotLayout, stamp)
		if err != nil {
			continue // not one of ours
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, Snapshot{Path: filepath.Join(s.Dir, name), Taken: t, Size: fi.Size()})
	}
	slices.SortFunc(out, func(a, b Snapshot) int { return a.Taken.Compare(b.Taken) })
	return out, nil
}

// Take writes a backup now and then removes the oldest beyond Keep.
func (s *Snapshots) Take(ctx context.Context) (Snapshot, error) {
	if s.Driver == nil || s.Dir == "" {
		return Snapshot{}, errors.New("boltstore: Snapshots needs a Driver and a Dir")
	}
	now := s.now().UTC()
	path := SnapshotPath(s.Dir, now)
	if _, err := os.Stat(path); err == nil {
		// Two in one millisecond (a request beside the schedule): the later one waits for
		// a name of its own.
		now = now.Add(time.Millisecond)
		path = SnapshotPath(s.Dir, now)
	}
	n, err := s.Driver.BackupTo(ctx, path)
	if err != nil {
		return Snapshot{}, err
	}
	taken := Snapshot{Path: path, Taken: now.Truncate(time.Millisecond), Size: n}
	if s.Keep > 0 {
		kept, err := s.List()
		if err != nil {
			return taken, err
		}
		for len(kept) > s.Keep {
			if err := os.Remove(kept[0].Path); err != nil && !os.IsNotExist(err) {
				return taken, fmt.Errorf("boltstore: remove an old backup: %w", err)
			}
			kept = kept[1:]
		}
	}
	return taken, nil
}

// Run takes backups until ctx ends: at start when the newest kept is older than Every (or
// there is none), then every Every, and at once for each value received on now (nil: none
// asked). It returns when ctx ends.
func (s *Snapshots) Run(ctx context.Context, now <-chan struct{}) {
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	take := func(why string) {
		start := time.Now()
		snap, err := s.Take(ctx)
		if err != nil && ctx.Err() != nil {
			return // stopped, not failed
		}
		if s.Done != nil {
			s.Done(snap, err)
		}
		if err != nil {
			log.Error("backup failed", "dir", s.Dir, "reason", why, "err", err)
			return
		}
		log.Info("backup written", "path", snap.Path, "bytes", snap.Size, "reason", why, "took", time.Since(start).Round(time.Millisecond).String())
	}
	var next <-chan time.Time // nil, which never fires, without a schedule
	var timer *time.Timer
	if s.Every > 0 {
		wait := time.Duration(0)
		if kept, err := s.List(); err == nil && len(kept) > 0 {
			wait = max(s.Every-s.now().Sub(kept[len(kept)-1].Taken), 0)
		}
		timer = time.NewTimer(wait)
		defer timer.Stop()
		next = timer.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-next:
			take("schedule")
			timer.Reset(s.Every)
		case <-now:
			take("asked")
		}
	}
}

func (s *Snapshots) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}
