package trainer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/fetch"
)

func TestParseFormats(t *testing.T) {
	cases := []struct {
		name, url, ct, data string
		want                []Record
	}{
		{
			name: "json array", url: "https://x.test/a.json",
			data: `[{"problem":"p1","correct_models":["openai/gpt-4o","anthropic/claude-3"],"id":7},{"problem":"p2","correct_models":[]}]`,
			want: []Record{{Problem: "p1", CorrectModels: []string{"openai/gpt-4o", "anthropic/claude-3"}}, {Problem: "p2", CorrectModels: []string{}}},
		},
		{
			name: "jsonl with scores deriving correct models", url: "https://x.test/a.jsonl",
			data: "{\"problem\":\"p1\",\"correct_models\":[\"a/b\"]}\n\n{\"problem\":\"p2\",\"scores\":{\"a/b\":0.5,\"c/d\":0.9,\"e/f\":0.9}}\n",
			want: []Record{{Problem: "p1", CorrectModels: []string{"a/b"}}, {Problem: "p2", CorrectModels: []string{"c/d", "e/f"}, Scores: map[string]float64{"a/b": 0.5, "c/d": 0.9, "e/f": 0.9}}},
		},
		{
			name: "csv with quoted multi-model cell and scores, unknown extension", url: "https://x.test/download?id=3", ct: "text/csv",
			data: "\xef\xbb\xbfProblem,correct_models,scores\n\"Hello, world\",\"a/b, c/d\",\n\"line1\nline2\",e/f,\"{\"\"e/f\"\":1}\"\n",
			want: []Record{{Problem: "Hello, world", CorrectModels: []string{"a/b", "c/d"}}, {Problem: "line1\nline2", CorrectModels: []string{"e/f"}, Scores: map[string]float64{"e/f": 1}}},
		},
		{
			name: "task labels in jsonl and csv", url: "https://x.test/t.jsonl",
			data: "{\"problem\":\"p1\",\"correct_models\":[\"a/b\"],\"task\":\" gsm8k \"}\n{\"problem\":\"p2\",\"correct_models\":[\"a/b\"]}\n",
			want: []Record{{Problem: "p1", CorrectModels: []string{"a/b"}, Task: "gsm8k"}, {Problem: "p2", CorrectModels: []string{"a/b"}}},
		},
		{
			name: "task column in csv", url: "https://x.test/t.csv",
			data: "problem,correct_models,task\nq1,a/b,mmlu\nq2,a/b,\n",
			want: []Record{{Problem: "q1", CorrectModels: []string{"a/b"}, Task: "mmlu"}, {Problem: "q2", CorrectModels: []string{"a/b"}}},
		},
		{
			// pandas' DataFrame.to_csv writes a list column as Python lists, with an index column.
			name: "csv of pandas lists", url: "https://x.test/p.csv",
			data: ",problem,correct_models\n0,q1,\"['openai/gpt-4o', 'anthropic/claude-3']\"\n1,q2,[]\n2,q3,\"[\"\"a/b\"\"]\"\n3,q4,['a/b']\n",
			want: []Record{{Problem: "q1", CorrectModels: []string{"openai/gpt-4o", "anthropic/claude-3"}}, {Problem: "q2", CorrectModels: []string{}},
				{Problem: "q3", CorrectModels: []string{"a/b"}}, {Problem: "q4", CorrectModels: []string{"a/b"}}},
		},
		{
			name: "models with nested slashes", url: "https://x.test/a.csv",
			data: "correct_models,problem\ntogether/meta-llama/Llama-3-70b,hi\n",
			want: []Record{{Problem: "hi", CorrectModels: []string{"together/meta-llama/Llama-3-70b"}}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseDataset(c.url, c.ct, []byte(c.data))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %d records, want %d: %+v", len(got), len(c.want), got)
			}
			for i := range got {
				g, w := got[i], c.want[i]
				if g.Problem != w.Problem || g.Task != w.Task || strings.Join(g.CorrectModels, "|") != strings.Join(w.CorrectModels, "|") || len(g.Scores) != len(w.Scores) {
					t.Errorf("record %d = %+v, want %+v", i, g, w)
				}
				if !strings.HasPrefix(g.Source, fetch.Redact(c.url)+": ") { // query values are redacted
					t.Errorf("record %d source %q does not name the file", i, g.Source)
				}
			}
		})
	}
}

