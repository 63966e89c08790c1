package boltstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Snapshots keeps backups of a running database in a directory: one every Every (the
// first at Run's start unless the newest one kept is younger than Every), one on each
// request sent to Run's now channel, and only the newest Keep. Each is a whole bbolt file
// named switchyard-<UTC time>.db, written as BackupTo writes (never a partial file under
// that name). A failed backup is logged and leaves the ones kept as they were.
//
// Which backups are the newest is read from inside them, not from their names or file
// times: each records a sequence number (one more than the highest in the directory) and
// the time it was taken, so a backup renamed, copied (cp without -p) or taken after the
// clock went back keeps its place, and the one just written is never the one removed.
// Backups without that record (written before it existed, or by BackupFile) come before
// every one with it, in the order of the times in their names.
//
// A backup cut short by a crash leaves its temporary file (.switchyard-<UTC time>.db.<digits>.tmp)
// behind: the next backup, and Run at its start, remove those older than themselves.
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
	// snapshotBucket, in a backup Snapshots writes, records its place among the others.
	// Its name has a dot, which no store.Collection has, so it never meets the store's.
	snapshotBucket = "switchyard.snapshot"
)

// SnapshotPath is the path of a backup taken at t in dir, named as Snapshots names (and
// List and Keep count) its own: switchyard-<UTC time to the millisecond>.db.
func SnapshotPath(dir string, t time.Time) string {
	return filepath.Join(dir, snapshotPrefix+t.UTC().Format(snapshotLayout)+snapshotSuffix)
}

// Snapshot is one backup Snapshots keeps.
type Snapshot struct {
	Path string
	// Taken is when the backup was taken, as recorded inside it (else from its name).
	Taken time.Time
	// Seq is the backup's place in its directory, recorded inside it: a later backup has
	// a higher one. 0: none recorded (a backup from before Seq existed, or a file copied
	// in), ordered by the time in its name before every one with a Seq.
	Seq  uint64
	Size int64
}

// List returns the backups in Dir, oldest first (by Seq, then Taken, then name). A
// missing Dir holds none.
func (s *Snapshots) List() ([]Snapshot, error) {
	return listSnapshots(s.Dir)
}

func listSnapshots(dir string) ([]Snapshot, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fileError("read", dir, err)
	}
	var out []Snapshot
	for _, e := range entries {
		name := e.Name()
		t, ok := snapshotName(name)
		if !ok || e.IsDir() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		snap := Snapshot{Path: filepath.Join(dir, name), Taken: t, Size: fi.Size()}
		if seq, taken, ok := readSnapshotRecord(snap.Path); ok {
			snap.Seq, snap.Taken = seq, taken
		}
		out = append(out, snap)
	}
	slices.SortFunc(out, func(a, b Snapshot) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), a.Taken.Compare(b.Taken), strings.Compare(a.Path, b.Path))
	})
	return out, nil
}

// snapshotName reports whether name is one Snapshots gives a backup, and its time.
func snapshotName(name string) (time.Time, bool) {
	stamp, ok := strings.CutPrefix(name, snapshotPrefix)
	if !ok {
		return time.Time{}, false
	}
	if stamp, ok = strings.CutSuffix(stamp, snapshotSuffix); !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(snapshotLayout, stamp)
	return t, err == nil
}

// readSnapshotRecord reads the record Snapshots writes inside a backup; ok is false
// when the file has none or cannot be read.
func readSnapshotRecord(path string) (seq uint64, taken time.Time, ok bool) {
	db, err := openReadOnly(path, Options{LockTimeout: 100 * time.Millisecond})
	if err != nil {
		return 0, time.Time{}, false
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(snapshotBucket))
		if b == nil {
			return nil
		}
		v, at := b.Get([]byte("seq")), b.Get([]byte("taken"))
		if len(v) != 8 || taken.UnmarshalText(at) != nil {
			return nil
		}
		seq, ok = binary.BigEndian.Uint64(v), true
		return nil
	})
	return seq, taken, ok
}

// writeSnapshotRecord records seq and taken inside the (unopened) backup at path.
func writeSnapshotRecord(path string, seq uint64, taken time.Time) error {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("record the backup's place in it: %w", err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(snapshotBucket))
		if err != nil {
			return err
		}
		at, _ := taken.UTC().MarshalText()
		if err := b.Put([]byte("seq"), binary.BigEndian.AppendUint64(nil, seq)); err != nil {
			return err
		}
		return b.Put([]byte("taken"), at)
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("record the backup's place in it: %w", err)
	}
	return nil
}

