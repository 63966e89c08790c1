package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

// runSelectStdin is `switchyard select` (runSelect) with the process's standard input:
// the JSON request, or with -m and no prompt given, the prompt.
func runSelectStdin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runSelect(ctx, args, os.Stdin, stdout, stderr)
}

// clientFlags are the connection flags every client subcommand takes.
type clientFlags struct {
	url, key string
	jsonOut  bool
}

func addClientFlags(fs *flag.FlagSet) *clientFlags {
	f := &clientFlags{}
	fs.StringVar(&f.url, "url", "", "server address (env "+client.EnvBaseURL+", default "+client.DefaultBaseURL+")")
	fs.StringVar(&f.key, "key", "", "API key (env "+client.EnvAPIKey+")")
	fs.BoolVar(&f.jsonOut, "json", false, "print the server's JSON answer instead of a summary")
	return f
}

func (f *clientFlags) client() (*client.Client, error) {
	var opts []client.Option
	if f.url != "" {
		opts = append(opts, client.WithBaseURL(f.url))
	}
	if f.key != "" {
		opts = append(opts, client.WithAPIKey(f.key))
	}
	opts = append(opts, client.WithUserAgent("switchyard-cli/"+version))
	return client.New(opts...)
}

// forEachID runs do on each of ids (the CLI's deletes, blocks and removals of several
// records), printing what do answered as JSON with --json, else its line; an id that fails
// is named in the joined error and the others still run.
func forEachID(ids []string, jsonOut bool, stdout io.Writer, do func(id string) (answer any, line string, err error)) error {
	var errs []error
	for _, id := range ids {
		answer, line, err := do(id)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id, err))
			continue
		}
		if jsonOut {
			if err := printJSON(stdout, answer); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintln(stdout, line)
	}
	return errors.Join(errs...)
}

