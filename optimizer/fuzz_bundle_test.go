package optimizer

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"testing"
)

// fuzzZip builds a ZIP from spec: entries separated by "\x00\x00", each "flags name\x00content",
// the flags byte choosing deflate (1), a symlink (2), a folder mode (4), a repeated
// content (8: 4096 times) and an executable mode (16). Names are written as given.
func fuzzZip(spec []byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, ent := range bytes.Split(spec, []byte("\x00\x00")) {
		if len(ent) == 0 {
			continue
		}
		flags, rest := ent[0], ent[1:]
		name, content, _ := bytes.Cut(rest, []byte("\x00"))
		h := &zip.FileHeader{Name: string(name), Method: zip.Store}
		if flags&1 != 0 {
			h.Method = zip.Deflate
		}
		mode := fs.FileMode(0o644)
		switch {
		case flags&2 != 0:
			mode = fs.ModeSymlink | 0o777
		case flags&4 != 0:
			mode = fs.ModeDir | 0o755
		case flags&16 != 0:
			mode = 0o755
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			continue
		}
		if flags&8 != 0 {
			content = bytes.Repeat(content, 4096)
		}
		w.Write(content)
	}
	zw.Close()
	return buf.Bytes()
}

func fuzzBundleSpec(entries ...[3]string) []byte {
	var parts [][]byte
	for _, e := range entries {
		parts = append(parts, []byte(e[0]+e[1]+"\x00"+e[2]))
	}
	return bytes.Join(parts, []byte("\x00\x00"))
}

// FuzzReadBundle reads arbitrary ZIPs (raw bytes, or built from fuzzed entries with names,
// modes and contents) as optimization bundles. A refusal is a *BundleError; an accepted
// bundle's files all have clean relative names that stay inside the extraction directory,
// within the limits, with no hidden files, symlinks or dataset.json among them.
func FuzzReadBundle(f *testing.F) {
	agent, err := os.ReadFile("testdata/bundle/agent.py")
	if err != nil {
		f.Fatal(err)
	}
	eval, err := os.ReadFile("testdata/bundle/eval.py")
	if err != nil {
		f.Fatal(err)
	}
	var rows []map[string]string
	for i := range MinDatasetRows {
		rows = append(rows, map[string]string{"input": fmt.Sprint("q", i), "answer": fmt.Sprint("A", i)})
	}
	dataset, _ := json.Marshal(rows)
	good := fuzzBundleSpec([3]string{"\x01", "agent.py", string(agent)}, [3]string{"\x00", "eval.py", string(eval)},
		[3]string{"\x01", "dataset.json", string(dataset)}, [3]string{"\x00", "lib/helper.py", "X = 1\n"})
	f.Add(false, good)
	f.Add(true, fuzzZip(good))
	f.Add(false, fuzzBundleSpec([3]string{"\x04", "proj/", ""}, [3]string{"\x01", "proj/agent.py", string(agent)}, [3]string{"\x00", "proj/eval.py", string(eval)},
		[3]string{"\x00", "proj/dataset.json", string(dataset)}, [3]string{"\x00", "proj/.hidden", "x"}, [3]string{"\x00", "__MACOSX/._agent.py", "x"}))
	f.Add(false, fuzzBundleSpec([3]string{"\x00", "../evil.py", "x"}, [3]string{"\x02", "link", "/etc/passwd"}, [3]string{"\x09", "big.txt", "aaaaaaaa"}))
	f.Add(false, fuzzBundleSpec([3]string{"\x00", "./agent.py", string(agent)}, [3]string{"\x00", "a//b/./c.py", ""}, [3]string{"\x00", "C:x", ""}))
	f.Fuzz(func(t *testing.T, raw bool, data []byte) {
		zipData := data
		if !raw {
			zipData = fuzzZip(data)
		}
		b, err := ReadBundle(zipData)
		if err != nil {
			var be *BundleError
			if !errors.As(err, &be) || !errors.Is(err, ErrBundle) {
				t.Fatalf("error %T is not a *BundleError: %v", err, err)
			}
			return
		}
		if len(b.Files) > MaxBundleFiles {
			t.Fatalf("%d files accepted", len(b.Files))
		}
		if len(b.Rows) < MinDatasetRows {
			t.Fatalf("%d rows accepted", len(b.Rows))
		}
		var total int
		for name, content := range b.Files {
			total += len(content)
			switch {
			case name == "" || name != path.Clean(name) || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../"):
				t.Fatalf("file name %q leaves the extraction directory or is not clean", name)
			case strings.ContainsAny(name, "\\\x00") || (len(name) >= 2 && name[1] == ':'):
				t.Fatalf("file name %q has a backslash, NUL or drive letter", name)
			case len(name) > MaxBundleNameBytes:
				t.Fatalf("file name %q over %d bytes", name, MaxBundleNameBytes)
			case name == "dataset.json":
				t.Fatal("dataset.json given to the sandbox")
			}
			for _, part := range strings.Split(name, "/") {
				if strings.HasPrefix(part, ".") || part == "__MACOSX" {
					t.Fatalf("hidden or archiver file %q kept", name)
				}
			}
		}
		if total > MaxBundleUncompressed {
			t.Fatalf("%d bytes accepted", total)
		}
		for _, need := range []string{"agent.py", "eval.py"} {
			if _, ok := b.Files[need]; !ok {
				t.Fatalf("accepted without %s", need)
			}
		}
		if !raw {
			// No symlink entry of the ZIP may have become a file.
			zr, _ := zip.NewReader(bytes.NewReader(zipData), int64(len(zipData)))
			for _, zf := range zr.File {
				if zf.Mode()&fs.ModeSymlink != 0 {
					t.Fatalf("bundle with the symlink %q accepted", zf.Name)
				}
			}
		}
	})
}
