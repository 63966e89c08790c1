package trainer

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// countingReader serves n bytes of 'x' and counts how many were read.
type countingReader struct{ n, read int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	if c.read >= c.n {
		return 0, io.EOF
	}
	k := min(int64(len(p)), c.n-c.read)
	for i := range k {
		p[i] = 'x'
	}
	c.read += k
	return int(k), nil
}

// TestReadUploadStopsAtLimit: a file over MaxUploadBytes is refused after limit+1 bytes,
// not read whole, with a *ValidationError naming upload that wraps ErrTooLarge; a file at
// the limit is read whole.
func TestReadUploadStopsAtLimit(t *testing.T) {
	const limit = 4096
	s, err := New(memstore.New(), WithLogger(quietLogger()), WithFetcher(&fetch.Fetcher{MaxBytes: limit}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	big := &countingReader{n: 64 * limit}
	_, err = s.ReadUpload(big, "dir/big.csv")
	var ve *ValidationError
	if !errors.Is(err, ErrTooLarge) || !errors.Is(err, ErrInvalid) || !errors.As(err, &ve) || ve.Field != "upload" {
		t.Fatalf("err = %v, want a *ValidationError naming upload wrapping ErrTooLarge", err)
	}
	if !strings.Contains(err.Error(), "big.csv") || !strings.Contains(err.Error(), "at most 4096 bytes") {
		t.Errorf("message %q should name the file and the limit", err)
	}
	if big.read > limit+1 {
		t.Errorf("read %d bytes of a %d-byte file; the limit is %d: reading should stop at limit+1", big.read, big.n, limit)
	}

	exact := &countingReader{n: limit}
	data, err := s.ReadUpload(exact, "ok.csv")
	if err != nil || len(data) != limit {
		t.Fatalf("a file at the limit: %d bytes, err %v", len(data), err)
	}
}

// TestSubmitUploadRefusesJointOptionsOnRecords: Not Diamond's joint CSV options on a records
// upload are a *ValidationError naming the option, not ignored.
func TestSubmitUploadRefusesJointOptionsOnRecords(t *testing.T) {
	s, err := New(memstore.New(), WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	data := []byte(`{"problem":"p","correct_models":["openai/gpt-4o"]}` + "\n")
	for field, nd := range map[string]NotDiamondCSV{
		"prompt_column": {PromptColumn: "problem"},
		"maximize":      {Minimize: true},
		"llm_providers": {Models: []string{"openai/gpt-4o"}},
	} {
		_, err := s.SubmitUpload(context.Background(), "k", Upload{Filename: "d.jsonl", Data: data, Format: FormatJSONL, NotDiamond: nd}, JobOptions{})
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("%s: err = %v, want a *ValidationError naming %s", field, err, field)
		}
	}
}