// parseInterleaved parses flags that may come before, between or after the positional
// arguments ("train URL1 --poll 1s URL2") and returns the positional ones. "--" ends flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, asUsageError(err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: switchyard %s\n\nflags:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// showRecord returns how a subcommand answers with one record: the call's error as it is,
// else the record as JSON with --json, else as print writes it.
func showRecord[T any](w io.Writer, jsonOut bool, print func(io.Writer, T)) func(T, error) error {
	return func(v T, err error) error {
		if err != nil {
			return err
		}
		if jsonOut {
			return printJSON(w, v)
		}
		print(w, v)
		return nil
	}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// interruptedHint tells the user the job keeps running on the server when they stop
// waiting.
func interruptedHint(ctx context.Context, stderr io.Writer, cmd, id string) {
	if ctx.Err() != nil && id != "" {
		fmt.Fprintf(stderr, "\nstopped waiting; the job keeps running on the server. Resume with: switchyard %s --job %s\n", cmd, id)
	}
}

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("train", "train [flags] URL... | train --file FILE [flags]", stderr)
	cf := addClientFlags(fs)
	file := fs.String("file", "", "upload this local dataset file (records JSON/JSONL/CSV, or Not Diamond's joint CSV with --prompt-column) instead of URLs")
	promptColumn := fs.String("prompt-column", "", "with --file: read it as Not Diamond's joint CSV, prompts in this column")
	minimize := fs.Bool("minimize", false, "with --file and --prompt-column: lower scores are better (Not Diamond's maximize=False)")
	llmProviders := fs.String("llm-providers", "", "with --file and --prompt-column: comma-separated provider/model to route among (default: every score column)")
	customRouter := fs.Bool("custom-router", false, "with --file and --prompt-column: train a preference's router as Not Diamond's CustomRouter.fit does (/v2/pzn/trainCustomRouter) and print its preference id")
	preferenceID := fs.String("preference-id", "", "with --custom-router (implied): retrain this preference's router (pref_...) instead of making a new preference")
	pollEvery := fs.Duration("poll", 2*time.Second, "how often to poll the job's status")
	noWait := fs.Bool("no-wait", false, "start the job and print its id without waiting")
	jobID := fs.String("job", "", "follow an existing training job instead of starting one")
	cancel := fs.Bool("cancel", false, "with --job: cancel that job (it ends failed)")
	urls, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if *cancel && *jobID == "" {
		fs.Usage()
		return errors.New("--cancel needs --job")
	}
	if *file != "" && len(urls) > 0 {
		fs.Usage()
		return errors.New("give dataset URLs or --file, not both")
	}
	if *file == "" && (*promptColumn != "" || *minimize || *llmProviders != "") {
		fs.Usage()
		return errors.New("--prompt-column, --minimize and --llm-providers need --file")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["preference-id"] && strings.TrimSpace(*preferenceID) == "" {
		fs.Usage()
		return errors.New("--preference-id: give a preference id (pref_...), or leave the flag out to make a new preference")
	}
	custom := *customRouter || *preferenceID != ""
	if custom && (*file == "" || *promptColumn == "") {
		fs.Usage()
		return errors.New("--custom-router and --preference-id need --file and --prompt-column (Not Diamond's joint CSV)")
	}
	if len(urls) == 0 && *jobID == "" && *file == "" {
		fs.Usage()
		return errors.New("give at least one dataset URL (JSON, JSONL or CSV), --file or --job")
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	tr := c.RouterTrainer()
	preference := "" // the preference a custom router was trained for
	if *jobID != "" {
		tr.UseJob(*jobID)
		if *cancel {
			st, err := tr.Cancel(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "job %s %s\n", tr.JobID(), st.Status)
			return nil
		}
	} else {
		var job *client.TrainingJob
		switch {
		case custom:
			cj, err := trainCustomRouter(ctx, tr, *file, *promptColumn, &client.CustomRouterOptions{PreferenceID: *preferenceID, Minimize: *minimize, LLMProviders: splitList(*llmProviders)})
			if err != nil {
				return err
			}
			preference = cj.PreferenceID
			job = &client.TrainingJob{TrainingJobID: cj.TrainingJobID, Status: cj.Status, Version: cj.Version}
			fmt.Fprintf(stderr, "preference %s\n", preference)
		case *file != "":
			job, err = trainUpload(ctx, tr, *file, &client.UploadOptions{PromptColumn: *promptColumn, Minimize: *minimize, LLMProviders: splitList(*llmProviders)})
		default:
			job, err = tr.Train(ctx, urls...)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "training job %s %s (version %s)\n", job.TrainingJobID, job.Status, job.Version)
		if *noWait {
			fmt.Fprintln(stdout, cmp.Or(preference, job.TrainingJobID)) // what the caller routes with, else follows
			return nil
		}
	}
	p := newProgress(stderr, isTerminal(stderr))
	var last *client.TrainingStatus
	for st, err := range tr.Watch(ctx, *pollEvery) {
		if err != nil {
			p.finish()
			interruptedHint(ctx, stderr, "train", tr.JobID())
			return err
		}
		last = st
		detail := ""
		if st.ModelID != "" {
			detail = "model " + st.ModelID
		}
		frac := -1.0
		if st.Done() {
			frac = 1
		}
		p.set(st.Status, detail, frac)
	}
	p.finish()
	if last.Status == client.TrainFailed {
		return fmt.Errorf("training job %s failed: %s", last.TrainingJobID, last.ErrorMessage)
	}
	m, err := tr.Model(ctx)
	if err != nil {
		return err
	}
	if cf.jsonOut {
		out := map[string]any{"job": last, "model": m}
		if preference != "" {
			out["preference_id"] = preference
		}
		return printJSON(stdout, out)
	}
	writeRouterSummary(stdout, last, m)
	if preference != "" {
		fmt.Fprintf(stdout, "Preference  %s  (route with select --preference-id %s)\n", preference, preference)
	}
	return nil
}

// trainCustomRouter uploads the joint CSV at path to /v2/pzn/trainCustomRouter (switchyard
// train --custom-router / --preference-id).
func trainCustomRouter(ctx context.Context, tr *client.RouterTrainer, path, promptColumn string, opts *client.CustomRouterOptions) (*client.CustomRouterJob, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--file: %w", err)
	}
	defer f.Close()
	return tr.TrainCustomRouter(ctx, filepath.Base(path), f, promptColumn, opts)
}

// trainUpload uploads the local dataset file path (switchyard train --file).
func trainUpload(ctx context.Context, tr *client.RouterTrainer, path string, opts *client.UploadOptions) (*client.TrainingJob, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--file: %w", err)
	}
	defer f.Close()
	return tr.TrainUpload(ctx, filepath.Base(path), f, opts)
}