func TestParseErrorsNameFileAndRow(t *testing.T) {
	cases := []struct {
		name, url, data string
		want            []string
	}{
		{"bad header", "https://x.test/d.csv", "question,answer\nq,a/b\n", []string{"https://x.test/d.csv", "line 1", "bad header", "problem,correct_models"}},
		{"csv row without problem", "https://x.test/d.csv", "problem,correct_models\nok,a/b\n  ,a/b\n", []string{"https://x.test/d.csv", "line 3", "problem is empty"}},
		{"csv model not provider/model", "https://x.test/d.csv", "problem,correct_models\nq,\"a/b,gpt4\"\n", []string{"line 2", `"gpt4"`, "provider/model"}},
		{"csv bare quote in a row's first field", "https://x.test/d.csv", "problem,correct_models\nfoo,a/b\nba\"r,a/b\n", []string{"https://x.test/d.csv", "line 3", "bad CSV"}},
		{"csv unterminated quote in a row's first field", "https://x.test/d.csv", "problem,correct_models\nfoo,a/b\n\"open,a/b\n", []string{"https://x.test/d.csv", "line 3", "bad CSV"}},
		{"csv unquoted list of models", "https://x.test/d.csv", "problem,correct_models\nq,a/x\nq2,a/x,b/y\n", []string{"https://x.test/d.csv", "line 3", "3 fields", "must be quoted"}},
		{"problem over 1 MiB", "https://x.test/d.jsonl", `{"problem":"` + strings.Repeat("p", MaxProblemBytes+1) + `","correct_models":["a/b"]}`, []string{"line 1", "problem is 1048577 bytes"}},
		{"json record without problem", "https://x.test/d.json", `[{"problem":"a","correct_models":["a/b"]},{"correct_models":["a/b"]}]`, []string{"https://x.test/d.json", "record 2", "problem is missing"}},
		{"json problem not a string", "https://x.test/d.json", `[{"problem":3,"correct_models":["a/b"]}]`, []string{"record 1", "problem must be a string"}},
		{"json correct_models not strings", "https://x.test/d.json", `[{"problem":"x","correct_models":[1]}]`, []string{"record 1", "correct_models must be an array of strings"}},
		{"jsonl broken line", "https://x.test/d.jsonl", "{\"problem\":\"a\",\"correct_models\":[\"a/b\"]}\n{\"problem\":\n", []string{"line 2", "wrong format"}},
		{"json syntax error", "https://x.test/d.json", "[\n{\"problem\":\"a\"},\n{oops}\n]", []string{"line 3", "wrong format"}},
		{"json extension with csv content", "https://x.test/d.json", "problem,correct_models\nq,a/b\n", []string{"https://x.test/d.json", "wrong format", "JSON"}},
		{"empty file", "https://x.test/d.csv", "  \n", []string{"https://x.test/d.csv", "empty"}},
		{"score out of range", "https://x.test/d.jsonl", `{"problem":"a","correct_models":["a/b"],"scores":{"a/b":2}}`, []string{"line 1", "outside [0, 1]"}},
		{"task not a string", "https://x.test/d.jsonl", `{"problem":"a","correct_models":["a/b"],"task":3}`, []string{"line 1", "task must be a string"}},
		{"task too long", "https://x.test/d.jsonl", `{"problem":"a","correct_models":["a/b"],"task":"` + strings.Repeat("t", MaxTaskLength+1) + `"}`, []string{"line 1", "task must be", "200 bytes"}},
		{"binary", "https://x.test/blob", "\xff\xfe\x00\x01garbage", []string{"wrong format"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseDataset(c.url, "", []byte(c.data))
			var de *DatasetError
			if !errors.As(err, &de) || !errors.Is(err, ErrDataset) {
				t.Fatalf("error = %v, want *DatasetError matching ErrDataset", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestCSVAcceptsEmptyTrailingFields(t *testing.T) {
	// Spreadsheet exports often end rows with empty cells beyond the header.
	recs, err := ParseDataset("https://x.test/d.csv", "", []byte("problem,correct_models\nq,\"a/x,b/y\",,\nq2,a/x\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || strings.Join(recs[0].CorrectModels, "|") != "a/x|b/y" {
		t.Errorf("records = %+v", recs)
	}
}

func TestExampleDataParses(t *testing.T) {
	for _, name := range []string{"routing_train.json", "routing_train.csv"} {
		data, err := os.ReadFile(filepath.Join("..", "examples", "data", name))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := ParseDataset("file:///"+name, "", data)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 60 {
			t.Errorf("%s: %d records, want 60", name, len(recs))
		}
	}
}

func TestValidModelName(t *testing.T) {
	for _, ok := range []string{"openai/gpt-4o", "google/gemma-2-9b-it", "together/meta-llama/Llama-3-70b", "a/b:free"} {
		if !ValidModelName(ok) {
			t.Errorf("ValidModelName(%q) = false", ok)
		}
	}
	for _, bad := range []string{"gpt-4o", "/gpt", "openai/", "openai/gpt 4", " openai/gpt", ""} {
		if ValidModelName(bad) {
			t.Errorf("ValidModelName(%q) = true", bad)
		}
	}
}

func TestWrappedJSONObject(t *testing.T) {
	wrapped := "{\n \"version\": 2,\n \"data\": [\n  {\"problem\": \"p1\", \"correct_models\": [\"a/b\"]},\n  {\"problem\": \"p2\", \"correct_models\": [\"c/d\"]}\n ]\n}\n"
	recs, err := ParseDataset("https://x/d.json", "application/json", []byte(wrapped))
	if err != nil || len(recs) != 2 || recs[1].Problem != "p2" {
		t.Fatalf("wrapped array: %v, %+v", err, recs)
	}
	_, err = ParseDataset("https://x/d.json", "", []byte("{\n \"name\": \"x\",\n \"count\": 2\n}\n"))
	var de *DatasetError
	if !errors.As(err, &de) || !strings.Contains(de.Message, "one JSON object (keys count, name)") || strings.Contains(de.Message, "line 1") {
		t.Fatalf("object without records: %v", err)
	}
	// JSONL stays JSONL.
	if recs, err := ParseDataset("https://x/d.jsonl", "", []byte("{\"problem\":\"p\",\"correct_models\":[\"a/b\"]}\n{\"problem\":\"q\",\"correct_models\":[\"a/b\"]}\n")); err != nil || len(recs) != 2 {
		t.Fatalf("jsonl: %v", err)
	}
}
