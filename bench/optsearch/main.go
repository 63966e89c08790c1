// Command optsearch measures what the optimizer's search keeps, in a scripted environment
// where the truth is known.
//
// The scripted task has 8 categories of rows ("<category>: <text>"). The scripted task model
// answers a row right only when the system prompt holds "RULE <category>" and no
// "SKIP <category>"; a tenth of the rows are hard and never answered right, so the best
// reachable train score is below 1. The scripted sandbox (an in-process sandbox.Runner that
// plays the agent, the task model and an eval.py returning (score, feedback)) counts runs,
// rows and tokens. The scripted proposer reads the failing rows and their feedback and offers
// three candidates per call, in a seeded random order:
//   - better: the current prompt plus the RULE of the category failing most often among
//     the rows shown (fixes rows, breaks none);
//   - worse: the same RULE plus SKIP of two categories the prompt already handles (a trade
//     that loses more than it wins);
//   - neutral: the current prompt plus a line that changes no answer.
//
// Every candidate is classified against the truth (all rows of the dataset, train and test):
// truly better when it gets more rows right than the best agent of its time and none wrong
// that the best got right, truly worse when it gets fewer right. The program runs jobs on
// datasets of 10, 50 and 500 rows (-seeds seeds each) and prints medians.
//
//	go run ./bench/optsearch -seeds 5
package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

var (
	seeds      = flag.Int("seeds", 5, "jobs per dataset size (each its own dataset, split and proposer order)")
	iterations = flag.Int("iterations", 15, "n_iterations of each job")
	sizes      = flag.String("sizes", "10,50,500", "dataset sizes")
	noise      = flag.Float64("noise", 0, "probability that the task model gets a row wrong it would get right, per row and run (a flaky model)")
)

var categories = []string{"upper", "reverse", "count", "double", "lower", "first", "last", "length"}

const agentPy = `# === EDITABLE START ===
SYSTEM_PROMPT = """You are a precise assistant.
RULE upper"""
# === EDITABLE END ===

# === FIXED START ===
def run_batch(inputs, api_key):
    raise RuntimeError("scripted: the benchmark's sandbox plays this agent")
# === FIXED END ===
`

const evalPy = `def score(expected, predicted):
    return 1.0 if expected == predicted else (0.0, "wrong")
`

func solve(cat, text string) string {
	switch cat {
	case "upper":
		return strings.ToUpper(text)
	case "lower":
		return strings.ToLower(text) + "."
	case "reverse":
		r := []rune(text)
		slices.Reverse(r)
		return string(r)
	case "count":
		return fmt.Sprint(len(strings.Fields(text)))
	case "double":
		return text + text
	case "first":
		return strings.Fields(text)[0]
	case "last":
		f := strings.Fields(text)
		return f[len(f)-1]
	case "length":
		return fmt.Sprint(len(text))
	}
	return text
}

// row is a dataset row with its truth.
type row struct {
	Input  string `json:"input"`
	Answer string `json:"answer"`
	cat    string
	hard   bool
}

func dataset(n int, seed uint64) []row {
	rng := rand.New(rand.NewPCG(seed, 99))
	words := []string{"apple", "blue", "cold", "dark", "eager", "fresh", "gold", "happy", "iron", "jolly", "kind", "lucky"}
	out := make([]row, n)
	for i := range out {
		cat := categories[rng.IntN(len(categories))]
		text := fmt.Sprintf("%s %s %d", words[rng.IntN(len(words))], words[rng.IntN(len(words))], i)
		out[i] = row{Input: cat + ": " + text, Answer: solve(cat, text), cat: cat, hard: rng.IntN(10) == 0}
	}
	return out
}

// answer is the scripted task model.
func answer(system string, r row) string {
	_, text, _ := strings.Cut(r.Input, ": ")
	if r.hard || strings.Contains(system, "SKIP "+r.cat) || !strings.Contains(system, "RULE "+r.cat) {
		return text
	}
	return r.Answer
}

// rightRows returns which rows of all the system prompt gets right.
func rightRows(system string, all []row) []bool {
	out := make([]bool, len(all))
	for i, r := range all {
		out[i] = answer(system, r) == r.Answer
	}
	return out
}

// scriptedSandbox plays the agent, the task model and eval.py.
type scriptedSandbox struct {
	byInput map[string]row
	flaky   *rand.Rand // with -noise

	mu         sync.Mutex
	runs, rows int
	tokens     int64
}

func (s *scriptedSandbox) Name() string { return "scripted" }

