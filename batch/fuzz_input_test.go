package batch

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// FuzzCheckInput reads arbitrary batch input files. A refusal is a *ValidationError naming
// a line of the file (or the file); an accepted file counts one request per non-blank line,
// every url it names is an endpoint a batch runs, on a line that exists.
func FuzzCheckInput(f *testing.F) {
	f.Add([]byte(`{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}}
{"custom_id":"b","method":"POST","url":"/v1/embeddings","body":{"model":"text-embedding-3-small","input":"x"}}

`))
	f.Add([]byte("{\"custom_id\":\"a\",\"method\":\"POST\",\"url\":\"/v1/responses\",\"body\":{}}\r\n{\"custom_id\":\"a\",\"method\":\"POST\",\"url\":\"/v1/responses\",\"body\":{}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sum, err := CheckInput(bytes.NewReader(data))
		lines := bytes.Split(data, []byte("\n"))
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T is not a *ValidationError: %v", err, err)
			}
			if ve.Line < 0 || ve.Line > len(lines) {
				t.Fatalf("error names line %d of %d", ve.Line, len(lines))
			}
			return
		}
		n := 0
		for _, l := range lines {
			if len(bytes.TrimSpace(l)) > 0 {
				n++
			}
		}
		if sum.Requests != n || n == 0 {
			t.Fatalf("%d requests counted in %d non-blank lines", sum.Requests, n)
		}
		for u, line := range sum.URLs {
			if !slices.Contains(Endpoints, u) || line < 1 || line > len(lines) {
				t.Fatalf("url %q on line %d accepted", u, line)
			}
		}
	})
}
