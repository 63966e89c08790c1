package server

import (
	"encoding/json"
	"testing"
)

// BenchmarkTeamKeyChat measures what a team account adds to a chat completion of a
// virtual key through the server (scripted upstream on loopback): a key with a USD budget
// alone against the same key inside a team with a USD budget, on the in-memory store and
// on a bbolt file (the team's key also reads the team's record and account, and each of
// its account writes updates both accounts in one transaction).
//
//	go test ./server -run '^$' -bench BenchmarkTeamKeyChat -benchtime 2000x -count 5
func BenchmarkTeamKeyChat(b *testing.B) {
	for _, backend := range []string{"memory", "bbolt"} {
		_, s := keysServer(b, benchStore(b, backend), 0)
		benchCreate(b, s, "/api/v1/teams", `{"team_id":"bench","max_budget_usd":1000000}`)
		keys := map[string]string{}
		for name, body := range map[string]string{"key_budget": `{"max_budget_usd":1000000}`, "key_budget_in_team": `{"max_budget_usd":1000000,"team_id":"bench"}`} {
			var vk virtualKey
			if err := json.Unmarshal(benchCreate(b, s, "/api/v1/keys", body), &vk); err != nil {
				b.Fatal(err)
			}
			keys[name] = vk.Key
		}
		for _, who := range []string{"key_budget", "key_budget_in_team"} {
			b.Run(backend+"/"+who, func(b *testing.B) {
				benchChat(b, s, keys[who], `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`)
			})
		}
	}
}
