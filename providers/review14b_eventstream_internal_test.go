package providers

// Review 14b: the event stream reader's memory on a message that declares more than it sends.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"runtime"
	"testing"
)

// TestReview14bDeclaredLengthIsNotAllocatedAhead: a prelude that declares a 16 MiB message
// (the format's maximum) followed by a few bytes and the end of the body costs about what
// arrived, not the declared 16 MiB: the SDK's decoder reads the payload as it comes
// (bytes.Buffer through a LimitReader); the adapter allocates the declared length first, so
// every stream an upstream or a proxy opens that way holds 16 MiB before a byte of payload.
func TestReview14bDeclaredLengthIsNotAllocatedAhead(t *testing.T) {
	prelude := make([]byte, 12)
	binary.BigEndian.PutUint32(prelude[0:], maxEventMessage)
	binary.BigEndian.PutUint32(prelude[4:], 0)
	binary.BigEndian.PutUint32(prelude[8:], crc32.ChecksumIEEE(prelude[:8]))
	body := append(prelude, bytes.Repeat([]byte{'x'}, 100)...)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := newEventStreamReader(bytes.NewReader(body)).next()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errEventTruncated) {
		t.Fatalf("err %v, want a truncated message", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("reading 112 bytes of a message that declares 16 MiB allocated %d bytes", got)
	}
}
