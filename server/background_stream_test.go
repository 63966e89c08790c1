package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// dripUpstream is a scripted OpenAI upstream that streams: model "drip" sends its eight
// words 40 ms apart; model "hang" sends two words and then waits for its request's
// context (counting the cancellations).
type dripUpstream struct {
	mu        sync.Mutex
	cancelled int
	// cut, when set, gets a value at each cancellation (buffered, never blocking).
	cut chan struct{}
}

func (u *dripUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model string `json:"model"`
	}
	json.NewDecoder(r.Body).Decode(&body)
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta, finish string) {
		fin := "null"
		if finish != "" {
			fin = `"` + finish + `"`
		}
		fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":%s}]}\n\n", body.Model, delta, fin)
		w.(http.Flusher).Flush()
	}
	words := strings.Fields("one two three four five six seven eight")
	if body.Model == "hang" {
		// Its two words at once, then the wait: a cancellation at any time after they
		// were sent is counted (none slips through a pause between words).
		chunk("one", "")
		chunk(" two", "")
		<-r.Context().Done()
		u.mu.Lock()
		u.cancelled++
		u.mu.Unlock()
		select {
		case u.cut <- struct{}{}:
		default:
		}
		return
	}
	for i, word := range words {
		if i > 0 {
			word = " " + word
		}
		chunk(word, "")
		select {
		case <-r.Context().Done():
			return
		case <-time.After(40 * time.Millisecond):
		}
	}
	chunk("", "stop")
	io.WriteString(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"drip\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":8,\"total_tokens\":11}}\n\ndata: [DONE]\n\n")
}

func (u *dripUpstream) cancels() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.cancelled
}

// sseEvent is a Responses stream event as a client reads it.
type sseEvent struct {
	Type     string         `json:"type"`
	Seq      int            `json:"sequence_number"`
	Delta    string         `json:"delta"`
	Response map[string]any `json:"response"`
}

// openStream sends method url with testKey and returns the response (200, an event stream).
func openStream(t *testing.T, method, url, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	return resp
}

// readEvents reads events from body: n of them (all until the end when n < 0).
func readEvents(t *testing.T, body io.Reader, n int) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	for (n < 0 || len(out) < n) && sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var e sseEvent
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				t.Fatalf("event %s: %v", data, err)
			}
			out = append(out, e)
		}
	}
	return out
}

// TestBackgroundStreamAcrossReplicas: POST background + stream on replica A streams the
// events (sequence numbers from 0) as they come; the client leaving does not stop the run;
// GET ?stream=true&starting_after=3 on replica B gives the events after 3 through
// response.completed; GET ?stream=true without starting_after replays all of them, the
// same on both replicas.
func TestBackgroundStreamAcrossReplicas(t *testing.T) {
	backgroundStreamAcrossReplicas(t, memstore.New())
}

// TestBackgroundStreamAcrossReplicasPostgres is TestBackgroundStreamAcrossReplicas on
// PostgreSQL, where replicas are for (skipped without a test database, as review17a's).
func TestBackgroundStreamAcrossReplicasPostgres(t *testing.T) {
	backgroundStreamAcrossReplicas(t, review17aPG(t))
}

