package providers

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	yaml "go.yaml.in/yaml/v4"
)

// The adapter's event stream reader is checked against the AWS SDK's decoder
// (aws/protocol/eventstream), message for message: on recorded ConverseStream bodies, on
// messages with every header type, and on every single-byte corruption and truncation of
// a stream, which both must refuse.

// sdkMessages decodes body with the SDK's decoder.
func sdkMessages(t *testing.T, body []byte) []eventMessage {
	t.Helper()
	var out []eventMessage
	r := bytes.NewReader(body)
	dec := eventstream.NewDecoder()
	for r.Len() > 0 {
		m, err := dec.Decode(r, nil)
		if err != nil {
			t.Fatalf("SDK decoder: %v", err)
		}
		out = append(out, fromSDKMessage(m))
	}
	return out
}

// ownMessages decodes body with the adapter's reader; err is its first failure.
func ownMessages(body []byte) (out []eventMessage, err error) {
	r := newEventStreamReader(bytes.NewReader(body))
	for {
		m, err := r.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		m.payload = append([]byte(nil), m.payload...)
		out = append(out, m)
	}
}

func sameMessages(t *testing.T, what string, got, want []eventMessage) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d messages, the SDK %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.messageType != w.messageType || g.eventType != w.eventType || g.exceptionType != w.exceptionType ||
			g.errorCode != w.errorCode || g.errorMessage != w.errorMessage || !bytes.Equal(g.payload, w.payload) {
			t.Errorf("%s: message %d = %+v, the SDK's %+v", what, i, g, w)
		}
	}
}

// recordedStream is the event stream body of a recorded ConverseStream cassette.
func recordedStream(t *testing.T, file string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "bedrock", file))
	if err != nil {
		t.Fatal(err)
	}
	var cas struct {
		Interactions []struct {
			Response struct {
				Body struct {
					String string `yaml:"string"`
				} `yaml:"body"`
			} `yaml:"response"`
		} `yaml:"interactions"`
	}
	if err := yaml.Unmarshal(raw, &cas); err != nil {
		t.Fatal(err)
	}
	return []byte(cas.Interactions[0].Response.Body.String)
}

// sdkEncode encodes messages with the SDK's encoder.
func sdkEncode(t *testing.T, msgs ...eventstream.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, m := range msgs {
		if err := enc.Encode(&buf, m); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func TestEventStreamReaderMatchesTheSDK(t *testing.T) {
	for _, f := range []string{"test_bedrock_model_stream.yaml", "test_bedrock_model_iter_stream.yaml", "test_bedrock_model_thinking_part_redacted_stream.yaml"} {
		body := recordedStream(t, f)
		got, err := ownMessages(body)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		sameMessages(t, f, got, sdkMessages(t, body))
	}

	// Every header type, and the headers the adapter reads among them.
	var all eventstream.Message
	all.Headers.Set("flag-true", eventstream.BoolValue(true))
	all.Headers.Set("flag-false", eventstream.BoolValue(false))
	all.Headers.Set("byte", eventstream.Int8Value(-3))
	all.Headers.Set(":message-type", eventstream.StringValue("exception"))
	all.Headers.Set("short", eventstream.Int16Value(-300))
	all.Headers.Set("int", eventstream.Int32Value(70000))
	all.Headers.Set(":exception-type", eventstream.StringValue("throttlingException"))
	all.Headers.Set("long", eventstream.Int64Value(1<<40))
	all.Headers.Set("blob", eventstream.BytesValue([]byte{0, 1, 2, 255}))
	all.Headers.Set("when", eventstream.TimestampValue(time.UnixMilli(1700000000123)))
	all.Headers.Set("id", eventstream.UUIDValue{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	all.Headers.Set(":error-code", eventstream.StringValue("E"))
	all.Payload = []byte(`{"message":"slow down"}`)
	var empty eventstream.Message // no headers, no payload
	var errMsg eventstream.Message
	errMsg.Headers.Set(":message-type", eventstream.StringValue("error"))
	errMsg.Headers.Set(":error-message", eventstream.StringValue("boom"))
	body := sdkEncode(t, all, empty, errMsg)
	got, err := ownMessages(body)
	if err != nil {
		t.Fatal(err)
	}
	sameMessages(t, "every header type", got, sdkMessages(t, body))
	if got[0].exceptionType != "throttlingException" || got[0].messageType != "exception" || got[2].errorMessage != "boom" {
		t.Errorf("headers read: %+v", got)
	}

	// Every single-byte corruption and every truncation of a two-message stream is refused
	// (a checksum, a length or a cut), never taken for another message.
	stream := recordedStream(t, "test_bedrock_model_stream.yaml")
	two := stream[:int(be32(stream))]
	two = append(two, stream[len(two):len(two)+int(be32(stream[len(two):]))]...)
	for i := range two {
		bad := bytes.Clone(two)
		bad[i] ^= 0x5a
		if _, err := ownMessages(bad); !errors.Is(err, errEventMalformed) && !errors.Is(err, errEventTruncated) {
			t.Fatalf("byte %d corrupted: err = %v, want malformed or truncated", i, err)
		}
		if _, err := eventstream.NewDecoder().Decode(bytes.NewReader(bad), nil); err == nil && i < int(be32(two)) {
			t.Fatalf("byte %d corrupted: the SDK decoder took the first message", i)
		}
	}
	for n := 1; n < len(two); n++ {
		if n == int(be32(two)) {
			continue // a whole first message
		}
		if _, err := ownMessages(two[:n]); !errors.Is(err, errEventTruncated) {
			t.Fatalf("cut after %d of %d bytes: err = %v, want truncated", n, len(two), err)
		}
	}
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// fromSDKMessage is the SDK's decoded message m as the reader's eventMessage: its string
// headers the reader reads and a copy of its payload.
func fromSDKMessage(m eventstream.Message) eventMessage {
	str := func(name string) string {
		if v := m.Headers.Get(name); v != nil {
			if s, ok := v.(eventstream.StringValue); ok {
				return string(s)
			}
		}
		return ""
	}
	var em eventMessage
	em.messageType, em.eventType, em.exceptionType = str(":message-type"), str(":event-type"), str(":exception-type")
	em.errorCode, em.errorMessage = str(":error-code"), str(":error-message")
	em.payload = append([]byte(nil), m.Payload...)
	return em
}
