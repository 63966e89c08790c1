package providers

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

type review14aSource func() (*oauth2.Token, error)

func (f review14aSource) Token() (*oauth2.Token, error) { return f() }

func review14aTokens(src oauth2.TokenSource, now func() time.Time) *googleTokens {
	return &googleTokens{now: now, source: func(context.Context) (oauth2.TokenSource, error) { return src, nil }}
}

// TestReview14aVertexStaleTokenUsedWhenRefreshFails: googleTokens fetches a new token once
// the cached one has under five minutes left (googleauth.go token), and when that fetch
// fails the request fails, although the cached token is still good for minutes. A token
// endpoint that is down for a moment at the refresh point therefore fails every Vertex
// call (KindOverloaded) up to five minutes before it had to; x/oauth2's ReuseTokenSource
// and Google's auth libraries keep using a token until it has actually (nearly) expired.
func TestReview14aVertexStaleTokenUsedWhenRefreshFails(t *testing.T) {
	base := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	now := base
	var calls atomic.Int32
	src := review14aSource(func() (*oauth2.Token, error) {
		if calls.Add(1) == 1 {
			return &oauth2.Token{AccessToken: "ya29.first", Expiry: base.Add(time.Hour)}, nil
		}
		return nil, &oauth2.RetrieveError{Response: &http.Response{StatusCode: http.StatusServiceUnavailable}, Body: []byte("unavailable")}
	})
	tk := review14aTokens(src, func() time.Time { return now })
	if tok, err := tk.token(context.Background()); err != nil || tok != "ya29.first" {
		t.Fatalf("first token %q, %v", tok, err)
	}
	now = base.Add(57 * time.Minute) // three minutes left: still valid
	tok, err := tk.token(context.Background())
	if err != nil || tok != "ya29.first" {
		t.Errorf("token endpoint failing 3 min before the cached token expires: got %q, %v; want the still-valid cached token", tok, err)
	}
}

// TestReview14aVertexWaitersShareTimedOutFetch: a fetch that ends with
// context.DeadlineExceeded is taken by its waiters for "the request that fetched was
// cancelled" (googleauth.go token: they loop and fetch again with their own context). That
// is also how a fetch ends when the token endpoint hangs past googleTokenTimeout (30 s,
// fetch's own bound) while the leader's request is still alive — so with a hung token
// endpoint, N concurrent requests are served one 30 s fetch after another (the k-th held
// about k×30 s, up to its attempt timeout) instead of all failing over at 30 s. Here the
// source reports the deadline at once; the waiter should get the leader's failure, not
// fetch again.
func TestReview14aVertexWaitersShareTimedOutFetch(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	src := review14aSource(func() (*oauth2.Token, error) {
		calls.Add(1)
		<-release
		return nil, fmt.Errorf("Post \"https://oauth2.googleapis.com/token\": %w", context.DeadlineExceeded)
	})
	tk := review14aTokens(src, time.Now)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(1)
	go func() { defer wg.Done(); _, errs[0] = tk.token(context.Background()) }()
	for calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	wg.Add(1)
	go func() { defer wg.Done(); _, errs[1] = tk.token(context.Background()) }()
	time.Sleep(100 * time.Millisecond) // the second request is waiting on the first's fetch
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("a fetch that timed out by its own bound was repeated by its waiter: %d fetches for 2 concurrent requests (errors %v)", n, errs)
	}
}
