package completions

import (
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// reasoningCache keeps the reasoning the gateway returned with tool calls that its provider
// needs back (Claude's signed blocks, OpenAI's encrypted reasoning), by the caller and the
// answer's first call id, so that a client that sends the assistant turn back without it —
// most OpenAI-SDK agents drop the unknown thinking_blocks field — still gives the model the
// reasoning it needs to go on in the tool loop (without it, Claude's request would go
// without thinking). Ids are the upstream's (Claude's toolu_… are random) and entries are
// the caller's own: a caller gets back only reasoning it was answered with. It is a
// recentCache (per process: a replica that did not answer the turn has none, and the
// request goes as before). The zero value is ready to use; it is safe for concurrent use.
type reasoningCache struct {
	recent recentCache[[]providers.ReasoningBlock]
}

func reasoningKey(owner, callID string) string { return owner + "\x00" + callID }

// put keeps the blocks of an answer whose first tool call is callID, when one of them must
// go back to its provider.
func (c *reasoningCache) put(owner, callID string, blocks []providers.ReasoningBlock, now time.Time) {
	if callID == "" || !providers.HasOpaque(blocks) {
		return
	}
	// Copies: a streamed answer's text shares a builder's spare capacity, which would be
	// kept beyond what is counted.
	size := 0
	kept := make([]providers.ReasoningBlock, len(blocks))
	for i, b := range blocks {
		size += len(b.Text) + len(b.Signature) + len(b.Redacted) + len(b.Encrypted)
		kept[i] = providers.ReasoningBlock{Text: strings.Clone(b.Text), Signature: strings.Clone(b.Signature), Redacted: strings.Clone(b.Redacted),
			Encrypted: strings.Clone(b.Encrypted), EncryptedBy: strings.Clone(b.EncryptedBy)}
	}
	c.recent.put(reasoningKey(owner, callID), kept, size, now)
}

// get returns the blocks kept for the caller's answer whose first tool call is callID.
func (c *reasoningCache) get(owner, callID string, now time.Time) []providers.ReasoningBlock {
	blocks, _ := c.recent.get(reasoningKey(owner, callID), now)
	return blocks
}
