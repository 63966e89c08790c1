package server

import (
	"net/http"

	"github.com/switchyard-ai/switchyard/completions"
)

// conversationCreate is the body of POST /v1/conversations.
type conversationCreate struct {
	// Items are the conversation's first items (at most 20).
	Items    []completions.ResponsesItem `json:"items,omitempty"`
	Metadata map[string]string           `json:"metadata,omitempty"`
}

// conversationUpdate is the body of POST /v1/conversations/{conversation_id}.
type conversationUpdate struct {
	Metadata map[string]string `json:"metadata" jsonschema:"required"`
}

// conversationItemsCreate is the body of POST /v1/conversations/{conversation_id}/items.
type conversationItemsCreate struct {
	Items []completions.ResponsesItem `json:"items" jsonschema:"required"`
}

// conversationDeletion is the answer of DELETE /v1/conversations/{conversation_id}.
type conversationDeletion struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "conversation.deleted"
	Deleted bool   `json:"deleted"`
}

// conversationErrors are the failures of the Conversations API routes.
var conversationErrors = map[int]string{
	400: "validation error naming the field (param)",
	404: "no conversation (or item) with that id is kept for this key",
}

// openAIConversationRoutes adds OpenAI's Conversations API: conversations of items that
// /v1/responses requests name (completions.Gateway.CreateOpenAIConversation and the rest).
// Conversations belong to the key that created them, as stored responses do.
func (s *Server) openAIConversationRoutes(g *completions.Gateway) {
	tags := []string{"Completions"}
	route := func(method, path, summary string, req, resp any, h HandlerFunc) {
		s.Handle(Route{Method: method, Path: path, Summary: summary, Tags: tags, Request: req, Response: resp,
			ScopedKeys: true, Errors: conversationErrors}, h)
	}
	route("POST", "/v1/conversations", "Create a conversation (OpenAI's Conversations API) with its first items",
		conversationCreate{}, completions.OpenAIConversation{},
		func(w http.ResponseWriter, r *http.Request) error {
			var body conversationCreate
			if err := decodeJSON(r, &body, decodeOptions{AllowUnknownFields: true}); err != nil {
				return err
			}
			c, err := g.CreateOpenAIConversation(r.Context(), responsesOwner(r), body.Items, body.Metadata)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, c)
			return nil
		})
	route("GET", "/v1/conversations/{conversation_id}", "A conversation", nil, completions.OpenAIConversation{},
		func(w http.ResponseWriter, r *http.Request) error {
			c, err := g.OpenAIConversationOf(r.Context(), responsesOwner(r), r.PathValue("conversation_id"))
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, c)
			return nil
		})
	route("POST", "/v1/conversations/{conversation_id}", "Replace a conversation's metadata", conversationUpdate{}, completions.OpenAIConversation{},
		func(w http.ResponseWriter, r *http.Request) error {
			var body conversationUpdate
			if err := decodeJSON(r, &body, decodeOptions{AllowUnknownFields: true}); err != nil {
				return err
			}
			if body.Metadata == nil {
				ae := Validation(http.StatusBadRequest, "metadata: is required (an object; {} clears it)")
				ae.Param = "metadata"
				return ae
			}
			c, err := g.UpdateOpenAIConversation(r.Context(), responsesOwner(r), r.PathValue("conversation_id"), body.Metadata)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, c)
			return nil
		})
	route("DELETE", "/v1/conversations/{conversation_id}", "Delete a conversation and its items", nil, conversationDeletion{},
		func(w http.ResponseWriter, r *http.Request) error {
			id := r.PathValue("conversation_id")
			if err := g.DeleteOpenAIConversation(r.Context(), responsesOwner(r), id); err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, conversationDeletion{ID: id, Object: "conversation.deleted", Deleted: true})
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/v1/conversations/{conversation_id}/items", Summary: "The items of a conversation (newest first by default)",
		Tags: tags, Response: responseItemList{}, ScopedKeys: true, Errors: conversationErrors, Query: itemListParams},
		func(w http.ResponseWriter, r *http.Request) error {
			q, err := itemListQuery(r)
			if err != nil {
				return err
			}
			p, err := g.OpenAIConversationItemsPage(r.Context(), responsesOwner(r), r.PathValue("conversation_id"), q.limit, q.asc, q.after)
			if err != nil {
				return err
			}
			page := responseItemList{Object: "list", Data: p.Items, HasMore: p.HasMore}
			if n := len(p.Items); n > 0 {
				page.FirstID, page.LastID = &p.Items[0].ID, &p.Items[n-1].ID
			}
			writeJSON(w, http.StatusOK, page)
			return nil
		})
	route("POST", "/v1/conversations/{conversation_id}/items", "Add items (at most 20) to a conversation", conversationItemsCreate{}, responseItemList{},
		func(w http.ResponseWriter, r *http.Request) error {
			var body conversationItemsCreate
			if err := decodeJSON(r, &body, decodeOptions{AllowUnknownFields: true}); err != nil {
				return err
			}
			added, err := g.AddOpenAIConversationItems(r.Context(), responsesOwner(r), r.PathValue("conversation_id"), body.Items)
			if err != nil {
				return err
			}
			page := responseItemList{Object: "list", Data: added}
			if n := len(added); n > 0 {
				page.FirstID, page.LastID = &added[0].ID, &added[n-1].ID
			}
			writeJSON(w, http.StatusOK, page)
			return nil
		})
	route("GET", "/v1/conversations/{conversation_id}/items/{item_id}", "One item of a conversation", nil, completions.ResponsesItem{},
		func(w http.ResponseWriter, r *http.Request) error {
			it, err := g.OpenAIConversationItem(r.Context(), responsesOwner(r), r.PathValue("conversation_id"), r.PathValue("item_id"))
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, it)
			return nil
		})
	route("DELETE", "/v1/conversations/{conversation_id}/items/{item_id}", "Delete an item of a conversation; the answer is the conversation", nil, completions.OpenAIConversation{},
		func(w http.ResponseWriter, r *http.Request) error {
			c, err := g.DeleteOpenAIConversationItem(r.Context(), responsesOwner(r), r.PathValue("conversation_id"), r.PathValue("item_id"))
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, c)
			return nil
		})
}
