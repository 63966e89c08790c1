package trainer

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/switchyard-ai/switchyard/fetch"
)

// Record is one training row: a prompt and the models that answer it best.
type Record struct {
	// Problem is the prompt.
	Problem string `json:"problem"`
	// CorrectModels are the ideal models, each "provider/model", best first.
	CorrectModels []string `json:"correct_models"`
	// Scores optionally gives each model's score in [0, 1] for this prompt.
	Scores map[string]float64 `json:"scores,omitempty"`
	// Task optionally names the kind of prompt (the benchmark or workload it comes from,
	// such as "gsm8k" or "support-tickets"). With at least two tasks of
	// inference.MinTaskRows rows each, the router also learns each model's mean score per
	// task and blends it into its quality estimates (see inference.Example.Task).
	Task string `json:"task,omitempty"`
	// Source locates the row ("<url>: line 7") for error messages.
	Source string `json:"-"`
}

// Format is a dataset file format.
type Format string

// The dataset formats a training job reads.
const (
	FormatJSON  Format = "json"  // an array of records
	FormatJSONL Format = "jsonl" // one record per line
	FormatCSV   Format = "csv"   // header problem,correct_models[,scores][,task]
)

// modelPattern is "provider/model": a provider name, a slash, and a model name that may
// contain further slashes (e.g. "together/meta-llama/Llama-3-70b") but no spaces and no
// commas (the separator of a list of models).
var modelPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9._:@+-][^\s,]*$`)

// modelError says why m, named by field, is not a model name.
func modelError(field, m string) error {
	if strings.Contains(m, ",") {
		return fmt.Errorf("%s %q lists several models in one name; give each model its own entry", field, m)
	}
	return fmt.Errorf("%s %q is not in provider/model form", field, m)
}

// ValidModelName reports whether name has the provider/model form.
func ValidModelName(name string) bool { return modelPattern.MatchString(name) }

// DetectFormat picks the format of a dataset file from its content, using the URL's
// extension and the content type as hints: content starting with '[' is a JSON array,
// '{' is JSONL, anything else is CSV. A file announced as JSON whose content is not JSON
// is an error.
func DetectFormat(rawURL, contentType string, data []byte) (Format, error) {
	hint := formatHint(rawURL, contentType)
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(trimmed) == 0 {
		return "", &DatasetError{URL: rawURL, Message: "file is empty"}
	}
	switch trimmed[0] {
	case '[':
		return FormatJSON, nil
	case '{':
		return FormatJSONL, nil
	}
	if hint == FormatJSON || hint == FormatJSONL {
		return "", &DatasetError{URL: rawURL, Message: fmt.Sprintf(
			"wrong format: expected %s (from the file name or content type) but the content does not start with '[' or '{'", strings.ToUpper(string(hint)))}
	}
	if !utf8.Valid(trimmed[:min(len(trimmed), 4096)]) {
		return "", &DatasetError{URL: rawURL, Message: "wrong format: not a JSON, JSONL or CSV text file"}
	}
	return FormatCSV, nil
}

func formatHint(rawURL, contentType string) Format {
	if u, err := url.Parse(rawURL); err == nil {
		switch strings.ToLower(path.Ext(u.Path)) {
		case ".json":
			return FormatJSON
		case ".jsonl", ".ndjson":
			return FormatJSONL
		case ".csv":
			return FormatCSV
		}
	}
	switch {
	case strings.Contains(contentType, "ndjson"), strings.Contains(contentType, "jsonl"):
		return FormatJSONL
	case strings.Contains(contentType, "json"):
		return FormatJSON
	case strings.Contains(contentType, "csv"):
		return FormatCSV
	}
	return ""
}

// ParseDataset reads the records of one dataset file. rawURL names the file in errors and
// hints the format together with contentType. Each record is checked: the problem must be
// non-empty, every model must be provider/model and scores must be numbers in [0, 1]. The
// first broken rule is returned as a *DatasetError naming the file and row. Invalid UTF-8
// in a value is read as U+FFFD, one per invalid byte, in every format (encoding/json's
// reading of a JSON string); a CSV file whose first 4 KiB are not UTF-8 is refused as not a
// text file.
func ParseDataset(rawURL, contentType string, data []byte) ([]Record, error) {
	format, err := DetectFormat(rawURL, contentType, data)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var recs []Record
	switch format {
	case FormatJSON:
		recs, err = parseJSONArray(rawURL, data)
	case FormatJSONL:
		if inner, ok, werr := wrappedArray(rawURL, data); werr != nil {
			return nil, werr
		} else if ok {
			recs, err = parseJSONArray(rawURL, inner)
		} else {
			recs, err = parseJSONL(rawURL, data)
		}
	default:
		recs, err = parseCSV(rawURL, data)
	}
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, &DatasetError{URL: rawURL, Message: "file has no records"}
	}
	return recs, nil
}

// wrappedArray recognises a whole file that is one JSON object rather than JSONL (one record
// per line): an object whose only array member holds the records, as exports such as
// {"data": [...]} have, gives that array, whether the object spans lines or sits on one
// (as json.dumps and JSON.stringify write it); an object that is not a record and holds no
// such array is an error saying what shapes are read. An object with a record's field
// (problem, correct_models, scores or task, in any case, as records are decoded) is a
// record: JSONL, not wrapped.
func wrappedArray(rawURL string, data []byte) ([]byte, bool, error) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return nil, false, nil // several documents: JSONL
	}
	for k := range obj {
		// A record's field in any case: the record decoder matches names so (jsonRecord).
		if slices.ContainsFunc([]string{"problem", "correct_models", "scores", "task"}, func(f string) bool { return strings.EqualFold(k, f) }) {
			return nil, false, nil // a record, on one line or spread over lines: JSONL reports it
		}
	}
	var arrays []string
	for k, v := range obj {
		if t := bytes.TrimSpace(v); len(t) > 0 && t[0] == '[' {
			arrays = append(arrays, k)
		}
	}
	if len(arrays) == 1 {
		return obj[arrays[0]], true, nil
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return nil, false, &DatasetError{URL: rawURL, Message: fmt.Sprintf(
		"wrong format: the file is one JSON object (keys %s), not records; expected a JSON array of records, an object with one array of records (such as {\"data\": [...]}), JSONL (one record per line) or CSV", strings.Join(keys, ", "))}
}

// jsonRecord is the wire form of a record; fields are decoded loosely and checked by hand
// so that the message can name the field.
type jsonRecord struct {
	Problem       json.RawMessage `json:"problem"`
	CorrectModels json.RawMessage `json:"correct_models"`
	Scores        json.RawMessage `json:"scores"`
	Task          json.RawMessage `json:"task"`
}

func parseJSONArray(rawURL string, data []byte) ([]Record, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, &DatasetError{URL: rawURL, Row: jsonErrorLine(data, err), Message: "wrong format: not a valid JSON array of records: " + err.Error()}
	}
	recs := make([]Record, 0, len(raws))
	for i, raw := range raws {
		row := fmt.Sprintf("record %d", i+1)
		r, err := decodeJSONRecord(raw)
		if err != nil {
			return nil, &DatasetError{URL: rawURL, Row: row, Message: err.Error()}
		}
		r.Source = fetch.Redact(rawURL) + ": " + row
		if err := checkRecord(&r); err != nil {
			return nil, &DatasetError{URL: rawURL, Row: row, Message: err.Error()}
		}
		recs = append(recs, r)
	}
	return recs, nil
}

func parseJSONL(rawURL string, data []byte) ([]Record, error) {
	var recs []Record
	for n, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		row := fmt.Sprintf("line %d", n+1)
		if !json.Valid(line) {
			return nil, &DatasetError{URL: rawURL, Row: row, Message: "wrong format: not a JSON object (JSONL expects one record per line)"}
		}
		r, err := decodeJSONRecord(line)
		if err != nil {
			return nil, &DatasetError{URL: rawURL, Row: row, Message: err.Error()}
		}
		r.Source = fetch.Redact(rawURL) + ": " + row
		if err := checkRecord(&r); err != nil {
			return nil, &DatasetError{URL: rawURL, Row: row, Message: err.Error()}
		}
		recs = append(recs, r)
	}
	return recs, nil
}

func decodeJSONRecord(raw json.RawMessage) (Record, error) {
	var jr jsonRecord
	if err := json.Unmarshal(raw, &jr); err != nil {
		return Record{}, errors.New("wrong format: a record must be a JSON object with problem and correct_models")
	}
	var r Record
	if isNull(jr.Problem) {
		return r, errors.New("problem is missing")
	}
	if err := json.Unmarshal(jr.Problem, &r.Problem); err != nil {
		return r, errors.New("problem must be a string")
	}
	if !isNull(jr.CorrectModels) {
		var cell string
		if err := json.Unmarshal(jr.CorrectModels, &r.CorrectModels); err != nil {
			if json.Unmarshal(jr.CorrectModels, &cell) != nil {
				return r, errors.New("correct_models must be an array of strings")
			}
			r.CorrectModels = splitModels(cell)
		}
	} else if isNull(jr.Scores) {
		return r, errors.New("correct_models is missing")
	}
	if !isNull(jr.Scores) {
		if err := json.Unmarshal(jr.Scores, &r.Scores); err != nil {
			return r, errors.New(`scores must be an object of "provider/model": number`)
		}
	}
	if !isNull(jr.Task) {
		if err := json.Unmarshal(jr.Task, &r.Task); err != nil {
			return r, errors.New("task must be a string")
		}
	}
	return r, nil
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// jsonErrorLine turns a JSON syntax error's byte offset into "line N".
func jsonErrorLine(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset > 0 && se.Offset <= int64(len(data)) {
		return fmt.Sprintf("line %d", bytes.Count(data[:se.Offset], []byte("\n"))+1)
	}
	return ""
}

func splitModels(cell string) []string {
	cell = strings.TrimSpace(cell)
	if strings.HasPrefix(cell, "[") {
		var list []string
		if json.Unmarshal([]byte(cell), &list) == nil {
			return list
		}
		if list, ok := pythonList(cell); ok {
			return list
		}
	}
	var out []string
	for _, m := range strings.Split(cell, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	return out
}

// pythonList reads a cell holding a Python list of strings, ['a/x', 'b/y'], as pandas'
// DataFrame.to_csv writes a column of lists (Not Diamond's users build their data in
// pandas); ok is false for anything else, which is then read as comma-separated names.
func pythonList(cell string) (list []string, ok bool) {
	inner, found := strings.CutPrefix(cell, "[")
	if inner, found = strings.CutSuffix(inner, "]"); !found {
		return nil, false
	}
	if strings.TrimSpace(inner) == "" {
		return []string{}, true
	}
	for _, item := range strings.Split(inner, ",") {
		item = strings.TrimSpace(item)
		if len(item) < 2 || (item[0] != '\'' && item[0] != '"') || item[len(item)-1] != item[0] {
			return nil, false
		}
		item = item[1 : len(item)-1]
		if strings.ContainsAny(item, "'\"\\") {
			return nil, false
		}
		list = append(list, item)
	}
	return list, true
}

// validText is s with each byte that is not part of valid UTF-8 replaced by U+FFFD, as
// encoding/json reads a string holding one (so the JSON and JSONL readers do): a CSV cell
// gives the same text as the same value in a JSON file.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s { // an invalid byte is one utf8.RuneError, as in encoding/json
		b.WriteRune(r)
	}
	return b.String()
}

func parseCSV(rawURL string, data []byte) ([]Record, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, &DatasetError{URL: rawURL, Row: "line 1", Message: "wrong format: cannot read the CSV header: " + err.Error()}
	}
	col := map[string]int{}
	for i, h := range header {
		header[i] = validText(h) // read as the cells are
		h = strings.ToLower(strings.TrimSpace(header[i]))
		if _, dup := col[h]; dup {
			switch h {
			case "problem", "correct_models", "scores", "task": // read: which one is meant?
				return nil, &DatasetError{URL: rawURL, Row: "line 1", Message: fmt.Sprintf("column %q appears twice in the header", h)}
			}
			continue
		}
		col[h] = i
	}
	pi, okP := col["problem"]
	ci, okC := col["correct_models"]
	si, okS := col["scores"]
	ti, okT := col["task"]
	if !okP || !okC {
		return nil, &DatasetError{URL: rawURL, Row: "line 1", Message: fmt.Sprintf(
			"bad header %q: want columns problem,correct_models (and optionally scores, task)", strings.Join(header, ","))}
	}
	var recs []Record
	for {
		fields, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			// FieldPos is only valid after a successful Read: a parse error in a row's first
			// field leaves the reader without positions.
			row := "a row after line 1"
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				row = fmt.Sprintf("line %d", pe.Line)
			}
			return nil, &DatasetError{URL: rawURL, Row: row, Message: "wrong format: bad CSV: " + err.Error()}
		}
		line, _ := cr.FieldPos(0)
		row := fmt.Sprintf("line %d", line)
		if len(fields) == 1 && strings.TrimSpace(fields[0]) == "" {
			continue
		}
		if len(fields) <= max(pi, ci) {
			return nil, &DatasetError{URL: rawURL, Row: row, Message: fmt.Sprintf("has %d fields, the header has %d", len(fields), len(header))}
		}
		if extra := fields[len(header):]; len(extra) > 0 && strings.TrimSpace(strings.Join(extra, "")) != "" {
			// Most often an unquoted correct_models cell listing several models: its later
			// models would silently be dropped.
			return nil, &DatasetError{URL: rawURL, Row: row, Message: fmt.Sprintf(
				`has %d fields, the header has %d (a correct_models cell that lists several models must be quoted: "a/x,b/y")`,
				len(fields), len(header))}
		}
		for i, f := range fields {
			fields[i] = validText(f) // invalid UTF-8 read as the JSON readers read it
		}
		r := Record{Problem: fields[pi], CorrectModels: splitModels(fields[ci]), Source: fetch.Redact(rawURL) + ": " + row}
		if okS && si < len(fields) && strings.TrimSpace(fields[si]) != "" {
			if err := json.Unmarshal([]byte(fields[si]), &r.Scores); err != nil {
				return nil, &DatasetError{URL: rawURL, Row: row, Message: `scores must be a JSON object of "provider/model": number`}
			}
		}
		if okT && ti < len(fields) {
			r.Task = fields[ti]
		}
		if err := checkRecord(&r); err != nil {
			return nil, &DatasetError{URL: rawURL, Row: row, Message: err.Error()}
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// MaxTaskLength bounds a record's task label, in bytes.
const MaxTaskLength = 200

// MaxProblemBytes bounds a record's problem (a prompt of some 250,000 tokens): the router
// reads n-grams of the whole text, and a job's memory and time grow with it.
const MaxProblemBytes = 1 << 20

// checkRecord validates a record in place and, when correct_models is empty but scores
// are given, derives correct_models as the models tied at the best score above 0.
func checkRecord(r *Record) error {
	if strings.TrimSpace(r.Problem) == "" {
		return errors.New("problem is empty")
	}
	if len(r.Problem) > MaxProblemBytes {
		return fmt.Errorf("problem is %d bytes; at most %d (1 MiB) are allowed", len(r.Problem), MaxProblemBytes)
	}
	r.Task = strings.TrimSpace(r.Task)
	if len(r.Task) > MaxTaskLength || !utf8.ValidString(r.Task) {
		return fmt.Errorf("task must be valid UTF-8 of at most %d bytes", MaxTaskLength)
	}
	for i, m := range r.CorrectModels {
		m = strings.TrimSpace(m)
		if !ValidModelName(m) {
			return modelError(fmt.Sprintf("correct_models[%d]", i), m)
		}
		r.CorrectModels[i] = m
	}
	for m, s := range r.Scores {
		if !ValidModelName(m) {
			return modelError("scores key", m)
		}
		if math.IsNaN(s) || s < 0 || s > 1 {
			return fmt.Errorf("scores[%q] = %v is outside [0, 1]", m, s)
		}
	}
	if len(r.CorrectModels) == 0 && len(r.Scores) > 0 {
		best := 0.0
		for _, s := range r.Scores {
			best = math.Max(best, s)
		}
		if best > 0 {
			for m, s := range r.Scores {
				if s == best {
					r.CorrectModels = append(r.CorrectModels, m)
				}
			}
			sort.Strings(r.CorrectModels)
		}
	}
	return nil
}
