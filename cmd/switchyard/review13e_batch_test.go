package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

// TestReview13eBatchRunOutDirMissing: `switchyard batch run FILE --out DIR` with a DIR that
// does not exist yet uploads the file, runs the whole batch (paid for), waits for it, and
// only then fails with "open DIR/<id>_output.jsonl: no such file or directory" and exit
// code 1: the directory is neither created nor checked before the batch starts.
func TestReview13eBatchRunOutDirMissing(t *testing.T) {
	up := fakeOpenAIUpstream(t)
	url := cliServer(t, func(st *store.Store) []server.Option {
		env := map[string]string{"OPENAI_API_KEY": "sk-fake", "OPENAI_BASE_URL": up.URL + "/v1"}
		gw, err := completions.New(completions.Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}), Store: st})
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Completions(gw), batchesOption(t, st)}
	})
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte(`{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}}
`), 0o644)
	out := filepath.Join(dir, "results", "today")
	code, stdout, stderr := cli(t, "batch", "run", in, "--url", url, "--key", cliKey, "--poll", "10ms", "--out", out)
	if code != 0 {
		t.Fatalf("batch run --out <a new directory>: exit %d after the batch ran\n%s\n%s", code, stdout, stderr)
	}
}
