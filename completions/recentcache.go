package completions

import (
	"container/list"
	"sync"
	"time"
)

// Bounds of the gateway's recent-answer caches (the reasoning it returned with tool calls,
// the items of its /v1/responses answers): entries, their size in all, and how long one is
// kept (an agent's next request comes within seconds or minutes).
const (
	recentEntries = 4096
	recentBytes   = 32 << 20
	recentTTL     = time.Hour
)

// recentCache keeps values by key for a while: beyond recentEntries entries or recentBytes
// of them, the least recently used go first, and none is returned after recentTTL. It is per
// process. The zero value is ready to use; it is safe for concurrent use.
type recentCache[V any] struct {
	mu    sync.Mutex
	order *list.List // of *recentEntry[V], most recent first
	byKey map[string]*list.Element
	bytes int
}

type recentEntry[V any] struct {
	key  string
	v    V
	size int
	at   time.Time
}

// put keeps v, of size bytes, under key (replacing what was there); a value over a
// sixteenth of recentBytes is not kept.
func (c *recentCache[V]) put(key string, v V, size int, now time.Time) {
	if size > recentBytes/16 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.order, c.byKey = list.New(), map[string]*list.Element{}
	}
	if el, ok := c.byKey[key]; ok {
		c.remove(el)
	}
	c.byKey[key] = c.order.PushFront(&recentEntry[V]{key: key, v: v, size: size, at: now})
	c.bytes += size
	for c.order.Len() > recentEntries || c.bytes > recentBytes {
		c.remove(c.order.Back())
	}
}

// get returns the value kept under key, false when there is none (or it expired).
func (c *recentCache[V]) get(key string, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero V
	el, ok := c.byKey[key]
	if !ok {
		return zero, false
	}
	e := el.Value.(*recentEntry[V])
	if now.Sub(e.at) > recentTTL {
		c.remove(el)
		return zero, false
	}
	c.order.MoveToFront(el)
	return e.v, true
}

// remove drops el; mu is held.
func (c *recentCache[V]) remove(el *list.Element) {
	e := el.Value.(*recentEntry[V])
	c.order.Remove(el)
	delete(c.byKey, e.key)
	c.bytes -= e.size
}

// delete drops the value kept under key, if any.
func (c *recentCache[V]) delete(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.remove(el)
	}
}
