package trainer

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// benchJointCSV is a Not Diamond joint CSV of rows prompts of about 400 bytes each, three
// models with a response of about 600 bytes each: 2,000 rows make about 4.5 MB.
func benchJointCSV(b *testing.B, rows int) []byte {
	b.Helper()
	models := []string{"openai/gpt-4o", "anthropic/claude-3-5-sonnet-20240620", "mistral/mistral-large-latest"}
	var sb strings.Builder
	sb.WriteString("prompt")
	for _, m := range models {
		sb.WriteString("," + m + "/response," + m + "/score")
	}
	sb.WriteString("\n")
	pad := strings.Repeat("lorem ipsum dolor sit amet ", 15)
	answer := strings.Repeat("the answer goes on ", 32)
	for i := range rows {
		fmt.Fprintf(&sb, "\"question %d: %s\"", i, pad)
		for j := range models {
			fmt.Fprintf(&sb, ",\"%s\",%d", answer, (i+j)%10)
		}
		sb.WriteString("\n")
	}
	return []byte(sb.String())
}

// BenchmarkParseNotDiamondCSV is the parse alone, which a submit does once.
func BenchmarkParseNotDiamondCSV(b *testing.B) {
	data := benchJointCSV(b, 2000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseNotDiamondCSV("joint.csv", data, NotDiamondCSV{PromptColumn: "prompt"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSubmitUpload is a whole submit of an uploaded joint CSV: parse, then the job
// and the file's pieces written in one store transaction (the job is deleted between
// iterations, untimed).
func BenchmarkSubmitUpload(b *testing.B) {
	for _, kind := range []string{"memory", "bbolt"} {
		b.Run(kind, func(b *testing.B) {
			var st *store.Store
			if kind == "memory" {
				st = memstore.New()
			} else {
				var err error
				if st, err = boltstore.Open(filepath.Join(b.TempDir(), "sy.db"), boltstore.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			defer st.Close()
			s, err := New(st, WithLogger(quietLogger()))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			data := benchJointCSV(b, 2000)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				job, err := s.SubmitUpload(ctx, "k", Upload{Filename: "joint.csv", Data: data, Format: FormatNotDiamond,
					NotDiamond: NotDiamondCSV{PromptColumn: "prompt"}}, JobOptions{})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if _, err := s.DeleteJob(ctx, "k", job.TrainingJobID); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
