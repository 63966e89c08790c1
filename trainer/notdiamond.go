package trainer

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// FormatNotDiamond is Not Diamond's joint CSV, the file the notdiamond Python SDK's
// CustomRouter.fit uploads: one row per prompt, a prompt column, and per model the columns
// "<provider>/<model>/score" (a real number) and optionally "<provider>/<model>/response".
// Read it with [ParseNotDiamondCSV].
const FormatNotDiamond Format = "notdiamond"

// NotDiamondCSV configures the reading of a [FormatNotDiamond] file; its zero value is
// not usable (PromptColumn is required).
type NotDiamondCSV struct {
	// PromptColumn names the column holding the prompts (the SDK's prompt_column).
	PromptColumn string `json:"prompt_column"`
	// Minimize says lower scores are better (latency, cost): the SDK's maximize=False. The
	// zero value, higher is better, is the SDK's default.
	Minimize bool `json:"minimize,omitempty"`
	// Models, when given (the SDK's llm_providers, as "provider/model"), are the models
	// the router chooses among: each must have a "<model>/score" column, and the score
	// columns of other models are ignored. Empty: every score column's model.
	Models []string `json:"models,omitempty"`
}

// scoreSuffix and responseSuffix end the per-model columns of a joint CSV.
const (
	scoreSuffix    = "/score"
	responseSuffix = "/response"
)

