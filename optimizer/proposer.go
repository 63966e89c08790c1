package optimizer

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/template"

	"github.com/switchyard-ai/switchyard/providers"
)

// Proposer proposes new system prompts from the current best one and the rows it fails.
// It only ever sees train rows.
type Proposer interface {
	Propose(ctx context.Context, req ProposalRequest) (*Proposal, error)
}

// ProposalRequest is what a proposer is shown for one iteration.
type ProposalRequest struct {
	// TargetModel is the model the agent calls ("provider/model").
	TargetModel string
	// Metric names what the scores measure: the METRIC eval.py declares (e.g.
	// "exact_match"), else DefaultMetric ("eval.py:score"); "" shows none.
	Metric string
	// MetricDescription says what the metric measures: eval.py's module docstring (its
	// first paragraph, Bundle.MetricDescription); "" when it has none.
	MetricDescription string
	// Iteration is the iteration being proposed (1-based) of NIterations.
	Iteration, NIterations int
	// Candidates is how many prompts the proposer may return (Proposal.Prompt and
	// Proposal.Prompts together); more are ignored.
	Candidates int
	// CurrentPrompt is the best system prompt so far.
	CurrentPrompt string
	// BestScore is its mean train score; BaselineScore the original agent's.
	BestScore, BaselineScore float64
	// Failures are the rows of this iteration's minibatch the best agent does not get fully
	// right, with the scorer's feedback when eval.py gives it; the candidates are first
	// compared on that minibatch.
	Failures []FailingRow
	// Attempts are the recent candidates (newest last) and how they did.
	Attempts []Attempt
	// Alternatives are prompts that were not kept but get right train rows the best prompt
	// gets wrong (a Pareto pool, most rows won first).
	Alternatives []Alternative
	// Discarded are recent prompts that were tried and not kept (newest last); Attempts
	// tells the same with the rows won and lost.
	Discarded []string
}

// FailingRow is a train row the current best agent gets wrong (score < 1).
type FailingRow struct {
	Input     string  `json:"input"`
	Expected  string  `json:"expected"`
	Predicted string  `json:"predicted"`
	Score     float64 `json:"score"`
	// Feedback is the second item of the (score, feedback) pair eval.py returned for the
	// row; empty when it returned a number.
	Feedback string `json:"feedback,omitempty"`
}

// Attempt is an earlier candidate as the proposer is shown it.
type Attempt struct {
	Iteration int
	Prompt    string
	// Outcome is "kept", "not kept" (confirmed on the whole train split, refused by the
	// acceptance rule), "not better on the minibatch", or "failed in the sandbox".
	Outcome string
	// Wins and Losses count the rows where it scored higher and lower than the best agent
	// of its time, of Rows rows compared.
	Wins, Losses, Rows int
}

// Alternative is a Pareto-pool prompt as the proposer is shown it.
type Alternative struct {
	Prompt string
	// Score is its mean train score; RowsWon how many train rows it gets right (scores
	// higher on) that the best prompt does not; Examples up to two of those rows' inputs.
	Score    float64
	RowsWon  int
	Examples []string
}

// Proposal is a proposer's answer.
type Proposal struct {
	// Prompt is the new system prompt; it replaces the SYSTEM_PROMPT literal.
	Prompt string
	// Prompts are further candidate system prompts, tried after Prompt (up to
	// ProposalRequest.Candidates in all).
	Prompts []string
	// Editable, when not nil, replaces the whole EDITABLE section body instead of Prompt (it
	// must still assign SYSTEM_PROMPT; the FIXED section must come out unchanged or the
	// variant is rejected).
	Editable []byte
	// Usage is what the proposal cost.
	Usage Usage
}

// Usage is tokens and money spent.
type Usage struct {
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
}

func (u *Usage) add(o Usage) { u.Tokens += o.Tokens; u.CostUSD += o.CostUSD }

// ProviderResolver finds the adapter for a "provider/model" string; *providers.Registry
// implements it.
type ProviderResolver interface {
	Resolve(providerModel string) (providers.Provider, string, error)
}

// Pricer prices token usage; *providers.Catalog implements it.
type Pricer interface {
	Cost(model string, u providers.Usage) providers.Cost
}

// LLMProposer asks a language model (through the providers package) for a better prompt.
type LLMProposer struct {
	resolver ProviderResolver
	model    string
	prices   Pricer
	// MaxFieldChars truncates each shown input/expected/predicted value (default 1500).
	MaxFieldChars int
}

// NewLLMProposer returns a proposer that calls model ("provider/model", the server's
// --proposer-model) through r. prices may be nil (cost then counts as 0). The model is
// resolved now so that a misconfiguration shows at startup.
func NewLLMProposer(r ProviderResolver, model string, prices Pricer) (*LLMProposer, error) {
	if r == nil {
		return nil, errors.New("optimizer: NewLLMProposer needs a provider resolver")
	}
	if _, _, err := r.Resolve(model); err != nil {
		return nil, fmt.Errorf("optimizer: proposer model %q: %w", model, err)
	}
	return &LLMProposer{resolver: r, model: model, prices: prices, MaxFieldChars: 1500}, nil
}

