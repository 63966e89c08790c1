// Command scaleout measures Switchyard on a shared PostgreSQL store: native completions
// with conversation writes through one and through two `switchyard serve` replicas, what a
// kill -9 of one replica under load costs, and raw store operations per second on bbolt
// and PostgreSQL.
//
//	go build -o /tmp/switchyard ./cmd/switchyard
//	eval "$(scripts/pg-test-cluster.sh start)"
//	go run ./bench/scaleout -serve-bin /tmp/switchyard -pg "$SWITCHYARD_TEST_POSTGRES" -mode replicas -c 32 -d 10s
//	go run ./bench/scaleout -serve-bin /tmp/switchyard -pg "$SWITCHYARD_TEST_POSTGRES" -mode kill -c 32 -d 10s
//	go run ./bench/scaleout -pg "$SWITCHYARD_TEST_POSTGRES" -mode store -d 5s
//	go run ./bench/scaleout -pg "$SWITCHYARD_TEST_POSTGRES" -mode queue -jobs 2000 -workers 8
//
// The mock upstream (OpenAI format, answers at once) runs in this process, as does the
// load generator: a closed loop of -c workers spreading requests round-robin over the
// replicas (a client-side load balancer). In kill mode one of two replicas is killed with
// SIGKILL half-way; a request whose connection fails is sent again to the other replica
// (what a load balancer's retry does), and the run counts requests answered, retried and
// lost (failed on every replica).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/jobqueue/riverqueue"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

const apiKey = "scaleout-bench-key"

var (
	mode     = flag.String("mode", "replicas", "replicas (1 then 2 replicas), kill (2 replicas, one killed half-way), store (Put/Get/List per second) or queue (jobs per second the River queue dispatches)")
	nJobs    = flag.Int("jobs", 2000, "queue mode: jobs to enqueue")
	nWorkers = flag.Int("workers", 8, "queue mode: workers taking jobs")
	serveBin = flag.String("serve-bin", "", "the switchyard binary (replicas and kill modes)")
	pgDSN    = flag.String("pg", os.Getenv("SWITCHYARD_TEST_POSTGRES"), "PostgreSQL URL (a fresh schema is used per run)")
	conc     = flag.Int("c", 32, "concurrent workers")
	dur      = flag.Duration("d", 10*time.Second, "duration of each measurement")
	runs     = flag.Int("runs", 1, "repeat each measurement and report every run")
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	if *pgDSN == "" {
		log.Fatal("-pg (or SWITCHYARD_TEST_POSTGRES) is required")
	}
	switch *mode {
	case "replicas":
		for r := 0; r < *runs; r++ {
			one := loadRun(1, false)
			two := loadRun(2, false)
			fmt.Printf("run %d: 1 replica %.0f req/s (p50 %.1f ms, p99 %.1f ms); 2 replicas %.0f req/s (p50 %.1f ms, p99 %.1f ms); ratio %.2f\n",
				r+1, one.rps, one.p50, one.p99, two.rps, two.p50, two.p99, two.rps/one.rps)
		}
	case "kill":
		for r := 0; r < *runs; r++ {
			res := loadRun(2, true)
			fmt.Printf("run %d: %d requests answered, %d retried on the other replica after the kill, %d lost; %.0f req/s\n",
				r+1, res.ok, res.retried, res.lost, res.rps)
		}
	case "store":
		for r := 0; r < *runs; r++ {
			storeOps()
		}
	case "queue":
		for r := 0; r < *runs; r++ {
			queueRate()
		}
	default:
		log.Fatalf("unknown -mode %q", *mode)
	}
}

// mockUpstream answers every chat completion at once with a short text and usage.
func mockUpstream() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hello from the mock"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}`)
	}))
}

type replicaProc struct {
	cmd  *exec.Cmd
	addr string
}

var addrRe = regexp.MustCompile(`switchyard listening.*addr=(\S+)`)

// startReplica runs `switchyard serve` on the shared schema; its log goes to a file.
func startReplica(mockURL, schema, dir string, i int) *replicaProc {
	logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("replica%d.log", i)))
	if err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command(*serveBin, "serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(dir, fmt.Sprint("data", i)),
		"--log-level", "info", "--cleanup-interval", "0")
	cmd.Env = append(os.Environ(), "SWITCHYARD_API_KEYS="+apiKey, "OPENAI_API_KEY=sk-mock", "OPENAI_BASE_URL="+mockURL+"/v1",
		"SWITCHYARD_STORE="+*pgDSN, "SWITCHYARD_STORE_SCHEMA="+schema)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if m := addrRe.FindStringSubmatch(sc.Text()); m != nil && !sent {
				addr <- m[1]
				sent = true
			}
		}
	}()
	select {
	case a := <-addr:
		return &replicaProc{cmd: cmd, addr: a}
	case <-time.After(30 * time.Second):
		log.Fatalf("replica %d did not start; see %s", i, logf.Name())
	}
	return nil
}

type result struct {
	rps, p50, p99     float64
	ok, retried, lost int64
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, DialContext: (&net.Dialer{Timeout: 2 * time.Second}).DialContext}}

const body = `{"models":["openai/gpt-4o-mini"],"messages":[{"role":"user","content":[{"type":"text","text":"Say hello to the load test."}]}]}`

