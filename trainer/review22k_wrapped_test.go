package trainer

import (
	"testing"
)

// A JSONL record names its fields in any case (the decoder matches "Problem" to problem,
// as it always has), so a one-line record written so is still a record: since fdaffcd read
// one-line objects as possible wrappers, one holding no exactly-named record field but one
// array (its Correct_Models) was taken for a wrapper, its models for the records, and the
// file failed with "record 1: wrong format".
func TestReview22kOneLineRecordAnyCase(t *testing.T) {
	for _, data := range []string{
		`{"Problem":"p","Correct_Models":["a/b","c/d"]}`,
		`{"question_id":7,"Scores":{"a/b":1,"c/d":0},"Problem":"p"}`,
	} {
		recs, err := ParseDataset("https://x/d.jsonl", "", []byte(data))
		if err != nil || len(recs) != 1 || recs[0].Problem != "p" {
			t.Errorf("%s: %+v, %v; want the one record", data, recs, err)
		}
	}
	// A wrapper is still one.
	recs, err := ParseDataset("https://x/d.json", "", []byte(`{"Data":[{"problem":"p","correct_models":["a/b"]}]}`))
	if err != nil || len(recs) != 1 {
		t.Errorf("wrapped: %+v, %v", recs, err)
	}
}
