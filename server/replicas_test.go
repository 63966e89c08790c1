package server

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// replica is one Switchyard server process's worth of state on a shared store: its own
// gateway (breakers, write-behind queue, in-memory keys) and its own listener.
func replica(t *testing.T, st *store.Store, up *httptest.Server) (*httptest.Server, *Server) {
	t.Helper()
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.URL + "/v1", APIKey: "sk-up"}))
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, s
}

// testReplicasShareState checks what a load balancer in front of two replicas on one
// store needs: keys, conversations and job keys with their budgets work on either.
func testReplicasShareState(t *testing.T, st *store.Store) {
	up := &fakeOpenAIUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	a, sa := replica(t, st, ups)
	b, _ := replica(t, st, ups)
	ctx := context.Background()

	// A key created on A works on B.
	key, err := sa.Auth().CreateKey(ctx, "replica test")
	if err != nil {
		t.Fatal(err)
	}
	resp, body := post(t, b.URL+"/api/v1/completions", key, `{"models":["up/ok"],"messages":[{"role":"user","content":[{"type":"text","text":"first turn"}]}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("B with A's key: %d %s", resp.StatusCode, body)
	}
	conv := decodeMap(t, body)["conversationId"].(string)

	// The conversation continues on A with every earlier turn.
	resp, body = post(t, a.URL+"/api/v1/completions", key, fmt.Sprintf(`{"models":["up/ok"],"conversationId":%q,"messages":[{"role":"user","content":[{"type":"text","text":"second turn"}]}]}`, conv))
	if resp.StatusCode != 200 || decodeMap(t, body)["conversationId"] != conv {
		t.Fatalf("continue on A: %d %s", resp.StatusCode, body)
	}
	if sent := up.last(); len(sent) != 3 || sent[0]["content"] != "first turn" || sent[2]["content"] != "second turn" {
		t.Fatalf("A sent the upstream %v, want the first turn, its answer and the second turn", sent)
	}
	r := do(t, sa, "GET", "/api/v1/conversations/"+conv, key, "")
	if r.body["message_count"] != 4.0 {
		t.Fatalf("conversation on A: %s", r.raw)
	}

	// A job key minted on A (where the job runs) works on B, and B's calls count against
	// the one budget.
	jk, err := jobKeyMinter{auth: sa.Auth()}.MintKey(ctx, optimizer.KeyGrant{Owner: "key_job", JobID: "opt_x", Model: "up/ok", MaxCalls: 2, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	chat := `{"model":"up/ok","messages":[{"role":"user","content":"hi"}]}`
	for i, h := range []*httptest.Server{b, a} {
		if resp, body := post(t, h.URL+"/v1/chat/completions", jk.Key, chat); resp.StatusCode != 200 {
			t.Fatalf("job key call %d: %d %s", i, resp.StatusCode, body)
		}
	}
	if resp, body := post(t, b.URL+"/v1/chat/completions", jk.Key, chat); resp.StatusCode != 429 {
		t.Fatalf("third call on a 2-call budget: %d %s", resp.StatusCode, body)
	}
	if u := jk.Usage(); u.Tokens != 20 {
		t.Fatalf("A sees %d tokens used, want 20 (10 through B, 10 through A)", u.Tokens)
	}
	if resp, body := post(t, b.URL+"/v1/chat/completions", jk.Key, `{"model":"up/other","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != 401 && resp.StatusCode != 429 {
		t.Fatalf("job key on another model: %d %s", resp.StatusCode, body)
	}
	jk.Revoke()
	if resp, _ := post(t, b.URL+"/v1/chat/completions", jk.Key, chat); resp.StatusCode != 401 {
		t.Fatalf("revoked job key on B: %d", resp.StatusCode)
	}
	es, _ := st.List(ctx, store.ScopedKeys, store.ListOptions{})
	bs, _ := st.List(ctx, store.Budgets, store.ListOptions{})
	if len(es)+len(bs) != 0 {
		t.Fatalf("revoke left %d scoped keys and %d budgets in the store", len(es), len(bs))
	}
}

func TestReplicasShareStateMemstore(t *testing.T) {
	testReplicasShareState(t, memstore.New())
}

// TestReplicasShareStatePostgres runs the same against PostgreSQL, the deployment it is for.
func TestReplicasShareStatePostgres(t *testing.T) {
	dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("SWITCHYARD_TEST_POSTGRES is not set: scripts/test.sh starts a throwaway PostgreSQL cluster and sets it (needs the Debian package postgresql)")
	}
	st, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Schema: fmt.Sprintf("replicas_%d", os.Getpid())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	testReplicasShareState(t, st)
}

func TestExpiredSharedKeyIsRefused(t *testing.T) {
	st := newTestStore(t)
	up := httptest.NewServer(&fakeOpenAIUpstream{})
	t.Cleanup(up.Close)
	_, sa := replica(t, st, up)
	b, _ := replica(t, st, up)
	if _, err := sa.Auth().AddSharedKey(context.Background(), "sy-job-short", "key_x", nil, []byte(`{"tag":"t","budget":"none"}`), -time.Second); err != nil {
		t.Fatal(err)
	}
	if resp, _ := post(t, b.URL+"/v1/chat/completions", "sy-job-short", `{"model":"up/ok","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != 401 {
		t.Fatalf("expired shared key: %d", resp.StatusCode)
	}
	if es, _ := st.List(context.Background(), store.ScopedKeys, store.ListOptions{}); len(es) != 0 {
		t.Fatalf("expired key record kept: %d", len(es))
	}
}
