package alerting

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Signature headers, set on every delivery when the Alerter has a secret.
const (
	// HeaderSignature carries "sha256=" and the hex HMAC-SHA256 of "<timestamp>.<body>".
	HeaderSignature = "X-Switchyard-Signature"
	// HeaderTimestamp carries the Unix time in seconds the delivery was signed at.
	HeaderTimestamp = "X-Switchyard-Timestamp"
)

// Sign returns the HeaderSignature value of body sent at timestamp (Unix seconds, as in
// HeaderTimestamp) with secret.
func Sign(secret string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify checks a delivery as a receiver gets it: signature and timestamp are the
// HeaderSignature and HeaderTimestamp values, body the raw body. A timestamp further than
// tolerance from now fails (replays); tolerance 0 skips that check. It fails with
// ErrSignature.
func Verify(secret, signature, timestamp string, body []byte, tolerance time.Duration, now time.Time) error {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %s %q is not Unix seconds", ErrSignature, HeaderTimestamp, timestamp)
	}
	if tolerance > 0 {
		if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
			return fmt.Errorf("%w: signed %s from now, more than %s", ErrSignature, d.Round(time.Second), tolerance)
		}
	}
	want := Sign(secret, ts, body)
	if !strings.HasPrefix(signature, "sha256=") || !hmac.Equal([]byte(signature), []byte(want)) {
		return fmt.Errorf("%w: %s does not match the body", ErrSignature, HeaderSignature)
	}
	return nil
}
