package mcpgateway_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/mcpgateway"
)

// review22jSlowStdio is a stdio server that never answers initialize and, once its stdin
// is closed, stops only when the file release exists; the directory lock says a child is
// running, and a child finding it taken writes "twice" to the log.
const review22jSlowStdio = `
if ! mkdir "$DIR/lock" 2>/dev/null; then echo twice >> "$DIR/log"; fi
echo start >> "$DIR/log"
cat > /dev/null
while [ ! -e "$DIR/release" ]; do sleep 0.01; done
rmdir "$DIR/lock" 2>/dev/null
exit 0
`

// A health check that gives up on a stdio server that does not answer its initialize
// returns at its deadline, but the child it started is still being stopped: the next
// connection is not opened (a second child started beside it) until the first child has
// exited; the next check waits for it within its own deadline.
func TestReview22jStdioChildNotStartedTwice(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "slow.sh")
	if err := os.WriteFile(script, []byte(review22jSlowStdio), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := mcpgateway.ServerConfig{Name: "slow", Transport: mcpgateway.TransportStdio, Command: "/bin/sh",
		Args: []string{script}, Env: map[string]string{"DIR": dir}}
	g := newGateway(t, []mcpgateway.ServerConfig{cfg}, mcpgateway.Options{HealthCheckTimeout: 200 * time.Millisecond, StopTimeout: 20 * time.Second})
	released := false
	release := func() {
		if !released {
			released = true
			if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o600); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(release)

	for i := range 2 {
		si, err := g.CheckHealth(t.Context(), "slow")
		if err != nil || si.Status != mcpgateway.StatusUnhealthy {
			t.Fatalf("check %d of a server that does not answer: %+v %v", i, si, err)
		}
	}
	release()
	// Every child gone (each stops once released), then its log is complete.
	deadline := time.Now().Add(30 * time.Second)
	for len(childPIDs(t)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	log, err := os.ReadFile(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(log), "twice") {
		t.Fatalf("a second stdio child was started while the first still ran: log %q", log)
	}
}
