package trainer

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

var fuzzDatasetNames = []struct{ url, contentType string }{
	{"data.csv", "text/csv"},
	{"data.json", "application/json"},
	{"data.jsonl", "application/x-ndjson"},
	{"https://example.com/data", ""},
}

// FuzzParseDataset reads arbitrary training files as uploads and URLs are read. A refused
// file is a *DatasetError (ErrDataset); an accepted file's records are valid, and written
// back as JSONL, as a JSON array and as CSV they read back the same.
func FuzzParseDataset(f *testing.F) {
	for _, name := range []string{"../examples/data/routing_train.csv", "../examples/data/routing_train.json"} {
		raw, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		if len(raw) > 8<<10 { // a prefix is enough: a seed this size makes every mutation slow
			raw = raw[:8<<10]
			if i := bytes.LastIndexByte(raw, '\n'); i > 0 {
				raw = raw[:i+1]
			}
		}
		for i := range fuzzDatasetNames {
			f.Add(byte(i), raw)
		}
	}
	f.Add(byte(2), []byte("{\"problem\":\"p\",\"correct_models\":[\"a/b\"],\"scores\":{\"a/b\":1,\"c/d\":0.5},\"task\":\"t\"}\n{\"problem\":\"q\",\"scores\":{\"a/b\":0.2}}\n"))
	f.Add(byte(1), []byte(`{"data":[{"problem":"p","correct_models":"a/b"}]}`))
	f.Add(byte(0), []byte("\xef\xbb\xbfProblem,Correct_Models,scores,task\n\"a,b\",\"x/y, z/w\",\"{\"\"x/y\"\":1}\",t\n"))
	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		name := fuzzDatasetNames[int(which)%len(fuzzDatasetNames)]
		recs, err := ParseDataset(name.url, name.contentType, data)
		if err != nil {
			var de *DatasetError
			if !errors.As(err, &de) || !errors.Is(err, ErrDataset) {
				t.Fatalf("error %T is not a *DatasetError: %v", err, err)
			}
			return
		}
		if len(recs) == 0 {
			t.Fatal("no records and no error")
		}
		for i := range recs {
			r := recs[i]
			if err := checkRecord(&r); err != nil {
				t.Fatalf("record %d accepted but invalid: %v", i, err)
			}
			recs[i].Source = ""
			if recs[i].CorrectModels == nil {
				// A row no model answered well: written [] (null reads as a missing field).
				recs[i].CorrectModels = []string{}
			}
		}
		var jsonl bytes.Buffer
		for _, r := range recs {
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			jsonl.Write(append(b, '\n'))
		}
		arr, err := json.Marshal(recs)
		if err != nil {
			t.Fatal(err)
		}
		var csvb bytes.Buffer
		w := csv.NewWriter(&csvb)
		w.Write([]string{"problem", "correct_models", "scores", "task"})
		for _, r := range recs {
			scores := ""
			if r.Scores != nil {
				b, _ := json.Marshal(r.Scores)
				scores = string(b)
			}
			w.Write([]string{r.Problem, strings.Join(r.CorrectModels, ","), scores, r.Task})
		}
		w.Flush()
		for _, again := range []struct {
			url  string
			data []byte
		}{{"again.jsonl", jsonl.Bytes()}, {"again.json", arr}, {"again.csv", csvb.Bytes()}} {
			got, err := ParseDataset(again.url, "", again.data)
			if err != nil {
				t.Fatalf("%s: written back, the records are refused: %v\ninput: %q\nwritten: %q", again.url, err, data, again.data)
			}
			for i := range got {
				got[i].Source = ""
			}
			if !reflect.DeepEqual(normalRecords(got), normalRecords(recs)) {
				t.Fatalf("%s: written back, the records read differently\ninput: %q\n got %+v\nwant %+v", again.url, data, got, recs)
			}
		}
	})
}

// normalRecords makes empty and nil lists and maps alike.
func normalRecords(recs []Record) []Record {
	out := make([]Record, len(recs))
	for i, r := range recs {
		if len(r.CorrectModels) == 0 {
			r.CorrectModels = nil
		}
		if len(r.Scores) == 0 {
			r.Scores = nil
		}
		out[i] = r
	}
	return out
}

// FuzzParseNotDiamondCSV reads arbitrary joint CSVs (Not Diamond's training format): a
// refusal is a dataset or validation error, and accepted records are valid.
func FuzzParseNotDiamondCSV(f *testing.F) {
	f.Add([]byte("prompt,openai/gpt-4o/score,openai/gpt-4o/response,anthropic/claude-3-haiku/score\nhi,1,x,0\nyo,0.5,,0.7\n"), false)
	f.Add([]byte("prompt,a/b/score\n\"multi\nline\",0\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, minimize bool) {
		recs, err := ParseNotDiamondCSV("nd.csv", data, NotDiamondCSV{PromptColumn: "prompt", Minimize: minimize})
		if err != nil {
			if !errors.Is(err, ErrDataset) && !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %T outside the package's set: %v", err, err)
			}
			return
		}
		for i := range recs {
			r := recs[i]
			if err := checkRecord(&r); err != nil {
				t.Fatalf("record %d accepted but invalid: %v", i, err)
			}
		}
	})
}