func runPredict(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("predict", "predict --model ID [flags] TEXT...", stderr)
	cf := addClientFlags(fs)
	modelID := fs.String("model", "", "router model id (from switchyard train)")
	file := fs.String("file", "", "read inputs from this file, one per line (- for stdin)")
	top := fs.Int("top", 3, "how many ranked models to show per input")
	texts, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if *modelID == "" {
		fs.Usage()
		return errors.New("--model is required")
	}
	if *top < 1 {
		return fmt.Errorf("--top must be at least 1, got %d", *top)
	}
	if *file != "" {
		more, err := readLines(*file)
		if err != nil {
			return err
		}
		texts = append(texts, more...)
	}
	if len(texts) == 0 {
		return errors.New("give at least one text to route (arguments or --file)")
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	tr := c.RouterTrainer()
	tr.UseModel(*modelID)
	res, err := tr.Predict(ctx, texts)
	if err != nil {
		return err
	}
	if cf.jsonOut {
		return printJSON(stdout, res)
	}
	writePredictions(stdout, texts, res, *top)
	return nil
}

func readLines(name string) ([]string, error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}

// modelList is a repeatable --model flag.
type modelList []string

func (m *modelList) String() string { return strings.Join(*m, ",") }
func (m *modelList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*m = append(*m, s)
		}
	}
	return nil
}

