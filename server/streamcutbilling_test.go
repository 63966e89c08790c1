package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// cutStreamUpstream is an OpenAI-compatible upstream whose streams break: the last user
// message says how. "cut": three words, then the connection is dropped; "event": three
// words, then an error event; "hang": three words, then nothing until the caller leaves;
// "reject": a 400 before any chunk; "fallback": a 503 before any chunk from model ok, and
// from any other model what "cut" does. No stream reports usage.
func cutStreamUpstream(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	mode := body.Messages[len(body.Messages)-1].Content
	reject := func(status int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, msg)
	}
	switch {
	case mode == "reject":
		reject(http.StatusBadRequest, "rejected")
		return
	case mode == "fallback" && body.Model == "ok":
		reject(http.StatusServiceUnavailable, "overloaded")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flush := func(data string) {
		fmt.Fprintf(w, "data: %s\n\n", data)
		w.(http.Flusher).Flush()
	}
	for _, word := range cutStreamWords {
		flush(fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","model":%q,"choices":[{"index":0,"delta":{"content":%q}}]}`, body.Model, word))
	}
	switch mode {
	case "event":
		flush(`{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`)
	case "hang":
		<-r.Context().Done()
	default:
		panic(http.ErrAbortHandler) // the connection cut
	}
}

var cutStreamWords = []string{"Once", " upon", " a"}

// TestStreamCutMidwayIsBilledEverywhere: through /v1/chat/completions with a virtual key,
// a stream that breaks after three words (the upstream connection cut, an error event from
// the upstream, the client gone, the cut after a fallback) is charged the prompt and the
// three words — counted with the tokenizer, as the upstream reported no usage — to the
// key's spend (and its team's and its user's), and shows that usage and cost as a failed (or cancelled) request in
// /spend/logs and in /user/daily/activity. A request the upstream rejected before any
// chunk costs nothing.
func TestStreamCutMidwayIsBilledEverywhere(t *testing.T) {
	ups := httptest.NewServer(http.HandlerFunc(cutStreamUpstream))
	t.Cleanup(ups.Close)
	prices, err := providers.ParseCatalog([]byte(`{
		"ok": {"input_cost_per_token": 0.001, "output_cost_per_token": 0.002, "litellm_provider": "openai", "mode": "chat"},
		"ok2": {"input_cost_per_token": 0.001, "output_cost_per_token": 0.002, "litellm_provider": "openai", "mode": "chat"}}`))
	if err != nil {
		t.Fatal(err)
	}
	st := newTestStore(t)
	rec := usagelog.New(usagelog.Options{})
	roll := usagelog.NewRollup(st, usagelog.RollupOptions{FlushEvery: time.Hour})
	g, err := completions.New(completions.Options{Providers: providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "sk-up"})),
		Prices: prices, Store: st, Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond},
		Observer:    completions.JoinObservers(rec, roll),
		ModelGroups: map[string]completions.ModelGroup{"pair": {Models: []string{"openai/ok", "openai/ok2"}}}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	for _, o := range []Option{Completions(g), Usage(rec), Spend(roll)} {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	for path, body := range map[string]string{"/team/new": `{"team_id":"cutters","max_budget":5}`, "/user/new": `{"user_id":"cal","max_budget":5}`} {
		if r := do(t, s, "POST", path, testKey, body); r.status != http.StatusOK {
			t.Fatalf("POST %s: %d %s", path, r.status, r.raw)
		}
	}
	gen := litellmGenerate(t, s, `{"key_alias":"cutter","team_id":"cutters","user_id":"cal","max_budget":5}`)
	vk := virtualKey{ID: gen.Token, Key: gen.Key}
	// spent is what the key, its team and its user spent.
	spent := func() (key, team, user float64) {
		t.Helper()
		var ti litellmTeamInfo
		if r := do(t, s, "GET", "/team/info?team_id=cutters", testKey, ""); r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &ti) != nil {
			t.Fatalf("/team/info: %d %s", r.status, r.raw)
		}
		u := litellmUserInfoOf(t, s, "cal")
		return keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID).Spend.CostUSD, ti.TeamInfo.Spend, u.UserInfo.Spend
	}

	// chat streams prompt to model as vk and reads it to its end ("hang": to its third
	// word, then leaves); it returns the status and the words read.
	chat := func(model, prompt string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", hs.URL+"/v1/chat/completions", strings.NewReader(
			`{"model":"`+model+`","stream":true,"messages":[{"role":"user","content":"`+prompt+`"}]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+vk.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got strings.Builder
		sc := bufio.NewScanner(resp.Body)
		for n := 0; (prompt != "hang" || n < len(cutStreamWords)) && sc.Scan(); {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			var ck completions.OpenAIChunk
			if !ok || json.Unmarshal([]byte(data), &ck) != nil || len(ck.Choices) == 0 || ck.Choices[0].Delta.Content == "" {
				continue
			}
			got.WriteString(ck.Choices[0].Delta.Content)
			n++
		}
		return resp.StatusCode, got.String() // the client goes ("hang": the only way that stream ends)
	}
	keySpend := func() keySpend { return keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID).Spend }

	var wantCost float64
	var wantTokens int64
	cases := []struct{ model, prompt, answered, outcome string }{
		{"openai/ok", "cut", "openai/ok", completions.RequestStreamFailed},
		{"openai/ok", "event", "openai/ok", completions.RequestStreamFailed},
		{"openai/ok", "hang", "openai/ok", completions.RequestCancelled},
		{"pair", "fallback", "openai/ok2", completions.RequestStreamFailed},
	}
	for i, c := range cases {
		code, sent := chat(c.model, c.prompt)
		if code != http.StatusOK || sent != strings.Join(cutStreamWords, "") {
			t.Fatalf("%s: %d, the client read %q", c.prompt, code, sent)
		}
		want := providers.EstimateUsage(c.answered, &providers.Request{Messages: []providers.Message{{Role: "user", Content: c.prompt}}},
			&providers.Response{Text: sent})
		cost := prices.Cost(c.answered, want).TotalUSD
		if want.PromptTokens == 0 || want.CompletionTokens == 0 || cost <= 0 {
			t.Fatalf("%s: estimate %+v at $%v", c.prompt, want, cost)
		}
		wantCost += cost
		wantTokens += int64(want.PromptTokens + want.CompletionTokens)
		// The client leaving ends the stream on the server's side after the answer: the
		// charge follows it.
		deadline := time.Now().Add(10 * time.Second)
		for keySpend().Requests < int64(i+1) || len(spendLogs(t, s, vk.Key, "")) < i+1 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the stream's end was never charged: %+v", c.prompt, keySpend())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if sp := keySpend(); math.Abs(sp.CostUSD-wantCost) > 1e-9 || sp.Tokens != wantTokens {
			t.Errorf("%s: key spend $%v %d tokens, want $%v %d tokens (the prompt and the words sent)", c.prompt, sp.CostUSD, sp.Tokens, wantCost, wantTokens)
		}
		if _, team, user := spent(); math.Abs(team-wantCost) > 1e-9 || math.Abs(user-wantCost) > 1e-9 {
			t.Errorf("%s: the team spent $%v, the user $%v; want $%v each", c.prompt, team, user, wantCost)
		}
		rows := spendLogs(t, s, vk.Key, "")
		row := rows[0]
		sy, _ := row.Metadata["switchyard"].(map[string]any)
		if row.Status != "failure" || sy["outcome"] != c.outcome || sy["usage_estimated"] != true || row.PromptTokens != want.PromptTokens || row.CompletionTokens != want.CompletionTokens ||
			math.Abs(row.Spend-cost) > 1e-9 || "openai/"+row.Model != c.answered {
			t.Errorf("%s: /spend/logs row %+v, want a failure (%s) of %s with %d+%d tokens (estimated) at $%v", c.prompt, row, c.outcome, c.answered,
				want.PromptTokens, want.CompletionTokens, cost)
		}
	}

	// Rejected before any chunk: the provider billed nothing, nor does the key.
	before := keySpend()
	if code, sent := chat("openai/ok", "reject"); code != http.StatusBadRequest || sent != "" {
		t.Fatalf("reject: %d %q", code, sent)
	}
	if sp := keySpend(); sp.CostUSD != before.CostUSD || sp.Tokens != before.Tokens {
		t.Errorf("rejected before the first chunk: key spend %+v, was %+v", sp, before)
	}
	if key, team, user := spent(); math.Abs(team-key) > 1e-9 || math.Abs(user-key) > 1e-9 {
		t.Errorf("rejected before the first chunk: the key spent $%v, its team $%v, its user $%v", key, team, user)
	}
	if rows := spendLogs(t, s, vk.Key, ""); len(rows) != len(cases)+1 || rows[0].Spend != 0 || rows[0].PromptTokens != 0 || rows[0].Status != "failure" {
		t.Errorf("rejected before the first chunk: /spend/logs %+v", rows)
	}

	today := time.Now().UTC().Format(time.DateOnly)
	a := dailyActivityAnswer(t, s, testKey, "/user/daily/activity?start_date="+today+"&end_date="+today)
	if md := a.Metadata; math.Abs(md.TotalSpend-wantCost) > 1e-9 || md.TotalPromptTokens+md.TotalCompletionTokens != wantTokens || md.TotalAPIRequests != int64(len(cases)+1) {
		t.Errorf("daily activity %+v, want $%v and %d tokens over %d requests", md, wantCost, wantTokens, len(cases)+1)
	}
}
