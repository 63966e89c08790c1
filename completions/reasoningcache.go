package completions

import (
	"container/list"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// Bounds of the reasoning cache: its entries, their text in all, and how long one is kept
// (a tool loop's next request comes within seconds or minutes).
const (
	reasoningCacheEntries = 4096
	reasoningCacheBytes   = 32 << 20
	reasoningCacheTTL     = time.Hour
)

// reasoningCache keeps the signed reasoning the gateway returned with tool calls, by the
// caller and the answer's first call id, so that a client that sends the assistant turn back
// without it — most OpenAI-SDK agents drop the unknown thinking_blocks field — still gives
// Claude the signed blocks it needs to go on thinking in the tool loop (without them the
// request would go without thinking). Ids are the upstream's (Claude's toolu_… are random)
// and entries are the caller's own: a caller gets back only reasoning it was answered with.
// Least recently used entries go first; it is per process (a replica that did not answer
// the turn has none, and the request goes without thinking, as before). The zero value is
// ready to use; it is safe for concurrent use.
type reasoningCache struct {
	mu    sync.Mutex
	order *list.List // of *reasoningEntry, most recent first
	byKey map[string]*list.Element
	bytes int
}

type reasoningEntry struct {
	key    string
	blocks []providers.ReasoningBlock
	size   int
	at     time.Time
}

func reasoningKey(owner, callID string) string { return owner + "\x00" + callID }

// put keeps the signed blocks of an answer whose first tool call is callID.
func (c *reasoningCache) put(owner, callID string, blocks []providers.ReasoningBlock, now time.Time) {
	size := 0
	for _, b := range blocks {
		size += len(b.Text) + len(b.Signature) + len(b.Redacted) + len(b.Encrypted)
	}
	if callID == "" || !providers.HasOpaque(blocks) || size > reasoningCacheBytes/16 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.order, c.byKey = list.New(), map[string]*list.Element{}
	}
	// Copies: a streamed answer's text shares a builder's spare capacity, which would be
	// kept beyond what is counted.
	kept := make([]providers.ReasoningBlock, len(blocks))
	for i, b := range blocks {
		kept[i] = providers.ReasoningBlock{Text: strings.Clone(b.Text), Signature: strings.Clone(b.Signature), Redacted: strings.Clone(b.Redacted),
			Encrypted: strings.Clone(b.Encrypted)}
	}
	blocks = kept
	key := reasoningKey(owner, callID)
	if el, ok := c.byKey[key]; ok {
		c.remove(el)
	}
	c.byKey[key] = c.order.PushFront(&reasoningEntry{key: key, blocks: blocks, size: size, at: now})
	c.bytes += size
	for c.order.Len() > reasoningCacheEntries || c.bytes > reasoningCacheBytes {
		c.remove(c.order.Back())
	}
}

// get returns the blocks kept for the caller's answer whose first tool call is callID.
func (c *reasoningCache) get(owner, callID string, now time.Time) []providers.ReasoningBlock {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[reasoningKey(owner, callID)]
	if !ok {
		return nil
	}
	e := el.Value.(*reasoningEntry)
	if now.Sub(e.at) > reasoningCacheTTL {
		c.remove(el)
		return nil
	}
	c.order.MoveToFront(el)
	return e.blocks
}

// remove drops el; mu is held.
func (c *reasoningCache) remove(el *list.Element) {
	e := el.Value.(*reasoningEntry)
	c.order.Remove(el)
	delete(c.byKey, e.key)
	c.bytes -= e.size
}
