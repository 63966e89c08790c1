package client_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// BenchmarkUploadFile16MiB uploads a 16 MiB file to a server that reads and drops it: B/op
// is what the client holds to send it.
func BenchmarkUploadFile16MiB(b *testing.B) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"file-1","object":"file","bytes":` + itoa(n) + `,"filename":"big.jsonl","purpose":"batch"}`))
	}))
	defer ts.Close()
	c, err := client.New(client.WithBaseURL(ts.URL), client.WithAPIKey("sy-bench"))
	if err != nil {
		b.Fatal(err)
	}
	data := bytes.Repeat([]byte(`{"problem":"p","correct_models":["a/b"]}`+"\n"), 16<<20/41)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.UploadFile(context.Background(), "big.jsonl", bytes.NewReader(data), "batch"); err != nil {
			b.Fatal(err)
		}
	}
}

func itoa(n int64) string {
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(buf[i:])
		}
	}
}
