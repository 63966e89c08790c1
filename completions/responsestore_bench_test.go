package completions

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store/boltstore"
)

// BenchmarkStoredResponseTurn is what keeping /v1/responses answers adds to one turn of a
// conversation on the bbolt store: reading the chain previous_response_id names (turns
// answers back; the earlier ones from this process's copy) and writing the answer. The
// model call is not in it.
//
//	go test ./completions -run '^$' -bench StoredResponseTurn -benchtime 2000x -count 5
func BenchmarkStoredResponseTurn(b *testing.B) {
	for _, turns := range []int{1, 20, 100} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			st, err := boltstore.Open(filepath.Join(b.TempDir(), "responses.db"), boltstore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			g, err := New(Options{Providers: fakeRegistry{}, Store: st})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			prev := ""
			turn := func(i int) {
				var r ResponsesRequest
				json.Unmarshal([]byte(`{"model":"a/m","input":"What about the next step of the plan?"}`), &r)
				r.PreviousResponseID = prev
				if err := g.ContinueResponse(ctx, "alice", &r); err != nil {
					b.Fatal(err)
				}
				o := NewResponseObject(&r, fmt.Sprintf("resp_%d_%d", turns, i), time.Now())
				o.Complete(&Response{Provider: "a", Model: "m", ResponseMessageID: fmt.Sprint(i), FinishReason: "stop",
					Message: assistantText("The next step is to measure what the change costs, then decide.")})
				if err := g.StoreResponse(ctx, "alice", &r, o); err != nil {
					b.Fatal(err)
				}
				prev = o.ID
			}
			for i := 0; i < turns-1; i++ { // the conversation so far
				turn(-1 - i)
			}
			head := prev
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				prev = head // every measured turn continues the same conversation
				turn(i)
			}
		})
	}
}
