package usagelog

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// The history keeps a request's audio tokens (the prompt's input_audio and a spoken
// answer's) beside its token counts, in memory and in the store; a record an earlier build
// wrote, without them, still reads back whole with none.
func TestHistoryAudioTokens(t *testing.T) {
	ctx := context.Background()
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	audio := historyRecord("k", "", t0, 1)
	audio.Usage.PromptAudioTokens, audio.Usage.CompletionAudioTokens = 3, 4

	mem := New(Options{Requests: 5})
	mem.ObserveRequest(ctx, audio)
	if got := mem.Requests("k", 0, 0); len(got) != 1 || got[0].PromptAudioTokens != 3 || got[0].CompletionAudioTokens != 4 {
		t.Fatalf("in-memory record: %+v", got)
	}

	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		st := store.New(d)
		// A record as the build before audio tokens wrote it: no audio fields at all.
		old := storedRequest{Owner: "k", Request: Request{ID: t0.Add(-time.Second).UnixMicro(), Start: t0.Add(-time.Second), EndUser: "old"}}
		old.Key = historyKey(old.ID)
		raw := fmt.Sprintf(`{"owner":"k","key":%q,"id":%d,"stream":false,"outcome":"ok","model":"openai/gpt-4o","answered":true,`+
			`"attempts":[],"prompt_tokens":7,"completion_tokens":2,"total_tokens":9,"cost_usd":0.5,"price_known":true,`+
			`"start":%q,"latency_ms":12,"end_user":"old"}`, old.Key, old.ID, old.Start.Format(time.RFC3339Nano))
		err := st.Update(ctx, func(tx store.Tx) error {
			if err := store.PutJSON(ctx, tx, store.RequestLog, old.Key, json.RawMessage(raw)); err != nil {
				return err
			}
			for _, ref := range old.refs(true) {
				if err := store.PutOwned(ctx, tx, ref); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		h := NewHistory(st, HistoryOptions{})
		defer h.Close(ctx)
		h.ObserveRequest(ctx, audio)
		if err := h.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := Take(ctx, h, RequestQuery{Owner: "k"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("requests: %+v", got)
		}
		if r := got[0]; r.PromptAudioTokens != 3 || r.CompletionAudioTokens != 4 || r.PromptTokens != 5 {
			t.Fatalf("stored audio tokens: %+v", r)
		}
		if r := got[1]; r.EndUser != "old" || r.PromptTokens != 7 || r.TotalTokens != 9 || r.CostUSD != 0.5 ||
			r.PromptAudioTokens != 0 || r.CompletionAudioTokens != 0 {
			t.Fatalf("a record without audio fields: %+v", r)
		}
		b, _ := json.Marshal(got[1])
		if strings.Contains(string(b), "audio_tokens") {
			t.Fatalf("a record without audio shows audio fields: %s", b)
		}
	})
}
