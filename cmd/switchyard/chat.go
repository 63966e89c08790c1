package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/providers"
)

func runChat(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return chat(ctx, args, os.Stdin, stdout, stderr)
}

// chat talks to a model through a running server's gateway: one-shot with a prompt argument,
// else a conversation read from stdin line by line. Answers stream to stdout as they arrive;
// after each, stderr gets the model that answered, the fallbacks taken, tokens, cost and
// latency. With --json stdout gets each turn's final answer as JSON instead, and nothing
// else.
func chat(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("chat", "chat -m provider/model|NAME [--fallback provider/model]... [--system TEXT] [PROMPT...]", stderr)
	cf := addClientFlags(fs)
	var models, fallbacks modelList
	fs.Var(&models, "m", "model to ask (provider/model; repeat or comma-separate to let the server rank several), or a name without a provider: a model group or deployment of the server (LiteLLM config, --model-groups, /model/new), asked through /v1/chat/completions as is a name a LiteLLM wildcard model_name such as custom/* matches (with several -m, the first and then the others as fallbacks)")
	fs.Var(&models, "model", "same as -m")
	fs.Var(&fallbacks, "fallback", "model tried, in order, after every -m model failed; repeatable")
	system := fs.String("system", "", "system prompt")
	temperature := fs.Float64("temperature", -1, "sampling temperature 0-1; negative (the default): the model's own")
	logprobs := fs.Bool("logprobs", false, "print each token of the answer with its log probability after it (only models that give them are tried)")
	topLogprobs := fs.Int("top-logprobs", 0, fmt.Sprintf("with each token, print the N likeliest tokens at its position with theirs (0-%d; implies --logprobs)", providers.MaxTopLogprobs))
	words, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(models) == 0 {
		fs.Usage()
		return errors.New("-m provider/model is required")
	}
	if *topLogprobs < 0 || *topLogprobs > providers.MaxTopLogprobs {
		return &usageError{err: fmt.Errorf("--top-logprobs must be 0 to %d (got %d)", providers.MaxTopLogprobs, *topLogprobs)}
	}
	*logprobs = *logprobs || *topLogprobs > 0
	c, err := cf.client()
	if err != nil {
		return err
	}
	bare := slices.ContainsFunc(models, func(m string) bool { return !strings.Contains(m, "/") })
	unserved := ""
	if !bare {
		// Having a '/' does not make a name the native route's: a LiteLLM wildcard
		// model_name ("custom/*") matches names of no provider, as the server says.
		unserved = servedAsAnother(ctx, c, models)
	}
	if bare || unserved != "" {
		// A name without a provider (a model group of the server's LiteLLM config or
		// --model-groups, a /model/new deployment, or a catalogued OpenAI name) or one the
		// server serves as another model (a wildcard's) is served by the OpenAI-compatible
		// route only: the native one takes provider/model names. That route asks one
		// model, so several -m are the first and then the others as its fallbacks
		// (LiteLLM's model plus fallbacks), ahead of --fallback's.
		if len(models) > 1 {
			why := "with one named without a provider"
			if !bare {
				why = fmt.Sprintf("with %s, which the server serves as another model", unserved)
			}
			fmt.Fprintf(stderr, "several -m models %s: asked through /v1/chat/completions: %s first, then %s (ranking several -m models takes provider/model names)\n",
				why, models[0], strings.Join(append(slices.Clone(models[1:]), fallbacks...), ", "))
		}
		g := &groupChat{c: c, model: models[0], fallbacks: append(slices.Clone(models[1:]), fallbacks...), system: *system, jsonOut: cf.jsonOut, stdout: stdout, stderr: stderr,
			logprobs: *logprobs, topLogprobs: *topLogprobs}
		if *temperature >= 0 {
			g.temperature = temperature
		}
		if len(words) > 0 {
			return g.turn(ctx, strings.Join(words, " "))
		}
		return converse(ctx, stdin, stderr, func(text string, _ bool) error { return g.turn(ctx, text) })
	}
	base := client.CompletionRequest{Models: models, FallbackModels: fallbacks, Logprobs: *logprobs, TopLogprobs: *topLogprobs}
	if *temperature >= 0 {
		base.Temperature = temperature
	}
	var conversation string
	turn := func(text string, first bool) error {
		req := base
		req.ConversationID = conversation
		if first && *system != "" {
			req.Messages = append(req.Messages, client.TextMessage("system", *system))
		}
		req.Messages = append(req.Messages, client.TextMessage("user", text))
		// With --json stdout holds only the JSON answers (one per turn), for scripts.
		answerOut := stdout
		if cf.jsonOut {
			answerOut = io.Discard
		}
		final, err := streamAnswer(ctx, c, &req, answerOut)
		if err != nil {
			return err
		}
		conversation = final.ConversationID
		if cf.jsonOut {
			return printJSON(stdout, final) // with its logprobs when asked
		}
		if *logprobs {
			printLogprobs(stdout, final.Logprobs)
		}
		fmt.Fprintln(stderr, answerSummary(final))
		return nil
	}
	if len(words) > 0 {
		return turn(strings.Join(words, " "), true)
	}
	return converse(ctx, stdin, stderr, turn)
}

