package client_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

// loseFirstRotation forwards every request; the first one to a rotate path is carried out
// by the server but its answer is lost (the connection "drops" after the server wrote).
type loseFirstRotation struct{ lost atomic.Bool }

func (l *loseFirstRotation) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && strings.HasSuffix(r.URL.Path, "/rotate") && l.lost.CompareAndSwap(false, true) {
		resp.Body.Close()
		return nil, fmt.Errorf("connection reset by peer (test)")
	}
	return resp, err
}

// A conditional rotation whose first attempt was carried out but whose answer was lost is
// resent (a connection error is retried) and answered 412: the key is no longer at the
// version given, because this very call rotated it, and the new key it made is gone. The
// error still matches ErrPreconditionFailed, but it must not read as the server's bare
// "nothing was changed" (a caller taking that at its word believes its old key still
// works, or that someone else holds the new one): it says an earlier attempt failed in a
// way that may have left it carried out, naming that failure.
func TestReview23gConditionalRotateRetriedAfterLostAnswer(t *testing.T) {
	admin, url := realServerURL(t, completionsOptions(t))
	ctx := t.Context()
	vk, err := admin.IssueKey(ctx, &client.KeyRequest{Name: "app"})
	if err != nil {
		t.Fatal(err)
	}
	lossy := &loseFirstRotation{}
	c, err := client.New(client.WithBaseURL(url), client.WithAPIKey(testKey),
		client.WithHTTPClient(&http.Client{Transport: lossy}), client.WithRetry(client.RetryPolicy{Initial: time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.RotateKeyIfMatch(ctx, vk.ID, vk.ETag)
	if !lossy.lost.Load() {
		t.Fatal("the rotation's answer was not lost: the test did not run its case")
	}
	if !errors.Is(err, client.ErrPreconditionFailed) {
		t.Fatalf("err %v, want one matching ErrPreconditionFailed", err)
	}
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusPreconditionFailed {
		t.Fatalf("err %v: no *Error with the 412", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "connection reset by peer (test)") || !strings.Contains(msg, "may have been carried out") {
		t.Fatalf("the 412 of a resent conditional request does not say an earlier attempt may have been carried out: %v", err)
	}
	now, err := admin.Key(ctx, vk.ID)
	if err != nil || now.ETag == vk.ETag {
		t.Fatalf("the lost attempt did rotate the key (ETag %q, before %q, %v)", now.ETag, vk.ETag, err)
	}

	// Without an earlier failure a 412 is the server's alone: no such note.
	_, err = admin.RotateKeyIfMatch(ctx, vk.ID, vk.ETag)
	if !errors.Is(err, client.ErrPreconditionFailed) || strings.Contains(err.Error(), "may have been carried out") {
		t.Fatalf("a first-attempt 412: %v", err)
	}
}
