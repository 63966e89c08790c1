package optimizer

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// Zip entries named with "." segments ("./agent.py", as `zip -r b.zip ./` and some
// libraries write them; "lib/./x.py") are read under their clean names: they were dropped
// as hidden, so such a bundle failed with "agent.py is missing".
func TestReview22fBundleDotSegmentsAreCleaned(t *testing.T) {
	for _, prefix := range []string{"./", "./my-agent/", "my-agent/./"} {
		files := map[string][]byte{}
		for k, v := range bundleFiles(t) {
			files[prefix+k] = v
		}
		files[prefix+"lib/./util.py"] = []byte("X = 1\n")
		files[prefix+"lib//more.py"] = []byte("Y = 2\n")
		b, err := ReadBundle(zipFiles(t, files))
		if err != nil {
			t.Fatalf("prefix %q: %v", prefix, err)
		}
		if string(b.Files["lib/util.py"]) != "X = 1\n" || string(b.Files["lib/more.py"]) != "Y = 2\n" || b.Files["agent.py"] == nil {
			t.Errorf("prefix %q: files %v", prefix, keysOf(b.Files))
		}
		// The names are the sandbox's clean names.
		if err := (&sandbox.Job{Files: b.Files, Rows: b.Rows}).Validate(); err != nil {
			t.Errorf("prefix %q: the sandbox refuses the bundle: %v", prefix, err)
		}
	}
	// Cleaning does not let anything out, nor two entries into one name.
	for name, want := range map[string]string{
		"./../agent.py":    `".."`,
		"lib/./../../x.py": `".."`,
		"/./agent.py":      "absolute",
		".\\agent.py":      "backslash",
		"./agent.py|twice": "appears twice",
	} {
		files := bundleFiles(t)
		if n, ok := strings.CutSuffix(name, "|twice"); ok {
			files[n] = files["agent.py"]
		} else {
			files[name] = []byte("x = 1\n")
		}
		_, err := ReadBundle(zipFiles(t, files))
		if !errors.Is(err, ErrBundle) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an invalid bundle saying %s", name, err, want)
		}
	}
}

func keysOf(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
