//go:build unix

package harness

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// Unix permission bits (and umask) only: Windows files have ACLs instead.
func TestPrepareIsPrivate(t *testing.T) {
	job := sandbox.Job{
		Files:   map[string][]byte{"agent.py": []byte("A"), "eval.py": []byte("E"), "lib/util.py": []byte("U")},
		Rows:    []sandbox.Row{{Input: "q", Answer: "a"}},
		Gateway: sandbox.Gateway{BaseURL: "http://127.0.0.1:1/v1", APIKey: "sk-job", Model: "openai/m"},
	}
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	ws, err := Prepare(t.TempDir(), job, Setup{Mode: ModeProcess})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Remove()
	err = filepath.WalkDir(ws.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v: other users can read it", p, info.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(ws.JobDir, "lib", "util.py")); err != nil || string(data) != "U" {
		t.Fatalf("lib/util.py = %q, %v", data, err)
	}
	var in Input
	data, err := os.ReadFile(filepath.Join(ws.SandboxDir, "input.json"))
	if err != nil || json.Unmarshal(data, &in) != nil {
		t.Fatalf("input.json: %v", err)
	}
	if in.APIKey != "sk-job" || in.Model != "openai/m" || in.Inputs[0] != "q" || in.Limits.MemoryBytes != sandbox.DefaultMemoryBytes {
		t.Fatalf("input = %+v", in)
	}
	if strings.Contains(string(data), `"a"`) || in.Expected != nil {
		t.Fatalf("the agent stage's input.json holds the answers: %s", data)
	}
}

// TestPrepareScoreStage: the score stage gets the answers and predictions, the nonce, no
// agent.py, no API key and no gateway.
