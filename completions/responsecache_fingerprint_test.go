package completions

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// A cached answer keeps the system_fingerprint and service_tier its upstream sent: the
// replay, whole or streamed (every chat.completion.chunk), carries the same as the first
// answer, whether that answer was whole or streamed; an entry kept without them (as
// before they were kept) replays without them.
func TestCacheReplaysSystemFingerprintAndServiceTier(t *testing.T) {
	h := newCacheHarness(t, nil)
	h.a.on("m", step{text: "Paris is the capital of France.", fingerprint: "fp_x", tier: "default",
		usage: providers.Usage{PromptTokens: 10, CompletionTokens: 7}})
	ctx := context.Background()
	scope := Scope{Owner: "o"}
	whole := func(text string) *Response {
		t.Helper()
		r, err := h.g.Complete(ctx, scope, chat(text, "a/m"))
		if err != nil {
			t.Fatal(err)
		}
		h.settle()
		return r
	}
	// streamed writes the stream as /v1/chat/completions does and checks every chunk
	// carries fp and tier ("" for none); it returns the final response.
	streamed := func(text, fp, tier string) *Response {
		t.Helper()
		st, err := h.g.Stream(ctx, scope, chat(text, "a/m"))
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		if err := WriteOpenAIStream(rec, st, true); err != nil {
			t.Fatal(err)
		}
		chunks := 0
		sc := bufio.NewScanner(strings.NewReader(rec.Body.String()))
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var c OpenAIChunk
			if err := json.Unmarshal([]byte(data), &c); err != nil {
				t.Fatalf("%v: %s", err, data)
			}
			chunks++
			if c.SystemFingerprint != fp || c.ServiceTier != tier {
				t.Errorf("%q: chunk %s has system_fingerprint %q service_tier %q, want %q %q", text, data, c.SystemFingerprint, c.ServiceTier, fp, tier)
			}
		}
		if chunks < 3 {
			t.Fatalf("%q: %d chunks:\n%s", text, chunks, rec.Body.String())
		}
		h.settle()
		return st.Response()
	}
	check := func(what string, r *Response, result, fp, tier string) {
		t.Helper()
		if r == nil || r.Cache == nil || r.Cache.Result != result {
			t.Fatalf("%s: response %+v, want a cache %s", what, r, result)
		}
		if r.SystemFingerprint != fp || r.ServiceTier != tier {
			t.Errorf("%s: system_fingerprint %q service_tier %q, want %q %q", what, r.SystemFingerprint, r.ServiceTier, fp, tier)
		}
		c := NewOpenAIChatCompletion(r, h.clock())
		if c.SystemFingerprint != fp || c.ServiceTier != tier {
			t.Errorf("%s: chat.completion system_fingerprint %q service_tier %q, want %q %q", what, c.SystemFingerprint, c.ServiceTier, fp, tier)
		}
	}

	first := whole("capital of France?")
	check("the first answer", first, CacheMiss, "fp_x", "default")
	check("the whole replay", whole("capital of France?"), CacheHit, "fp_x", "default")
	check("the streamed replay", streamed("capital of France?", "fp_x", "default"), CacheHit, "fp_x", "default")

	// An answer first streamed is kept with them too.
	check("the first stream", streamed("capital of Italy?", "fp_x", "default"), CacheMiss, "fp_x", "default")
	check("its whole replay", whole("capital of Italy?"), CacheHit, "fp_x", "default")
	check("its streamed replay", streamed("capital of Italy?", "fp_x", "default"), CacheHit, "fp_x", "default")
	if n := h.a.callCount("m"); n != 2 {
		t.Fatalf("the model was called %d times, want 2 (each question once)", n)
	}

	// An entry kept before the fields were: the same answer without them.
	d := h.g.CacheDriver()
	v, _, err := d.Get(ctx, first.Cache.Key, h.clock())
	if err != nil {
		t.Fatal(err)
	}
	var entry map[string]json.RawMessage
	if err := json.Unmarshal(v, &entry); err != nil {
		t.Fatal(err)
	}
	if string(entry["system_fingerprint"]) != `"fp_x"` || string(entry["service_tier"]) != `"default"` {
		t.Fatalf("the cache entry %s does not keep them", v)
	}
	delete(entry, "system_fingerprint")
	delete(entry, "service_tier")
	old, _ := json.Marshal(entry)
	now := h.clock()
	if err := d.Put(ctx, first.Cache.Key, old, now, now.Add(h.g.opts.Cache.TTL)); err != nil {
		t.Fatal(err)
	}
	r := whole("capital of France?")
	check("an old entry's whole replay", r, CacheHit, "", "")
	if r.Text() != first.Text() {
		t.Fatalf("an old entry replayed %q, want %q", r.Text(), first.Text())
	}
	check("an old entry's streamed replay", streamed("capital of France?", "", ""), CacheHit, "", "")
	if n := h.a.callCount("m"); n != 2 {
		t.Fatalf("the model was called %d times, want 2", n)
	}
}
