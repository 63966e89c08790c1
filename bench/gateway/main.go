// Command gateway measures the latency the completions gateway adds on top of its upstream.
//
// With -serve-bin, three processes: this one generates load, a second one (this program
// with -role mock) is the mock upstream, and the real `switchyard serve` binary (bbolt
// store, the OpenAI provider pointed at the mock with OPENAI_BASE_URL) is the gateway:
//
//	go build -o /tmp/switchyard ./cmd/switchyard
//	go run ./bench/gateway -serve-bin /tmp/switchyard -mode latency -n 3000 -api openai
//
// Without it, everything runs in one process on loopback TCP: a mock OpenAI-format upstream, the real
// Switchyard HTTP server (server.New with server.Completions, the real OpenAI adapter, an
// in-memory or bbolt store), and a load generator that calls both the mock directly and the
// mock through Switchyard, interleaved, in the same run. The difference is what the gateway
// adds (HTTP parsing, auth, validation, the adapter's second HTTP hop, pricing, conversation
// persistence, SSE re-framing).
//
//	go run ./bench/gateway -mode latency -n 5000            # concurrency 1, p50/p99 added
//	go run ./bench/gateway -mode rate -rate 5000 -d 10s     # open loop at a fixed rate
//	go run ./bench/gateway -mode max -c 32 -d 10s           # closed loop, max throughput
//
// Add -stream for streamed answers (20 fragments), -api openai for /v1/chat/completions,
// -store bolt for the bbolt store (fsync per answer; -nosync to skip it), -answer tool for
// a tool call instead of text (with -api openai; its arguments streamed in 20 fragments).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

const apiKey = "bench-key"

var (
	mode      = flag.String("mode", "latency", "latency (concurrency 1), rate (open loop at -rate), max (closed loop with -c workers) or library (concurrency 1, Go calls instead of the client-side HTTP hop)")
	n         = flag.Int("n", 5000, "requests per path in latency mode")
	rate      = flag.Float64("rate", 5000, "requests per second in rate mode")
	conc      = flag.Int("c", 32, "workers in max mode")
	dur       = flag.Duration("d", 10*time.Second, "duration per path in rate and max modes")
	stream    = flag.Bool("stream", false, "stream the answers")
	api       = flag.String("api", "native", "native (/api/v1/completions), openai (/v1/chat/completions) or passthrough (LiteLLM's /openai/v1/chat/completions, forwarded as it is)")
	storeKind = flag.String("store", "mem", "mem or bolt")
	noSync    = flag.Bool("nosync", false, "bolt store without fsync")
	frags     = flag.Int("frags", 20, "fragments per streamed answer")
	only      = flag.String("only", "", "max mode: measure only \"gateway\" (for profiling)")
	cpuProf   = flag.String("cpuprofile", "", "write a CPU profile of the measured phase to this file")
	serveBin  = flag.String("serve-bin", "", "measure in separate processes: this switchyard binary runs `serve` as the gateway, the mock runs as a second process (this program with -role mock), this process only generates load")
	serveLog  = flag.String("serve-log", "warn", "with -serve-bin: --log-level of switchyard serve (its log goes to a file)")
	serveArgs = flag.String("serve-args", "", "with -serve-bin: more flags for switchyard serve, space-separated (e.g. \"--cache memory\": every request after the first is then a cache hit)")
	serveCPUs = flag.String("serve-cpus", "", "with -serve-bin: taskset CPU list for switchyard serve")
	mockCPUs  = flag.String("mock-cpus", "", "with -serve-bin: taskset CPU list for the mock process")
	role      = flag.String("role", "", "\"mock\": only serve the mock upstream on -listen (used by -serve-bin)")
	listen    = flag.String("listen", "127.0.0.1:0", "address for -role mock")
	upstream  = flag.String("upstream", "", "for -role proxy: the mock's base URL")
	floor     = flag.Bool("floor", false, "with the separate-process setup: put a bare httputil.ReverseProxy process (-role proxy) where switchyard serve would be, to calibrate the cost of the extra hop itself")
	memProf   = flag.String("memprofile", "", "write an allocation profile (every allocation of the measured phase) to this file")
	answer    = flag.String("answer", "text", "what the mock answers: text, or tool (a tool call whose arguments are streamed in -frags fragments after the one with its id and name); tool sends tools with every request")
	withTools = flag.Bool("tools", false, "send tools (one function with a JSON Schema) with every request even when the answer is text")
)

