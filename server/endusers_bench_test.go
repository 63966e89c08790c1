package server

import (
	"encoding/json"
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
		benchCreate(b, s, "/api/v1/customers", `{"end_user_id":"bench-user","max_budget_usd":1000000}`)
		var vk virtualKey
		if err := json.Unmarshal(benchCreate(b, s, "/api/v1/keys", `{"max_budget_usd":1000000}`), &vk); err != nil {
			b.Fatal(err)
		}
		for who, user := range map[string]string{"key_budget": "", "key_budget_end_user": `,"user":"bench-user"`} {
			b.Run(backend+"/"+who, func(b *testing.B) {
				benchChat(b, s, vk.Key, `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]`+user+`}`)
			})
		}
	}
}
