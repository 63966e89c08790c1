package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serve refuses a --guardrails file it cannot use, naming the flag and the field, and
// starts with a good one.
func TestServeGuardrailsFlag(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ json, says string }{
		{`[{"name":"pii","kind":"pii","mode":"during_call"}]`, "guardrails[0].mode"},
		{`[{"name":"m","kind":"moderation","mode":"pre_call","model":"nosuch/mod"}]`, "guardrails[0].model"},
	} {
		bad := filepath.Join(dir, "bad.json")
		os.WriteFile(bad, []byte(c.json), 0o600)
		var out bytes.Buffer
		code := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(dir, "d1"), "--guardrails", bad}, io.Discard, &out)
		if code == 0 || !strings.Contains(out.String(), "--guardrails") || !strings.Contains(out.String(), c.says) {
			t.Errorf("%s: exit %d, %s", c.json, code, out.String())
		}
	}
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`[{"name":"pii","kind":"pii","mode":"pre_call","default_on":true},{"name":"words","kind":"banned_words","mode":"pre_call","words":["x"]}]`), 0o600)
	t.Setenv("SWITCHYARD_GUARDRAILS", good)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, stdout, done := startServe(t, ctx, filepath.Join(dir, "d2"))
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("serve with good guardrails exited %d: %s", code, stdout.String())
	}
}
