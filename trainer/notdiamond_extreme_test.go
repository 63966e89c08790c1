package trainer

import (
	"fmt"
	"math"
	"testing"
)

// TestParseNotDiamondCSVExtremeScores: scores near ±math.MaxFloat64, whose range overflows
// (max - min = +Inf), still normalise to finite values in [0, 1] in the right order, with
// and without maximize; no NaN reaches training.
func TestParseNotDiamondCSVExtremeScores(t *testing.T) {
	models := []string{"openai/gpt-4o", "anthropic/claude-3-5-sonnet"}
	cells := [][2]string{{"1e308", "-1e308"}, {"0", "1.7976931348623157e308"}, {"-1.7976931348623157e308", "5e307"}}
	prompts := []string{"first prompt", "second prompt", "third prompt"}
	data := wideCSV(t, "prompt", models, prompts, func(row int, model string) string {
		if model == models[0] {
			return cells[row][0]
		}
		return cells[row][1]
	})
	lo, hi := -math.MaxFloat64, math.MaxFloat64
	for _, minimize := range []bool{false, true} {
		recs, err := ParseNotDiamondCSV("extreme.csv", data, NotDiamondCSV{PromptColumn: "prompt", Minimize: minimize})
		if err != nil {
			t.Fatalf("minimize=%v: %v", minimize, err)
		}
		for i, r := range recs {
			for j, m := range models {
				v := mustFloat(t, cells[i][j])
				want := v/2/(hi/2-lo/2) - lo/2/(hi/2-lo/2)
				if minimize {
					want = 1 - want
				}
				got := r.Scores[m]
				if math.IsNaN(got) || got < 0 || got > 1 || math.Abs(got-want) > 1e-9 {
					t.Errorf("minimize=%v row %d %s: score %v normalised to %v, want %v", minimize, i, m, v, got, want)
				}
			}
		}
		// Row 1: gpt-4o's 0 is mid-range, claude's the maximum.
		best := "anthropic/claude-3-5-sonnet"
		if minimize {
			best = "openai/gpt-4o"
		}
		if len(recs[1].CorrectModels) != 1 || recs[1].CorrectModels[0] != best {
			t.Errorf("minimize=%v: row 1 correct_models = %v, want [%s]", minimize, recs[1].CorrectModels, best)
		}
	}
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	var v float64
	if _, err := fmt.Sscan(s, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