// nextSnapshot is the path and sequence number of a backup taken at now in dir.
func nextSnapshot(dir string, now time.Time) (path string, seq uint64, at time.Time, err error) {
	kept, err := listSnapshots(dir)
	if err != nil {
		return "", 0, time.Time{}, err
	}
	seq = 1
	for _, k := range kept {
		seq = max(seq, k.Seq+1)
	}
	at = now.UTC().Truncate(time.Millisecond)
	path = SnapshotPath(dir, at)
	for {
		// Two in one millisecond (a request beside the schedule), or a name a copy took:
		// the later one waits for a name of its own.
		if _, err := os.Lstat(path); os.IsNotExist(err) {
			return path, seq, at, nil
		}
		at = at.Add(time.Millisecond)
		path = SnapshotPath(dir, at)
	}
}

// SnapshotFile copies the database file src, which no process may have open for writing
// (as BackupFile), into dir as a backup named and recorded as Snapshots writes its own, so
// that it takes its place among them as the newest. It removes none.
func SnapshotFile(ctx context.Context, src, dir string, opts Options) (Snapshot, error) {
	path, seq, at, err := nextSnapshot(dir, time.Now())
	if err != nil {
		return Snapshot{}, err
	}
	if _, err := backupFile(ctx, src, path, opts, func(tmp string) error { return writeSnapshotRecord(tmp, seq, at) }); err != nil {
		return Snapshot{}, err
	}
	return statSnapshot(path, seq, at), nil
}

func statSnapshot(path string, seq uint64, at time.Time) Snapshot {
	snap := Snapshot{Path: path, Taken: at, Seq: seq}
	if fi, err := os.Stat(path); err == nil {
		snap.Size = fi.Size()
	}
	return snap
}

// Take writes a backup now and then removes the oldest beyond Keep (never the one it
// wrote). Before, it removes the temporary files of backups cut short (see Snapshots).
func (s *Snapshots) Take(ctx context.Context) (Snapshot, error) {
	if s.Driver == nil || s.Dir == "" {
		return Snapshot{}, errors.New("boltstore: Snapshots needs a Driver and a Dir")
	}
	s.removeUnfinished(time.Now())
	path, seq, at, err := nextSnapshot(s.Dir, s.now())
	if err != nil {
		return Snapshot{}, err
	}
	_, err = writeFileAtomically(path, func(w io.Writer) (int64, error) { return s.Driver.WriteBackup(ctx, w) },
		func(tmp string) error { return writeSnapshotRecord(tmp, seq, at) })
	if err != nil {
		return Snapshot{}, err
	}
	taken := statSnapshot(path, seq, at)
	if s.Keep > 0 {
		kept, err := s.List()
		if err != nil {
			return taken, err
		}
		kept = slices.DeleteFunc(kept, func(k Snapshot) bool { return k.Path == taken.Path })
		for len(kept) >= s.Keep { // the one taken is the Keep-th
			if err := os.Remove(kept[0].Path); err != nil && !os.IsNotExist(err) {
				return taken, fmt.Errorf("boltstore: remove an old backup: %w", err)
			}
			kept = kept[1:]
		}
	}
	return taken, nil
}

// removeUnfinished removes from Dir the temporary files of backups (named as Take names
// them) last written before before: a crash (or a kill) in the middle of a backup leaves
// one, which nothing else would remove. One written since is a backup under way (another
// process's sharing Dir), left alone.
func (s *Snapshots) removeUnfinished(before time.Time) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() || !unfinishedSnapshot(e.Name()) {
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.ModTime().Before(before) {
			continue
		}
		path := filepath.Join(s.Dir, e.Name())
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			s.logger().Warn("could not remove the file of a backup cut short", "path", path, "err", err)
			continue
		}
		s.logger().Info("removed the file of a backup cut short", "path", path, "bytes", fi.Size())
	}
}

// unfinishedSnapshot reports whether name is a temporary file writeFileAtomically makes
// for one of Snapshots' backups: .switchyard-<UTC time>.db.<digits>.tmp.
func unfinishedSnapshot(name string) bool {
	rest, ok := strings.CutPrefix(name, ".")
	if !ok {
		return false
	}
	if rest, ok = strings.CutSuffix(rest, ".tmp"); !ok {
		return false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 || i == len(rest)-1 || strings.Trim(rest[i+1:], "0123456789") != "" {
		return false
	}
	_, ok = snapshotName(rest[:i])
	return ok
}

func (s *Snapshots) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// Run takes backups until ctx ends: at start when the newest kept is older than Every (or
// there is none), then every Every, and at once for each value received on now (nil: none
// asked). It returns when ctx ends.
func (s *Snapshots) Run(ctx context.Context, now <-chan struct{}) {
	log := s.logger()
	s.removeUnfinished(time.Now())
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
			// Clamped to Every: a clock that went back must not put the next one off.
			wait = min(max(s.Every-s.now().Sub(kept[len(kept)-1].Taken), 0), s.Every)
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
