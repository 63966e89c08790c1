package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

// groupChat is `switchyard chat` with a model named without a provider: a model group, a
// deployment added with /model/new, or a catalogued OpenAI name. It talks to the
// OpenAI-compatible /v1/chat/completions (the native route takes provider/model names
// only), which keeps no conversation, so the turns so far are kept here and sent each time.
type groupChat struct {
	c           *client.Client
	model       string
	fallbacks   []string
	system      string
	temperature *float64
	// logprobs and topLogprobs ask for the answer's log probabilities (--logprobs,
	// --top-logprobs), printed after it or carried in its JSON.
	logprobs    bool
	topLogprobs int
	jsonOut     bool
	stdout      io.Writer
	stderr      io.Writer
	history     []client.ChatCompletionMessage
}

// groupAnswer is a turn's answer printed by --json.
type groupAnswer struct {
	ID        string                      `json:"id"`
	Model     string                      `json:"model"`
	Requested string                      `json:"requested_model"`
	Content   string                      `json:"content"`
	Usage     *client.ChatCompletionUsage `json:"usage,omitempty"`
	// Switchyard is the gateway's summary of the answer: costs and attempts.
	Switchyard *client.ChatCompletionExtension `json:"switchyard,omitempty"`
	RequestID  string                          `json:"request_id,omitempty"`
	LatencyMS  int64                           `json:"latency_ms"`
	TTFTMS     int64                           `json:"ttft_ms"`
	// Logprobs are the answer's tokens' log probabilities, gathered from its chunks, when
	// --logprobs asked for them.
	Logprobs *client.Logprobs `json:"logprobs,omitempty"`
}

// turn sends text after the conversation so far, streams the answer to stdout (or prints
// it as JSON with --json) and a summary line to stderr; the turn joins the conversation
// only when it was answered.
func (g *groupChat) turn(ctx context.Context, text string) error {
	msgs := g.history
	if len(msgs) == 0 && g.system != "" {
		msgs = append(msgs, client.ChatCompletionMessage{Role: "system", Content: g.system})
	}
	msgs = append(msgs, client.ChatCompletionMessage{Role: "user", Content: text})
	req := &client.ChatCompletionRequest{Model: g.model, Messages: msgs, Temperature: g.temperature,
		FallbackModels: g.fallbacks, StreamOptions: &client.ChatStreamOptions{IncludeUsage: true},
		Logprobs: g.logprobs, TopLogprobs: g.topLogprobs}
	start := time.Now()
	st, err := g.c.ChatCompletionStream(ctx, req)
	if err != nil {
		return err
	}
	defer st.Close()
	out := g.stdout
	if g.jsonOut {
		out = io.Discard
	}
	ans := groupAnswer{Requested: g.model, RequestID: st.RequestID(), TTFTMS: -1}
	var logprobs client.Logprobs
	var content strings.Builder
	for st.Next() {
		ck := st.Chunk()
		if ans.ID == "" {
			ans.ID = ck.ID
		}
		if ck.Model != "" {
			ans.Model = ck.Model
		}
		if len(ck.Choices) > 0 && ck.Choices[0].Logprobs != nil {
			logprobs.Content = append(logprobs.Content, ck.Choices[0].Logprobs.Content...)
			logprobs.Refusal = append(logprobs.Refusal, ck.Choices[0].Logprobs.Refusal...)
		}
		if t := ck.Text(); t != "" {
			if ans.TTFTMS < 0 {
				ans.TTFTMS = time.Since(start).Milliseconds()
			}
			content.WriteString(t)
			io.WriteString(out, t)
		}
	}
	io.WriteString(out, "\n")
	if err := st.Err(); err != nil {
		return err
	}
	ans.LatencyMS = time.Since(start).Milliseconds()
	ans.TTFTMS = max(ans.TTFTMS, 0)
	ans.Content = content.String()
	ans.Usage = st.Usage()
	ans.Switchyard = st.Summary()
	if g.logprobs {
		ans.Logprobs = &logprobs
	}
	g.history = append(msgs, client.ChatCompletionMessage{Role: "assistant", Content: ans.Content})
	if g.jsonOut {
		return printJSON(g.stdout, ans)
	}
	if g.logprobs {
		printLogprobs(g.stdout, ans.Logprobs)
	}
	fmt.Fprintln(g.stderr, groupSummary(&ans))
	return nil
}

// groupSummary is the line printed after an answer of the OpenAI-compatible route: the name
// asked for and the model that answered, after which failures, tokens, cost and timing
// (the failures and cost from the gateway's summary on the usage chunk; a server that sends
// none leaves them out).
func groupSummary(a *groupAnswer) string {
	var b strings.Builder
	b.WriteString("[" + a.Requested)
	if a.Model != "" && a.Model != a.Requested {
		b.WriteString(" → " + a.Model)
	}
	sy := a.Switchyard
	if sy != nil {
		b.WriteString(failedAttempts(sy.Attempts))
	}
	if u := a.Usage; u != nil {
		fmt.Fprintf(&b, " · %d tokens (%d in, %d out)", u.TotalTokens, u.PromptTokens, u.CompletionTokens)
	}
	if sy != nil {
		if sy.Costs.PriceKnown {
			fmt.Fprintf(&b, " · $%.6f", sy.Costs.TotalTokensCost)
		} else {
			b.WriteString(" · cost unknown (no price for this model)")
		}
	}
	fmt.Fprintf(&b, " · %s, first token %s", ms(a.LatencyMS), ms(a.TTFTMS))
	if a.RequestID != "" {
		b.WriteString(" · request " + a.RequestID)
	}
	b.WriteString("]")
	return b.String()
}