func backgroundStreamAcrossReplicas(t *testing.T, st *store.Store) {
	up := &dripUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	// The run on A must stay alive while B reads it: no heartbeat is late enough for B to
	// read it as dead (400 ms was, once, on a loaded CI machine).
	a, b := backgroundReplicaStaleAfter(t, st, ups, time.Hour), backgroundReplicaStaleAfter(t, st, ups, time.Hour)
	resp := openStream(t, "POST", a.URL+"/v1/responses", `{"model":"up/drip","input":"Count.","background":true,"stream":true}`)
	first := readEvents(t, resp.Body, 4)
	resp.Body.Close() // the client leaves
	if len(first) != 4 || first[0].Type != "response.created" || first[0].Response["background"] != true {
		t.Fatalf("first events: %+v", first)
	}
	id := first[0].Response["id"].(string)
	for i, e := range first {
		if e.Seq != i {
			t.Fatalf("event %d: sequence number %d", i, e.Seq)
		}
	}
	resp = openStream(t, "GET", b.URL+"/v1/responses/"+id+"?stream=true&starting_after=3", "")
	tail := readEvents(t, resp.Body, -1)
	resp.Body.Close()
	if len(tail) == 0 || tail[0].Seq != 4 || tail[len(tail)-1].Type != "response.completed" {
		t.Fatalf("resumed events: %+v", tail)
	}
	var text strings.Builder
	for i, e := range tail {
		if e.Seq != 4+i {
			t.Fatalf("resumed event %d: sequence number %d", i, e.Seq)
		}
		if e.Type == "response.output_text.delta" {
			text.WriteString(e.Delta)
		}
	}
	if text.String() != "one two three four five six seven eight" {
		t.Fatalf("the resumed deltas make %q", text.String())
	}
	done := pollStatus(t, b.URL, id, "completed")
	if !strings.Contains(mustJSON(t, done["output"]), "one two three four five six seven eight") {
		t.Fatalf("completed: %v", done)
	}
	for _, hs := range []*httptest.Server{a, b} {
		resp = openStream(t, "GET", hs.URL+"/v1/responses/"+id+"?stream=true", "")
		all := readEvents(t, resp.Body, -1)
		resp.Body.Close()
		if len(all) != 4+len(tail) || all[0].Type != "response.created" || all[len(all)-1].Seq != tail[len(tail)-1].Seq {
			t.Fatalf("replay on %s: %d events, want %d", hs.URL, len(all), 4+len(tail))
		}
	}
}

// TestBackgroundStreamCancelAndRefusals: a cancel on replica B of a response streamed
// from A ends A's stream, and a reader's on B, with response.cancelled and cuts the
// upstream call; GET ?stream=true of a response not created with background and stream
// is a 400 naming stream; a starting_after that is not a sequence number is a 400 naming
// it.
func TestBackgroundStreamCancelAndRefusals(t *testing.T) {
	up := &dripUpstream{cut: make(chan struct{}, 1)}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	st := newTestStore(t)
	// The run on A stays alive until the cancel: no heartbeat is ever late enough for B
	// to read it as dead (a cancel still reaches A at its next beat, within a second).
	a, b := backgroundReplicaStaleAfter(t, st, ups, time.Hour), backgroundReplicaStaleAfter(t, st, ups, time.Hour)
	resp := openStream(t, "POST", a.URL+"/v1/responses", `{"model":"up/hang","input":"Go.","background":true,"stream":true}`)
	defer resp.Body.Close()
	first := readEvents(t, resp.Body, 6) // created, in_progress, item, part, two deltas
	id := first[0].Response["id"].(string)
	onB := openStream(t, "GET", b.URL+"/v1/responses/"+id+"?stream=true&starting_after=5", "")
	defer onB.Body.Close()
	if r, body := do2(t, "POST", b.URL+"/v1/responses/"+id+"/cancel", testKey, "", nil); r.StatusCode != 200 {
		t.Fatalf("cancel: %d %s", r.StatusCode, body)
	}
	for name, body := range map[string]io.Reader{"A's POST": resp.Body, "B's GET": onB.Body} {
		rest := readEvents(t, body, -1)
		if len(rest) == 0 || rest[len(rest)-1].Type != "response.cancelled" || rest[len(rest)-1].Seq != 6 ||
			rest[len(rest)-1].Response["status"] != "cancelled" {
			t.Fatalf("%s ended with %+v", name, rest)
		}
	}
	select {
	case <-up.cut:
	case <-time.After(time.Minute): // a hang guard: the cut comes with the cancel
		t.Fatal("the upstream call was not cut")
	}

	r, body := do2(t, "POST", a.URL+"/v1/responses", testKey, `{"model":"up/drip","input":"x","background":true}`, nil)
	plain := responseOf(t, body)["id"].(string)
	for url, param := range map[string]string{
		a.URL + "/v1/responses/" + plain + "?stream=true":                  "stream",
		a.URL + "/v1/responses/" + id + "?stream=true&starting_after=abc":  "starting_after",
		a.URL + "/v1/responses/" + id + "?stream=true&starting_after=-2":   "starting_after",
		b.URL + "/v1/responses/" + plain + "?stream=true&starting_after=1": "stream",
	} {
		r, body = do2(t, "GET", url, testKey, "", nil)
		var eb struct {
			Error struct {
				Param string `json:"param"`
			} `json:"error"`
		}
		json.Unmarshal(body, &eb)
		if r.StatusCode != 400 || eb.Error.Param != param {
			t.Fatalf("GET %s: %d %s, want a 400 naming %s", url, r.StatusCode, body, param)
		}
	}
}
