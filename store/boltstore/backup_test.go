package boltstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

const backupColl = store.Collection("backup_test")

func openTestDriver(t *testing.T, path string) *Driver {
	t.Helper()
	d, err := OpenDriver(path, Options{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func putN(t *testing.T, d *Driver, from, to int, value string) {
	t.Helper()
	err := d.Update(context.Background(), func(tx store.Tx) error {
		for i := from; i < to; i++ {
			if err := tx.Put(context.Background(), backupColl, fmt.Sprintf("k%06d", i), []byte(value+fmt.Sprint(i))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func keysOf(t *testing.T, path string) []store.Entry {
	t.Helper()
	d := openTestDriver(t, path)
	defer d.Close()
	es, err := d.List(context.Background(), backupColl, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestBackupWhileWriting: a backup taken while another goroutine keeps committing is one
// transaction's view: the keys, written in order, form an unbroken prefix with every
// value whole, and the copy passes Verify and opens as a database.
func TestBackupWhileWriting(t *testing.T) {
	dir := t.TempDir()
	d := openTestDriver(t, filepath.Join(dir, "switchyard.db"))
	defer d.Close()
	putN(t, d, 0, 300, "v")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 300; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := d.Put(context.Background(), backupColl, fmt.Sprintf("k%06d", i), []byte(strings.Repeat("x", 200)+fmt.Sprint(i))); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	copyPath := filepath.Join(dir, "backups", "copy.db")
	n, err := d.BackupTo(context.Background(), copyPath)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(copyPath); err != nil || fi.Size() != n || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v %v (wrote %d)", fi, err, n)
	}
	if err := Verify(context.Background(), copyPath, Options{}); err != nil {
		t.Fatal(err)
	}
	es := keysOf(t, copyPath)
	if len(es) < 300 {
		t.Fatalf("backup holds %d keys, want at least the 300 written before it", len(es))
	}
	for i, e := range es {
		if e.Key != fmt.Sprintf("k%06d", i) || !strings.HasSuffix(string(e.Value), fmt.Sprint(i)) {
			t.Fatalf("entry %d of the backup is %q=%q: not an unbroken prefix of the writes", i, e.Key, e.Value)
		}
	}
}

// TestBackupCancelledLeavesNothing: a cancelled backup returns the context's error and
// leaves no file, not even its temporary one.
func TestBackupCancelledLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	d := openTestDriver(t, filepath.Join(dir, "switchyard.db"))
	defer d.Close()
	putN(t, d, 0, 10, "v")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(dir, "out")
	if _, err := d.BackupTo(ctx, filepath.Join(out, "b.db")); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled backup: %v", err)
	}
	if es, _ := os.ReadDir(out); len(es) != 0 {
		t.Fatalf("a cancelled backup left %v", es)
	}
}

// TestBackupFileOfARunningDatabaseIsLocked: BackupFile and Restore refuse a file a
// process holds open (store.ErrLocked) and change nothing; once it is closed both work.
func TestBackupFileOfARunningDatabaseIsLocked(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "switchyard.db")
	d := openTestDriver(t, live)
	putN(t, d, 0, 5, "live")
	backup := filepath.Join(dir, "b.db")
	short := Options{LockTimeout: 100 * time.Millisecond}
	if _, err := BackupFile(context.Background(), live, backup, short); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("BackupFile of an open database: %v, want ErrLocked", err)
	}
	if _, err := d.BackupTo(context.Background(), backup); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(context.Background(), backup, live, short); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("Restore onto an open database: %v, want ErrLocked", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("a refused restore left %v", entries)
	}
	putN(t, d, 5, 6, "live")
	d.Close()
	if n := len(keysOf(t, live)); n != 6 {
		t.Fatalf("the live database holds %d keys after a refused restore, want 6", n)
	}
	if _, err := BackupFile(context.Background(), live, filepath.Join(dir, "c.db"), short); err != nil {
		t.Fatal(err)
	}
	if n := len(keysOf(t, filepath.Join(dir, "c.db"))); n != 6 {
		t.Fatalf("offline backup holds %d keys, want 6", n)
	}
}

// TestVerifyFindsDamage: Verify refuses an empty, a truncated and a garbled file with
// store.ErrCorrupt naming it, and passes a whole one.
func TestVerifyFindsDamage(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	d := openTestDriver(t, good)
	putN(t, d, 0, 2000, strings.Repeat("p", 100))
	d.Close()
	if err := Verify(context.Background(), good, Options{}); err != nil {
		t.Fatalf("a whole file: %v", err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	garbled := append([]byte(nil), raw...)
	// Overwrite every page after the meta pages' own with junk page headers: a branch or
	// leaf page the tree reaches no longer reads as one.
	for off := 4 * 4096; off+16 < len(garbled); off += 4096 {
		copy(garbled[off:off+16], []byte("junkjunkjunkjunk"))
	}
	for name, p := range map[string]string{
		"empty":     write("empty.db", nil),
		"truncated": write("truncated.db", raw[:len(raw)/2+100]),
		"garbled":   write("garbled.db", garbled),
	} {
		err := Verify(context.Background(), p, Options{})
		if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s file: %v, want ErrCorrupt naming it", name, err)
		}
	}
	if err := Verify(context.Background(), filepath.Join(dir, "missing.db"), Options{}); err == nil {
		t.Error("a missing file passed Verify")
	}
}

// TestRestoreKeepsTheReplacedFile: Restore installs the backup's data, keeps the file it
// replaced beside it, refuses a damaged backup without touching the database, and
// restores over a damaged database.
func TestRestoreKeepsTheReplacedFile(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "switchyard.db")
	d := openTestDriver(t, live)
	putN(t, d, 0, 3, "old")
	backup := filepath.Join(dir, "b.db")
	if _, err := d.BackupTo(context.Background(), backup); err != nil {
		t.Fatal(err)
	}
	putN(t, d, 3, 10, "newer")
	d.Close()

	damaged := filepath.Join(dir, "damaged.db")
	if err := os.WriteFile(damaged, []byte("not a database at all, but long enough to try"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(context.Background(), damaged, live, Options{}); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("restore of a damaged backup: %v", err)
	}
	if n := len(keysOf(t, live)); n != 10 {
		t.Fatalf("a refused restore changed the database: %d keys", n)
	}

	aside, err := Restore(context.Background(), backup, live, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if es := keysOf(t, live); len(es) != 3 || string(es[2].Value) != "old2" {
		t.Fatalf("restored database: %v", es)
	}
	if !strings.HasPrefix(aside, live+".before-restore-") {
		t.Fatalf("aside = %q", aside)
	}
	if n := len(keysOf(t, aside)); n != 10 {
		t.Fatalf("the replaced file kept aside holds %d keys, want 10", n)
	}

	// Over a damaged database (what a restore is for).
	raw, _ := os.ReadFile(live)
	if err := os.WriteFile(live, raw[:len(raw)-4096], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDriver(live, Options{}); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("the cut file opened: %v", err)
	}
	aside2, err := Restore(context.Background(), backup, live, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if aside2 == aside {
		t.Fatalf("the second restore put its replaced file over the first's (%s)", aside)
	}
	if n := len(keysOf(t, aside)); n != 10 {
		t.Fatalf("the first restore's replaced file holds %d keys after a second restore, want 10", n)
	}
	if n := len(keysOf(t, live)); n != 3 {
		t.Fatalf("restored over a damaged file: %d keys", n)
	}
}

// TestSnapshotsKeepTheNewest: Take names each backup by its time, keeps the newest Keep
// and leaves other files in the directory alone.
func TestSnapshotsKeepTheNewest(t *testing.T) {
	dir := t.TempDir()
	d := openTestDriver(t, filepath.Join(dir, "switchyard.db"))
	defer d.Close()
	putN(t, d, 0, 3, "v")
	backups := filepath.Join(dir, "backups")
	if err := os.MkdirAll(backups, 0o700); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(backups, "switchyard-handmade.db")
	if err := os.WriteFile(other, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	s := &Snapshots{Driver: d, Dir: backups, Keep: 3, Now: func() time.Time { return clock }}
	var taken []Snapshot
	for i := range 5 {
		putN(t, d, 3+i, 4+i, "v")
		snap, err := s.Take(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		taken = append(taken, snap)
		clock = clock.Add(time.Hour)
	}
	kept, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 3 || kept[0].Path != taken[2].Path || kept[2].Path != taken[4].Path {
		t.Fatalf("kept %v, want the last three of %v", kept, taken)
	}
	if !kept[2].Taken.Equal(time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)) || filepath.Base(kept[2].Path) != "switchyard-20261129T070000.000Z.db" {
		t.Fatalf("newest = %+v", kept[2])
	}
	if n := len(keysOf(t, kept[2].Path)); n != 8 {
		t.Fatalf("newest backup holds %d keys, want 8", n)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("a file not named by Snapshots was removed: %v", err)
	}
	// Two in the same millisecond get names of their own.
	a, err1 := s.Take(context.Background())
	b, err2 := s.Take(context.Background())
	if err1 != nil || err2 != nil || a.Path == b.Path {
		t.Fatalf("two backups at one time: %v %v %v %v", a, b, err1, err2)
	}
}

// TestSnapshotsRun: Run takes a backup at start when none is recent, one per request on
// its channel, none at start when the newest kept is younger than Every, and returns when
// its context ends.
func TestSnapshotsRun(t *testing.T) {
	dir := t.TempDir()
	d := openTestDriver(t, filepath.Join(dir, "switchyard.db"))
	defer d.Close()
	putN(t, d, 0, 3, "v")
	var mu sync.Mutex
	clock := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); clock = clock.Add(time.Second); return clock }
	var doneCalls []Snapshot
	s := &Snapshots{Driver: d, Dir: filepath.Join(dir, "backups"), Every: time.Hour, Keep: 10, Now: now,
		Done: func(snap Snapshot, err error) {
			if err != nil {
				t.Errorf("Done got %v", err)
			}
			mu.Lock()
			doneCalls = append(doneCalls, snap)
			mu.Unlock()
		}}
	count := func(want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			kept, _ := s.List()
			if len(kept) == want {
				return
			}
			if len(kept) > want || time.Now().After(deadline) {
				t.Fatalf("%d backups, want %d", len(kept), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	run := func() (chan struct{}, func()) {
		ask := make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { s.Run(ctx, ask); close(done) }()
		return ask, func() { cancel(); <-done }
	}
	ask, stop := run()
	count(1) // none kept: one at start
	ask <- struct{}{}
	count(2)
	stop()

	// Restarted with a backup a few seconds old: none at start, one when asked.
	ask, stop = run()
	ask <- struct{}{}
	count(3)
	stop()
	if kept, _ := s.List(); len(kept) != 3 {
		t.Fatalf("%d backups after the restart, want 3 (none at start: the newest was seconds old)", len(kept))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(doneCalls) != 3 || doneCalls[2].Size == 0 {
		t.Fatalf("Done called for %v, want the 3 backups", doneCalls)
	}
}

// BenchmarkBackupTo measures a backup of a 64 MiB database to a file (synced), in MB/s.
func BenchmarkBackupTo(b *testing.B) {
	dir := b.TempDir()
	d, err := OpenDriver(filepath.Join(dir, "switchyard.db"), Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	value := []byte(strings.Repeat("v", 4000))
	for batch := range 16 {
		err := d.Update(context.Background(), func(tx store.Tx) error {
			for i := range 1024 {
				if err := tx.Put(context.Background(), backupColl, fmt.Sprintf("k%02d%06d", batch, i), value); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		n, err := d.BackupTo(context.Background(), filepath.Join(dir, "backup.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(n)
	}
}

// TestSnapshotsRemoveUnfinishedBackups: the temporary file of a backup cut short (named as
// the real ones are named) is removed by the next backup and by Run at its start, when it
// was last written before them; one written since (a backup under way), and files not of
// that name, are left alone.
func TestSnapshotsRemoveUnfinishedBackups(t *testing.T) {
	dir := t.TempDir()
	d := openTestDriver(t, filepath.Join(dir, "switchyard.db"))
	defer d.Close()
	putN(t, d, 0, 3, "v")
	backups := filepath.Join(dir, "backups")
	if err := os.MkdirAll(backups, 0o700); err != nil {
		t.Fatal(err)
	}
	// The name a backup's temporary file really has is one removeUnfinished takes.
	var during []string
	_, err := writeFileAtomically(SnapshotPath(backups, time.Now()), func(w io.Writer) (int64, error) {
		es, _ := os.ReadDir(backups)
		for _, e := range es {
			during = append(during, e.Name())
		}
		return 0, errors.New("cut short")
	}, nil)
	if err == nil || len(during) != 1 || !unfinishedSnapshot(during[0]) {
		t.Fatalf("a backup's temporary file %v (err %v): not recognised as one", during, err)
	}
	hourAgo := time.Now().Add(-time.Hour)
	file := func(name string, mtime time.Time) string {
		p := filepath.Join(backups, name)
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := file(".switchyard-20261129T030000.000Z.db.1234567.tmp", hourAgo)
	underWay := file(".switchyard-20261129T040000.000Z.db.7654321.tmp", time.Now().Add(time.Hour))
	others := []string{
		file(".switchyard.db.1234567.tmp", hourAgo),                     // a restore's, not a backup's
		file(".switchyard-20261129T030000.000Z.db.12ab.tmp", hourAgo),   // not our digits
		file("switchyard-20261129T030000.000Z.db.1234567.tmp", hourAgo), // no leading dot
		file(".switchyard-handmade.db.1234567.tmp", hourAgo),            // no time
		file("notes.tmp", hourAgo),
	}
	s := &Snapshots{Driver: d, Dir: backups, Keep: 3}
	if _, err := s.Take(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("the stale temporary file is still there after a backup: %v", err)
	}
	for _, p := range append(others, underWay) {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s was removed: %v", filepath.Base(p), err)
		}
	}
	// Run removes one at its start, without taking a backup (Every 0: only when asked).
	stale = file(".switchyard-20261129T050000.000Z.db.42.tmp", hourAgo)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx, nil); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(stale); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Run left the stale temporary file at its start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if kept, _ := s.List(); len(kept) != 1 {
		t.Fatalf("%d backups, want the one taken", len(kept))
	}
}

// TestSnapshotsPruneByRecordedOrder: which backups are the oldest is read from inside
// them, so a backup renamed to a later time, a copy of an old one (a fresh name and file
// time) and a clock that went back do not make Take remove the wrong ones, and never the
// one it just wrote; backups without the record (BackupFile's) go first; SnapshotFile's
// copy of a stopped database takes its place as the newest.
func TestSnapshotsPruneByRecordedOrder(t *testing.T) {
	dir := t.TempDir()
	d := openTestDriver(t, filepath.Join(dir, "switchyard.db"))
	defer d.Close()
	putN(t, d, 0, 3, "v")
	backups := filepath.Join(dir, "backups")
	clock := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	s := &Snapshots{Driver: d, Dir: backups, Keep: 3, Now: func() time.Time { return clock }}
	take := func() Snapshot {
		t.Helper()
		snap, err := s.Take(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(time.Hour)
		return snap
	}
	first, second, third := take(), take(), take()
	if first.Seq != 1 || second.Seq != 2 || third.Seq != 3 || !third.Taken.Equal(time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)) {
		t.Fatalf("taken %+v %+v %+v", first, second, third)
	}
	// The oldest renamed to a name far in the future; the second copied (new name, new
	// file time); a backup without the record under a late name.
	renamed := SnapshotPath(backups, time.Date(2099, 12, 31, 0, 0, 0, 0, time.UTC))
	if err := os.Rename(first.Path, renamed); err != nil {
		t.Fatal(err)
	}
	copied := SnapshotPath(backups, time.Date(2098, 1, 1, 0, 0, 0, 0, time.UTC))
	b, err := os.ReadFile(second.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copied, b, 0o600); err != nil {
		t.Fatal(err)
	}
	legacy := SnapshotPath(backups, time.Date(2097, 1, 1, 0, 0, 0, 0, time.UTC))
	if _, err := d.BackupTo(context.Background(), legacy); err != nil {
		t.Fatal(err)
	}
	kept, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, k := range kept {
		order = append(order, fmt.Sprintf("%s#%d", filepath.Base(k.Path), k.Seq))
	}
	want := []string{filepath.Base(legacy) + "#0", filepath.Base(renamed) + "#1", filepath.Base(second.Path) + "#2", filepath.Base(copied) + "#2", filepath.Base(third.Path) + "#3"}
	if !slices.Equal(order, want) {
		t.Fatalf("List order %v, want %v", order, want)
	}
	// The clock goes back ten hours: the new backup's name is the earliest of all, yet it
	// is the newest, kept, and the three oldest by record go.
	clock = time.Date(2026, 11, 28, 17, 0, 0, 0, time.UTC)
	fourth := take()
	if fourth.Seq != 4 {
		t.Fatalf("seq after the clock went back: %+v", fourth)
	}
	kept, _ = s.List()
	if len(kept) != 3 || kept[0].Path != copied || kept[1].Path != third.Path || kept[2].Path != fourth.Path ||
		!kept[2].Taken.Equal(time.Date(2026, 11, 28, 17, 0, 0, 0, time.UTC)) {
		t.Fatalf("kept %+v", kept)
	}
	// Keep 1: only the one just written stays.
	s.Keep = 1
	fifth := take()
	if kept, _ = s.List(); len(kept) != 1 || kept[0].Path != fifth.Path || kept[0].Seq != 5 {
		t.Fatalf("Keep 1 kept %+v, want %s", kept, fifth.Path)
	}
	// A stopped database's copy by SnapshotFile comes after serve's.
	other := filepath.Join(dir, "other.db")
	d2 := openTestDriver(t, other)
	putN(t, d2, 0, 2, "o")
	d2.Close()
	snap, err := SnapshotFile(context.Background(), other, backups, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if kept, _ = s.List(); len(kept) != 2 || kept[1].Path != snap.Path || snap.Seq != 6 || snap.Size == 0 {
		t.Fatalf("SnapshotFile wrote %+v; kept %+v", snap, kept)
	}
	if n := len(keysOf(t, snap.Path)); n != 2 {
		t.Fatalf("SnapshotFile's copy holds %d keys, want 2", n)
	}
}
