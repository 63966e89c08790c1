package completions

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// countingDriver counts the reads of store.Responses that reach the driver.
type countingDriver struct {
	store.Driver
	gets atomic.Int64
}

func (d *countingDriver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	if c == store.Responses {
		d.gets.Add(1)
	}
	return d.Driver.Get(ctx, c, key)
}

// bigTools is a tool list of about 200 KB (an agent with a hundred MCP tools): the
// ResponseObject of every turn echoes it, so every stored record carries it.
func bigTools() string {
	var b strings.Builder
	b.WriteString(`"tools":[`)
	for i := 0; i < 100; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"type":"function","name":"tool_%d","description":"%s","parameters":{"type":"object"}}`, i, strings.Repeat("d", 2000))
	}
	b.WriteString("]")
	return b.String()
}

// TestReview13aLongConversationReadsWholeChainEveryTurn: on one warm replica, a turn of a
// conversation of 250 answers whose records carry an agent's tool list (each record
// echoes the request's tools) reads every earlier answer back from the store: the chain
// no longer fits recentCache's 32 MiB, and a newest-to-oldest walk over an LRU evicts what
// the next walk needs. README: "a long conversation costs one write per turn".
func TestReview13aLongConversationReadsWholeChainEveryTurn(t *testing.T) {
	d := &countingDriver{Driver: memstore.NewDriver()}
	if dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES"); dsn != "" {
		pd, err := pgstore.OpenDriver(context.Background(), dsn, pgstore.Options{Schema: fmt.Sprintf("r13a_%d", time.Now().UnixNano())})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pd.Close() })
		d.Driver = pd
	}
	h := newHarness(t, func(o *Options) { o.Store = store.New(d) })
	h.a.on("m", step{text: "ok"})
	tools := bigTools()
	prev := ""
	const turns = 250
	var last time.Duration
	for i := 0; i < turns; i++ {
		body := `{"model":"a/m",` + tools + `,"input":"turn ` + fmt.Sprint(i) + `"`
		if prev != "" {
			body += `,"previous_response_id":"` + prev + `"`
		}
		d.gets.Store(0)
		start := time.Now()
		o, err := respond(t, h.g, "alice", body+"}")
		if err != nil {
			t.Fatal(err)
		}
		last = time.Since(start)
		prev = o.ID
		if n := d.gets.Load(); n > 2 {
			t.Fatalf("turn %d on the replica that wrote every earlier answer read %d answers from the store (%s)", i+1, n, last)
		}
	}
}
