package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestChildCPUCountsItsProcessGroup: a child that runs the real program as its own child
// (`go run`, a wrapper script) is charged that program's CPU: a child that only waits for
// a busy grandchild shows the grandchild's CPU time, where its own /proc/<pid>/stat, all
// cpu read before, shows next to none.
func TestChildCPUCountsItsProcessGroup(t *testing.T) {
	cmd := withCPUs("", os.Args[0])
	cmd.Env = append(os.Environ(), procsTestRole+"=parent-of-busy")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := started(&child{name: "parent", cmd: cmd})
	defer c.stop()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the child's first line: %v", err)
	}
	grandchild, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := readProcStat(grandchild); !ok || st.pgrp != cmd.Process.Pid {
		t.Fatalf("grandchild %d: stat %+v %v, want it in the child's group %d", grandchild, st, ok, cmd.Process.Pid)
	}
	// Wait (on a shared machine, however long it takes) until the grandchild has spun a
	// while: the count, not the time, is what is checked.
	const spun = 30 // ticks, 0.3 s of CPU
	deadline := time.Now().Add(60 * time.Second)
	for {
		g, ok := readProcStat(grandchild)
		if !ok {
			t.Fatal("the busy grandchild is gone")
		}
		if g.utime+g.stime >= spun {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the busy grandchild used %d ticks in a minute", g.utime+g.stime)
		}
		time.Sleep(50 * time.Millisecond)
	}
	own, ok := readProcStat(cmd.Process.Pid)
	if !ok {
		t.Fatal("the child is gone")
	}
	got := c.cpu()
	if got < spun*time.Second/ticksPerSecond {
		t.Errorf("cpu() = %v, want at least the grandchild's %v", got, spun*time.Second/ticksPerSecond)
	}
	if ownCPU := time.Duration(own.utime+own.stime) * time.Second / ticksPerSecond; ownCPU*2 > got {
		t.Errorf("the child's own CPU %v is not under half the group's %v: the grandchild is not what was counted", ownCPU, got)
	}
}
