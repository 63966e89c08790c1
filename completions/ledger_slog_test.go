package completions

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

func TestLogLedgerRecordsUsageWithoutContent(t *testing.T) {
	var buf bytes.Buffer
	l := LogLedger{Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	l.Record(context.Background(), LedgerEntry{Owner: "key_1", Tag: "optimize:opt_9", Model: "a/m", Complete: true,
		Usage: providers.Usage{PromptTokens: 12, CompletionTokens: 3}, Estimated: true, Cost: Costs{TotalTokensCost: 0.25}, Latency: 40 * time.Millisecond})
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	if line["tag"] != "optimize:opt_9" || line["model"] != "a/m" || line["prompt_tokens"].(float64) != 12 || line["cost_usd"].(float64) != 0.25 || line["usage_estimated"] != true {
		t.Fatalf("line %v", line)
	}
}
