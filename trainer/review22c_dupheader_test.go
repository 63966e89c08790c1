package trainer

import (
	"errors"
	"strings"
	"testing"
)

// A CSV header naming one of the record's columns twice is refused, naming the column, as
// the Not Diamond CSV's is: the parser kept the last one, so a trailing empty
// correct_models column silently emptied every row (all skipped as without a correct
// model) and a second problem column trained on the wrong text.
func TestReview22cCSVDuplicateHeaderColumn(t *testing.T) {
	for _, tc := range []struct{ csv, col string }{
		{"problem,correct_models,correct_models\nfoo,a/x,\nbar,b/y,\n", "correct_models"},
		{"problem,correct_models,Problem\nfoo,a/x,other\n", "problem"},
		{"problem,task,correct_models, task \nfoo,t1,a/x,t2\n", "task"},
	} {
		recs, err := ParseDataset("https://x/d.csv", "", []byte(tc.csv))
		var de *DatasetError
		if !errors.As(err, &de) || de.Row != "line 1" || !strings.Contains(de.Message, tc.col) || !strings.Contains(de.Message, "twice") {
			t.Errorf("%q: got %v, %+v; want a line 1 error naming %s twice", tc.csv, err, recs, tc.col)
		}
	}
	// Other columns may repeat: they are not read.
	if recs, err := ParseDataset("https://x/d.csv", "", []byte("problem,note,correct_models,note\nfoo,x,a/x,y\n")); err != nil || len(recs) != 1 {
		t.Fatalf("repeated unread column: %v", err)
	}
}
