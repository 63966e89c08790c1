package trainer

import (
	"errors"
	"strings"
	"testing"
)

// TestReview20bNotDiamondCSVRowWithExtraFields: a row with more fields than the header
// (an unquoted comma in a response or a prompt) shifts the later cells into the wrong
// columns; when the shifted cells still read as numbers the scores are silently wrong. As
// the records CSV does, a row whose extra fields hold something is refused, naming its line.
func TestReview20bNotDiamondCSVRowWithExtraFields(t *testing.T) {
	rows := []string{
		"prompt,a/x/response,a/x/score,b/y/response,b/y/score",
		"first question,fine,5,fine,1",
		"second question,fine,5,it costs 1,2,3", // b/y/response is "it costs 1,2": unquoted
		"third question,fine,1,fine,5",
	}
	data := []byte(strings.Join(rows, "\n") + "\n")
	recs, err := ParseNotDiamondCSV("joint.csv", data, NotDiamondCSV{PromptColumn: "prompt"})
	var de *DatasetError
	if !errors.As(err, &de) || de.Row != "line 3" || !strings.Contains(err.Error(), "fields") {
		t.Fatalf("ParseNotDiamondCSV = %d records, %v; want a *DatasetError naming line 3 and its field count", len(recs), err)
	}

	// Trailing empty fields (a trailing comma) say nothing and stay accepted.
	rows[2] = "second question,fine,5,fine,3,"
	if _, err := ParseNotDiamondCSV("joint.csv", []byte(strings.Join(rows, "\n")+"\n"), NotDiamondCSV{PromptColumn: "prompt"}); err != nil {
		t.Errorf("a trailing empty field: %v", err)
	}
}
