//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// procsTestRole, in the environment, makes this test binary play a part in
// TestChildStopReachesGrandchildren instead of running the tests.
const procsTestRole = "GWBENCH_PROCS_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(procsTestRole) {
	case "parent", "parent-of-stubborn", "parent-of-busy":
		// As `go run` does: start the real program as a child (in this process's group)
		// and wait for it.
		role := "grandchild"
		switch os.Getenv(procsTestRole) {
		case "parent-of-stubborn":
			role = "stubborn-grandchild"
		case "parent-of-busy":
			role = "busy-grandchild"
		}
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), procsTestRole+"="+role)
		ready, err := cmd.StdoutPipe()
		if err == nil {
			err = cmd.Start()
		}
		if err == nil {
			_, err = bufio.NewReader(ready).ReadString('\n') // its signals set up
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println(cmd.Process.Pid)
		cmd.Wait()
		os.Exit(0)
	case "grandchild":
		fmt.Println("ready")
		time.Sleep(time.Hour) // SIGINT ends it (Go's default)
		os.Exit(0)
	case "busy-grandchild":
		// Spins, as a gateway under load does, until the test kills its group.
		fmt.Println("ready")
		for x := uint64(1); ; x = x*6364136223846793005 + 1 {
			if x == 0 {
				fmt.Println(x) // never: keeps the loop from being optimised away
			}
		}
	case "stubborn-grandchild":
		signal.Ignore(os.Interrupt)
		fmt.Println("ready")
		time.Sleep(time.Hour)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestChildStopReachesGrandchildren: stop ends what a child started as well as the child
// (a `go run` child's program): the grandchild that SIGINT ends is gone, and one that
// ignores it is killed once the child has gone and the time is up. Signalling the direct
// child only, as stop did, left both running.
func TestChildStopReachesGrandchildren(t *testing.T) {
	defer func(g time.Duration) { stopGrace = g }(stopGrace)
	stopGrace = time.Second
	for _, parentRole := range []string{"parent", "parent-of-stubborn"} {
		t.Run(parentRole, func(t *testing.T) {
			cmd := withCPUs("", os.Args[0])
			cmd.Env = append(os.Environ(), procsTestRole+"="+parentRole)
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			c := started(&child{name: "parent", cmd: cmd})
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				c.stop()
				t.Fatalf("the child's first line: %v", err)
			}
			grandchild, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				c.stop()
				t.Fatal(err)
			}
			defer syscall.Kill(grandchild, syscall.SIGKILL) // whatever happens below
			if !processRunning(grandchild) {
				t.Fatalf("grandchild %d not running before stop", grandchild)
			}
			c.stop()
			if cmd.ProcessState == nil {
				t.Fatal("stop returned before the child was waited for")
			}
			// A killed grandchild is reparented, and its new parent reaps it when it will.
			deadline := time.Now().Add(10 * time.Second)
			for processRunning(grandchild) {
				if time.Now().After(deadline) {
					t.Fatalf("grandchild %d still running after the child's stop", grandchild)
				}
				time.Sleep(20 * time.Millisecond)
			}
			running.Lock()
			defer running.Unlock()
			if running.children[c] {
				t.Fatal("a stopped child is still among the running ones")
			}
		})
	}
}

// processRunning reports whether pid is a process that has not exited (a zombie waiting
// for its parent to reap it has).
func processRunning(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err) || !dirExists("/proc/self")
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) == 0 || fields[0] != "Z"
}

func dirExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
