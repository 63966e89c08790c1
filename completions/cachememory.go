package completions

import (
	"container/list"
	"context"
	"strings"
	"sync"
	"time"
)

// DefaultMemoryCacheBytes bounds a MemoryCache made without a bound.
const DefaultMemoryCacheBytes = 256 << 20

// MemoryCache is a CacheDriver in this process's memory: fastest, but each replica keeps its
// own, and a restart empties it. Beyond MaxBytes of values the least recently used go
// first. The zero value is ready to use (with DefaultMemoryCacheBytes); it is safe for
// concurrent use.
type MemoryCache struct {
	// MaxBytes bounds the values kept (with a little for each key); 0 means
	// DefaultMemoryCacheBytes. A value over an eighth of it is not kept.
	MaxBytes int64

	mu    sync.Mutex
	order list.List // of *memoryEntry, most recently used first
	byKey map[string]*list.Element
	bytes int64
}

type memoryEntry struct {
	key             string
	value           []byte
	stored, expires time.Time
}

// memoryEntryOverhead is what an entry costs beyond its value (key, times, links), for
// the bound.
const memoryEntryOverhead = 160

func (m *MemoryCache) limit() int64 {
	if m.MaxBytes > 0 {
		return m.MaxBytes
	}
	return DefaultMemoryCacheBytes
}

// Get implements CacheDriver.
func (m *MemoryCache) Get(_ context.Context, key string, now time.Time) ([]byte, time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.byKey[key]
	if !ok {
		return nil, time.Time{}, ErrCacheMiss
	}
	e := el.Value.(*memoryEntry)
	if !now.Before(e.expires) {
		m.remove(el)
		return nil, time.Time{}, ErrCacheMiss
	}
	m.order.MoveToFront(el)
	return append([]byte(nil), e.value...), e.stored, nil
}

// Put implements CacheDriver.
func (m *MemoryCache) Put(_ context.Context, key string, value []byte, stored, expires time.Time) error {
	size := int64(len(value) + len(key) + memoryEntryOverhead)
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.byKey[key]; ok {
		m.remove(el)
	}
	if size > m.limit()/8 {
		return nil
	}
	if m.byKey == nil {
		m.byKey = map[string]*list.Element{}
	}
	m.byKey[key] = m.order.PushFront(&memoryEntry{key: key, value: append([]byte(nil), value...), stored: stored, expires: expires})
	m.bytes += size
	for m.bytes > m.limit() {
		m.remove(m.order.Back())
	}
	return nil
}

// DeletePrefix implements CacheDriver.
func (m *MemoryCache) DeletePrefix(_ context.Context, prefix string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for k, el := range m.byKey {
		if strings.HasPrefix(k, prefix) {
			m.remove(el)
			n++
		}
	}
	return n, nil
}

// Len is the number of entries kept (expired ones included until they are read or pushed
// out).
func (m *MemoryCache) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byKey)
}

func (m *MemoryCache) remove(el *list.Element) {
	e := m.order.Remove(el).(*memoryEntry)
	delete(m.byKey, e.key)
	m.bytes -= int64(len(e.value) + len(e.key) + memoryEntryOverhead)
}
