package optimizer

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/sandbox"
)

// planProposer is a scripted Proposer: plan returns the prompts of each call from the
// request, which it records.
type planProposer struct {
	plan func(n int, req ProposalRequest) []string

	mu   sync.Mutex
	reqs []ProposalRequest
}

func (p *planProposer) Propose(_ context.Context, req ProposalRequest) (*Proposal, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	n := len(p.reqs)
	p.mu.Unlock()
	prompts := p.plan(n, req)
	return &Proposal{Prompt: prompts[0], Prompts: prompts[1:], Usage: Usage{Tokens: 1}}, nil
}

func (p *planProposer) requests() []ProposalRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.reqs)
}

// runPlan runs a job of n iterations with proposer p and returns the model's result.
func runPlan(t *testing.T, runner *fakeRunner, p Proposer, n int, opts ...Option) ModelResult {
	t.Helper()
	e := newEnv(t, runner, nil)
	svc, err := New(e.st, runner, p, append([]Option{WithFetcher(&fetch.Fetcher{AllowLocal: true}),
		WithGateway(e.up.URL+"/v1", StaticKey("job-key")), WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	e.start(t)
	sub, err := svc.Submit(context.Background(), "alice", request(e.url, n))
	if err != nil {
		t.Fatal(err)
	}
	if st := waitFor(t, svc, sub.JobID); st.Status != StatusCompleted {
		t.Fatalf("status %+v", st)
	}
	res, err := svc.Results(context.Background(), "alice", sub.JobID)
	if err != nil {
		t.Fatal(err)
	}
	return res.Results[0]
}

// confirmations counts the iterations whose candidate ran on the rest of the train split.
func confirmations(r ModelResult) int {
	n := 0
	for _, it := range r.History[1:] {
		for _, c := range it.Candidates {
			if c.Confirmed {
				n++
			}
		}
	}
	return n
}

func TestSeveralCandidatesOneConfirmation(t *testing.T) {
	// Each call offers a useless line, one missing RULE, and two missing RULEs: the last
	// wins the minibatch and alone goes on to the whole train split.
	p := &planProposer{plan: func(n int, req ProposalRequest) []string {
		cur := req.CurrentPrompt
		return []string{cur + "\nBe careful.", cur + "\nRULE reverse", cur + "\nRULE reverse\nRULE count"}
	}}
	r := runPlan(t, &fakeRunner{}, p, 2)
	it := r.History[1]
	if len(it.Candidates) != 3 || !it.Kept || !strings.HasSuffix(it.Prompt, "RULE count") {
		t.Fatalf("iteration 1 = %+v", it)
	}
	for k, c := range it.Candidates {
		if c.Confirmed != (k == 2) || c.MinibatchScore == nil || c.BestMinibatchScore == nil {
			t.Errorf("candidate %d = %+v", k, c)
		}
	}
	if *it.Candidates[0].MinibatchScore != *it.Candidates[0].BestMinibatchScore || !strings.Contains(it.Candidates[0].Note, "not better") {
		t.Errorf("the useless line: %+v", it.Candidates[0])
	}
	if got := confirmations(r); got > r.IterationsKept {
		t.Errorf("%d confirmations for %d kept candidates", got, r.IterationsKept)
	}
	// Iteration 2 repeats two agents already benchmarked (not run) after the best changed.
	if r.History[2].RowsRun > 3*8+22 {
		t.Errorf("iteration 2 ran %d rows", r.History[2].RowsRun)
	}
	// The proposer is asked for DefaultCandidates and shown the attempts of iteration 1.
	reqs := p.requests()
	if reqs[0].Candidates != DefaultCandidates || len(reqs[1].Attempts) != 3 {
		t.Fatalf("requests: %+v", reqs)
	}
	var outcomes []string
	for _, a := range reqs[1].Attempts {
		outcomes = append(outcomes, a.Outcome)
	}
	if !slices.Contains(outcomes, "kept") || !slices.Contains(outcomes, "not better on the minibatch") {
		t.Errorf("attempt outcomes %q", outcomes)
	}
}

func TestTieOnMinibatchGoesToShorterPrompt(t *testing.T) {
	p := &planProposer{plan: func(n int, req ProposalRequest) []string {
		cur := req.CurrentPrompt
		return []string{cur + "\nRULE reverse: reverse the characters of the text, the last one first.", cur + "\nRULE reverse"}
	}}
	r := runPlan(t, &fakeRunner{}, p, 1)
	it := r.History[1]
	if !it.Kept || it.Prompt != r.OriginalPrompt+"\nRULE reverse" || !it.Candidates[1].Confirmed || it.Candidates[0].Confirmed {
		t.Fatalf("iteration 1 = %+v", it)
	}
}

func TestTradeIsRefusedAndJoinsParetoPool(t *testing.T) {
	// Call 1 adds two RULEs (kept). Call 2 fixes the double rows and breaks the upper and
	// reverse ones: it wins the minibatch (mostly failing rows) and loses on the whole split,
	// so it is refused there and becomes an alternative the proposer sees in call 3.
	p := &planProposer{plan: func(n int, req ProposalRequest) []string {
		switch n {
		case 1:
			return []string{req.CurrentPrompt + "\nRULE reverse\nRULE count"}
		case 2:
			return []string{req.CurrentPrompt + "\nRULE double\nSKIP upper\nSKIP reverse"}
		}
		return []string{req.CurrentPrompt + "\nRULE double"}
	}}
	r := runPlan(t, &fakeRunner{}, p, 3)
	trade := r.History[2]
	if !r.History[1].Kept || trade.Kept || trade.TrainScore == nil || trade.Comparison == nil || trade.Comparison.Losses == 0 || !r.History[3].Kept {
		t.Fatalf("history %+v", r.History)
	}
	reqs := p.requests()
	alt := reqs[2].Alternatives
	if len(alt) != 1 || alt[0].RowsWon != trade.Comparison.Wins || !strings.Contains(alt[0].Prompt, "SKIP upper") || len(alt[0].Examples) == 0 ||
		!strings.HasPrefix(alt[0].Examples[0], "double: ") {
		t.Fatalf("alternatives %+v", alt)
	}
	if !strings.Contains(ProposerMessage(reqs[2], 0), "<alternative ") {
		t.Error("the proposer message does not show the alternative")
	}
	if a := reqs[2].Attempts; len(a) != 2 || a[1].Losses != trade.Comparison.Losses || a[1].Outcome != "not kept" {
		t.Errorf("attempts %+v", a)
	}
	if confirmations(r) != 3 || r.IterationsKept != 2 {
		t.Errorf("confirmations %d, kept %d", confirmations(r), r.IterationsKept)
	}
}

func TestFeedbackReachesProposer(t *testing.T) {
	p := &planProposer{plan: func(n int, req ProposalRequest) []string {
		return []string{req.CurrentPrompt + "\nRULE reverse"}
	}}
	runPlan(t, &fakeRunner{feedback: true}, p, 1)
	req := p.requests()[0]
	if len(req.Failures) == 0 {
		t.Fatal("no failures shown")
	}
	for _, f := range req.Failures {
		if !strings.HasPrefix(f.Feedback, "wrong: ") {
			t.Errorf("failure %+v has no feedback", f)
		}
	}
	msg := ProposerMessage(req, 0)
	if !strings.Contains(msg, "<feedback>wrong: ") {
		t.Errorf("message lacks the feedback:\n%s", msg)
	}
}

func TestMinibatch(t *testing.T) {
	s := &Service{seed: 7, minibatch: DefaultMinibatch, maxFailures: DefaultMaxFailures}
	mk := func(scores ...float64) *candidate { return &candidate{scores: scores} }
	for _, tc := range []struct {
		name           string
		best           *candidate
		size, minRight int
		whole          bool
	}{
		{"7 rows", mk(1, 0, 0, 1, 0, 1, 0), 4, 1, false},
		{"22 rows", mk(make([]float64, 22)...), 8, 0, false},
		{"1 row", mk(0), 1, 0, true},
	} {
		idx, whole := s.drawMinibatch(tc.best, s.seed, 1)
		if len(idx) != tc.size || whole != tc.whole || !slices.IsSorted(idx) {
			t.Errorf("%s: %v whole=%v", tc.name, idx, whole)
		}
		right, wrong := 0, 0
		for _, i := range idx {
			if tc.best.scores[i] == 1 {
				right++
			} else {
				wrong++
			}
		}
		if right < tc.minRight || wrong == 0 {
			t.Errorf("%s: %d right, %d wrong rows", tc.name, right, wrong)
		}
	}
	// Many right rows: three quarters of the minibatch are wrong ones.
	scores := make([]float64, 100)
	for i := range 90 {
		scores[i] = 1
	}
	idx, _ := s.drawMinibatch(mk(scores...), s.seed, 2)
	wrong := 0
	for _, i := range idx {
		if scores[i] < 1 {
			wrong++
		}
	}
	if len(idx) != 8 || wrong != 6 {
		t.Errorf("100 rows: %v (%d wrong)", idx, wrong)
	}
}

func TestExtractPrompts(t *testing.T) {
	got := ExtractPrompts("ideas:\n<prompt> A </prompt>\n<prompt>B</prompt><prompt></prompt><prompt>A</prompt>")
	if !slices.Equal(got, []string{"A", "B"}) {
		t.Errorf("got %q", got)
	}
	if got := ExtractPrompts("```\nplain\n```"); !slices.Equal(got, []string{"plain"}) {
		t.Errorf("untagged: %q", got)
	}
}

func TestProposerPromptFile(t *testing.T) {
	req := ProposalRequest{TargetModel: "m", Iteration: 2, NIterations: 5, Candidates: 3, CurrentPrompt: "P",
		Failures:  []FailingRow{{Input: "in", Expected: "ex", Predicted: "pr", Feedback: "fb"}},
		Attempts:  []Attempt{{Iteration: 1, Prompt: "P1", Outcome: "not kept", Wins: 2, Losses: 1, Rows: 7}},
		Discarded: []string{"P1"}}
	system, user, err := renderProposerPrompt(req, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(system, "up to 3 different candidate") {
		t.Errorf("system: %s", system)
	}
	for _, want := range []string{"<current_prompt>\nP\n</current_prompt>", "<input>in</input>", "<feedback>fb</feedback>",
		`<attempt iteration="1" outcome="not kept" won="2" lost="1" of="7">P1</attempt>`} {
		if !strings.Contains(user, want) {
			t.Errorf("user message lacks %q:\n%s", want, user)
		}
	}
	if strings.Contains(user, "<discarded>") {
		t.Error("discarded prompts repeated beside the attempts")
	}
	if (&LLMProposer{}).PromptVersion() != ProposerPromptVersion {
		t.Error("PromptVersion")
	}
}

var _ sandbox.Runner = (*fakeRunner)(nil)

func TestParetoPool(t *testing.T) {
	ag := func(p string) *AgentSource {
		a, err := ParseAgent([]byte("# === EDITABLE START ===\nSYSTEM_PROMPT = " + strconv.Quote(p) + "\n# === EDITABLE END ===\n# === FIXED START ===\ndef run_batch(inputs, api_key):\n    return [], {}\n# === FIXED END ===\n"))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	best := &candidate{agent: ag("best"), scores: []float64{1, 1, 0, 0}}
	a := &candidate{agent: ag("a"), scores: []float64{0, 1, 1, 0}}         // wins row 2
	b := &candidate{agent: ag("b"), scores: []float64{0, 0, 1, 0}}         // dominated by a
	c := &candidate{agent: ag("c, longer"), scores: []float64{0, 1, 1, 0}} // ties a, longer
	d := &candidate{agent: ag("d"), scores: []float64{0, 0, 0, 1}}         // wins row 3
	var pool paretoPool
	for _, x := range []*candidate{a, b, c, d} {
		pool = pool.add(x, best)
	}
	var got []string
	for _, x := range pool {
		got = append(got, x.agent.Prompt())
	}
	if !slices.Equal(got, []string{"a", "d"}) {
		t.Errorf("pool %q, want [a d]", got)
	}
	// A new best that gets rows 2 and 3 right leaves the pool nothing to offer.
	if left := pool.refresh(&candidate{agent: ag("new"), scores: []float64{1, 1, 1, 1}}); len(left) != 0 {
		t.Errorf("pool after a better best: %d members", len(left))
	}
}

func TestFlakyLossesAreRechecked(t *testing.T) {
	// The confirmation run of the candidate loses two upper rows once (a flaky model): the
	// sign test refuses it, the re-run of the differing rows does not repeat the losses, and
	// the candidate is kept.
	var runs atomic.Int32
	runner := &fakeRunner{mangle: func(job sandbox.Job, res *sandbox.Result) {
		a, _ := ParseAgent(job.Files["agent.py"])
		if a == nil || !strings.Contains(a.Prompt(), "RULE reverse") {
			return
		}
		if runs.Add(1) == 2 { // the first is the minibatch, the second the confirmation
			flaked := 0
			for k, r := range job.Rows {
				if strings.HasPrefix(r.Input, "upper: ") && res.Scores[k] == 1 && flaked < 2 {
					res.Scores[k], res.Predictions[k] = 0, "flaky"
					flaked++
				}
			}
		}
	}}
	p := &planProposer{plan: func(n int, req ProposalRequest) []string {
		return []string{req.CurrentPrompt + "\nRULE reverse"}
	}}
	r := runPlan(t, runner, p, 1, WithSandboxConcurrency(1))
	it := r.History[1]
	if !it.Kept || it.Rechecked == 0 || it.Comparison.Losses != 0 {
		t.Fatalf("iteration 1 = %+v, comparison %+v", it, it.Comparison)
	}
}
