package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
)

// backupsIn lists serve's backups under dir's backups directory.
func backupsIn(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "backups", "switchyard-*.db"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func waitBackups(t *testing.T, dir string, n int) []string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got := backupsIn(t, dir); len(got) >= n {
			if len(got) > n {
				t.Fatalf("%d backups, want %d: %v", len(got), n, got)
			}
			return got
		}
	}
	t.Fatalf("%d backups after 20 s, want %d", len(backupsIn(t, dir)), n)
	return nil
}

// TestServeBackupsAndRestore: serve writes a backup at start and one at SIGUSR1 while it
// runs; `switchyard backup` refuses the running server's file saying how to get one;
// `backup --verify` passes the backup; after the database file is damaged, `restore
// --from` puts the backup back (keeping the damaged file aside) and serve starts on it
// with the key and the virtual key it held.
func TestServeBackupsAndRestore(t *testing.T) {
	t.Setenv("SWITCHYARD_API_KEYS", "")
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, stdout, done := startServe(t, ctx, dir)
	m := keyRe.FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("no key printed: %q", stdout.String())
	}
	key := m[1]
	base := "http://" + addr
	waitBackups(t, dir, 1) // at start: none was there

	var vk struct {
		Key   string `json:"key"`
		Token string `json:"token"`
	}
	if code := postJSON(t, base+"/key/generate", key, `{"key_alias":"kept"}`, &vk); code != 200 || vk.Key == "" {
		t.Fatalf("/key/generate: %d %+v", code, vk)
	}
	sendBackup(t)
	snaps := waitBackups(t, dir, 2)
	newest := snaps[len(snaps)-1]
	var metrics string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if metrics = string(b); strings.Contains(metrics, `switchyard_backups_total{outcome="ok"} 2`) {
			break
		}
	}
	if !strings.Contains(metrics, `switchyard_backups_total{outcome="ok"} 2`) || !strings.Contains(metrics, `switchyard_backups_total{outcome="failed"} 0`) ||
		strings.Contains(metrics, "switchyard_backup_last_success_timestamp_seconds 0\n") {
		t.Fatalf("backup metrics after two backups:\n%s", grepLines(metrics, "backup"))
	}

	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"backup", "--data", dir}, &out, &errb); code != 1 || !strings.Contains(errb.String(), backupNowHint) {
		t.Fatalf("backup of a running server's file: exit %d, %q", code, errb.String())
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exit %d", code)
	}

	out.Reset()
	if code := run(context.Background(), []string{"backup", "--verify", newest}, &out, &errb); code != 0 || !strings.Contains(out.String(), "consistent") {
		t.Fatalf("backup --verify: exit %d, %q %q", code, out.String(), errb.String())
	}
	out.Reset()
	offline := filepath.Join(t.TempDir(), "offline.db")
	if code := run(context.Background(), []string{"backup", "--data", dir, "--out", offline}, &out, &errb); code != 0 || !strings.Contains(out.String(), offline) {
		t.Fatalf("backup of a stopped server: exit %d, %q %q", code, out.String(), errb.String())
	}

	// Damage the database: serve refuses it.
	db := filepath.Join(dir, "switchyard.db")
	raw, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, raw[:len(raw)/2+1], 0o600); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", dir}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "damaged") {
		t.Fatalf("serve on a damaged file: exit %d, %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"restore", "--data", dir}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--from") {
		t.Fatalf("restore without --from: exit %d, %q", code, errb.String())
	}
	if code := run(context.Background(), []string{"restore", "--data", dir, "--from", newest}, &out, &errb); code != 0 || !strings.Contains(out.String(), ".before-restore-") {
		t.Fatalf("restore: exit %d, %q %q", code, out.String(), errb.String())
	}

	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	addr, stdout, done = startServe(t, ctx2, dir)
	if keyRe.MatchString(stdout.String()) {
		t.Fatalf("a new key was printed: the restored database lost the first one: %q", stdout.String())
	}
	if code, _ := get(t, "http://"+addr+"/key/info?key="+vk.Token, key); code != 200 {
		t.Fatalf("the virtual key made before the backup, after the restore: /key/info %d", code)
	}
	cancel2()
	<-done
}

