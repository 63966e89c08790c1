package mcpgateway_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
)

// fakeStdioEnv, when set, makes the test binary a fake stdio MCP server (see fakeStdio).
const fakeStdioEnv = "MCPGATEWAY_FAKE_STDIO_SERVER"

func TestMain(m *testing.M) {
	if name := os.Getenv(fakeStdioEnv); name != "" {
		serve := mcpgatewaytest.ServeStdio
		if os.Getenv(fakeStdioLastUnterminatedEnv) != "" {
			serve = serveLastUnterminated
		}
		if err := serve(name); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// childPIDs returns the live (not zombie) children of this process, from /proc; nil when
// there is no /proc.
func childPIDs(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	me := os.Getpid()
	out := []int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == me {
			out = append(out, pid)
		}
	}
	return out
}

// kill kills process pid.
func kill(t *testing.T, pid int) {
	t.Helper()
	p, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
}
