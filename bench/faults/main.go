// Command faults measures, for each upstream fault, how long a streaming client waits for
// the complete answer through the gateway with its default settings (first-token timeout
// 20 s, stream idle 30 s, backoff from 0.5-1 s, circuit breaker after 5 failures). The
// upstream is a scripted OpenAI-format server that streams 20 words at one every 20 ms
// (a 0.4 s answer); the fallback can continue a prefill. Scenarios run concurrently, each
// on its own models, and the whole set is repeated -runs times; medians are printed.
//
//	go run ./bench/faults -runs 3
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

const wordDelay = 20 * time.Millisecond

var answer = strings.Repeat("word ", 19) + "end."

// upstream scripts faults by model name: "<fault>-<run>-<n>"; n counts the calls of the
// model so a fault may pass after the first calls.
type upstream struct {
	mu    sync.Mutex
	calls map[string]int
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role, Content string
			Prefix        bool
		} `json:"messages"`
	}
	json.NewDecoder(r.Body).Decode(&body)
	u.mu.Lock()
	u.calls[body.Model]++
	n := u.calls[body.Model]
	u.mu.Unlock()
	fault, _, _ := strings.Cut(body.Model, "#")
	words := strings.SplitAfter(answer, " ")
	send := func(data string) {
		fmt.Fprintf(w, "data: %s\n\n", data)
		w.(http.Flusher).Flush()
	}
	text := func(s string) {
		time.Sleep(wordDelay)
		b, _ := json.Marshal(s)
		send(fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%s}}]}`, b))
	}
	finish := func(done bool) {
		send(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		send(`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":20}}`)
		if done {
			send("[DONE]")
		}
	}
	status := func(code int, errCode string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":{"message":"scripted %d","type":"x","code":%q}}`, code, errCode)
	}
	switch {
	case fault == "silent":
		<-r.Context().Done()
		return
	case fault == "503-once" && n == 1, fault == "down":
		status(503, "")
		return
	case fault == "429":
		status(429, "rate_limit_exceeded")
		return
	case fault == "policy":
		status(400, "content_policy_violation")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	w.(http.Flusher).Flush()
	switch fault {
	case "slow-first":
		select {
		case <-time.After(25 * time.Second):
		case <-r.Context().Done():
			return
		}
	case "continue":
		last := body.Messages[len(body.Messages)-1]
		rest, _ := strings.CutPrefix(answer, last.Content)
		for _, s := range strings.SplitAfter(rest, " ") {
			text(s)
		}
		finish(true)
		return
	}
	for i, s := range words {
		if i == 10 {
			switch fault {
			case "cut":
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.(*net.TCPConn).SetLinger(0)
				conn.Close()
				return
			case "stall":
				<-r.Context().Done()
				return
			case "junk":
				send(`{"id":"c","object":"chat.completion.ch`)
			}
		}
		text(s)
	}
	finish(fault != "nodone")
}

type scenario struct {
	name, primary, fallback string
	policy                  completions.FaultPolicy
	warm                    int // requests sent first (not timed), e.g. to open the breaker
}

func main() {
	runs := flag.Int("runs", 3, "repetitions (medians are reported)")
	flag.Parse()
	up := &upstream{calls: map[string]int{}}
	srv := httptest.NewServer(up)
	defer srv.Close()
	reg := providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "up", BaseURL: srv.URL, APIKey: "k"}),
		providers.NewOpenAI(providers.Config{Name: "pf", BaseURL: srv.URL, APIKey: "k", Prefill: providers.PrefillPrefix}),
	)
	g, err := completions.New(completions.Options{Providers: reg})
	if err != nil {
		log.Fatal(err)
	}
	hedge := 2.0
	scenarios := []scenario{
		{name: "healthy (baseline: the answer itself)", primary: "up/ok", fallback: "pf/ok"},
		{name: "no response at all (silent)", primary: "up/silent", fallback: "pf/ok"},
		{name: "first token after 25 s", primary: "up/slow-first", fallback: "pf/ok"},
		{name: "first token after 25 s, hedge_after 2 s", primary: "up/slow-first", fallback: "pf/ok", policy: completions.FaultPolicy{HedgeAfter: &hedge}},
		{name: "503 once, then answers", primary: "up/503-once", fallback: "pf/ok"},
		{name: "429 without Retry-After", primary: "up/429", fallback: "pf/ok"},
		{name: "stream cut after 10 words (continued)", primary: "up/cut", fallback: "pf/continue"},
		{name: "stream stalls after 10 words (continued)", primary: "up/stall", fallback: "pf/continue"},
		{name: "ends after finish and usage, no [DONE]", primary: "up/nodone", fallback: "pf/ok"},
		{name: "one undecodable event mid-stream", primary: "up/junk", fallback: "pf/ok"},
		{name: "content policy violation (reported, no fallback)", primary: "up/policy", fallback: "pf/ok"},
		{name: "primary down: 1st request", primary: "up/down", fallback: "pf/ok"},
		{name: "primary down: after 5 failures (breaker open)", primary: "up/down", fallback: "pf/ok", warm: 2},
	}
	times := make([][]time.Duration, len(scenarios))
	outcome := make([]string, len(scenarios))
	for run := range *runs {
		var wg sync.WaitGroup
		for i, sc := range scenarios {
			wg.Add(1)
			go func() {
				defer wg.Done()
				suffix := fmt.Sprintf("#%d-%d", run, i)
				ask := func() (time.Duration, string) {
					req := &completions.Request{Models: []string{sc.primary + suffix}, FallbackModels: []string{sc.fallback + suffix},
						Stream: true, FaultPolicy: sc.policy,
						Messages: []completions.Message{{Role: "user", Content: []completions.ContentBlock{{Type: "text", Text: "Say it."}}}}}
					start := time.Now()
					st, err := g.Stream(context.Background(), completions.Scope{}, req)
					if err != nil {
						var cf *completions.ContentFilterError
						if errors.As(err, &cf) {
							return time.Since(start), "content filter reported"
						}
						return time.Since(start), "error: " + err.Error()
					}
					defer st.Close()
					var sb strings.Builder
					for {
						c, err := st.Recv()
						if errors.Is(err, io.EOF) {
							break
						}
						if err != nil {
							return time.Since(start), "stream error: " + err.Error()
						}
						sb.WriteString(c.Text)
					}
					el := time.Since(start)
					if sb.String() != answer {
						return el, fmt.Sprintf("WRONG TEXT %q", sb.String())
					}
					resp := st.Response()
					kinds := make([]string, len(resp.Attempts))
					for j, a := range resp.Attempts {
						kinds[j] = a.Kind
						if a.Outcome == completions.OutcomeOK {
							kinds[j] = "ok"
						}
						if a.Outcome == completions.OutcomeSkipped {
							kinds[j] = "skipped"
						}
					}
					return el, "complete answer; attempts " + strings.Join(kinds, " → ")
				}
				for range sc.warm {
					ask()
				}
				d, out := ask()
				times[i] = append(times[i], d)
				outcome[i] = out
			}()
		}
		wg.Wait()
	}
	fmt.Println("| Fault | Time to the complete answer (median of", *runs, "runs) | Outcome |")
	fmt.Println("|---|---|---|")
	for i, sc := range scenarios {
		ts := slices.Clone(times[i])
		slices.Sort(ts)
		fmt.Printf("| %s | %.2f s | %s |\n", sc.name, ts[len(ts)/2].Seconds(), outcome[i])
	}
}
