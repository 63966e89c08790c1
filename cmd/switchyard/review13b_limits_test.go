package main

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// TestReview13bRatesNotSharedDuringShutdownDelay: at SIGTERM the counters' Run ends with the
// signal's context (and deletes the replica's record) while the replica goes on serving
// requests for --shutdown-delay, the window in which the load balancer still sends it
// traffic. What it admits then is never published: the key gets its bound again on B.
func TestReview13bRatesNotSharedDuringShutdownDelay(t *testing.T) {
	replicaEnv(t, "r13b_drain")
	t.Setenv("SWITCHYARD_REQUESTS_PER_MINUTE_PER_KEY", "3")
	t.Setenv("SWITCHYARD_LIMITS_SYNC_INTERVAL", "50ms")
	t.Setenv("SWITCHYARD_SHUTDOWN_DELAY", "5s")
	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	a, _, doneA := startServe(t, ctxA, t.TempDir())
	b, _, doneB := startServe(t, ctxB, t.TempDir())
	t.Cleanup(func() { cancelA(); cancelB(); <-doneA; <-doneB })
	post := func(addr string) int { return selectModel(t, addr) }
	time.Sleep(500 * time.Millisecond) // both have synced
	cancelA()                          // SIGTERM to A: it drains for 5s, still serving
	time.Sleep(200 * time.Millisecond)
	for i := range 3 {
		if code := post(a); code != 200 {
			t.Fatalf("request %d on A while it drains: %d", i, code)
		}
	}
	// Fifty intervals: on a loaded machine (CI beside other suites) one second was once too
	// short for A's counts to reach B; A still drains meanwhile.
	time.Sleep(2500 * time.Millisecond)
	if code := post(b); code != http.StatusTooManyRequests {
		t.Errorf("the key's 4th request, on B, after 3 on A during its --shutdown-delay: %d, want 429", code)
	}
}
