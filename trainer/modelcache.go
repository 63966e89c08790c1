package trainer

import (
	"container/list"
	"sync"

	"github.com/switchyard-ai/switchyard/inference"
)

// modelCache keeps the most recently used decoded router models so Predict does not
// decode weights on every call. An evicted model is closed once no caller holds it.
type modelCache struct {
	mu    sync.Mutex
	cap   int
	order *list.List // front = most recent; values are *cachedModel
	byID  map[string]*list.Element
}

type cachedModel struct {
	id      string
	model   *inference.Model
	refs    int
	evicted bool
}

func newModelCache(capacity int) *modelCache {
	return &modelCache{cap: max(capacity, 1), order: list.New(), byID: map[string]*list.Element{}}
}

// acquire returns the cached model for id and a release function, or ok=false.
func (c *modelCache) acquire(id string) (*inference.Model, func(), bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[id]
	if !ok {
		return nil, nil, false
	}
	c.order.MoveToFront(el)
	cm := el.Value.(*cachedModel)
	cm.refs++
	return cm.model, c.releaser(cm), true
}

// add caches m under id (or returns the entry another caller added first) and acquires it.
func (c *modelCache) add(id string, m *inference.Model) (*inference.Model, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[id]; ok {
		_ = m.Close()
		cm := el.Value.(*cachedModel)
		cm.refs++
		c.order.MoveToFront(el)
		return cm.model, c.releaser(cm)
	}
	cm := &cachedModel{id: id, model: m, refs: 1}
	c.byID[id] = c.order.PushFront(cm)
	for c.order.Len() > c.cap {
		c.evictLocked(c.order.Back())
	}
	return m, c.releaser(cm)
}

// remove drops id from the cache (the model was archived or removed).
func (c *modelCache) remove(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[id]; ok {
		c.evictLocked(el)
	}
}

func (c *modelCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.order.Len() > 0 {
		c.evictLocked(c.order.Back())
	}
}

func (c *modelCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func (c *modelCache) evictLocked(el *list.Element) {
	cm := el.Value.(*cachedModel)
	c.order.Remove(el)
	delete(c.byID, cm.id)
	cm.evicted = true
	if cm.refs == 0 {
		_ = cm.model.Close()
	}
}

func (c *modelCache) releaser(cm *cachedModel) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			cm.refs--
			if cm.evicted && cm.refs == 0 {
				_ = cm.model.Close()
			}
		})
	}
}