// ParseNotDiamondCSV reads Not Diamond's joint CSV (see [FormatNotDiamond]) into records;
// name names the file in errors.
//
// Each row becomes a Record whose Problem is the prompt and whose Scores hold every model's
// score normalised into [0, 1]. The normalisation is min-max over the whole data set and
// over every model's score column together — one minimum and one maximum for all score
// cells — so that the models stay comparable (a model that always scores 9 of 10 stays
// better than one that scores 4, which a per-column scaling would hide): a score s becomes
// (s - min) / (max - min), or (max - s) / (max - min) with Minimize, so that 1 is always
// the best score seen and 0 the worst (scores whose range overflows a float64, such as
// ±1e308, are scaled without overflow). When every score cell holds the same value the
// scores say nothing about which model is better: every score becomes 1 (all equal).
// Scores are real numbers in any range (0-10 ratings, 0-1 correctness, milliseconds of
// latency); the cells True and False, which pandas writes for booleans, read as 1 and 0.
//
// CorrectModels are the models with the row's best score, ties kept, sorted by name —
// except on a row where that best is the worst score of the whole data set (normalised
// 0: every model failed the prompt): such a row has no correct model, as a records file's
// row whose scores are all 0, and its scores still teach the router's per-model quality
// estimates that no model answers prompts like it.
//
// Bad options are *ValidationError naming the field: prompt_column when it is empty or not
// a column of the header, llm_providers for a listed model without a score column (the
// message names the missing column) or more than MaxClasses models. A header with score
// columns for more than MaxClasses models and no llm_providers is a *DatasetError naming
// line 1. Bad data is a *DatasetError naming the line and the
// column: an empty prompt, an empty score cell (pandas writes NaN so), a score that is not
// a number, NaN or an infinity, a row with more fields than the header (an unquoted comma).
func ParseNotDiamondCSV(name string, data []byte, opts NotDiamondCSV) ([]Record, error) {
	prompt := strings.TrimSpace(opts.PromptColumn)
	if prompt == "" {
		return nil, invalid("prompt_column", "is required: the name of the column holding the prompts")
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &DatasetError{URL: name, Message: "file is empty"}
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, &DatasetError{URL: name, Row: "line 1", Message: "wrong format: cannot read the CSV header: " + err.Error()}
	}
	col := make(map[string]int, len(header))
	for i, h := range header {
		// Read as the cells are (validText): the score columns name the models, which a
		// request's llm_providers and the records saved as JSON spell with U+FFFD.
		header[i] = validText(h)
		h = strings.TrimSpace(header[i])
		if _, dup := col[h]; dup && h != "" {
			return nil, &DatasetError{URL: name, Row: "line 1", Message: fmt.Sprintf("column %q appears twice in the header", h)}
		}
		col[h] = i
	}
	pi, ok := col[prompt]
	if !ok {
		return nil, invalid("prompt_column", "column %q is not in the header of %s (its columns: %s)", prompt, name, strings.Join(header, ", "))
	}

	// The models: the listed ones, else every score column's.
	var models []string
	if len(opts.Models) > 0 {
		for i, m := range opts.Models {
			m = strings.TrimSpace(m)
			if !ValidModelName(m) {
				return nil, invalid(fmt.Sprintf("llm_providers[%d]", i), "%q is not a provider/model name", m)
			}
			if _, ok := col[m+scoreSuffix]; !ok {
				return nil, invalid("llm_providers", "model %s has no score column: the header of %s lacks the column %q", m, name, m+scoreSuffix)
			}
			if !slices.Contains(models, m) {
				models = append(models, m)
			}
		}
	} else {
		for _, h := range header {
			h = strings.TrimSpace(h)
			if m, ok := strings.CutSuffix(h, scoreSuffix); ok {
				if !ValidModelName(m) {
					return nil, &DatasetError{URL: name, Row: "line 1", Message: fmt.Sprintf(
						"column %q: %q is not a provider/model name (score columns are named <provider>/<model>/score)", h, m)}
				}
				models = append(models, m)
			}
		}
		for _, h := range header {
			h = strings.TrimSpace(h)
			if m, ok := strings.CutSuffix(h, responseSuffix); ok && !slices.Contains(models, m) {
				return nil, &DatasetError{URL: name, Row: "line 1", Message: fmt.Sprintf(
					"column %q has no score column beside it: the header lacks %q", h, m+scoreSuffix)}
			}
		}
		if len(models) == 0 {
			return nil, &DatasetError{URL: name, Row: "line 1", Message: fmt.Sprintf(
				"no score columns: a Not Diamond joint CSV has a column <provider>/<model>/score per model (header: %s)", strings.Join(header, ","))}
		}
	}
	// A router chooses among at most MaxClasses models (the job fails beyond), and every
	// row holds a score per model: refuse from the header rather than read every row.
	if len(models) > MaxClasses {
		if len(opts.Models) > 0 {
			return nil, invalid("llm_providers", "lists %d models; a router chooses among at most %d", len(models), MaxClasses)
		}
		return nil, &DatasetError{URL: name, Row: "line 1", Message: fmt.Sprintf(
			"the header has score columns for %d models; a router chooses among at most %d (list the ones to route among in llm_providers)", len(models), MaxClasses)}
	}
	sc := make([]int, len(models))
	for i, m := range models {
		sc[i] = col[m+scoreSuffix]
	}
	need := slices.Max(append(slices.Clone(sc), pi))

	type row struct {
		prompt, where string
		scores        []float64
	}
	var rows []row
	lo, hi := math.Inf(1), math.Inf(-1)
	for {
		fields, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			where := "a row after line 1"
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				where = fmt.Sprintf("line %d", pe.Line)
			}
			return nil, &DatasetError{URL: name, Row: where, Message: "wrong format: bad CSV: " + err.Error()}
		}
		line, _ := cr.FieldPos(0)
		where := fmt.Sprintf("line %d", line)
		if len(fields) == 1 && strings.TrimSpace(fields[0]) == "" {
			continue
		}
		if len(fields) <= need {
			return nil, &DatasetError{URL: name, Row: where, Message: fmt.Sprintf("has %d fields, the header has %d", len(fields), len(header))}
		}
		if extra := fields[min(len(header), len(fields)):]; strings.TrimSpace(strings.Join(extra, "")) != "" {
			// An unquoted comma in a prompt or a response: the later cells sit in the wrong
			// columns, and a score read from them would be silently wrong.
			return nil, &DatasetError{URL: name, Row: where, Message: fmt.Sprintf(
				"has %d fields, the header has %d (a cell holding a comma must be quoted)", len(fields), len(header))}
		}
		if strings.TrimSpace(fields[pi]) == "" {
			return nil, &DatasetError{URL: name, Row: where, Message: fmt.Sprintf("column %q: the prompt is empty", prompt)}
		}
		// A copy: encoding/csv slices a row's fields from one string, and the responses,
		// most of a joint CSV, would otherwise stay in memory with the prompt while the job
		// trains.
		// Invalid UTF-8 is read as U+FFFD, as the records readers read it (validText).
		r := row{prompt: strings.Clone(validText(fields[pi])), where: where, scores: make([]float64, len(models))}
		for i, c := range sc {
			v, err := parseScore(fields[c])
			if err != nil {
				return nil, &DatasetError{URL: name, Row: where, Message: fmt.Sprintf("column %q: %v", strings.TrimSpace(header[c]), err)}
			}
			r.scores[i] = v
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		rows = append(rows, r)
		if len(rows) > MaxRows {
			return nil, &DatasetError{URL: name, Message: fmt.Sprintf("too many rows: more than %d; at most %d rows are allowed per training job", MaxRows, MaxRows)}
		}
	}
	if len(rows) == 0 {
		return nil, &DatasetError{URL: name, Message: "file has no records"}
	}

	// Scores near ±math.MaxFloat64 overflow hi - lo (+Inf, and then Inf/Inf = NaN): the
	// range is then taken on halves, which cannot overflow and give the same ratio.
	top, bottom, span := hi, lo, hi-lo
	halved := math.IsInf(span, 0)
	if halved {
		top, bottom = hi/2, lo/2
		span = top - bottom
	}
	norm := func(v float64) float64 {
		if hi == lo {
			return 1
		}
		if halved {
			v /= 2
		}
		x := (v - bottom) / span
		if opts.Minimize {
			x = (top - v) / span
		}
		return math.Min(math.Max(x, 0), 1)
	}
	recs := make([]Record, 0, len(rows))
	for _, r := range rows {
		rec := Record{Problem: r.prompt, Scores: make(map[string]float64, len(models)), Source: name + ": " + r.where}
		best := 0.0
		for i, m := range models {
			s := norm(r.scores[i])
			rec.Scores[m] = s
			best = math.Max(best, s)
		}
		if best > 0 {
			for m, s := range rec.Scores {
				if s == best {
					rec.CorrectModels = append(rec.CorrectModels, m)
				}
			}
			slices.Sort(rec.CorrectModels)
		}
		if err := checkRecord(&rec); err != nil {
			return nil, &DatasetError{URL: name, Row: r.where, Message: err.Error()}
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// parseScore reads one score cell: a finite real number, or True/False (1/0).
func parseScore(cell string) (float64, error) {
	cell = strings.TrimSpace(cell)
	switch strings.ToLower(cell) {
	case "":
		return 0, errors.New("the score is missing (an empty cell; pandas writes NaN as one)")
	case "true":
		return 1, nil
	case "false":
		return 0, nil
	}
	v, err := strconv.ParseFloat(cell, 64)
	if err != nil {
		return 0, fmt.Errorf("the score %q is not a number", cell)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("the score %q is not a finite number", cell)
	}
	return v, nil
}
