package batch

import (
	"math/rand/v2"
	"net/http"
	"time"
)

// maxLineRetries bounds how often one line answered with a retryable 429 is sent again.
const maxLineRetries = 100

// maxLineServerRetries bounds how often one line answered with a retryable server error
// (a 5xx without x-should-retry: false: the store restarting, an internal error) is sent
// again. With lineServerRetryWait's backoff the line waits out about a minute of outage (1,
// 2, 4, 8, 16 and 32 s, ±20%), more when the answers ask for longer; after that its last
// answer is kept, in the error file.
const maxLineServerRetries = 6

// lineServerRetryFirst and lineServerRetryMost are the first and the longest wait before a
// line answered with a retryable server error is sent again.
const (
	lineServerRetryFirst = time.Second
	lineServerRetryMost  = time.Minute
)

// lineTries counts the sends of one line again, by what they answered.
type lineTries struct {
	rate, server int // after a retryable 429, after a retryable server error
	// timeout: after a retryable server error with a timeout (also counted in server)
	timeout int
}

// lineRetry says whether a line answered ans is sent again, and after how long: a
// retryable 429 after its Retry-After (1 s without one) up to maxLineRetries times, a
// retryable server error after an exponential backoff with jitter, or its Retry-After
// when longer, up to maxLineServerRetries times — up to maxTimeout times when one of its
// upstream calls timed out (Answer.TimedOut). n counts the sends again so far. Every other
// answer is final, and so is one that was billed (Answer.Billed).
func lineRetry(ans Answer, n lineTries, maxTimeout int) (wait time.Duration, again bool) {
	rateRetries, serverRetries := n.rate, n.server
	switch {
	case !ans.Retryable, ans.Billed:
		return 0, false
	case ans.StatusCode >= 500 && ans.TimedOut && n.timeout >= maxTimeout:
		return 0, false
	case ans.StatusCode == http.StatusTooManyRequests:
		if rateRetries >= maxLineRetries {
			return 0, false
		}
		if ans.RetryAfter > 0 {
			return ans.RetryAfter, true
		}
		return time.Second, true
	case ans.StatusCode >= 500:
		if serverRetries >= maxLineServerRetries {
			return 0, false
		}
		return max(lineServerRetryWait(serverRetries), ans.RetryAfter), true
	}
	return 0, false
}

// lineServerRetryWait is the wait before the (n+1)th retry of a line answered with a server
// error: lineServerRetryFirst doubled n times, at most lineServerRetryMost, ±20% so that
// the lines of a batch failing together do not come back together.
func lineServerRetryWait(n int) time.Duration {
	d := lineServerRetryMost
	if n < 16 {
		d = min(lineServerRetryFirst<<n, lineServerRetryMost)
	}
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}
