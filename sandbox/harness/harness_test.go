package harness

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
)

func TestPrepareScoreStage(t *testing.T) {
	job := sandbox.Job{
		Files:   map[string][]byte{"agent.py": []byte("A"), "eval.py": []byte("E"), "lib/util.py": []byte("U")},
		Rows:    []sandbox.Row{{Input: "q", Answer: "a"}},
		Gateway: sandbox.Gateway{BaseURL: "http://127.0.0.1:1/v1", APIKey: "sk-job", Model: "openai/m"},
	}
	ws, err := Prepare(t.TempDir(), job, Setup{Mode: ModeProcess, Stage: StageScore, Predicted: []string{"p"}, Nonce: "n"})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Remove()
	if _, err := os.Stat(filepath.Join(ws.JobDir, "agent.py")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("agent.py is in the score stage's workspace (err %v)", err)
	}
	var in Input
	data, err := os.ReadFile(filepath.Join(ws.SandboxDir, "input.json"))
	if err != nil || json.Unmarshal(data, &in) != nil {
		t.Fatalf("input.json: %v", err)
	}
	if in.Stage != StageScore || in.Expected[0] != "a" || in.Predicted[0] != "p" || in.Nonce != "n" ||
		in.APIKey != "" || in.Gateway != nil || in.Inputs != nil {
		t.Fatalf("input = %+v", in)
	}
	if _, err := Prepare(t.TempDir(), job, Setup{Mode: ModeProcess, Stage: StageScore}); !errors.Is(err, sandbox.ErrInvalid) {
		t.Fatalf("score stage without predictions: err = %v, want ErrInvalid", err)
	}
}

func TestPrepareRejectsInvalidJob(t *testing.T) {
	_, err := Prepare(t.TempDir(), sandbox.Job{Files: map[string][]byte{"agent.py": nil}}, Setup{Mode: ModeProcess})
	if !errors.Is(err, sandbox.ErrInvalid) {
		t.Fatalf("err = %v, want ErrInvalid", err)
	}
}
