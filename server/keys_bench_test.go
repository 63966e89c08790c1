package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// BenchmarkVirtualKeyChat measures what a virtual key adds to a chat completion through
// the server (scripted upstream on loopback): the operator's key against a virtual key with
// no limits and one with a USD budget, on the in-memory store and on a bbolt file (each
// budgeted request reads the key and its account and writes the account twice).
//
//	go test ./server -run '^$' -bench BenchmarkVirtualKeyChat -benchtime 2000x -count 5
func BenchmarkVirtualKeyChat(b *testing.B) {
	for _, backend := range []string{"memory", "bbolt"} {
		_, s := keysServer(b, benchStore(b, backend), 0)
		keys := map[string]string{"operator": testKey}
		for name, body := range map[string]string{"virtual": `{}`, "virtual_budget": `{"max_budget_usd":1000000,"models":["openai/ok"]}`} {
			req := httptest.NewRequest("POST", "/api/v1/keys", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+testKey)
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			var vk virtualKey
			if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &vk) != nil {
				b.Fatalf("issue: %d %s", rec.Code, rec.Body)
			}
			keys[name] = vk.Key
		}
		for _, who := range []string{"operator", "virtual", "virtual_budget"} {
			b.Run(backend+"/"+who, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(`{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`))
					req.Header.Set("Authorization", "Bearer "+keys[who])
					rec := httptest.NewRecorder()
					s.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK {
						b.Fatalf("%d %s", rec.Code, rec.Body)
					}
				}
			})
		}
	}
}

// benchStore is a store of the kind backend names: "memory", or else a bbolt file in a
// temporary directory.
func benchStore(b *testing.B, backend string) *store.Store {
	if backend == "memory" {
		return memstore.New()
	}
	st, err := boltstore.Open(filepath.Join(b.TempDir(), "sy.db"), boltstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// benchCreate posts body to path with the operator key and wants 201 (setting up a
// benchmark's teams, end users and keys).
func benchCreate(b *testing.B, s http.Handler, path, body string) []byte {
	b.Helper()
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testKey)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// benchChat runs b's loop of chat completions of body with key, each wanting 200.
func benchChat(b *testing.B, s http.Handler, key, body string) {
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}
