package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

func review17aPG(t *testing.T) *store.Store {
	dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("SWITCHYARD_TEST_POSTGRES is not set (scripts/pg-test-cluster.sh start)")
	}
	st, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Schema: fmt.Sprintf("r17a_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// review17aCancelRace: replicas A and B on st; responses that end upstream after 300 ms are
// cancelled on B at about that moment. Whatever the cancel answered must stand: a response
// cancel answered "cancelled" must never later read anything else, and one it answered
// ended must read as it was answered; none may read failed (a live run taken for dead).
func review17aCancelRace(t *testing.T, st *store.Store) {
	up := &slowUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	a, b := backgroundReplica(t, st, ups), backgroundReplica(t, st, ups)
	type got struct{ id, status string }
	var mu sync.Mutex
	var answers []got
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, body := do2(t, "POST", a.URL+"/v1/responses", testKey, `{"model":"up/slow","input":"Think.","background":true}`, nil)
			if resp.StatusCode != 200 {
				t.Errorf("start: %d %s", resp.StatusCode, body)
				return
			}
			id := responseOf(t, body)["id"].(string)
			time.Sleep(time.Duration(250+i*15) * time.Millisecond)
			resp, body = do2(t, "POST", b.URL+"/v1/responses/"+id+"/cancel", testKey, "", nil)
			if resp.StatusCode != 200 {
				t.Errorf("cancel: %d %s", resp.StatusCode, body)
				return
			}
			mu.Lock()
			answers = append(answers, got{id, responseOf(t, body)["status"].(string)})
			mu.Unlock()
		}()
	}
	wg.Wait()
	time.Sleep(1500 * time.Millisecond) // past BackgroundStaleAfter (400 ms) several times
	for _, g := range answers {
		for _, base := range []string{a.URL, b.URL} {
			resp, body := do2(t, "GET", base+"/v1/responses/"+g.id, testKey, "", nil)
			if resp.StatusCode != 200 {
				t.Errorf("GET %s: %d %s", g.id, resp.StatusCode, body)
				continue
			}
			if s := responseOf(t, body)["status"]; s != g.status && !(g.status == "in_progress" || g.status == "queued") {
				t.Errorf("%s: cancel answered %s, later reads %v", g.id, g.status, s)
			} else if s == "failed" || s == "in_progress" || s == "queued" {
				t.Errorf("%s: reads %v after its run ended (cancel answered %s): %s", g.id, s, g.status, body)
			}
		}
	}
}

func TestReview17aCancelRaceMemstore(t *testing.T) { review17aCancelRace(t, memstore.New()) }

// TestReview17aCancelRacePostgres: the same with two replicas on PostgreSQL.
func TestReview17aCancelRacePostgres(t *testing.T) { review17aCancelRace(t, review17aPG(t)) }

// TestReview17aCancelAcrossReplicasPostgres: the merged cross-replica test (cancel and
// delete on B stop A's upstream call) on PostgreSQL, where replicas are for.
func TestReview17aCancelAcrossReplicasPostgres(t *testing.T) {
	st := review17aPG(t)
	up := &slowUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	a, b := backgroundReplica(t, st, ups), backgroundReplica(t, st, ups)
	resp, body := do2(t, "POST", a.URL+"/v1/responses", testKey, `{"model":"up/hang","input":"Think.","background":true}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("start: %d %s", resp.StatusCode, body)
	}
	id := responseOf(t, body)["id"].(string)
	pollStatus(t, b.URL, id, "in_progress")
	time.Sleep(time.Second) // a live run on PostgreSQL must not read failed (stale) on B
	if o := pollStatus(t, b.URL, id, "in_progress"); o["error"] != nil {
		t.Fatalf("live run: %v", o)
	}
	resp, body = do2(t, "POST", b.URL+"/v1/responses/"+id+"/cancel", testKey, "", nil)
	if resp.StatusCode != 200 || responseOf(t, body)["status"] != "cancelled" {
		t.Fatalf("cancel on B: %d %s", resp.StatusCode, body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, c := up.counts(); c < 1; _, c = up.counts() {
		if time.Now().After(deadline) {
			t.Fatal("A's upstream call was not cancelled")
		}
		time.Sleep(10 * time.Millisecond)
	}
	pollStatus(t, a.URL, id, "cancelled")
	resp, body = do2(t, "POST", a.URL+"/v1/responses", testKey, `{"model":"up/hang","input":"Again.","background":true}`, nil)
	id2 := responseOf(t, body)["id"].(string)
	pollStatus(t, b.URL, id2, "in_progress")
	if resp, body := do2(t, "DELETE", b.URL+"/v1/responses/"+id2, testKey, "", nil); resp.StatusCode != 200 {
		t.Fatalf("delete on B: %d %s", resp.StatusCode, body)
	}
	deadline = time.Now().Add(5 * time.Second)
	for _, c := up.counts(); c < 2; _, c = up.counts() {
		if time.Now().After(deadline) {
			t.Fatal("the deleted run's upstream call was not cancelled")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if resp, _ := do2(t, "GET", a.URL+"/v1/responses/"+id2, testKey, "", nil); resp.StatusCode != 404 {
		t.Fatalf("deleted response reads %d on A", resp.StatusCode)
	}
}

// TestReview17aOpenAPIResponseStatus: what is WRONG — the OpenAPI document gives the
// response object's status as a bare string; with background mode a client generated from
// it cannot know the values it must poll on (queued, in_progress) and the ends (completed,
// incomplete, failed, cancelled) — OpenAI's schema enumerates them, and this document does
// enumerate other closed sets (text.format.type). Fix: jsonschema:"enum=..." on
// ResponseObject.Status.
func TestReview17aOpenAPIResponseStatus(t *testing.T) {
	_, s, _ := completionsServer(t)
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]struct {
					Schema struct {
						Properties map[string]json.RawMessage `json:"properties"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(s.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/v1/responses", "/v1/responses/{response_id}"} {
		method := "post"
		if p != "/v1/responses" {
			method = "get"
		}
		var status struct {
			Enum []string `json:"enum"`
		}
		json.Unmarshal(doc.Paths[p][method].Responses["200"].Content["application/json"].Schema.Properties["status"], &status)
		enum := status.Enum
		for _, want := range []string{"queued", "in_progress", "completed", "incomplete", "failed", "cancelled"} {
			if !slices.Contains(enum, want) {
				t.Errorf("%s %s: status enum %v lacks %q", method, p, enum, want)
			}
		}
	}
}

// TestReview17aInputItemsOfBackground: GET input_items of a background response answers its
// input while it runs and after it ends (a check that held).
func TestReview17aInputItemsOfBackground(t *testing.T) {
	up := &slowUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	hs := backgroundReplica(t, newTestStore(t), ups)
	_, body := do2(t, "POST", hs.URL+"/v1/responses", testKey, `{"model":"up/slow","input":"Count the stars.","background":true}`, nil)
	id := responseOf(t, body)["id"].(string)
	for _, when := range []string{"running", "ended"} {
		if when == "ended" {
			pollStatus(t, hs.URL, id, "completed")
		}
		resp, b := do2(t, "GET", hs.URL+"/v1/responses/"+id+"/input_items", testKey, "", nil)
		if resp.StatusCode != 200 || !strings.Contains(string(b), "Count the stars.") {
			t.Fatalf("%s: input_items %d %s", when, resp.StatusCode, b)
		}
	}
}