// converse reads one user turn per line of stdin until EOF (Ctrl-D) or an interrupt, and
// hands each to turn (first tells the first); a failed turn is reported and the
// conversation goes on.
func converse(ctx context.Context, stdin io.Reader, stderr io.Writer, turn func(text string, first bool) error) error {
	in := bufio.NewScanner(stdin)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	first := true
	for {
		fmt.Fprint(stderr, "> ")
		if !in.Scan() {
			fmt.Fprintln(stderr)
			return in.Err()
		}
		text := strings.TrimSpace(in.Text())
		if text == "" {
			continue
		}
		if err := turn(text, first); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			// One failed turn does not end the conversation.
			fmt.Fprintf(stderr, "error: %v\n", err)
			continue
		}
		first = false
	}
}

// streamAnswer prints the answer's fragments as they arrive and returns the final response.
func streamAnswer(ctx context.Context, c *client.Client, req *client.CompletionRequest, stdout io.Writer) (*client.Completion, error) {
	st, err := c.CompleteStream(ctx, req)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	for st.Next() {
		io.WriteString(stdout, st.Chunk().Text)
		if f, ok := stdout.(interface{ Sync() error }); ok {
			f.Sync()
		}
	}
	io.WriteString(stdout, "\n")
	if err := st.Err(); err != nil {
		return nil, err
	}
	return st.Final(), nil
}

// answerSummary is the line printed after an answer: who answered, after which failures,
// what it cost and how long it took.
func answerSummary(f *client.Completion) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s/%s", f.Provider, f.Model)
	b.WriteString(failedAttempts(f.Attempts))
	u := f.Usage
	fmt.Fprintf(&b, " · %d tokens (%d in, %d out", u.TotalTokens, u.PromptTokens, u.CompletionTokens)
	if f.UsageEstimated {
		b.WriteString(", estimated")
	}
	b.WriteString(")")
	if u.Costs.PriceKnown {
		fmt.Fprintf(&b, " · $%.6f", u.Costs.TotalTokensCost)
	} else {
		b.WriteString(" · cost unknown (no price for this model)")
	}
	fmt.Fprintf(&b, " · %s, first token %s]", ms(f.Latency), ms(f.TTFT))
	return b.String()
}

// failedAttempts is the summary's " after <model> <kind>, …" of the attempts that failed
// or were skipped before the answer ("" when none did); a hedged start that lost the race is
// not a failure and is left out.
func failedAttempts(attempts []client.Attempt) string {
	var failed []string
	for _, a := range attempts {
		if a.Outcome != "ok" && (a.Outcome != "cancelled" || a.Kind != "hedged") { // a hedge's loser did not fail
			failed = append(failed, a.Model+" "+a.Kind)
		}
	}
	if len(failed) == 0 {
		return ""
	}
	return " after " + strings.Join(failed, ", ")
}

func ms(v int64) string {
	return (time.Duration(v) * time.Millisecond).Round(time.Millisecond).String()
}