// mockUpstream answers OpenAI chat completions at once with a fixed answer.
type mockUpstream struct {
	full   []byte
	chunks [][]byte
	tail   []byte
}

// newMock returns the mock; answer "tool" makes it answer with a call of get_weather.
func newMock(nfrags int, answer string) *mockUpstream {
	if answer == "tool" {
		return newToolMock(nfrags)
	}
	m := &mockUpstream{}
	words := make([]string, nfrags)
	for i := range words {
		words[i] = fmt.Sprintf("tok%d ", i)
	}
	m.full = fmt.Appendf(nil, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":%d,"total_tokens":%d}}`,
		strings.Join(words, ""), nfrags, 12+nfrags)
	for _, w := range words {
		m.chunks = append(m.chunks, fmt.Appendf(nil, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", w))
	}
	m.tail = fmt.Appendf(nil, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n", nfrags, 12+nfrags)
	return m
}

// ServeHTTP answers one chat completion, streamed when the body asks for it.
func (m *mockUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if !bytes.Contains(body, []byte(`"stream":true`)) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(m.full)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	f := w.(http.Flusher)
	for _, c := range m.chunks {
		w.Write(c)
		f.Flush()
	}
	w.Write(m.tail)
}

func serve(h http.Handler) (string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String(), func() { hs.Close() }
}

func client(conns int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = conns * 2
	t.MaxIdleConnsPerHost = conns * 2
	t.DisableCompression = true
	return &http.Client{Transport: t}
}

// target is one path to measure.
type target struct {
	name string
	url  string
	body []byte
	auth string
}

func (t target) call(c *http.Client) error {
	req, err := http.NewRequest("POST", t.url, bytes.NewReader(t.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if t.auth != "" {
		req.Header.Set("Authorization", "Bearer "+t.auth)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: HTTP %d: %s", t.name, resp.StatusCode, b)
	}
	if *stream && !bytes.HasSuffix(b, []byte("data: [DONE]\n\n")) {
		return fmt.Errorf("%s: stream without [DONE]: %s", t.name, b)
	}
	if *answer == "tool" && !bytes.Contains(b, []byte(`"tool_calls":[{`)) {
		return fmt.Errorf("%s: answer without a tool call: %s", t.name, b)
	}
	return nil
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(p * float64(len(s)-1))
	return s[i]
}

func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d.Nanoseconds())/1000) }

// children are the processes taking part besides this one (-serve-bin), for CPU accounting.
var children []*child

func main() {
	flag.Parse()
	switch *role {
	case "mock":
		runMockRole()
		return
	case "proxy":
		runProxyRole()
		return
	}
	if *serveBin != "" || *floor {
		external()
		return
	}
	mock := newMock(*frags, *answer)
	upURL, stopUp := serve(mock)
	defer stopUp()

	var st *store.Store
	switch *storeKind {
	case "mem":
		st = memstore.New()
	case "bolt":
		dir, err := os.MkdirTemp("", "gwbench")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		st, err = boltstore.Open(filepath.Join(dir, "bench.db"), boltstore.Options{NoSync: *noSync})
		if err != nil {
			log.Fatal(err)
		}
		defer st.Close()
	default:
		log.Fatalf("-store must be mem or bolt")
	}
	conns := max(*conc, 256)
	name := "mock"
	if *api == "passthrough" {
		name = "openai" // the pass-through routes forward to the provider of that name
	}
	adapter := providers.NewOpenAI(providers.Config{Name: name, BaseURL: upURL + "/v1", APIKey: "sk-mock", HTTPClient: client(conns)})
	g, err := completions.New(completions.Options{Providers: providers.NewRegistry(adapter), Prices: providers.DefaultCatalog(), Store: st})
	if err != nil {
		log.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	srv, err := server.New(server.Config{Store: st, APIKeys: []string{apiKey}, Logger: quiet}, server.Completions(g))
	if err != nil {
		log.Fatal(err)
	}
	gwURL, stopGW := serve(srv)
	defer stopGW()

	direct, gw := bodies(upURL, gwURL, name)
	measure(client(conns), direct, gw, adapter, g)
}

// bodies returns the direct and gateway targets for the mock at upURL and Switchyard at
// gwURL, where the mock is known as provider/m.
func bodies(upURL, gwURL, provider string) (direct, gw target) {
	s := "false"
	if *stream {
		s = "true"
	}
	tools := ""
	if sendTools() {
		tools = "," + toolsJSON
	}
	direct = target{name: "direct", url: upURL + "/v1/chat/completions", auth: "sk-mock",
		body: []byte(`{"model":"m","messages":[{"role":"user","content":"What is the capital of France?"}],"stream":` + s + tools + `}`)}
	gw = target{name: "gateway", auth: apiKey}
	switch *api {
	case "native":
		if sendTools() {
			log.Fatal("-answer tool and -tools need -api openai (the native API has no tools)")
		}
		gw.url = gwURL + "/api/v1/completions"
		gw.body = []byte(`{"models":["` + provider + `/m"],"messages":[{"role":"user","content":[{"type":"text","text":"What is the capital of France?"}]}],"stream":` + s + `}`)
	case "openai":
		gw.url = gwURL + "/v1/chat/completions"
		gw.body = []byte(`{"model":"` + provider + `/m","messages":[{"role":"user","content":"What is the capital of France?"}],"stream":` + s + tools + `}`)
	case "passthrough":
		// LiteLLM's pass-through: the body goes to the mock as it is, so it names the
		// mock's own model, and the operator's key may forward any.
		gw.url = gwURL + "/openai/v1/chat/completions"
		gw.body = direct.body
	default:
		log.Fatalf("-api must be native, openai or passthrough")
	}
	return direct, gw
}

// external measures with the mock and switchyard serve in processes of their own.
func external() {
	if *mode == "library" {
		log.Fatal("-mode library needs the in-process setup (no -serve-bin)")
	}
	stopChildrenOnInterrupt()
	mc, upURL := startMockProcess()
	defer mc.stop()
	var sc *child
	var gwURL string
	if *floor {
		if *api != "openai" {
			log.Fatal("-floor forwards only /v1/chat/completions: use -api openai")
		}
		sc, gwURL = startProxyProcess(upURL)
		defer sc.stop()
	} else {
		var stopServe func()
		sc, gwURL, stopServe = startServeProcess(upURL)
		defer stopServe()
	}
	children = []*child{mc, sc}
	direct, gw := bodies(upURL, gwURL, "openai")
	fmt.Printf("separate processes: generator pid %d, mock pid %d (cpus %q), switchyard serve pid %d (cpus %q, --log-level %s, bbolt store)\n",
		os.Getpid(), mc.cmd.Process.Pid, *mockCPUs, sc.cmd.Process.Pid, *serveCPUs, *serveLog)
	measure(client(max(*conc, 256)), direct, gw, nil, nil)
}

func measure(c *http.Client, direct, gw target, adapter *providers.OpenAI, g *completions.Gateway) {
	// Warm up both paths (connections, JIT-free but caches and pools).
	for range 500 {
		if err := direct.call(c); err != nil {
			log.Fatal(err)
		}
		if err := gw.call(c); err != nil {
			log.Fatal(err)
		}
	}
	if *cpuProf != "" {
		f, err := os.Create(*cpuProf)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if *memProf != "" {
		runtime.MemProfileRate = 1
		defer func() {
			f, err := os.Create(*memProf)
			if err != nil {
				log.Fatal(err)
			}
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}()
	}
	storeDesc := *storeKind
	if *serveBin != "" {
		storeDesc = "serve's bbolt"
	}
	fmt.Printf("mode=%s stream=%v api=%s store=%s nosync=%v GOMAXPROCS=%d\n", *mode, *stream, *api, storeDesc, *noSync, runtime.GOMAXPROCS(0))
	switch *mode {
	case "latency":
		latency(c, direct, gw)
	case "rate":
		fixedRate(c, direct, gw)
	case "max":
		maxThroughput(c, direct, gw)
	case "library":
		library(adapter, g)
	default:
		log.Fatalf("-mode must be latency, rate or max")
	}
}

// latency calls both paths alternately, one request at a time.
func latency(c *http.Client, direct, gw target) {
	var dl, gl []time.Duration
	c0 := cpuSnapshot(children)
	for i := range *n {
		for j, t := range []target{direct, gw} {
			if i%2 == 1 { // alternate which path goes first
				t = []target{gw, direct}[j]
			}
			start := time.Now()
			if err := t.call(c); err != nil {
				log.Fatal(err)
			}
			d := time.Since(start)
			if t.name == "direct" {
				dl = append(dl, d)
			} else {
				gl = append(gl, d)
			}
		}
	}
	report(dl, gl, 0, 0)
	if sv, ok := cpuSince(c0)["serve"]; ok {
		// Only the gateway path reaches serve, so all of its CPU is the gateway's.
		fmt.Printf("serve: %s CPU per request\n", us(sv/time.Duration(len(gl))))
	}
}

// cpuReport prints the process CPU time per request: unlike req/s it does not depend on
// how much of the machine other processes take.
func cpuReport(name string, cpu map[string]time.Duration, reqs int) {
	if reqs == 0 {
		return
	}
	if p, ok := cpu["process"]; ok {
		per := p / time.Duration(reqs)
		fmt.Printf("%s: %s CPU per request (whole process), i.e. %.0f req/s if it had 2 cores to itself\n", name, us(per), 2*float64(time.Second)/float64(per))
		return
	}
	fmt.Printf("%s: CPU per request:", name)
	for _, k := range []string{"generator", "mock", "serve"} {
		fmt.Printf(" %s %s", k, us(cpu[k]/time.Duration(reqs)))
	}
	if sv := cpu["serve"] / time.Duration(reqs); sv > 0 {
		fmt.Printf(" (serve alone on 2 cores: %.0f req/s)", 2*float64(time.Second)/float64(sv))
	}
	fmt.Println()
}

// cpuSince is the CPU used by each process since the snapshot c0.
func cpuSince(c0 map[string]time.Duration) map[string]time.Duration {
	d := cpuSnapshot(children)
	for k := range d {
		d[k] -= c0[k]
	}
	return d
}

func report(dl, gl []time.Duration, drps, grps float64) {
	fmt.Printf("direct:  p50 %s  p99 %s", us(pct(dl, .5)), us(pct(dl, .99)))
	if drps > 0 {
		fmt.Printf("  %.0f req/s", drps)
	}
	fmt.Printf("\ngateway: p50 %s  p99 %s", us(pct(gl, .5)), us(pct(gl, .99)))
	if grps > 0 {
		fmt.Printf("  %.0f req/s", grps)
	}
	fmt.Printf("\nadded:   p50 %s  p99 %s\n", us(pct(gl, .5)-pct(dl, .5)), us(pct(gl, .99)-pct(dl, .99)))
}

// fixedRate sends requests at -rate per second for -d (open loop: latency counts from the
// scheduled send time, so a backlog shows up as latency), first to the mock, then through
// the gateway.
func fixedRate(c *http.Client, direct, gw target) {
	cpu := map[string]map[string]time.Duration{}
	run := func(t target) ([]time.Duration, float64, int64) {
		c0 := cpuSnapshot(children)
		defer func() { cpu[t.name] = cpuSince(c0) }()
		total := int(*rate * dur.Seconds())
		jobs := make(chan time.Time, total)
		lat := make([]time.Duration, 0, total)
		var mu sync.Mutex
		var errs atomic.Int64
		var wg sync.WaitGroup
		for range 512 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for at := range jobs {
					if err := t.call(c); err != nil {
						errs.Add(1)
						continue
					}
					d := time.Since(at)
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			}()
		}
		start := time.Now()
		interval := time.Duration(float64(time.Second) / *rate)
		for i := range total {
			at := start.Add(time.Duration(i) * interval)
			if d := time.Until(at); d > 0 {
				time.Sleep(d)
			}
			jobs <- at
		}
		close(jobs)
		wg.Wait()
		return lat, float64(len(lat)) / time.Since(start).Seconds(), errs.Load()
	}
	dl, drps, derr := run(direct)
	gl, grps, gerr := run(gw)
	fmt.Printf("target %.0f req/s for %s; errors direct %d gateway %d\n", *rate, *dur, derr, gerr)
	report(dl, gl, drps, grps)
	cpuReport("direct ", cpu["direct"], len(dl))
	cpuReport("gateway", cpu["gateway"], len(gl))
}

// maxThroughput runs -c closed-loop workers for -d on each path.
func maxThroughput(c *http.Client, direct, gw target) {
	cpu := map[string]map[string]time.Duration{}
	run := func(t target) ([]time.Duration, float64) {
		ctx, cancel := context.WithTimeout(context.Background(), *dur)
		defer cancel()
		c0 := cpuSnapshot(children)
		defer func() { cpu[t.name] = cpuSince(c0) }()
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		start := time.Now()
		for range *conc {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine []time.Duration
				for ctx.Err() == nil {
					s := time.Now()
					if err := t.call(c); err != nil {
						log.Fatal(err)
					}
					mine = append(mine, time.Since(s))
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		return lat, float64(len(lat)) / time.Since(start).Seconds()
	}
	var dl []time.Duration
	var drps float64
	if *only != "gateway" {
		dl, drps = run(direct)
	}
	gl, grps := run(gw)
	fmt.Printf("%d workers for %s each\n", *conc, *dur)
	report(dl, gl, drps, grps)
	cpuReport("direct ", cpu["direct"], len(dl))
	cpuReport("gateway", cpu["gateway"], len(gl))
}

// library compares, one call at a time, the OpenAI adapter calling the mock (one HTTP hop)
// with completions.Gateway calling the mock through the same adapter: the difference is the
// gateway's own work (validation, ordering, pricing, conversation storage, chunk framing),
// without the HTTP server in front of it.
func library(adapter *providers.OpenAI, g *completions.Gateway) {
	ctx := context.Background()
	preq := &providers.Request{Model: "m", Messages: []providers.Message{{Role: "user", Content: "What is the capital of France?"}}}
	if sendTools() {
		preq.Tools = benchTools
	}
	greq := func() *completions.Request {
		r := &completions.Request{Models: []string{"mock/m"}, Messages: []completions.Message{{Role: "user",
			Content: []completions.ContentBlock{{Type: "text", Text: "What is the capital of France?"}}}}}
		if sendTools() {
			r.Tools = benchTools
		}
		return r
	}
	callDirect := func() error {
		if !*stream {
			_, err := adapter.Complete(ctx, preq)
			return err
		}
		st, err := adapter.Stream(ctx, preq)
		if err != nil {
			return err
		}
		defer st.Close()
		for {
			if _, err := st.Recv(); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
		}
	}
	callGateway := func() error {
		if !*stream {
			_, err := g.Complete(ctx, completions.Scope{Owner: "bench"}, greq())
			return err
		}
		st, err := g.Stream(ctx, completions.Scope{Owner: "bench"}, greq())
		if err != nil {
			return err
		}
		defer st.Close()
		for {
			if _, err := st.Recv(); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
		}
	}
	var dl, gl []time.Duration
	for i := range *n {
		order := []bool{false, true}
		if i%2 == 1 {
			order = []bool{true, false}
		}
		for _, isGW := range order {
			start := time.Now()
			var err error
			if isGW {
				err = callGateway()
			} else {
				err = callDirect()
			}
			if err != nil {
				log.Fatal(err)
			}
			if isGW {
				gl = append(gl, time.Since(start))
			} else {
				dl = append(dl, time.Since(start))
			}
		}
	}
	report(dl, gl, 0, 0)
}
