package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// BenchmarkBatchLine: what a batch line costs against the same request sent directly.
// Both paths run b.N chat requests, 4 at a time, through the same server (the gateway over
// the scripted upstream on loopback): "direct" sends them to POST /v1/chat/completions over
// HTTP; "batch" uploads them as a file, creates the batch (--batch-concurrency 4), polls it
// every 2 ms until it completes and downloads the output file. ns/op is per line.
//
//	go test ./server -run '^$' -bench BenchmarkBatchLine -benchtime 2000x -count 5
func BenchmarkBatchLine(b *testing.B) {
	for _, kind := range []string{"memory", "bolt"} {
		open := func(b *testing.B) *store.Store {
			if kind == "memory" {
				return memstore.New()
			}
			st, err := boltstore.Open(filepath.Join(b.TempDir(), "bench.db"), boltstore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			return st
		}
		body := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`
		b.Run("direct/"+kind, func(b *testing.B) {
			st := open(b)
			defer st.Close()
			hs, _ := keysServerWith(b, st, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey}})
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
			var next sync.Mutex
			left := b.N
			b.ResetTimer()
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						next.Lock()
						if left == 0 {
							next.Unlock()
							return
						}
						left--
						next.Unlock()
						req, _ := http.NewRequest("POST", hs.URL+"/v1/chat/completions", bytes.NewReader([]byte(body)))
						req.Header.Set("Authorization", "Bearer "+testKey)
						req.Header.Set("Content-Type", "application/json")
						resp, err := hc.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != 200 {
							b.Errorf("status %d", resp.StatusCode)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
		b.Run("batch/"+kind, func(b *testing.B) {
			st := open(b)
			defer st.Close()
			files, _ := batch.NewFiles(st, batch.FilesOptions{})
			svc, _ := batch.New(st, files, batch.Options{Concurrency: 4, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			hs, _ := keysServerWith(b, st, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey}}, Batches(svc))
			if err := svc.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			defer svc.Close(context.Background())
			var in bytes.Buffer
			for i := range b.N {
				fmt.Fprintf(&in, `{"custom_id":"%d","method":"POST","url":"/v1/chat/completions","body":%s}`+"\n", i, body)
			}
			b.ResetTimer()
			var form bytes.Buffer
			mw := multipart.NewWriter(&form)
			mw.WriteField("purpose", "batch")
			fw, _ := mw.CreateFormFile("file", "bench.jsonl")
			fw.Write(in.Bytes())
			mw.Close()
			req, _ := http.NewRequest("POST", hs.URL+"/v1/files", &form)
			req.Header.Set("Authorization", "Bearer "+testKey)
			req.Header.Set("Content-Type", mw.FormDataContentType())
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var f struct{ ID string }
			decodeBody(b, resp, &f)
			resp, err = benchCall("POST", hs.URL+"/v1/batches", `{"input_file_id":"`+f.ID+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
			if err != nil {
				b.Fatal(err)
			}
			var bt struct {
				ID, Status    string
				OutputFileID  *string                 `json:"output_file_id"`
				RequestCounts struct{ Completed int } `json:"request_counts"`
			}
			decodeBody(b, resp, &bt)
			for bt.Status != "completed" {
				time.Sleep(2 * time.Millisecond)
				resp, err := benchCall("GET", hs.URL+"/v1/batches/"+bt.ID, "")
				if err != nil {
					b.Fatal(err)
				}
				decodeBody(b, resp, &bt)
				if bt.Status == "failed" || bt.Status == "expired" || bt.Status == "cancelled" {
					b.Fatalf("batch %s", bt.Status)
				}
			}
			resp, err = benchCall("GET", hs.URL+"/v1/files/"+*bt.OutputFileID+"/content", "")
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			b.StopTimer()
			if bt.RequestCounts.Completed != b.N || n == 0 {
				b.Fatalf("%d lines completed of %d", bt.RequestCounts.Completed, b.N)
			}
		})
	}
}

// benchCall sends a request with the test key.
func benchCall(method, url, body string) (*http.Response, error) {
	req, _ := http.NewRequest(method, url, bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer "+testKey)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return http.DefaultClient.Do(req)
}

// decodeBody decodes a 200 answer into v.
func decodeBody(b *testing.B, resp *http.Response, v any) {
	b.Helper()
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		b.Fatalf("%d %s", resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		b.Fatal(err)
	}
}
