package completions

import (
	"context"
	"encoding/json"
	"fmt"
)

// OpenAI's Responses API stores what it answers (store defaults to true), and clients built
// on that send earlier output back as {"type": "item_reference", "id": …} instead of the
// item: the Vercel AI SDK's default OpenAI provider does, for the text a model wrote before
// a tool call, for reasoning items and for a conversation's next turn. The gateway keeps
// the output items of its recent answers per caller (an hour, in the process that
// answered; see recentCache), and finds the others in its stored answers (StoreResponse),
// so those references resolve as OpenAI's do.

// KeepResponseItems keeps the output items of the completed response o for owner, for
// item_reference items of owner's later requests (ResolveItemReferences). Items of a
// response that failed are not kept.
func (g *Gateway) KeepResponseItems(owner string, o *ResponseObject) {
	if o == nil || o.Status == "failed" {
		return
	}
	now := g.opts.Now()
	for _, out := range o.Output {
		it, size := inputItemOf(out)
		g.answered.put(itemKey(owner, out.ID), it, size, now)
	}
}

// ResolveItemReferences replaces the item_reference items of r's input with the items they
// name, kept by KeepResponseItems or StoreResponse for owner; a reference to an item the
// gateway does not have is a validation error naming it.
func (g *Gateway) ResolveItemReferences(ctx context.Context, owner string, r *ResponsesRequest) error {
	now := g.opts.Now()
	for i := range r.Input.Items {
		it := &r.Input.Items[i]
		if it.Type != "item_reference" {
			continue
		}
		if it.ID == "" {
			return invalid(fmt.Sprintf("input[%d].id", i), "is required in an item_reference")
		}
		kept, ok := g.answered.get(itemKey(owner, it.ID), now)
		if !ok {
			var err error
			if kept, ok, err = g.storedItem(ctx, owner, it.ID); err != nil {
				return err
			}
		}
		if !ok {
			return invalid(fmt.Sprintf("input[%d].id", i), "item %q is not known here: it is not an item of an answer this gateway keeps for this key "+
				"(answers asked with store: false are kept %s, in the process that answered); send the item itself", it.ID, recentTTL)
		}
		*it = kept
	}
	return nil
}

func itemKey(owner, id string) string { return owner + "\x00" + id }

// inputItemOf is output item out as an input item that says the same, and its size.
func inputItemOf(out ResponseOutputItem) (ResponsesItem, int) {
	it := ResponsesItem{Type: out.Type, ID: out.ID, CallID: out.CallID, Name: out.Name, Namespace: out.Namespace,
		Summary: out.Summary, EncryptedContent: out.EncryptedContent, Status: out.Status,
		ServerLabel: out.ServerLabel, Tools: out.Tools, Error: out.Error, ApprovalRequestID: out.ApprovalRequestID}
	size := len(out.ID) + len(out.CallID) + len(out.Name) + len(out.EncryptedContent) + len(out.ServerLabel)
	if out.Output != nil {
		it.Output, _ = json.Marshal(*out.Output)
		size += len(it.Output)
	}
	if out.Error != nil {
		size += len(*out.Error)
	}
	for _, t := range out.Tools {
		size += len(t.Name) + len(t.Description) + len(t.InputSchema) + len(t.Annotations)
	}
	if out.Arguments != nil {
		it.Arguments = *out.Arguments
		size += len(it.Arguments)
	}
	if out.Input != nil {
		it.Input = *out.Input
		size += len(it.Input)
	}
	for _, s := range out.Summary {
		size += len(s.Text)
	}
	if out.Type == "message" {
		it.Role = "assistant"
		for _, p := range out.Content {
			it.Content.Parts = append(it.Content.Parts, ResponsesPart{Type: p.Type, Text: p.Text, Refusal: p.Refusal})
			size += len(p.Text) + len(p.Refusal)
		}
	}
	return it, size
}
