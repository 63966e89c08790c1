package main

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Separate processes (-serve-bin): the mock upstream runs as this program with -role mock,
// the gateway is the real `switchyard serve` binary, and this process is only the load
// generator. Direct = generator → mock; gateway = generator → serve → mock.

// child is a process this program started.
type child struct {
	name     string
	cmd      *exec.Cmd
	stopOnce sync.Once
}

// stop interrupts the child's process group (the child and what it started: a `go run`
// child's program) and waits for the child; a group not gone within stopGrace is killed.
func (c *child) stop() {
	c.stopOnce.Do(func() {
		forget(c)
		done := make(chan struct{})
		go func() { c.cmd.Wait(); close(done) }()
		if err := interruptGroup(c.cmd.Process); err != nil {
			killGroup(c.cmd.Process) // no interrupt to send (Windows)
		}
		deadline := time.NewTimer(stopGrace)
		defer deadline.Stop()
		select {
		case <-done:
		case <-deadline.C:
			killGroup(c.cmd.Process)
			<-done
			return
		}
		// The child is gone; what it started gets the rest of the time to stop too.
		for groupAlive(c.cmd.Process) {
			select {
			case <-deadline.C:
				killGroup(c.cmd.Process)
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
}

// stopGrace is how long stop waits for a child's process group to end before killing it.
var stopGrace = 5 * time.Second

// running are the children started and not yet stopped: an interrupt of this program
// stops them, since in process groups of their own the terminal's Ctrl-C reaches only it.
var running = struct {
	sync.Mutex
	children map[*child]bool
}{children: map[*child]bool{}}

// started records c among the running children and returns it.
func started(c *child) *child {
	running.Lock()
	defer running.Unlock()
	running.children[c] = true
	return c
}

func forget(c *child) {
	running.Lock()
	defer running.Unlock()
	delete(running.children, c)
}

// stopChildrenOnInterrupt stops the running children and exits when this program is
// interrupted (Ctrl-C) or terminated.
func stopChildrenOnInterrupt() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		running.Lock()
		var cs []*child
		for c := range running.children {
			cs = append(cs, c)
		}
		running.Unlock()
		for _, c := range cs {
			c.stop()
		}
		fmt.Fprintf(os.Stderr, "%s: stopped %d child processes\n", s, len(cs))
		os.Exit(130)
	}()
}

// withCPUs prefixes argv with taskset when cpus is set.
func withCPUs(cpus string, argv ...string) *exec.Cmd {
	if cpus != "" {
		argv = append([]string{"taskset", "-c", cpus}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	dieWithParent(cmd)
	ownProcessGroup(cmd)
	return cmd
}

// runMockRole serves the mock upstream on -listen and prints its address.
func runMockRole() {
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ln.Addr().String())
	hs := &http.Server{Handler: newMock(*frags, *answer), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(hs.Serve(ln))
}

// startMockProcess starts this program with -role mock and returns its base URL.
func startMockProcess() (*child, string) {
	return startRole("mock", *mockCPUs, "-role", "mock", "-listen", "127.0.0.1:0", "-frags", strconv.Itoa(*frags), "-answer", *answer)
}

// startRole starts this program with args (a -role that prints its listen address on its
// first line), as the child called name, and returns it with its base URL.
func startRole(name, cpus string, args ...string) (*child, string) {
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	cmd := withCPUs(cpus, append([]string{self}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		log.Fatalf("%s process: %v", name, err)
	}
	return started(&child{name: name, cmd: cmd}), "http://" + strings.TrimSpace(line)
}

// startServeProcess starts `switchyard serve` against the mock and waits for /healthz.
func startServeProcess(mockURL string) (*child, string, func()) {
	dir, err := os.MkdirTemp("", "gwbench-serve")
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	logFile, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		log.Fatal(err)
	}
	args := append([]string{*serveBin, "serve", "--addr", addr, "--data", filepath.Join(dir, "data"), "--log-level", *serveLog}, strings.Fields(*serveArgs)...)
	cmd := withCPUs(*serveCPUs, args...)
	cmd.Env = append(os.Environ(), "SWITCHYARD_API_KEYS="+apiKey, "OPENAI_API_KEY=sk-mock", "OPENAI_BASE_URL="+mockURL+"/v1")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	c := started(&child{name: "serve", cmd: cmd})
	url := "http://" + addr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if ctx.Err() != nil {
			c.stop()
			b, _ := os.ReadFile(logFile.Name())
			log.Fatalf("switchyard serve did not come up: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return c, url, func() {
		c.stop()
		logFile.Close()
		if fi, err := os.Stat(logFile.Name()); err == nil {
			fmt.Printf("serve log: %d bytes at --log-level %s\n", fi.Size(), *serveLog)
		}
		os.RemoveAll(dir)
	}
}

// cpuSnapshot is the CPU time used so far by each process taking part.
func cpuSnapshot(children []*child) map[string]time.Duration {
	m := map[string]time.Duration{}
	if len(children) == 0 {
		m["process"] = cpuTime()
		return m
	}
	m["generator"] = cpuTime()
	for _, c := range children {
		m[c.name] = c.cpu()
	}
	return m
}
