package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/responses"
)

// TestOfficialGoSDKBackgroundStreaming: the official Go SDK's background streaming —
// NewStreaming with Background true streams the events with sequence numbers from 0; the
// client leaves after a few; GetStreaming with StartingAfter resumes with exactly the
// events after it through response.completed, whose answer is whole; GetStreaming
// without StartingAfter replays them all.
func TestOfficialGoSDKBackgroundStreaming(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string `json:"model"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "text/event-stream")
		for i, word := range strings.Fields("The answer is forty-two.") {
			if i > 0 {
				word = " " + word
			}
			fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", req.Model, word)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
		fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":5,\"total_tokens\":10}}\n\ndata: [DONE]\n\n", req.Model)
	}))
	t.Cleanup(up.Close)
	_, base := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.URL}))
	ctx := context.Background()
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))

	leave, stop := context.WithCancel(ctx)
	st := c.Responses.NewStreaming(leave, responses.ResponseNewParams{Model: "openai/gpt-4o-mini", Background: openai.Bool(true),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("The answer?")}})
	var first []responses.ResponseStreamEventUnion
	for len(first) < 3 && st.Next() {
		first = append(first, st.Current())
	}
	stop() // the client leaves
	st.Close()
	if len(first) != 3 || first[0].Type != "response.created" || !first[0].Response.Background {
		t.Fatalf("first events: %+v (%v)", first, st.Err())
	}
	id := first[0].Response.ID
	for i, e := range first {
		if e.SequenceNumber != int64(i) {
			t.Fatalf("event %d has sequence number %d", i, e.SequenceNumber)
		}
	}

	resumed := c.Responses.GetStreaming(ctx, id, responses.ResponseGetParams{StartingAfter: openai.Int(2)})
	var tail []responses.ResponseStreamEventUnion
	for resumed.Next() {
		tail = append(tail, resumed.Current())
	}
	if err := resumed.Err(); err != nil {
		t.Fatal(err)
	}
	if len(tail) == 0 || tail[0].SequenceNumber != 3 || tail[len(tail)-1].Type != "response.completed" {
		t.Fatalf("resumed: %+v", tail)
	}
	var text strings.Builder
	for i, e := range tail {
		if e.SequenceNumber != int64(3+i) {
			t.Fatalf("resumed event %d has sequence number %d", i, e.SequenceNumber)
		}
		if e.Type == "response.output_text.delta" {
			text.WriteString(e.Delta.OfString)
		}
	}
	final := tail[len(tail)-1].Response
	if text.String() != "The answer is forty-two." || final.OutputText() != "The answer is forty-two." || final.Status != responses.ResponseStatusCompleted {
		t.Fatalf("resumed text %q, final %q %s", text.String(), final.OutputText(), final.Status)
	}

	replay := c.Responses.GetStreaming(ctx, id, responses.ResponseGetParams{})
	n := 0
	for replay.Next() {
		if replay.Current().SequenceNumber != int64(n) {
			t.Fatalf("replayed event %d has sequence number %d", n, replay.Current().SequenceNumber)
		}
		n++
	}
	if replay.Err() != nil || n != 3+len(tail) {
		t.Fatalf("replay: %d events, want %d (%v)", n, 3+len(tail), replay.Err())
	}
}
