package trainer

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// review20bWideCSV is a joint CSV with models score columns of one-character cells: each
// cell costs the file 2 bytes and the parsed records a map entry of some 40.
func review20bWideCSV(models, rows int) []byte {
	var b strings.Builder
	b.WriteString("prompt")
	for i := range models {
		fmt.Fprintf(&b, ",p/m%d/score", i)
	}
	b.WriteString("\n")
	for r := range rows {
		fmt.Fprintf(&b, "question %d", r)
		for i := range models {
			b.WriteByte(',')
			b.WriteByte(byte('0' + (i+r)%2))
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// TestReview20bNotDiamondCSVTooManyModels: a router chooses among at most MaxClasses
// models, and a job whose data names more fails. A joint CSV with more score columns than
// that can never train, yet ParseNotDiamondCSV read every row into per-model maps first —
// some 30 times the file's size in memory, at submit time (a 10 MiB upload held 300 MB) —
// and the upload was accepted, to fail when it ran. It is refused from its header.
func TestReview20bNotDiamondCSVTooManyModels(t *testing.T) {
	data := review20bWideCSV(MaxClasses*20, 1200)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	recs, err := ParseNotDiamondCSV("wide.csv", data, NotDiamondCSV{PromptColumn: "prompt"})
	runtime.ReadMemStats(&after)
	var de *DatasetError
	if !errors.As(err, &de) || de.Row != "line 1" || !strings.Contains(err.Error(), fmt.Sprint(MaxClasses)) {
		t.Fatalf("ParseNotDiamondCSV = %d records, %v; want a *DatasetError naming line 1 and the limit of %d models", len(recs), err, MaxClasses)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(data)) {
		t.Errorf("refusing a %d-byte file allocated %d bytes: the rows were read before the header was judged", len(data), alloc)
	}

	// llm_providers listing more models than a router takes names that field.
	list := make([]string, MaxClasses+1)
	for i := range list {
		list[i] = fmt.Sprintf("p/m%d", i)
	}
	_, err = ParseNotDiamondCSV("wide.csv", data, NotDiamondCSV{PromptColumn: "prompt", Models: list})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "llm_providers" {
		t.Fatalf("llm_providers of %d models: %v; want a *ValidationError naming llm_providers", len(list), err)
	}

	// MaxClasses models stay accepted.
	if _, err := ParseNotDiamondCSV("ok.csv", review20bWideCSV(MaxClasses, 20), NotDiamondCSV{PromptColumn: "prompt"}); err != nil {
		t.Errorf("%d models: %v", MaxClasses, err)
	}
}
