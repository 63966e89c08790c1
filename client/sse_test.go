package client

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestSSEReaderSplitsEvents(t *testing.T) {
	body := ": keep-alive\r\n\r\nevent: error\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n\n\ndata:x\n\ndata: cut"
	r := newSSEReader(strings.NewReader(body))
	type ev struct{ event, data string }
	var got []ev
	for {
		e, d, err := r.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev{e, d})
	}
	want := []ev{{"error", "{\"a\":\n1}"}, {"", "x"}, {"", "cut"}}
	if len(got) != len(want) {
		t.Fatalf("events %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d: %q, want %q", i, got[i], want[i])
		}
	}
}
