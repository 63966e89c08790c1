package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

// TestServeCacheStoreKeepsAnswersAcrossRestarts runs serve with --cache store twice on one
// data directory: the second process answers the first one's request from the bbolt
// file, with no upstream call; the usage log shows the hit and what it saved.
func TestServeCacheStoreKeepsAnswersAcrossRestarts(t *testing.T) {
	up := fakeOpenAIUpstream(t)
	var upstreamCalls atomic.Int32
	counting := up.Config.Handler
	up.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstreamCalls.Add(1)
		counting.ServeHTTP(w, r)
	})
	t.Setenv("SWITCHYARD_API_KEYS", "k")
	t.Setenv("OPENAI_API_KEY", "sk-fake")
	t.Setenv("OPENAI_BASE_URL", up.URL+"/v1")
	data := t.TempDir()
	serve := func() (addr string, stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		stderr := &syncBuffer{}
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--cache", "store", "--cache-ttl", "1h"}, &syncBuffer{}, stderr)
		}()
		re := regexp.MustCompile(`switchyard listening.*addr=(127\.0\.0\.1:\d+)`)
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if m := re.FindStringSubmatch(stderr.String()); m != nil {
				return m[1], func() { cancel(); <-done }
			}
			if time.Now().After(deadline) {
				t.Fatalf("serve did not start: %s", stderr.String())
			}
		}
	}
	chat := func(addr string) string {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/chat/completions",
			strings.NewReader(`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"cache me"}]}`))
		req.Header.Set("Authorization", "Bearer k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("chat: %d", resp.StatusCode)
		}
		return resp.Header.Get("X-Switchyard-Cache")
	}

	addr, stop := serve()
	if got := chat(addr); got != "miss" || upstreamCalls.Load() != 1 {
		t.Fatalf("first: %q after %d upstream calls", got, upstreamCalls.Load())
	}
	stop() // closing the gateway waits for the cache write
	addr, stop = serve()
	defer stop()
	if got := chat(addr); got != "hit" || upstreamCalls.Load() != 1 {
		t.Fatalf("after a restart: %q after %d upstream calls, want a hit from the store", got, upstreamCalls.Load())
	}
	code, m := get(t, "http://"+addr+"/api/v1/usage/requests", "k")
	data2, _ := json.Marshal(m)
	if code != 200 || !strings.Contains(string(data2), `"cache":"hit"`) || !strings.Contains(string(data2), `"saved_usd":`) {
		t.Fatalf("usage log: %d %s", code, data2)
	}
}

func TestServeRefusesBadCacheFlags(t *testing.T) {
	for _, args := range [][]string{{"--cache", "redis"}, {"--cache", "memory", "--cache-ttl", "0s"}, {"--cache", "memory", "--cache-memory-mb", "0"},
		{"--cache", "memory", "--cache-similarity-threshold", "1.5"}, {"--cache-semantic-model", "openai/text-embedding-3-small"},
		{"--cache", "memory", "--cache-semantic-model", "nosuch/embed"}} {
		stderr := &syncBuffer{}
		code := run(context.Background(), append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, args...), &syncBuffer{}, stderr)
		if code == 0 || !strings.Contains(stderr.String(), args[len(args)-2]) {
			t.Errorf("%v: exit %d, %s", args, code, stderr.String())
		}
	}
}

// TestCacheCommand: switchyard cache purge and delete take the calling key's answers out of
// the server's response cache.
func TestCacheCommand(t *testing.T) {
	up := fakeOpenAIUpstream(t)
	mc := &completions.MemoryCache{}
	url := cliServer(t, func(st *store.Store) []server.Option {
		reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "sk-up"}))
		g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Cache: completions.CacheOptions{Driver: mc}})
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Completions(g)}
	})
	t.Setenv("SWITCHYARD_BASE_URL", url)
	t.Setenv("SERVICE_API_KEY", cliKey)
	ask := func(body string) string {
		t.Helper()
		req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+cliKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.Header.Get("X-Switchyard-Cache-Key")
	}
	k1 := ask(`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"one"}]}`)
	ask(`{"model":"openai/gpt-4o-mini","cache":{"namespace":"eval"},"messages":[{"role":"user","content":"two"}]}`)
	ask(`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"three"}]}`)
	for deadline := time.Now().Add(5 * time.Second); mc.Len() < 3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("answers not cached")
		}
	}
	if code, out, errOut := cli(t, "cache", "delete", k1); code != 0 || !strings.Contains(out, "deleted "+k1) {
		t.Fatalf("delete: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "cache", "delete", k1); code == 0 || !strings.Contains(errOut, "404") && !strings.Contains(errOut, "no cached answer") {
		t.Fatalf("delete again: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "cache", "purge", "--namespace", "eval"); code != 0 || !strings.Contains(out, "deleted 1 cached answer\n") {
		t.Fatalf("purge eval: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "cache", "purge", "--json"); code != 0 || !strings.Contains(out, `"deleted": 1`) && !strings.Contains(out, `"deleted":1`) {
		t.Fatalf("purge: %d %s %s", code, out, errOut)
	}
	if mc.Len() != 0 {
		t.Fatalf("%d answers left", mc.Len())
	}
	if code, _, errOut := cli(t, "cache"); code == 0 || !strings.Contains(errOut, "purge") {
		t.Fatalf("no subcommand: %d %s", code, errOut)
	}
}

// TestCacheSemanticFlagsReachTheGatewayOptions: --cache-semantic-model and
// --cache-similarity-threshold (or their environment variables) set CacheOptions.Semantic.
func TestCacheSemanticFlagsReachTheGatewayOptions(t *testing.T) {
	var f cacheFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	f.register(fs)
	if err := fs.Parse([]string{"--cache", "memory", "--cache-semantic-model", "openai/text-embedding-3-small", "--cache-similarity-threshold", "0.9"}); err != nil {
		t.Fatal(err)
	}
	if err := f.check(); err != nil {
		t.Fatal(err)
	}
	o := f.options(nil)
	if o.Semantic == nil || o.Semantic.Model != "openai/text-embedding-3-small" || o.Semantic.Threshold != 0.9 {
		t.Fatalf("Semantic = %+v", o.Semantic)
	}
	var off cacheFlags
	fs = flag.NewFlagSet("serve", flag.ContinueOnError)
	off.register(fs)
	_ = fs.Parse([]string{"--cache", "memory"})
	if off.options(nil).Semantic != nil || off.SimilarityThreshold != 0.8 {
		t.Fatalf("without a model: %+v, threshold %v", off.options(nil).Semantic, off.SimilarityThreshold)
	}
}