func (s *scriptedSandbox) Run(ctx context.Context, job sandbox.Job) (*sandbox.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a, err := optimizer.ParseAgent(job.Files["agent.py"])
	if err != nil {
		return nil, &sandbox.JobError{Reason: sandbox.ReasonException, Message: err.Error()}
	}
	system := a.Prompt()
	res := &sandbox.Result{}
	var tokens int64
	for _, jr := range job.Rows {
		r := s.byInput[jr.Input]
		pred := answer(system, r)
		if *noise > 0 && pred == r.Answer {
			s.mu.Lock()
			if s.flaky.Float64() < *noise {
				pred = "flaky"
			}
			s.mu.Unlock()
		}
		res.Predictions = append(res.Predictions, pred)
		tokens += int64(len(system)+len(jr.Input)+len(pred))/4 + 4
		if pred == jr.Answer {
			res.Scores = append(res.Scores, 1)
			res.Feedback = append(res.Feedback, "")
		} else {
			res.Scores = append(res.Scores, 0)
			res.Feedback = append(res.Feedback, fmt.Sprintf("the %s rule was not applied", r.cat))
		}
	}
	res.Usage.Tokens = tokens
	s.mu.Lock()
	s.runs++
	s.rows += len(job.Rows)
	s.tokens += tokens
	s.mu.Unlock()
	return res, nil
}

// scriptedProposer reads the failures and offers a better, a worse and a neutral candidate.
type scriptedProposer struct {
	rng *rand.Rand
	mu  sync.Mutex
}

func (p *scriptedProposer) Propose(_ context.Context, req optimizer.ProposalRequest) (*optimizer.Proposal, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := req.CurrentPrompt
	count := map[string]int{}
	for _, f := range req.Failures {
		cat, _, _ := strings.Cut(f.Input, ": ")
		if strings.Contains(f.Feedback, "rule was not applied") {
			count[cat]++
		}
	}
	var failing string
	for _, c := range categories {
		if count[c] > count[failing] && !strings.Contains(cur, "RULE "+c) {
			failing = c
		}
	}
	var handled []string
	for _, c := range categories {
		if strings.Contains(cur, "RULE "+c) && !strings.Contains(cur, "SKIP "+c) {
			handled = append(handled, c)
		}
	}
	var cands []string
	if failing != "" {
		cands = append(cands, cur+"\nRULE "+failing)
		if len(handled) >= 2 {
			cands = append(cands, cur+"\nRULE "+failing+"\nSKIP "+handled[0]+"\nSKIP "+handled[1])
		}
	}
	cands = append(cands, cur+fmt.Sprintf("\nBe precise (%d).", req.Iteration))
	p.rng.Shuffle(len(cands), func(a, b int) { cands[a], cands[b] = cands[b], cands[a] })
	msg := optimizer.ProposerMessage(req, 1500)
	return &optimizer.Proposal{Prompt: cands[0], Prompts: cands[1:], Usage: optimizer.Usage{Tokens: int64(len(msg))/4 + 60*int64(len(cands))}}, nil
}

// outcome is one job's figures.
type outcome struct {
	reachIteration       int // first iteration whose best train score is the best reachable; -1 if never
	better, betterKept   int
	worse, worseKept     int
	neutral, neutralKept int
	kept, confirmations  int
	runsPerIt, rowsPerIt float64
	tokensPerIt          float64
	trainRows            float64
}