func runOptimize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("optimize", "optimize --bundle URL --model provider/model [flags]", stderr)
	cf := addClientFlags(fs)
	bundle := fs.String("bundle", "", "public URL of the ZIP bundle (agent.py, eval.py, dataset.json)")
	var models modelList
	fs.Var(&models, "model", "target model as provider/model (repeat or comma-separate for several)")
	iters := fs.Int("iterations", 0, "iterations per target model, 1-50 (server default 15)")
	overall := fs.Int("timeout", 0, "overall job timeout in seconds, 300-7200 (server default 3600)")
	llmTimeout := fs.Int("llm-timeout", 0, "per LLM call timeout in seconds, 30-600 (server default 300)")
	sandboxTimeout := fs.Int("sandbox-timeout", 0, "per sandbox run timeout in seconds, 60-1800 (server default 600)")
	pollEvery := fs.Duration("poll", 5*time.Second, "how often to poll the job's status")
	noWait := fs.Bool("no-wait", false, "submit the job and print its id without waiting")
	jobID := fs.String("job", "", "follow an existing optimization job instead of submitting one")
	cancel := fs.Bool("cancel", false, "with --job: cancel that job")
	saveAgent := fs.String("save-agent", "", "write the best agent.py to this file once the job ends (with several --model, one file each: the model is added before the extension)")
	var seed *uint64
	fs.Func("seed", "seed of the job's 70/30 split and minibatch draws, 0 to 2^64-1 (server default 42); the same bundle and seed give the same split", func(v string) error {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("must be an integer from 0 to %d", uint64(math.MaxUint64))
		}
		seed = &n
		return nil
	})
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("unexpected arguments %q (the bundle is given with --bundle)", rest)
	}
	if *jobID == "" && (*bundle == "" || len(models) == 0) {
		fs.Usage()
		return errors.New("--bundle and --model are required (or --job to follow a job)")
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	o := c.AgentOptimizer()
	if *jobID != "" {
		o.UseJob(*jobID)
		if *cancel {
			st, err := o.Cancel(ctx)
			if err != nil {
				return err
			}
			switch {
			case st.Done():
				fmt.Fprintf(stdout, "job %s %s: %s\n", o.JobID(), st.Status, st.ErrorMessage)
			default: // still stopping (or running on another worker)
				fmt.Fprintf(stdout, "job %s %s: cancelling; it ends interrupted (follow it with --job %s)\n", o.JobID(), st.Status, o.JobID())
			}
			return nil
		}
	} else {
		job, err := o.Submit(ctx, &client.OptimizeRequest{
			InputURL: *bundle, TargetModels: models, NIterations: *iters,
			OverallTimeoutSeconds: *overall, LLMCallTimeoutSeconds: *llmTimeout, SandboxTimeoutSeconds: *sandboxTimeout,
			Seed: seed,
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "optimization job %s %s (version %s)\n", job.JobID, job.Status, job.Version)
		if *noWait {
			fmt.Fprintln(stdout, job.JobID)
			return nil
		}
	}
	p := newProgress(stderr, isTerminal(stderr))
	var last *client.OptimizationStatus
	for st, err := range o.Watch(ctx, *pollEvery) {
		if err != nil {
			p.finish()
			interruptedHint(ctx, stderr, "optimize", o.JobID())
			return err
		}
		last = st
		frac, detail := optimizeProgress(st)
		p.set(st.Status, detail, frac)
	}
	p.finish()
	if last.Status == client.OptimizeFailed {
		return fmt.Errorf("optimization job %s failed: %s", last.JobID, last.ErrorMessage)
	}
	res, err := o.Results(ctx)
	if err != nil {
		return err
	}
	if cf.jsonOut {
		if err := printJSON(stdout, res); err != nil {
			return err
		}
	} else {
		writeOptimizationSummary(stdout, last, res)
	}
	if *saveAgent != "" {
		if err := saveBestAgents(ctx, o, res, *saveAgent, stderr); err != nil {
			return err
		}
	}
	if last.Status == client.OptimizeInterrupted {
		return fmt.Errorf("optimization job %s was interrupted: %s (the best result so far is shown above)", last.JobID, last.ErrorMessage)
	}
	return nil
}

// saveBestAgents writes the best agent.py of each result to path: as is for one result,
// else with the model added before the extension (agent.openai_gpt-4o-mini.py; see
// agentFileNames). A result without agent_code_url (the job ended before its baseline) is
// skipped with a note.
func saveBestAgents(ctx context.Context, o *client.AgentOptimizer, res *client.OptimizationResults, path string, stderr io.Writer) error {
	models := make([]string, len(res.Results))
	for i := range res.Results {
		models[i] = res.Results[i].Model
	}
	names := agentFileNames(path, models)
	for i := range res.Results {
		r := &res.Results[i]
		if r.AgentCodeURL == "" {
			fmt.Fprintf(stderr, "no best agent.py for %s (the job ended before its baseline)\n", r.Model)
			continue
		}
		code, err := o.AgentCode(ctx, r)
		if err != nil {
			return fmt.Errorf("downloading the best agent.py of %s: %w", r.Model, err)
		}
		out := path
		if len(res.Results) > 1 {
			out = names[i]
		}
		if err := os.WriteFile(out, code, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "best agent.py of %s written to %s\n", r.Model, out)
	}
	return nil
}

// modelInFileName makes a model name part of a file name on every system: a path
// separator would put the file elsewhere, and on Windows a ':' (ollama/llama3:8b) would
// write an NTFS stream of another file, the other characters (control characters too)
// not being allowed at all.
func modelInFileName(model string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r < 0x20 || r == 0x7f, strings.ContainsRune(`/\:*?"<>|`, r):
			return '_'
		}
		return r
	}, model)
}

// agentFileNames are where --save-agent path puts the best agent.py of each of models when
// the job had several: the model added before the extension (best.openai_gpt-4o-mini.py).
// Models whose names would be the same file (a/b and a_b; OpenAI/x and openai/x on the
// case-insensitive file systems of macOS and Windows) each get a short hash of their own
// name as well (best.a_b-1f2e3d4c.py), so that no file overwrites another.
func agentFileNames(path string, models []string) []string {
	ext := filepath.Ext(path)
	base := make([]string, len(models))
	same := map[string]map[string]bool{} // lower-cased name: the models written so
	for i, m := range models {
		base[i] = modelInFileName(m)
		k := strings.ToLower(base[i])
		if same[k] == nil {
			same[k] = map[string]bool{}
		}
		same[k][m] = true
	}
	out := make([]string, len(models))
	for i, m := range models {
		name := base[i]
		if len(same[strings.ToLower(name)]) > 1 {
			sum := sha256.Sum256([]byte(m))
			name += "-" + hex.EncodeToString(sum[:4])
		}
		out[i] = strings.TrimSuffix(path, ext) + "." + name + ext
	}
	return out
}

