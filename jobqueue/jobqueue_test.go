package jobqueue_test

import (
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue"
)

func TestStale(t *testing.T) {
	now := time.Now()
	if dead, wait := jobqueue.Stale(now.Add(-time.Second), now, 3*time.Second); dead || wait != 2*time.Second {
		t.Errorf("fresh: %v %v", dead, wait)
	}
	if dead, _ := jobqueue.Stale(now.Add(-3*time.Second), now, 3*time.Second); !dead {
		t.Error("stale not dead")
	}
	if d := jobqueue.HeartbeatInterval(2 * time.Second); d != 500*time.Millisecond {
		t.Errorf("HeartbeatInterval = %v", d)
	}
	if d := jobqueue.HeartbeatInterval(time.Hour); d != jobqueue.MaxHeartbeatInterval {
		t.Errorf("HeartbeatInterval(1h) = %v", d)
	}
}
