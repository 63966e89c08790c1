package completions

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"
)

// review12dCollidingNamespaces finds two namespaces whose 4-byte hashes (cacheKeyPrefix)
// are equal: a birthday search of about 2^16 names.
func review12dCollidingNamespaces(t *testing.T) (string, string) {
	seen := map[[4]byte]string{}
	for i := 0; i < 1<<22; i++ {
		ns := fmt.Sprint("run-", i)
		s := sha256.Sum256([]byte("namespace\x00" + ns))
		var k [4]byte
		copy(k[:], s[:4])
		if prev, ok := seen[k]; ok {
			return prev, ns
		}
		seen[k] = ns
	}
	t.Fatal("no collision found")
	return "", ""
}

// The namespace part of a cache key is 32 bits: two of one owner's namespaces (an
// evaluation run per namespace, say) share a prefix after ~65k names, and purging one
// deletes the other's answers.
func TestReview12dPurgeOneNamespaceKeepsAnothers(t *testing.T) {
	a, b := review12dCollidingNamespaces(t)
	h := newCacheHarness(t, nil)
	ctx := context.Background()
	req := chat("same question", "a/m")
	req.Cache = &CacheControl{Namespace: b}
	if _, err := h.g.Complete(ctx, Scope{Owner: "alice"}, req); err != nil {
		t.Fatal(err)
	}
	h.settle()
	n, err := h.g.PurgeCache(ctx, "alice", &a)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("purging namespace %q deleted %d answers of namespace %q", a, n, b)
	}
}

// blockingCache is a MemoryCache whose Puts wait for release.
type review12dBlockingCache struct {
	MemoryCache
	release chan struct{}
}

func (c *review12dBlockingCache) Put(ctx context.Context, key string, value []byte, stored, expires time.Time) error {
	<-c.release
	return c.MemoryCache.Put(ctx, key, value, stored, expires)
}

// An answer given before a purge but still being written (storeAnswer writes in the
// background) lands after the purge: DELETE /api/v1/cache answered, the answer is
// served from the cache again.
func TestReview12dPurgeCoversAnswersBeingWritten(t *testing.T) {
	bc := &review12dBlockingCache{release: make(chan struct{})}
	h := newCacheHarness(t, func(o *Options) { o.Cache.Driver = bc })
	ctx := context.Background()
	first, err := h.g.Complete(ctx, Scope{Owner: "alice"}, chat("q", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.PurgeCache(ctx, "alice", nil); err != nil {
		t.Fatal(err)
	}
	close(bc.release)
	h.settle()
	again, err := h.g.Complete(ctx, Scope{Owner: "alice"}, chat("q", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	if again.Cache == nil || again.Cache.Result == CacheHit {
		t.Fatalf("after a purge answered, the answer %s (made before it) is a %+v", first.Cache.Key, again.Cache)
	}
}

// Purges and deletions while answers are asked and written (go test -race).
func TestReview12dPurgeConcurrentWithAnswers(t *testing.T) {
	h := newCacheHarness(t, nil)
	ctx := context.Background()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			r, err := h.g.Complete(ctx, Scope{Owner: "alice"}, chat(fmt.Sprint("q", i%7), "a/m"))
			if err != nil {
				t.Error(err)
				return
			}
			_ = h.g.DeleteCached(ctx, "alice", r.Cache.Key)
		}
	}()
	for range 200 {
		if _, err := h.g.PurgeCache(ctx, "alice", nil); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	h.settle()
}