func call(addr string) error {
	req, _ := http.NewRequest("POST", "http://"+addr+"/api/v1/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// loadRun starts n replicas on a fresh schema and drives them for -d.
func loadRun(n int, kill bool) result {
	if *serveBin == "" {
		log.Fatal("-serve-bin is required")
	}
	mock := mockUpstream()
	defer mock.Close()
	dir, _ := os.MkdirTemp("", "scaleout")
	defer os.RemoveAll(dir)
	schema := fmt.Sprintf("scaleout_%d_%d", os.Getpid(), time.Now().UnixNano())
	var reps []*replicaProc
	for i := range n {
		reps = append(reps, startReplica(mock.URL, schema, dir, i))
	}
	defer func() {
		for _, r := range reps {
			r.cmd.Process.Signal(syscall.SIGTERM)
			r.cmd.Wait()
		}
	}()
	// Warm up every replica's connections and caches.
	for _, r := range reps {
		for range 50 {
			if err := call(r.addr); err != nil {
				log.Fatalf("warm-up on %s: %v", r.addr, err)
			}
		}
	}
	var alive [2]atomic.Bool
	for i := range reps {
		alive[i].Store(true)
	}
	var ok, retried, lost atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	ctx, cancel := context.WithTimeout(context.Background(), *dur)
	defer cancel()
	if kill {
		go func() {
			time.Sleep(*dur / 2)
			alive[0].Store(false)
			reps[0].cmd.Process.Kill()
		}()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for ctx.Err() == nil {
				i := int(next.Add(1)) % len(reps)
				t0 := time.Now()
				err := call(reps[i].addr)
				if err != nil && len(reps) > 1 {
					// The load balancer's retry: the other replica.
					retried.Add(1)
					err = call(reps[1-i].addr)
				}
				if err != nil {
					if ctx.Err() == nil {
						lost.Add(1)
					}
					continue
				}
				ok.Add(1)
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	el := time.Since(start)
	slices.Sort(lat)
	q := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
	}
	return result{rps: float64(ok.Load()) / el.Seconds(), p50: q(0.5), p99: q(0.99), ok: ok.Load(), retried: retried.Load(), lost: lost.Load()}
}

// storeOps measures Put, Get and List (a 20-record page) per second at -c goroutines on
// bbolt and on PostgreSQL.
func storeOps() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "scaleout-store")
	defer os.RemoveAll(dir)
	bolt, err := boltstore.Open(filepath.Join(dir, "bench.db"), boltstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer bolt.Close()
	pg, err := pgstore.Open(ctx, *pgDSN, pgstore.Options{Schema: fmt.Sprintf("storeops_%d_%d", os.Getpid(), time.Now().UnixNano()), MaxConns: int32(*conc)})
	if err != nil {
		log.Fatal(err)
	}
	defer pg.Close()
	for _, s := range []struct {
		name string
		st   *store.Store
	}{{"bbolt", bolt}, {"postgres", pg}} {
		val := []byte(strings.Repeat("x", 512))
		var seq atomic.Int64
		put := opsPerSecond(func() error {
			k := fmt.Sprintf("conv/%012d", seq.Add(1))
			return s.st.Put(ctx, store.Messages, k, val)
		})
		written := seq.Load()
		var r atomic.Int64
		get := opsPerSecond(func() error {
			k := fmt.Sprintf("conv/%012d", 1+r.Add(1)%written)
			_, err := s.st.Get(ctx, store.Messages, k)
			return err
		})
		list := opsPerSecond(func() error {
			k := fmt.Sprintf("conv/%012d", 1+r.Add(1)%written)
			_, err := s.st.List(ctx, store.Messages, store.ListOptions{Prefix: "conv/", After: k, Limit: 20})
			return err
		})
		fmt.Printf("%-8s Put %8.0f/s  Get %8.0f/s  List(20) %8.0f/s  (%d goroutines)\n", s.name, put, get, list, *conc)
	}
}

func opsPerSecond(op func() error) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), *dur)
	defer cancel()
	var n atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if err := op(); err != nil {
					log.Fatal(err)
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds()
}

// queueRate enqueues -jobs no-op jobs on the River queue (a fresh schema) and measures how
// many per second -workers workers take and finish: the queue's own dispatch rate, without
// any job's work.
func queueRate() {
	ctx := context.Background()
	schema := fmt.Sprintf("queuebench_%d_%d", os.Getpid(), time.Now().UnixNano())
	d, err := pgstore.OpenDriver(ctx, *pgDSN, pgstore.Options{Schema: schema, MaxConns: int32(*nWorkers + 8)})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	q, err := riverqueue.Open(ctx, d.Pool(), riverqueue.Options{Schema: schema})
	if err != nil {
		log.Fatal(err)
	}
	var done atomic.Int64
	all := make(chan struct{})
	if err := q.Register("bench", jobqueue.Kind{Workers: *nWorkers, Run: func(ctx context.Context, id string) error {
		if done.Add(1) == int64(*nJobs) {
			close(all)
		}
		return nil
	}}); err != nil {
		log.Fatal(err)
	}
	t0 := time.Now()
	for i := range *nJobs {
		if err := q.Enqueue(ctx, "bench", fmt.Sprintf("job%06d", i)); err != nil {
			log.Fatal(err)
		}
	}
	enq := time.Since(t0)
	t1 := time.Now()
	if err := q.Start(ctx); err != nil {
		log.Fatal(err)
	}
	select {
	case <-all:
	case <-time.After(5 * time.Minute):
		log.Fatalf("only %d of %d jobs ran in 5 minutes", done.Load(), *nJobs)
	}
	run := time.Since(t1)
	q.Stop(ctx)
	fmt.Printf("queue: %d jobs enqueued in %.2fs (%.0f/s); dispatched and run by %d workers in %.2fs (%.0f jobs/s)\n",
		*nJobs, enq.Seconds(), float64(*nJobs)/enq.Seconds(), *nWorkers, run.Seconds(), float64(*nJobs)/run.Seconds())
}
