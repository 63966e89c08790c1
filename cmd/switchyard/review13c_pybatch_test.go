package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
)

// TestReview13cPythonBatchResultsSplitsOnNEL: the server writes a batch's output lines with
// encoding/json, which leaves U+0085 (NEL) unescaped inside strings (a model's answer may
// hold one). The Python client's batch_results splits the file with str.splitlines(),
// which also breaks at U+0085 (and U+001C-U+001E, U+2028/9 when unescaped): the line is cut
// in two and json.loads fails. It should split on "\n" only.
func TestReview13cPythonBatchResultsSplitsOnNEL(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	body, _ := json.Marshal(map[string]any{"object": "chat.completion", "choices": []any{map[string]any{"message": map[string]any{"content": "a\u0085b"}}}})
	line, _ := json.Marshal(batch.OutputLine{ID: "batch_req_1", CustomID: "c0", Response: &batch.LineResponse{StatusCode: 200, RequestID: "batch_req_1", Body: body}})
	if !strings.Contains(string(line), "\u0085") {
		t.Fatalf("encoding/json escaped NEL: %s", line)
	}
	content := append(line, '\n')
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/jsonl")
		w.Write(content)
	}))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", `
import sys
from switchyard import Client
from switchyard.batches import batch_results
lines = batch_results("file-x", client=Client(base_url=sys.argv[1], api_key="k"))
print(len(lines), lines[0]["response"]["body"]["choices"][0]["message"]["content"] == "a\u0085b")
`, hs.URL)
	cmd.Dir = filepath.Join("..", "..", "clients", "python")
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "1 True" {
		t.Fatalf("batch_results of a one-line file: %v\n%s", err, out)
	}
}