// optimizeProgress turns a status into the bar's fraction and a detail line.
func optimizeProgress(st *client.OptimizationStatus) (float64, string) {
	if st.Done() {
		return 1, ""
	}
	if st.Status != client.OptimizeRunning || st.NIterations <= 0 {
		return -1, ""
	}
	models := max(len(st.TargetModels), 1)
	frac := (float64(st.ModelsDone) + float64(st.CurrentIteration)/float64(st.NIterations)) / float64(models)
	detail := fmt.Sprintf("iteration %d/%d", st.CurrentIteration, st.NIterations)
	if st.BaselineScore != nil && st.BestScore != nil {
		detail += fmt.Sprintf("  baseline %.3f  best %.3f", *st.BaselineScore, *st.BestScore)
	} else {
		detail += "  measuring the baseline"
	}
	if st.CurrentModel != "" {
		detail += "  " + st.CurrentModel
		if models > 1 {
			detail += fmt.Sprintf(" (%d/%d)", st.ModelsDone+1, models)
		}
	}
	return min(frac, 1), detail
}

// runSelect is `switchyard select`: the candidates as -m flags with the prompt from
// --prompt, the arguments or stdin; or, without -m, the spec's JSON request from stdin or
// --file, whose tradeoff, preference_id, max_model_depth and previous_session the flags
// of those names replace. It prints the choice, the ranking and any notice (or the JSON
// answer with --json).
func runSelect(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("select", "select -m provider/model -m ... [--prompt TEXT | PROMPT... | prompt on stdin] [--tradeoff cost|latency] [--preference-id ID] [--max-model-depth N]\n       switchyard select [--file request.json] [flags]  (the JSON request on stdin by default)", stderr)
	cf := addClientFlags(fs)
	file := fs.String("file", "", "read the JSON request from this file instead of stdin (without -m)")
	var models modelList
	fs.Var(&models, "m", "a candidate, provider/model (or a name without a slash); repeat or comma-separate for several")
	fs.Var(&models, "model", "same as -m")
	prompt := fs.String("prompt", "", "with -m: the user message (else the arguments, else stdin)")
	system := fs.String("system", "", "with -m: a system message before the prompt")
	tradeoff := fs.String("tradeoff", "", "cost or latency: the cheapest (fastest) candidate within the quality tolerance of the best")
	preferenceID := fs.String("preference-id", "", "a preference (pref_...) or trained router model (rm_...) to rank with")
	depth := fs.Int("max-model-depth", 0, "rank at most this many candidates (at least 1; default all)")
	previous := fs.String("previous-session", "", "a session id from an earlier selection, to link them")
	words, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch *tradeoff {
	case "cost", "latency":
	case "":
		// --tradeoff "" (an unset shell variable) would send "tradeoff": "" with a JSON
		// request; without the flag selection ranks by quality, so say so.
		if set["tradeoff"] {
			return &usageError{err: errors.New("--tradeoff is empty: give cost or latency, or leave the flag out to rank by quality")}
		}
	default:
		return &usageError{err: fmt.Errorf("--tradeoff must be cost or latency (got %q)", *tradeoff)}
	}
	// As for --tradeoff: an empty id (an unset shell variable) would send "" with a JSON
	// request (and be dropped with -m), where leaving the flag out is meant.
	if set["preference-id"] && *preferenceID == "" {
		return &usageError{err: errors.New("--preference-id is empty: give a preference (pref_...) or trained router (rm_...) id, or leave the flag out")}
	}
	if set["previous-session"] && *previous == "" {
		return &usageError{err: errors.New("--previous-session is empty: give the session_id of an earlier selection, or leave the flag out")}
	}
	if set["max-model-depth"] && *depth < 1 {
		return &usageError{err: fmt.Errorf("--max-model-depth must be at least 1 (got %d)", *depth)}
	}
	var body any
	if len(models) > 0 {
		if set["file"] {
			return &usageError{err: errors.New("--file and -m do not go together: the request is either JSON or flags")}
		}
		req, err := selectRequestFromFlags(models, *prompt, *system, words, stdin)
		if err != nil {
			return err
		}
		req.Tradeoff, req.PreferenceID, req.PreviousSession = *tradeoff, *preferenceID, *previous
		if set["max-model-depth"] {
			req.MaxModelDepth = depth
		}
		body = req
	} else {
		if len(words) > 0 {
			return fmt.Errorf("unexpected arguments %q (the request is read from stdin or --file; give candidates with -m to pass the prompt as arguments)", words)
		}
		if set["prompt"] || set["system"] {
			return &usageError{err: errors.New("--prompt and --system go with -m; a JSON request carries its own messages")}
		}
		raw, err := readSelectJSON(*file, stdin)
		if err != nil {
			return err
		}
		over := map[string]any{}
		if set["tradeoff"] {
			over["tradeoff"] = *tradeoff
		}
		if set["preference-id"] {
			over["preference_id"] = *preferenceID
		}
		if set["max-model-depth"] {
			over["max_model_depth"] = *depth
		}
		if set["previous-session"] {
			over["previous_session"] = *previous
		}
		if raw, err = overrideJSON(raw, over); err != nil {
			return err
		}
		body = json.RawMessage(raw)
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	res, err := c.ModelSelectRaw(ctx, body)
	if err != nil {
		return err
	}
	if cf.jsonOut {
		return printJSON(stdout, res)
	}
	writeSelection(stdout, res)
	return nil
}

// selectRequestFromFlags builds a model selection request from -m candidates and the
// prompt: --prompt, else the arguments joined by spaces, else stdin's text.
func selectRequestFromFlags(models []string, prompt, system string, words []string, stdin io.Reader) (*client.ModelSelectRequest, error) {
	switch {
	case prompt != "" && len(words) > 0:
		return nil, &usageError{err: fmt.Errorf("give the prompt once: --prompt or arguments, not both (arguments %q)", words)}
	case prompt == "" && len(words) > 0:
		prompt = strings.Join(words, " ")
	case prompt == "":
		b, err := io.ReadAll(io.LimitReader(stdin, 32<<20))
		if err != nil {
			return nil, fmt.Errorf("read the prompt from stdin: %w", err)
		}
		prompt = strings.TrimSpace(string(b))
	}
	if strings.TrimSpace(prompt) == "" {
		return nil, &usageError{err: errors.New("the prompt is empty: give it with --prompt, as arguments or on stdin")}
	}
	req := &client.ModelSelectRequest{}
	if system != "" {
		req.Messages = append(req.Messages, client.Message{Role: "system", Content: system})
	}
	req.Messages = append(req.Messages, client.Message{Role: "user", Content: prompt})
	for _, m := range models {
		req.LLMProviders = append(req.LLMProviders, candidate(m))
	}
	return req, nil
}

// readSelectJSON reads the JSON model selection request from file ("" or "-": stdin).
func readSelectJSON(file string, stdin io.Reader) ([]byte, error) {
	var body []byte
	var err error
	if file != "" && file != "-" {
		body, err = os.ReadFile(file)
	} else {
		body, err = io.ReadAll(io.LimitReader(stdin, 32<<20))
	}
	if err != nil {
		return nil, err
	}
	if !json.Valid(body) {
		return nil, errors.New("the request is not valid JSON (see the model selection request in the README; or give candidates with -m and the prompt with --prompt)")
	}
	return body, nil
}

// overrideJSON sets over's members in the JSON object raw (the flags given win over the
// request's fields); raw is returned as it is when over is empty.
func overrideJSON(raw []byte, over map[string]any) ([]byte, error) {
	if len(over) == 0 {
		return raw, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, errors.New("the request must be a JSON object for --tradeoff, --preference-id, --max-model-depth or --previous-session to apply to it")
	}
	for k, v := range over {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		obj[k] = b
	}
	return json.Marshal(obj)
}
