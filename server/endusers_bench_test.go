package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkEndUserKeyChat measures what end user accounting adds to a chat completion of
// a virtual key through the server (scripted upstream on loopback): a key with a USD
// budget naming no end user, against the same key naming an end user with a USD budget
// (OpenAI's user), on the in-memory store and on a bbolt file. The end user's account is
// read at each request and updated beside the key's in the reserve's and the charge's one
// store transaction each.
//
//	go test ./server -run '^$' -bench BenchmarkEndUserKeyChat -benchtime 2000x -count 5
func BenchmarkEndUserKeyChat(b *testing.B) {
	for _, backend := range []string{"memory", "bbolt"} {
		_, s := keysServer(b, benchStore(b, backend), 0)
		call := func(path, body string) []byte {
			req := httptest.NewRequest("POST", path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+testKey)
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != http.StatusCreated {
				b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
			}
			return rec.Body.Bytes()
		}
		call("/api/v1/customers", `{"end_user_id":"bench-user","max_budget_usd":1000000}`)
		var vk virtualKey
		if err := json.Unmarshal(call("/api/v1/keys", `{"max_budget_usd":1000000}`), &vk); err != nil {
			b.Fatal(err)
		}
		for who, user := range map[string]string{"key_budget": "", "key_budget_end_user": `,"user":"bench-user"`} {
			b.Run(backend+"/"+who, func(b *testing.B) {
				b.ReportAllocs()
				body := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]` + user + `}`
				for b.Loop() {
					req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+vk.Key)
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