// Model returns the proposer model ("provider/model").
func (p *LLMProposer) Model() string { return p.model }

// ProposerPromptVersion names the prompt file (prompts/<version>.tmpl) LLMProposer uses;
// a job's results record it.
// Version 3 tells the proposer the metric (ProposalRequest.Metric); proposer.v2.tmpl, kept
// beside it, is what jobs naming proposer.v2 ran.
const ProposerPromptVersion = "proposer.v3"

//go:embed prompts/proposer.v3.tmpl
var proposerPromptFile string

var proposerPrompt = template.Must(template.New(ProposerPromptVersion).Funcs(template.FuncMap{
	"add": func(a, b int) int { return a + b },
	"cut": func(s string) string { return s }, // replaced per render by the field limit
}).Parse(proposerPromptFile))

// PromptVersion returns ProposerPromptVersion.
func (p *LLMProposer) PromptVersion() string { return ProposerPromptVersion }

// Propose calls the model once; ctx carries the per-call timeout.
func (p *LLMProposer) Propose(ctx context.Context, req ProposalRequest) (*Proposal, error) {
	prov, model, err := p.resolver.Resolve(p.model)
	if err != nil {
		return nil, fmt.Errorf("optimizer: proposer model %q: %w", p.model, err)
	}
	system, user, err := renderProposerPrompt(req, p.MaxFieldChars)
	if err != nil {
		return nil, err
	}
	temp := 0.7
	resp, err := prov.Complete(ctx, &providers.Request{
		Model:       model,
		Temperature: &temp,
		Messages: []providers.Message{
			{Role: "system", Content: system},
			{Role: "user", Content: user},
		},
	})
	if err != nil {
		return nil, err
	}
	u := Usage{Tokens: int64(resp.Usage.PromptTokens + resp.Usage.CompletionTokens)}
	if p.prices != nil {
		u.CostUSD = p.prices.Cost(p.model, resp.Usage).TotalUSD
	}
	prompts := ExtractPrompts(resp.Text)
	if len(prompts) == 0 {
		return &Proposal{Usage: u}, fmt.Errorf("%w: the proposer model returned an empty prompt", ErrProposal)
	}
	return &Proposal{Prompt: prompts[0], Prompts: prompts[1:], Usage: u}, nil
}

// ProposerMessage renders the user message a proposer model is sent. Values longer than
// maxChars are cut.
func ProposerMessage(req ProposalRequest, maxChars int) string {
	_, user, err := renderProposerPrompt(req, maxChars)
	if err != nil {
		return "" // the embedded template is tested; a field cannot make it fail
	}
	return user
}

// renderProposerPrompt renders the system and user messages of the prompt file.
func renderProposerPrompt(req ProposalRequest, maxChars int) (system, user string, err error) {
	if maxChars <= 0 {
		maxChars = 1500
	}
	req.Candidates = max(req.Candidates, 1)
	t, err := proposerPrompt.Clone()
	if err != nil {
		return "", "", err
	}
	t.Funcs(template.FuncMap{"cut": func(s string) string {
		if len(s) <= maxChars {
			return s
		}
		return strings.ToValidUTF8(s[:maxChars], "") + " …[truncated]"
	}})
	var sys, usr strings.Builder
	if err := t.ExecuteTemplate(&sys, "system", req); err != nil {
		return "", "", fmt.Errorf("optimizer: proposer prompt: %w", err)
	}
	if err := t.ExecuteTemplate(&usr, "user", req); err != nil {
		return "", "", fmt.Errorf("optimizer: proposer prompt: %w", err)
	}
	return sys.String(), usr.String(), nil
}

// ExtractPrompts returns the text of each <prompt>…</prompt> block of a proposer's answer,
// in order, without empty ones; an answer without tags is one prompt (ExtractPrompt).
func ExtractPrompts(text string) []string {
	if !strings.Contains(text, "<prompt>") {
		if p := ExtractPrompt(text); p != "" {
			return []string{p}
		}
		return nil
	}
	var out []string
	for rest := text; ; {
		_, after, ok := strings.Cut(rest, "<prompt>")
		if !ok {
			break
		}
		inner, tail, _ := strings.Cut(after, "</prompt>")
		if p := strings.TrimSpace(inner); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
		rest = tail
	}
	return out
}

// ExtractPrompt returns the text between <prompt> and </prompt> in a proposer's answer, or
// the whole answer (without a surrounding code fence) when there are no tags.
func ExtractPrompt(text string) string {
	if _, after, ok := strings.Cut(text, "<prompt>"); ok {
		inner, _, _ := strings.Cut(after, "</prompt>")
		return strings.TrimSpace(inner)
	}
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "```") && strings.HasSuffix(t, "```") && len(t) >= 6 {
		t = strings.TrimSpace(t[3 : len(t)-3])
		if nl := strings.IndexByte(t, '\n'); nl >= 0 && !strings.Contains(t[:nl], " ") {
			t = strings.TrimSpace(t[nl+1:])
		}
	}
	return t
}