// TestServeBackupFlags: values out of range, and backup flags beside a PostgreSQL store,
// are command line errors (exit 2) naming the flag, before anything is opened.
func TestServeBackupFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--backup-keep", "-1"}, "--backup-keep"},
		{[]string{"--backup-every", "-1h"}, "--backup-every"},
		{[]string{"--store", "postgres://nobody@127.0.0.1:1/none", "--backup-every", "1h"}, "pg_dump"},
	} {
		var out, errb bytes.Buffer
		dir := t.TempDir()
		code := run(context.Background(), append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir}, tc.args...), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, %q", tc.args, code, errb.String())
		}
		if es, _ := os.ReadDir(dir); len(es) != 0 {
			t.Errorf("%v: the data directory was touched: %v", tc.args, es)
		}
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestBadEnvironmentValueIsAUsageError: a SWITCHYARD_* variable whose value its flag does
// not take exits 2 naming the variable, as the same value given as the flag does, before
// the data directory is touched.
func TestBadEnvironmentValueIsAUsageError(t *testing.T) {
	t.Setenv("SWITCHYARD_BACKUP_KEEP", "lots")
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", dir}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "SWITCHYARD_BACKUP_KEEP") {
		t.Fatalf("exit %d, %q", code, errb.String())
	}
	if code := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--backup-keep", "lots"}, &out, &errb); code != 2 {
		t.Fatalf("the flag: exit %d", code)
	}
	if es, _ := os.ReadDir(dir); len(es) != 0 {
		t.Fatalf("the data directory was touched: %v", es)
	}
}

// TestServeWarnsOfAnUnpricedProposer: a --proposer-model the catalogue does not price is
// named at start (its jobs' proposer cost would read $0); the default one is not.
func TestServeWarnsOfAnUnpricedProposer(t *testing.T) {
	t.Setenv("SWITCHYARD_API_KEYS", "k")
	for _, tc := range []struct {
		model string
		warn  bool
	}{{"openai/my-own-proposer", true}, {"openai/gpt-4o-mini", false}} {
		ctx, cancel := context.WithCancel(context.Background())
		_, _, stderr, done := startServeWith(t, ctx, t.TempDir(), "--proposer-model", tc.model)
		got := strings.Contains(stderr.String(), "--proposer-model has no price")
		cancel()
		<-done
		if got != tc.warn {
			t.Errorf("--proposer-model %s: warned %v, want %v:\n%s", tc.model, got, tc.warn, grepLines(stderr.String(), "proposer"))
		}
	}
}

// TestRestoreRefusesAnOpenDatabase: restore onto a database another process has open (a
// running server; here the test's own handle, which the lock treats alike on every OS,
// Windows included, where a file open elsewhere cannot be renamed over) exits 1 naming the
// file and saying nothing was changed, and changes nothing: no file is put aside and the
// database still holds what it held.
func TestRestoreRefusesAnOpenDatabase(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "switchyard.db")
	backup := filepath.Join(dir, "b.db")
	mk := func(path, value string) {
		st, err := boltstore.Open(path, boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Put(context.Background(), store.Collection("restore_test"), "k", []byte(value)); err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	mk(backup, "backup")
	mk(live, "live")
	open, err := boltstore.Open(live, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"restore", "--data", dir, "--from", backup}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), live+" is in use by a running server: stop it first (nothing was changed)") {
		t.Fatalf("restore onto an open database: exit %d, %q %q", code, out.String(), errb.String())
	}
	if aside, _ := filepath.Glob(live + ".before-restore-*"); len(aside) != 0 {
		t.Fatalf("a refused restore put files aside: %v", aside)
	}
	v, err := open.Get(context.Background(), store.Collection("restore_test"), "k")
	open.Close()
	if err != nil || string(v) != "live" {
		t.Fatalf("the open database after a refused restore: %q %v", v, err)
	}
	st, err := boltstore.Open(live, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, err := st.Get(context.Background(), store.Collection("restore_test"), "k"); err != nil || string(v) != "live" {
		t.Fatalf("the database file after a refused restore: %q %v", v, err)
	}
}
