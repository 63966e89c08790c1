package trainer

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A JSON object whose one array member holds the records is read whatever its layout:
// json.dumps and JSON.stringify write it on one line, and such a file was read as JSONL
// and failed with "line 1: problem is missing".
func TestReview22cWrappedObjectOnOneLine(t *testing.T) {
	oneLine := `{"version": 2, "data": [{"problem": "p1", "correct_models": ["a/b"]}, {"problem": "p2", "correct_models": "c/d,a/b"}]}`
	for _, name := range []string{"https://x/d.json", "https://x/d"} {
		recs, err := ParseDataset(name, "", []byte(oneLine))
		if err != nil || len(recs) != 2 || recs[1].Problem != "p2" || len(recs[1].CorrectModels) != 2 {
			t.Fatalf("%s: one-line wrapped array: %v, %+v", name, err, recs)
		}
	}
	// A one-line record is still JSONL, and a broken one is reported as a record.
	if recs, err := ParseDataset("https://x/d.jsonl", "", []byte(`{"problem":"p","correct_models":["a/b"]}`)); err != nil || len(recs) != 1 {
		t.Fatalf("one-line record: %v", err)
	}
	_, err := ParseDataset("https://x/d.jsonl", "", []byte(`{"correct_models":["a/b"]}`))
	var de *DatasetError
	if !errors.As(err, &de) || de.Row != "line 1" || !strings.Contains(de.Message, "problem is missing") {
		t.Fatalf("one-line record without problem: %v", err)
	}
	// One object without records still says what shapes are read.
	_, err = ParseDataset("https://x/d.json", "", []byte(`{"name": "x", "count": 2}`))
	if !errors.As(err, &de) || !strings.Contains(de.Message, "one JSON object (keys count, name)") {
		t.Fatalf("one-line object without records: %v", err)
	}
}

// An upload declared format=json may be the wrapped object: it is JSON, and was refused as
// "declared json but its content reads as jsonl".
func TestReview22cUploadWrappedObjectDeclaredJSON(t *testing.T) {
	s := newService(t, nil)
	arr := asJSON(syntheticRecords(30, 7))
	wrapped := "{\"data\": " + strings.ReplaceAll(arr, "},{", "},\n{") + "}\n"
	for _, body := range []string{wrapped, "\xef\xbb\xbf" + strings.ReplaceAll(wrapped, "\n", "")} {
		job, err := s.SubmitUpload(context.Background(), "k1", Upload{Filename: "d.json", Data: []byte(body), Format: FormatJSON}, JobOptions{})
		if err != nil {
			t.Fatalf("upload of a wrapped object declared json: %v", err)
		}
		if st := waitDone(t, s, "k1", job.TrainingJobID); st.Status != StateCompleted {
			t.Fatalf("job: %+v", st)
		}
	}
}
