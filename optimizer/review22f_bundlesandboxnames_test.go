package optimizer

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// Names the sandbox refuses are refused by the bundle check, naming the entry: a name over
// 255 bytes, and a file that is also a folder ("lib" and "lib/x.py"), passed ReadBundle and
// failed each job only in the sandbox with "the bundle cannot be run: …".
func TestReview22fBundleNamesTheSandboxRefuses(t *testing.T) {
	long := "lib/" + strings.Repeat("a", 253) + ".py" // 260 bytes
	cases := map[string]struct {
		extra map[string][]byte
		want  string
	}{
		"long name":          {map[string][]byte{long: []byte("x = 1\n")}, long[:40]},
		"file and folder":    {map[string][]byte{"lib": []byte("x"), "lib/x.py": []byte("x = 1\n")}, `"lib"`},
		"file and subfolder": {map[string][]byte{"a/b": []byte("x"), "a/b/c/x.py": []byte("x = 1\n")}, `"a/b"`},
		"agent.py folder":    {map[string][]byte{"agent.py/x.py": []byte("x = 1\n")}, `"agent.py"`},
	}
	for name, c := range cases {
		files := bundleFiles(t)
		for k, v := range c.extra {
			files[k] = v
		}
		b, err := ReadBundle(zipFiles(t, files))
		if !errors.Is(err, ErrBundle) || !strings.Contains(err.Error(), c.want) {
			if err == nil {
				err = (&sandbox.Job{Files: b.Files, Rows: b.Rows}).Validate()
			}
			t.Errorf("%s: %v, want an invalid bundle naming %s", name, err, c.want)
		}
	}
	// The bound is on the name the sandbox gets: a folder zipped as is is stripped first.
	files := map[string][]byte{}
	for k, v := range bundleFiles(t) {
		files["my-agent/"+k] = v
	}
	files["my-agent/"+long[:255]] = []byte("x = 1\n")
	b, err := ReadBundle(zipFiles(t, files))
	if err != nil {
		t.Fatalf("a 255-byte name under the stripped folder: %v", err)
	}
	if err := (&sandbox.Job{Files: b.Files, Rows: b.Rows}).Validate(); err != nil {
		t.Errorf("the sandbox refuses what the bundle check accepted: %v", err)
	}
}
