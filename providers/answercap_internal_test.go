package providers

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestOversizedAnswerIsTheUpstreamsFault: a success body past the cap an adapter reads of
// one, announced (Content-Length) or found while reading (chunked), is the upstream's fault:
// KindBadResponse matching ErrResponseTooLarge, saying the answer exceeded the cap, never
// KindBadRequest (which the client would get as a 400 for a request it got right). The
// caps are readAll's and decodeAll's parameter: a small one keeps the test's memory small.
func TestOversizedAnswerIsTheUpstreamsFault(t *testing.T) {
	const limit = 1024
	body := `{"data":"` + strings.Repeat("x", 8*limit) + `"}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("declared") == "1" {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write([]byte(body))
			return
		}
		for i := 0; i < len(body); i += 512 { // chunked: no length announced
			w.Write([]byte(body[i:min(i+512, len(body))]))
			w.(http.Flusher).Flush()
		}
	}))
	defer up.Close()
	e := newEndpoint(Config{Name: "up", APIKey: "k"})
	for _, declared := range []string{"0", "1"} {
		for _, read := range []string{"readAll", "decodeAll"} {
			c, err := e.send(context.Background(), "m", up.URL+"?declared="+declared, nil, map[string]any{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if read == "readAll" {
				_, err = c.readAll(limit)
			} else {
				var v map[string]any
				err = c.decodeAll(limit, &v, "answer")
			}
			c.Close()
			var pe *Error
			if !errors.As(err, &pe) || pe.Kind != KindBadResponse || !errors.Is(err, ErrResponseTooLarge) ||
				!strings.Contains(pe.Message, "the upstream's answer exceeded the 1024 bytes cap") || pe.StatusCode != 200 {
				t.Errorf("declared=%s %s: %#v", declared, read, err)
				continue
			}
			// What is known of the answer's size, for the gateway's record: read or announced.
			if want := map[string]int64{"0": limit + 1, "1": int64(len(body))}[declared]; pe.AnswerBytes != want {
				t.Errorf("declared=%s %s: AnswerBytes %d, want %d", declared, read, pe.AnswerBytes, want)
			}
			if announced := strings.Contains(pe.Message, "it announced "+strconv.Itoa(len(body))+" bytes"); announced != (declared == "1") {
				t.Errorf("declared=%s %s: %q", declared, read, pe.Message)
			}
		}
	}
	// Within the cap it is read as before.
	c, err := e.send(context.Background(), "m", up.URL+"?declared=1", nil, map[string]any{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if b, err := c.readAll(int64(len(body))); err != nil || string(b) != body {
		t.Errorf("a body at the cap: %d bytes, %v", len(b), err)
	}
	if got := byteSize(maxResponseBody); got != "32 MiB" {
		t.Errorf("byteSize(maxResponseBody) = %q", got)
	}
}
