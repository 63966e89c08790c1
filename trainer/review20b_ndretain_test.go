package trainer

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestReview20bNotDiamondCSVKeepsOnlyPrompts: a joint CSV is mostly the models' responses,
// which the router never reads. encoding/csv returns a row's fields as slices of one
// string, so a record whose Problem is the prompt field kept the whole row — every response
// — alive for as long as the job trains: the parsed records held the file's size instead
// of its prompts'.
func TestReview20bNotDiamondCSVKeepsOnlyPrompts(t *testing.T) {
	models := []string{"openai/gpt-4o", "anthropic/claude-3-5-sonnet-20240620", "mistral/mistral-large-latest"}
	response := strings.Repeat("a long answer with many words ", 100) // 3 KB per model and row
	const rows = 2000
	prompts := make([]string, rows)
	promptBytes := 0
	for i := range prompts {
		prompts[i] = fmt.Sprintf("question number %d about something", i)
		promptBytes += len(prompts[i])
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	parse := func() []Record {
		data := wideCSV(t, "prompt", models, prompts, func(r int, m string) string { return fmt.Sprint((r + len(m)) % 10) })
		data = []byte(strings.ReplaceAll(string(data), "an answer, by ", response))
		recs, err := ParseNotDiamondCSV("joint.csv", data, NotDiamondCSV{PromptColumn: "prompt"})
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	recs := parse() // the file is garbage from here on
	runtime.GC()
	runtime.ReadMemStats(&after)
	live := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	runtime.KeepAlive(recs)
	// The records' own needs: the prompts, the score maps, the sources; well under a third
	// of the file here (about 18 MB), which the responses make.
	if limit := int64(len(response)) * rows; live > limit {
		t.Errorf("%d records of %d prompt bytes keep %d bytes alive (more than %d): the responses stay in memory", len(recs), promptBytes, live, limit)
	}
}
