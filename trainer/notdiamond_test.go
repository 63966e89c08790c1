package trainer

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// wideCSV writes Not Diamond's joint CSV as the Python SDK does (pandas to_csv, index=False):
// the prompt column, then per model <model>/response and <model>/score.
func wideCSV(t *testing.T, promptCol string, models []string, prompts []string, score func(row int, model string) string) []byte {
	t.Helper()
	var sb strings.Builder
	w := csv.NewWriter(&sb)
	header := []string{promptCol}
	for _, m := range models {
		header = append(header, m+"/response", m+"/score")
	}
	if err := w.Write(header); err != nil {
		t.Fatal(err)
	}
	for i, p := range prompts {
		row := []string{p}
		for _, m := range models {
			row = append(row, "an answer, by "+m, score(i, m))
		}
		if err := w.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	return []byte(sb.String())
}

func TestParseNotDiamondCSVNormalisesScores(t *testing.T) {
	models := []string{"openai/gpt-4o", "anthropic/claude-3-5-sonnet-20240620", "togetherai/meta-llama/Llama-3-70b"}
	scores := [][]string{
		{"10", "4", "7"},       // gpt best
		{"2", "8.5", "8.5"},    // tie
		{"0", "0", "0"},        // every model at the data set's worst: no correct model
		{"True", "5", "False"}, // booleans read as 1 and 0
	}
	prompts := []string{"q one", "q two", "q three", "q four"}
	data := wideCSV(t, "question", models, prompts, func(r int, m string) string { return scores[r][slices.Index(models, m)] })

	recs, err := ParseNotDiamondCSV("train.csv", data, NotDiamondCSV{PromptColumn: "question"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	// min 0, max 10 over every score cell.
	want := []map[string]float64{
		{models[0]: 1, models[1]: 0.4, models[2]: 0.7},
		{models[0]: 0.2, models[1]: 0.85, models[2]: 0.85},
		{models[0]: 0, models[1]: 0, models[2]: 0},
		{models[0]: 0.1, models[1]: 0.5, models[2]: 0},
	}
	wantCorrect := [][]string{{models[0]}, {models[1], models[2]}, nil, {models[1]}}
	for i, r := range recs {
		if r.Problem != prompts[i] {
			t.Errorf("row %d: problem %q", i, r.Problem)
		}
		for m, w := range want[i] {
			if math.Abs(r.Scores[m]-w) > 1e-12 {
				t.Errorf("row %d: score of %s = %v, want %v", i, m, r.Scores[m], w)
			}
		}
		if !slices.Equal(r.CorrectModels, wantCorrect[i]) {
			t.Errorf("row %d: correct models %v, want %v", i, r.CorrectModels, wantCorrect[i])
		}
		if !strings.HasPrefix(r.Source, "train.csv: line ") {
			t.Errorf("row %d: source %q", i, r.Source)
		}
	}

	// Lower is better (latency in ms): the smallest value is 1, the largest 0.
	lat := wideCSV(t, "p", models[:2], []string{"a", "b"}, func(r int, m string) string {
		return map[string]string{"a" + models[0]: "100", "a" + models[1]: "300", "b" + models[0]: "500", "b" + models[1]: "200"}[prompts2(r)+m]
	})
	recs, err = ParseNotDiamondCSV("lat.csv", lat, NotDiamondCSV{PromptColumn: "p", Minimize: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := recs[0].Scores; got[models[0]] != 1 || got[models[1]] != 0.5 {
		t.Errorf("minimize row a: %v", got)
	}
	if got := recs[1].Scores; got[models[0]] != 0 || got[models[1]] != 0.75 || !slices.Equal(recs[1].CorrectModels, []string{models[1]}) {
		t.Errorf("minimize row b: %v %v", got, recs[1].CorrectModels)
	}

	// A constant score column set says nothing: every model equal, every model correct.
	flat := wideCSV(t, "p", models[:2], []string{"a", "b"}, func(int, string) string { return "3" })
	recs, err = ParseNotDiamondCSV("flat.csv", flat, NotDiamondCSV{PromptColumn: "p"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Scores[models[0]] != 1 || r.Scores[models[1]] != 1 || len(r.CorrectModels) != 2 {
			t.Errorf("constant scores: %v %v", r.Scores, r.CorrectModels)
		}
	}

	// llm_providers picks the models: other score columns are ignored.
	recs, err = ParseNotDiamondCSV("train.csv", data, NotDiamondCSV{PromptColumn: "question", Models: []string{models[1], models[2]}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := recs[0].Scores[models[0]]; ok || len(recs[0].Scores) != 2 {
		t.Errorf("listed models only: %v", recs[0].Scores)
	}
}

// fetchLimit100 is a fetcher whose bodies hold at most 100 bytes.
var fetchLimit100 = fetch.Fetcher{AllowLocal: true, MaxBytes: 100}

func prompts2(r int) string { return []string{"a", "b"}[r] }

func TestParseNotDiamondCSVErrorsNameRowAndColumn(t *testing.T) {
	const header = "prompt,openai/gpt-4o/response,openai/gpt-4o/score,mistral/mistral-large/score\n"
	cases := []struct {
		name, data  string
		opts        NotDiamondCSV
		field       string // a *ValidationError naming it, else a *DatasetError
		wantInError []string
	}{
		{"no prompt_column", header + "hi,x,1,2\n", NotDiamondCSV{}, "prompt_column", []string{"prompt_column"}},
		{"prompt column absent", header + "hi,x,1,2\n", NotDiamondCSV{PromptColumn: "question"}, "prompt_column", []string{`"question"`, "not in the header"}},
		{"listed model without score column", header + "hi,x,1,2\n",
			NotDiamondCSV{PromptColumn: "prompt", Models: []string{"openai/gpt-4o", "anthropic/claude-3-haiku"}}, "llm_providers",
			[]string{`"anthropic/claude-3-haiku/score"`}},
		{"listed model not provider/model", header + "hi,x,1,2\n", NotDiamondCSV{PromptColumn: "prompt", Models: []string{"gpt-4o"}}, "llm_providers[0]", []string{`"gpt-4o"`}},
		{"empty prompt", header + "hi,x,1,2\n ,x,1,2\n", NotDiamondCSV{PromptColumn: "prompt"}, "", []string{"line 3", `"prompt"`, "empty"}},
		{"non-numeric score", header + "hi,x,1,2\nho,x,good,2\n", NotDiamondCSV{PromptColumn: "prompt"}, "", []string{"line 3", `"openai/gpt-4o/score"`, `"good" is not a number`}},
		{"NaN", header + "hi,x,1,NaN\n", NotDiamondCSV{PromptColumn: "prompt"}, "", []string{"line 2", `"mistral/mistral-large/score"`, "not a finite number"}},
		{"infinity", header + "hi,x,-inf,1\n", NotDiamondCSV{PromptColumn: "prompt"}, "", []string{"line 2", `"openai/gpt-4o/score"`, "not a finite number"}},
		{"empty score (pandas NaN)", header + "hi,x,,1\n", NotDiamondCSV{PromptColumn: "prompt"}, "", []string{"line 2", `"openai/gpt-4o/score"`, "missing"}},
		{"no score columns", "prompt,answer\nhi,x\n", NotDiamondCSV{PromptColumn: "prompt"}, "", []string{"line 1", "no score columns"}},
		{"response without score", "prompt,a/b/response,c/d/score\nhi,x,1\n", NotDiamondCSV{PromptColumn: "prompt"}, "", []string{`"a/b/score"`}},
		{"bad model in column", "prompt,gpt4/score\nhi,1\n", NotDiamondCSV{PromptColumn: "prompt"}, "", []string{`"gpt4/score"`, "provider/model"}},
		{"short row", header + "hi,x\n", NotDiamondCSV{PromptColumn: "prompt"}, "", []string{"line 2", "fields"}},
		{"no rows", header, NotDiamondCSV{PromptColumn: "prompt"}, "", []string{"no records"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseNotDiamondCSV("data.csv", []byte(c.data), c.opts)
			if err == nil {
				t.Fatal("no error")
			}
			var ve *ValidationError
			var de *DatasetError
			if c.field != "" {
				if !errors.As(err, &ve) || ve.Field != c.field || !errors.Is(err, ErrInvalid) {
					t.Fatalf("error %v (%T), want a *ValidationError naming %s", err, err, c.field)
				}
			} else if !errors.As(err, &de) || !errors.Is(err, ErrDataset) || !strings.HasPrefix(err.Error(), "data.csv: ") {
				t.Fatalf("error %v (%T), want a *DatasetError naming data.csv", err, err)
			}
			for _, w := range c.wantInError {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// llmrouter9Path is a real routing data set: prompts of 14 benchmarks, each with the 0/1
// score of 9 models.
const llmrouter9Path = "../../shared/data/routing/llmrouter9_train.jsonl"

// TestNotDiamondCSVFromLLMRouter9 trains, through the service, a router from a few hundred
// real rows converted to Not Diamond's joint CSV (scores as 0-10 ratings), and checks that
// it ranks sensibly: its top pick is a correct model on the training rows far more often
// than a random pick, and at least as often as the best single model.
func TestNotDiamondCSVFromLLMRouter9(t *testing.T) {
	f, err := os.Open(llmrouter9Path)
	if err != nil {
		t.Skipf("the shared routing data is not here (%v): run with ../shared checked out beside the repository", err)
	}
	defer f.Close()
	type row struct {
		Problem string             `json:"problem"`
		Scores  map[string]float64 `json:"scores"`
		Task    string             `json:"task"`
	}
	var all []row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Problem) < 1500 { // keep the test quick: the long few-shot prompts add nothing here
			all = append(all, r)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// An even sample across the file (it is sorted by task).
	const n = 300
	var rows []row
	for i := 0; i < n; i++ {
		rows = append(rows, all[i*len(all)/n])
	}
	var models []string
	for m := range rows[0].Scores {
		models = append(models, m)
	}
	slices.Sort(models)
	prompts := make([]string, len(rows))
	for i, r := range rows {
		prompts[i] = r.Problem
	}
	data := wideCSV(t, "prompt", models, prompts, func(i int, m string) string {
		return strconv.FormatFloat(rows[i].Scores[m]*10, 'f', -1, 64)
	})
	providers, _ := json.Marshal(models)
	t.Logf("%d rows, %d models, %d bytes of CSV; llm_providers %s", len(rows), len(models), len(data), providers)

	st := memstore.New()
	s := newService(t, st)
	ctx := context.Background()
	job, err := s.SubmitUpload(ctx, "k", Upload{Filename: "joint.csv", ContentType: "text/csv", Data: data,
		Format: FormatNotDiamond, NotDiamond: NotDiamondCSV{PromptColumn: "prompt", Models: models}}, JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st1 := waitDone(t, s, "k", job.TrainingJobID)
	if st1.Status != StateCompleted {
		t.Fatalf("job %s: %s", st1.Status, st1.ErrorMessage)
	}
	if st1.Upload == nil || st1.Upload.Format != FormatNotDiamond || st1.Upload.Filename != "joint.csv" || st1.Upload.Bytes != len(data) {
		t.Errorf("status upload = %+v", st1.Upload)
	}
	if got := st1.TrainingConfig.Classes; !slices.Equal(got, models) {
		t.Errorf("classes %v, want %v", got, models)
	}

	hits, random, best := 0.0, 0.0, map[string]float64{}
	counted := 0
	for start := 0; start < len(prompts); start += MaxInputs {
		end := min(start+MaxInputs, len(prompts))
		resp, err := s.Predict(ctx, "k", st1.ModelID, prompts[start:end])
		if err != nil {
			t.Fatal(err)
		}
		for k, p := range resp.Predictions {
			r := rows[start+k]
			correct := 0
			for _, v := range r.Scores {
				if v == 1 {
					correct++
				}
			}
			if correct == 0 {
				continue // no model answers it: nothing to pick
			}
			counted++
			hits += r.Scores[p.TopModel]
			random += float64(correct) / float64(len(models))
			for m, v := range r.Scores {
				best[m] += v
			}
		}
	}
	bestSingle := 0.0
	for _, v := range best {
		bestSingle = max(bestSingle, v)
	}
	hit, rnd, single := hits/float64(counted), random/float64(counted), bestSingle/float64(counted)
	t.Logf("top-1 hit on %d answerable training rows: router %.3f, random %.3f, best single model %.3f", counted, hit, rnd, single)
	if hit < 1.5*rnd || hit < single {
		t.Errorf("the router's top-1 hit %.3f is not well above random (%.3f) and the best single model (%.3f)", hit, rnd, single)
	}
	if es, _ := st.List(ctx, store.TrainingUploads, store.ListOptions{}); len(es) != 0 {
		t.Errorf("%d upload pieces remain after the job ended", len(es))
	}
}

func TestSubmitUploadStoresDataForAnyProcessAndDeletesIt(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	// Prompts padded so that the file spans several store pieces.
	recs := syntheticRecords(300, 7)
	pad := strings.Repeat("lorem ipsum dolor sit amet ", 150)
	models := []string{topics[0].model, topics[1].model, topics[2].model}
	prompts := make([]string, len(recs))
	for i, r := range recs {
		prompts[i] = r.Problem + " " + pad
	}
	data := wideCSV(t, "text", models, prompts, func(i int, m string) string {
		if slices.Contains(recs[i].CorrectModels, m) {
			return "9"
		}
		return "2"
	})
	if len(data) <= UploadChunkSize {
		t.Fatalf("the test data (%d bytes) should span several pieces", len(data))
	}

	// A process that accepts the job but runs none (not started).
	a, err := New(st, WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	job, err := a.SubmitUpload(ctx, "k", Upload{Filename: "dir/joint.csv", Data: data, Format: FormatNotDiamond,
		NotDiamond: NotDiamondCSV{PromptColumn: "text"}}, JobOptions{ModelPrices: map[string]float64{models[0]: 5}})
	if err != nil {
		t.Fatal(err)
	}
	pieces, _ := st.List(ctx, store.TrainingUploads, store.ListOptions{Prefix: job.TrainingJobID + "/"})
	if want := (len(data) + UploadChunkSize - 1) / UploadChunkSize; len(pieces) != want {
		t.Fatalf("%d pieces stored, want %d", len(pieces), want)
	}
	st0, err := a.Status(ctx, "k", job.TrainingJobID)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(st0)
	if st0.Upload == nil || st0.Upload.Filename != "joint.csv" || strings.Contains(string(b), "lorem") {
		t.Errorf("status %s: want the upload described by name, without its content", b)
	}
	list, err := a.ListJobs(ctx, "k", ListOptions{})
	if err != nil || len(list.Data) != 1 {
		t.Fatalf("ListJobs = %+v, %v", list, err)
	}
	if b, _ := json.Marshal(list); strings.Contains(string(b), "lorem") {
		t.Errorf("the job listing holds the upload's content")
	}
	raw, _ := st.Get(ctx, store.TrainingJobs, job.TrainingJobID)
	var rec jobRecord
	if err := json.Unmarshal(raw, &rec); err != nil || len(rec.DataURLs) != 0 || rec.Upload == nil || rec.Upload.Format != FormatNotDiamond || strings.Contains(string(raw), "lorem") {
		t.Errorf("job record %s: want an upload description, no URL, no content", raw)
	}
	a.Close()

	// Another process on the same store runs it, reading the upload from the store.
	bsvc := newService(t, st)
	done := waitDone(t, bsvc, "k", job.TrainingJobID)
	if done.Status != StateCompleted {
		t.Fatalf("job %s: %s", done.Status, done.ErrorMessage)
	}
	if done.TrainingConfig.Rows != len(recs) {
		t.Errorf("rows %d, want %d", done.TrainingConfig.Rows, len(recs))
	}
	if pieces, _ := st.List(ctx, store.TrainingUploads, store.ListOptions{}); len(pieces) != 0 {
		t.Errorf("%d upload pieces remain after the job completed", len(pieces))
	}
	pred, err := bsvc.Predict(ctx, "k", done.ModelID, []string{"solve this integral and derivative equation", "write a haiku poem with rhyme"})
	if err != nil {
		t.Fatal(err)
	}
	if pred.Predictions[0].TopModel != topics[0].model || pred.Predictions[1].TopModel != topics[2].model {
		t.Errorf("predictions %+v", pred.Predictions)
	}
}

func TestUploadDeletedWithItsJob(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	s, err := New(st, WithLogger(quietLogger())) // not started: the jobs stay queued
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	data := []byte(asJSON(syntheticRecords(30, 3)))
	submit := func() string {
		job, err := s.SubmitUpload(ctx, "k", Upload{Filename: "r.json", Data: data}, JobOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return job.TrainingJobID
	}
	pieces := func(id string) int {
		es, err := st.List(ctx, store.TrainingUploads, store.ListOptions{Prefix: id + "/"})
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}

	// DeleteJob.
	id := submit()
	if pieces(id) != 1 {
		t.Fatalf("%d pieces stored", pieces(id))
	}
	if st0, _ := s.Status(ctx, "k", id); st0.Upload == nil || st0.Upload.Format != FormatJSON {
		t.Errorf("status upload %+v", st0.Upload)
	}
	if _, err := s.DeleteJob(ctx, "k", id); err != nil {
		t.Fatal(err)
	}
	if pieces(id) != 0 {
		t.Errorf("DeleteJob left %d pieces", pieces(id))
	}

	// Cancel of a queued job ends it: its upload goes.
	id = submit()
	if _, err := s.Cancel(ctx, "k", id); err != nil {
		t.Fatal(err)
	}
	if pieces(id) != 0 {
		t.Errorf("a cancelled job kept %d pieces", pieces(id))
	}

	// Cleanup removes pieces whose job is gone, keeps those of a queued job.
	kept := submit()
	if err := st.Put(ctx, store.TrainingUploads, uploadKey("tj_gone", 0), []byte("x")); err != nil {
		t.Fatal(err)
	}
	dry, err := s.CleanupDryRun(ctx)
	if err != nil || !slices.Equal(dry.UploadsRemoved, []string{"tj_gone"}) || pieces("tj_gone") != 1 {
		t.Fatalf("dry run %+v, %v", dry, err)
	}
	rep, err := s.Cleanup(ctx)
	if err != nil || !slices.Equal(rep.UploadsRemoved, []string{"tj_gone"}) {
		t.Fatalf("Cleanup = %+v, %v", rep, err)
	}
	if pieces("tj_gone") != 0 || pieces(kept) != 1 {
		t.Errorf("after Cleanup: orphan %d pieces, queued job %d", pieces("tj_gone"), pieces(kept))
	}
}

func TestSubmitUploadRefusals(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	s := newService(t, st, WithFetcher(&fetchLimit100))
	if got := s.MaxUploadBytes(); got != 100 {
		t.Fatalf("MaxUploadBytes = %d, want the fetcher's 100", got)
	}
	big := make([]byte, 101)
	cases := []struct {
		name  string
		up    Upload
		field string
		says  string
	}{
		{"too large", Upload{Filename: "a.csv", Data: big}, "upload", "at most 100"},
		{"empty", Upload{Filename: "a.csv"}, "upload", "empty"},
		{"bad row", Upload{Filename: "a.csv", Data: []byte("problem,correct_models\n,openai/x\n")}, "upload", "a.csv: line 2: problem is empty"},
		{"bad ND row", Upload{Filename: "nd.csv", Data: []byte("q,a/b/score\nhi,x\n"), Format: FormatNotDiamond, NotDiamond: NotDiamondCSV{PromptColumn: "q"}}, "upload", `line 2: column "a/b/score"`},
		{"ND model missing", Upload{Data: []byte("q,a/b/score\nhi,1\n"), Format: FormatNotDiamond, NotDiamond: NotDiamondCSV{PromptColumn: "q", Models: []string{"c/d"}}}, "llm_providers", `"c/d/score"`},
		{"unknown format", Upload{Data: []byte("x"), Format: "xml"}, "format", "xml"},
		{"declared format differs", Upload{Data: []byte(`[{"problem":"a","correct_models":["a/b"]}]`), Format: FormatCSV}, "format", "json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.SubmitUpload(ctx, "k", c.up, JobOptions{})
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != c.field || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("error %v, want a *ValidationError naming %s saying %q", err, c.field, c.says)
			}
		})
	}
	_, err := s.SubmitUpload(ctx, "k", Upload{Data: []byte("problem,correct_models\nhi,a/b\n")}, JobOptions{ModelPrices: map[string]float64{"a/b": -1}})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "model_prices") {
		t.Errorf("bad price: %v", err)
	}
	if es, _ := st.List(ctx, store.TrainingJobs, store.ListOptions{}); len(es) != 0 {
		t.Errorf("refused uploads stored %d jobs", len(es))
	}
	if es, _ := st.List(ctx, store.TrainingUploads, store.ListOptions{}); len(es) != 0 {
		t.Errorf("refused uploads stored %d pieces", len(es))
	}
}