func runJob(n int, seed uint64) (*outcome, error) {
	all := dataset(n, seed)
	byInput := map[string]row{}
	for _, r := range all {
		byInput[r.Input] = r
	}
	ds, _ := json.Marshal(all)
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for name, body := range map[string][]byte{"agent.py": []byte(agentPy), "eval.py": []byte(evalPy), "dataset.json": ds} {
		w, _ := zw.Create(name)
		w.Write(body)
	}
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(zbuf.Bytes()) }))
	defer srv.Close()

	box := &scriptedSandbox{byInput: byInput, flaky: rand.New(rand.NewPCG(seed, 3))}
	prop := &scriptedProposer{rng: rand.New(rand.NewPCG(seed, 7))}
	svc, err := optimizer.New(memstore.New(), box, prop, optimizer.WithFetcher(&fetch.Fetcher{AllowLocal: true}),
		optimizer.WithSeed(seed), optimizer.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	if err := svc.Start(ctx); err != nil {
		return nil, err
	}
	defer svc.Close(ctx)
	sub, err := svc.Submit(ctx, "bench", optimizer.Request{Optimizer: "agentopt", InputURL: srv.URL + "/b.zip",
		TargetModels: []string{"scripted/task"}, NIterations: *iterations,
		OverallTimeout: 10 * time.Minute, LLMCallTimeout: time.Minute, SandboxTimeout: time.Minute})
	if err != nil {
		return nil, err
	}
	for {
		st, err := svc.Status(ctx, "bench", sub.JobID)
		if err != nil {
			return nil, err
		}
		if st.Status.Terminal() {
			if st.Status != optimizer.StatusCompleted {
				return nil, fmt.Errorf("job %s: %s", st.Status, st.ErrorMessage)
			}
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	res, err := svc.Results(ctx, "bench", sub.JobID)
	if err != nil {
		return nil, err
	}
	r := res.Results[0]

	// The truth, and the best reachable train score.
	train, _ := optimizer.Split(toSandboxRows(all), seed)
	o := &outcome{reachIteration: -1, trainRows: float64(len(train))}
	bestPrompt := r.OriginalPrompt
	if allReached(bestPrompt, train, byInput) {
		o.reachIteration = 0
	}
	var rows, runs int
	for _, it := range r.History[1:] {
		rows += it.RowsRun
		bestRight := rightRows(bestPrompt, all)
		for _, c := range it.Candidates {
			if c.MinibatchScore == nil {
				continue // not run (a repeat)
			}
			right := rightRows(c.Prompt, all)
			gained, lost := 0, 0
			for i := range right {
				switch {
				case right[i] && !bestRight[i]:
					gained++
				case !right[i] && bestRight[i]:
					lost++
				}
			}
			kept := c.Confirmed && it.Kept
			if c.Confirmed {
				o.confirmations++
			}
			switch {
			case gained > lost && lost == 0:
				o.better++
				if kept {
					o.betterKept++
				}
			case gained < lost:
				o.worse++
				if kept {
					o.worseKept++
				}
			case gained == 0 && lost == 0:
				o.neutral++
				if kept {
					o.neutralKept++
				}
			}
		}
		if it.Kept {
			o.kept++
			bestPrompt = it.Prompt
			if o.reachIteration < 0 && allReached(bestPrompt, train, byInput) {
				o.reachIteration = it.Iteration
			}
		}
	}
	// Sandbox runs of the iterations only: the baseline and the held-out runs (each split
	// into up to DefaultSandboxConcurrency chunks) are each job's fixed cost.
	_, test := optimizer.Split(toSandboxRows(all), seed)
	chunks := func(n int) int { return min(n, optimizer.DefaultSandboxConcurrency) }
	heldOut := chunks(len(test))
	if r.OptimizedPrompt != r.OriginalPrompt {
		heldOut *= 2
	}
	runs = box.runs - chunks(len(train)) - heldOut
	nIt := float64(len(r.History) - 1)
	o.rowsPerIt = float64(rows) / nIt
	o.runsPerIt = float64(runs) / nIt
	o.tokensPerIt = float64(r.Usage.Task.Tokens+r.Usage.Proposer.Tokens) / nIt
	return o, nil
}

// allReached reports whether system gets right every train row that can be got right (the
// truth, without the noise).
func allReached(system string, train []sandbox.Row, byInput map[string]row) bool {
	for _, tr := range train {
		if r := byInput[tr.Input]; !r.hard && answer(system, r) != r.Answer {
			return false
		}
	}
	return true
}

func toSandboxRows(all []row) []sandbox.Row {
	out := make([]sandbox.Row, len(all))
	for i, r := range all {
		out[i] = sandbox.Row{Input: r.Input, Answer: r.Answer}
	}
	return out
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func main() {
	flag.Parse()
	fmt.Printf("optimizer search, scripted environment: %d jobs per size, %d iterations, %d candidates per call, minibatch ≤ %d rows, noise %.2f\n\n",
		*seeds, *iterations, optimizer.DefaultCandidates, optimizer.DefaultMinibatch, *noise)
	fmt.Println("| rows | train rows | iterations to best reachable (median, max) | truly better kept | truly worse kept | neutral kept | train-split confirmations per kept | sandbox runs / iteration | train rows run / iteration | tokens / iteration |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, f := range strings.Split(*sizes, ",") {
		var n int
		if _, err := fmt.Sscan(f, &n); err != nil {
			log.Fatalf("-sizes: %v", err)
		}
		var reach, runs, rowsIt, toks, confirmPerKept []float64
		var better, betterKept, worse, worseKept, neutral, neutralKept, never int
		var trainRows float64
		for s := range *seeds {
			o, err := runJob(n, uint64(1000+s))
			if err != nil {
				log.Fatal(err)
			}
			if o.reachIteration < 0 {
				never++
				reach = append(reach, float64(*iterations+1))
			} else {
				reach = append(reach, float64(o.reachIteration))
			}
			better += o.better
			betterKept += o.betterKept
			worse += o.worse
			worseKept += o.worseKept
			neutral += o.neutral
			neutralKept += o.neutralKept
			runs = append(runs, o.runsPerIt)
			rowsIt = append(rowsIt, o.rowsPerIt)
			toks = append(toks, o.tokensPerIt)
			if o.kept > 0 {
				confirmPerKept = append(confirmPerKept, float64(o.confirmations)/float64(o.kept))
			}
			trainRows = o.trainRows
		}
		reachText := fmt.Sprintf("%.0f, %.0f", median(reach), slices.Max(reach))
		if never > 0 {
			reachText += fmt.Sprintf(" (%d of %d never)", never, *seeds)
		}
		fmt.Printf("| %d | %.0f | %s | %d of %d | %d of %d | %d of %d | %.2f (max %.2f) | %.1f | %.1f | %.0f |\n",
			n, trainRows, reachText, betterKept, better, worseKept, worse, neutralKept, neutral,
			median(confirmPerKept), slices.Max(confirmPerKept), median(runs), median(rowsIt), median(toks))
	}
	os.Stdout.Sync()
}
