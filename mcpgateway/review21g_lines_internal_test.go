package mcpgateway

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// A stdio stream's last line without a newline is passed on at the end of the stream,
// whole when under the limit, and, when over it, cut there and answered as a cut response
// (not buffered whole).
func TestLastUnterminatedLineIsBoundedAndPassedOn(t *testing.T) {
	first := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
	last := `{"jsonrpc":"2.0","id":2,"result":{"text":"short"}}`
	got, err := io.ReadAll(newMessageCap(strings.NewReader(first+last), nil, 100, framingLines))
	if err != nil || string(got) != first+last {
		t.Fatalf("an unterminated last line under the limit: %q, %v", got, err)
	}

	long := `{"jsonrpc":"2.0","id":3,"result":{"text":"` + strings.Repeat("x", 1000) + `"}}`
	got, err = io.ReadAll(newMessageCap(strings.NewReader(first+long), nil, 100, framingLines))
	want := first + `{"error":{"code":-32099,"message":"switchyard: the upstream's response was cut off at 100 bytes"},"id":3,"jsonrpc":"2.0"}` + "\n"
	if err != nil || string(got) != want {
		t.Fatalf("an unterminated last line over the limit: %q, %v; want %q", got, err, want)
	}
	request := `{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{"x":"` + strings.Repeat("x", 1000) + `"}}`
	if _, err := io.ReadAll(newMessageCap(strings.NewReader(request), nil, 100, framingLines)); !errors.Is(err, ErrResultTooLarge) {
		t.Fatalf("an unterminated request over the limit: %v, want ErrResultTooLarge", err)
	}
}
