package optimizer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// Proposer proposes a new system prompt from the current best one and the rows it fails.
// It only ever sees train rows.
type Proposer interface {
	Propose(ctx context.Context, req ProposalRequest) (*Proposal, error)
}

// ProposalRequest is what a proposer is shown for one iteration.
type ProposalRequest struct {
	// TargetModel is the model the agent calls ("provider/model").
	TargetModel string
	// Iteration is the iteration being proposed (1-based) of NIterations.
	Iteration, NIterations int
	// CurrentPrompt is the best system prompt so far.
	CurrentPrompt string
	// BestScore is its mean train score; BaselineScore the original agent's.
	BestScore, BaselineScore float64
	// Failures is a sample of train rows the best agent does not get fully right.
	Failures []FailingRow
	// Discarded are recent prompts that were tried and not kept (newest last).
	Discarded []string
}

// FailingRow is a train row the current best agent gets wrong (score < 1).
type FailingRow struct {
	Input     string  `json:"input"`
	Expected  string  `json:"expected"`
	Predicted string  `json:"predicted"`
	Score     float64 `json:"score"`
}

// Proposal is a proposer's answer.
type Proposal struct {
	// Prompt is the new system prompt; it replaces the SYSTEM_PROMPT literal.
	Prompt string
	// Editable, when not nil, replaces the whole EDITABLE section body instead (it must still
	// assign SYSTEM_PROMPT; the FIXED section must come out unchanged or the variant is
	// rejected).
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

const proposerSystem = `You improve the system prompt of an LLM agent. You are shown the agent's current system prompt, its score on a training set (0 to 1, higher is better) and examples it gets wrong, with the expected and the actual answers.
Write an improved system prompt that keeps what works and adds clear, general instructions that fix the failures (output format, rules of the task, edge cases). Do not copy the examples' answers into the prompt as a lookup table.
Reply with the complete new system prompt between <prompt> and </prompt>, and nothing else.`

// Propose calls the model once; ctx carries the per-call timeout.
func (p *LLMProposer) Propose(ctx context.Context, req ProposalRequest) (*Proposal, error) {
	prov, model, err := p.resolver.Resolve(p.model)
	if err != nil {
		return nil, fmt.Errorf("optimizer: proposer model %q: %w", p.model, err)
	}
	temp := 0.7
	resp, err := prov.Complete(ctx, &providers.Request{
		Model:       model,
		Temperature: &temp,
		Messages: []providers.Message{
			{Role: "system", Content: proposerSystem},
			{Role: "user", Content: ProposerMessage(req, p.MaxFieldChars)},
		},
	})
	if err != nil {
		return nil, err
	}
	u := Usage{Tokens: int64(resp.Usage.PromptTokens + resp.Usage.CompletionTokens)}
	if p.prices != nil {
		u.CostUSD = p.prices.Cost(p.model, resp.Usage).TotalUSD
	}
	prompt := ExtractPrompt(resp.Text)
	if prompt == "" {
		return &Proposal{Usage: u}, fmt.Errorf("%w: the proposer model returned an empty prompt", ErrProposal)
	}
	return &Proposal{Prompt: prompt, Usage: u}, nil
}

// ProposerMessage renders the user message a proposer model is sent. Values longer than
// maxChars are cut.
func ProposerMessage(req ProposalRequest, maxChars int) string {
	if maxChars <= 0 {
		maxChars = 1500
	}
	cut := func(s string) string {
		if len(s) <= maxChars {
			return s
		}
		return strings.ToValidUTF8(s[:maxChars], "") + " …[truncated]"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Target model: %s\nIteration %d of %d. Baseline score %.3f, current best score %.3f.\n\n", req.TargetModel, req.Iteration, req.NIterations, req.BaselineScore, req.BestScore)
	fmt.Fprintf(&b, "<current_prompt>\n%s\n</current_prompt>\n\n", req.CurrentPrompt)
	if len(req.Failures) == 0 {
		b.WriteString("The agent gets every training example right; make the prompt more robust without changing its behaviour.\n")
	}
	for i, f := range req.Failures {
		fmt.Fprintf(&b, "<failure n=\"%d\" score=\"%.2f\">\n<input>%s</input>\n<expected>%s</expected>\n<predicted>%s</predicted>\n</failure>\n", i+1, f.Score, cut(f.Input), cut(f.Expected), cut(f.Predicted))
	}
	if len(req.Discarded) > 0 {
		b.WriteString("\nThese earlier attempts did not improve the score; try something different:\n")
		for _, d := range req.Discarded {
			fmt.Fprintf(&b, "<discarded>%s</discarded>\n", cut(d))
		}
	}
	return b.String()
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
