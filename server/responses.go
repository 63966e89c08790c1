package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"

	"github.com/switchyard-ai/switchyard/completions"
)

// responseDeletion is the answer of DELETE /v1/responses/{response_id}, OpenAI's.
type responseDeletion struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "response"
	Deleted bool   `json:"deleted"`
}

// responseItemList is a page of GET /v1/responses/{response_id}/input_items, OpenAI's list
// object.
type responseItemList struct {
	Object  string                      `json:"object"` // "list"
	Data    []completions.ResponsesItem `json:"data"`
	FirstID *string                     `json:"first_id"`
	LastID  *string                     `json:"last_id"`
	HasMore bool                        `json:"has_more"`
}

// storedResponseErrors are the failures of the routes that read a stored response.
var storedResponseErrors = map[int]string{
	400: "a query parameter out of range (param names it)",
	404: "no response with that id is stored for this key (asked with store false, deleted, expired or another key's)",
}

// responseRoutes adds the routes that read and delete stored /v1/responses answers
// (completions.Gateway.StoreResponse), as OpenAI's Responses API has them.
func (s *Server) responseRoutes(g *completions.Gateway) {
	tags := []string{"Completions"}
	s.Handle(Route{Method: "GET", Path: "/v1/responses/{response_id}", Summary: "A stored /v1/responses answer, as it was given; a background one shows queued or in_progress until it ends (failed when its run's process died). With stream=true, a background response created with stream: true is streamed: its events after starting_after (all without it), then the new ones until it ends",
		Tags: tags, Response: completions.ResponseObject{}, ScopedKeys: true, Stream: true, Query: responseGetParams, Errors: map[int]string{
			400: "a query parameter out of range (param names it): stream=true for a response not created with background and stream (stream), a starting_after that is not a sequence number or whose events were not kept (starting_after)",
			404: storedResponseErrors[404],
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			q := r.URL.Query()
			stream := q.Get("stream")
			if stream == "" && streamInBody(r) {
				stream = "true"
			}
			after, err := startingAfter(q.Get("starting_after"), stream)
			if err != nil {
				return err
			}
			if stream == "true" {
				err := g.StreamBackgroundResponse(r.Context(), responsesOwner(r), r.PathValue("response_id"), after, w)
				var ve *completions.ValidationError
				if errors.As(err, &ve) {
					ae := Validation(http.StatusBadRequest, "%s", ve.Error())
					ae.Param = ve.Field
					return ae
				}
				var started *completions.StreamStartedError
				if errors.As(err, &started) {
					if r.Context().Err() == nil {
						s.log.Warn("responses: stream a background response", "response_id", r.PathValue("response_id"), "err", err)
					}
					return nil // the client left (the run goes on), or the stream broke
				}
				return err
			}
			o, err := g.StoredResponse(r.Context(), responsesOwner(r), r.PathValue("response_id"))
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, o)
			return nil
		})
	s.Handle(Route{Method: "DELETE", Path: "/v1/responses/{response_id}", Summary: "Delete a stored /v1/responses answer (it can no longer be continued, nor can the answers after it); a background one still running is cancelled",
		Tags: tags, Response: responseDeletion{}, ScopedKeys: true, Errors: storedResponseErrors},
		func(w http.ResponseWriter, r *http.Request) error {
			id := r.PathValue("response_id")
			if err := g.DeleteResponse(r.Context(), responsesOwner(r), id); err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, responseDeletion{ID: id, Object: "response", Deleted: true})
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/v1/responses/{response_id}/cancel", Summary: "Cancel a background response: one not ended yet ends cancelled (its run stops, on whichever replica runs it); one ended is answered as it is; a synchronous one is a 400",
		Tags: tags, Response: completions.ResponseObject{}, ScopedKeys: true, Errors: map[int]string{
			400: "the response was not asked in the background (Cannot cancel a synchronous response.)",
			404: storedResponseErrors[404],
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			o, err := g.CancelResponse(r.Context(), responsesOwner(r), r.PathValue("response_id"))
			if errors.Is(err, completions.ErrSynchronousResponse) {
				return Validation(http.StatusBadRequest, "Cannot cancel a synchronous response.")
			}
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, o)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/v1/responses/{response_id}/input_items", Summary: "The items a stored answer was given: those of the answers before it in its conversation and its own input",
		Tags: tags, Response: responseItemList{}, ScopedKeys: true, Errors: storedResponseErrors, Query: itemListParams},
		itemListing("response_id", g.ResponseInputItems))
}

// responseGetParams are the query parameters of GET /v1/responses/{response_id}, OpenAI's.
var responseGetParams = []QueryParam{
	{Name: "stream", Description: "true streams a background response created with stream: true as server-sent events (400 for any other response); a JSON body {\"stream\": true}, as OpenAI's SDKs send it, says the same", Type: "boolean"},
	{Name: "starting_after", Description: "with stream=true, the sequence number after which to start: the events after it are replayed, then the new ones follow (a number beyond the last waits for newer ones); without it every event is sent", Type: "integer", Minimum: Bound(0)},
	{Name: "include", Description: "accepted and ignored: responses are returned whole"},
}

// streamInBody reports whether a GET's JSON body says "stream": true: OpenAI's SDKs
// (openai-go's Responses.GetStreaming) send stream so rather than in the query. At most
// 4 KiB of it is read.
func streamInBody(r *http.Request) bool {
	if r.Body == nil || r.ContentLength == 0 {
		return false
	}
	var body struct {
		Stream bool `json:"stream"`
	}
	return json.NewDecoder(io.LimitReader(r.Body, 4<<10)).Decode(&body) == nil && body.Stream
}

// startingAfter reads the starting_after of a streamed GET: -1 when absent; not a
// non-negative integer, or without stream=true, is a 400 naming it.
func startingAfter(v, stream string) (int, error) {
	if v == "" {
		return -1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		ae := Validation(http.StatusBadRequest, "starting_after: must be a sequence number (an integer of 0 or more), got %q", v)
		ae.Param = "starting_after"
		return 0, ae
	}
	if stream != "true" {
		ae := Validation(http.StatusBadRequest, "starting_after: is only used with stream=true")
		ae.Param = "starting_after"
		return 0, ae
	}
	return n, nil
}

// itemListing serves a page of the items load returns for the caller and the path's
// param (OpenAI's item lists: itemListParams).
func itemListing(param string, load func(ctx context.Context, owner, id string) ([]completions.ResponsesItem, error)) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := itemListQuery(r)
		if err != nil {
			return err
		}
		items, err := load(r.Context(), responsesOwner(r), r.PathValue(param))
		if err != nil {
			return err
		}
		page, err := q.page(items)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, page)
		return nil
	}
}

// itemListParams are the query parameters of OpenAI's item lists.
var itemListParams = []QueryParam{
	{Name: "limit", Description: "items per page: 1 to 100 (default 20)", Type: "integer", Minimum: Bound(1), Maximum: Bound(100)},
	{Name: "order", Description: "asc (oldest first) or desc (newest first: the default)", Enum: []string{"asc", "desc"}},
	{Name: "after", Description: "the id of the last item of the previous page"},
	{Name: "include", Description: "accepted and ignored: items are returned whole"},
}

// itemList is a request for a page of an item list (itemListParams).
type itemList struct {
	limit int
	asc   bool
	after string
}

// itemListQuery reads the query of an item list; a value out of range is a 400 naming it.
func itemListQuery(r *http.Request) (itemList, error) {
	q := r.URL.Query()
	l := itemList{limit: 20, after: q.Get("after")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			ae := Validation(http.StatusBadRequest, "limit: must be an integer from 1 to 100, got %q", v)
			ae.Param = "limit"
			return l, ae
		}
		l.limit = n
	}
	switch order := q.Get("order"); order {
	case "asc":
		l.asc = true
	case "", "desc":
	default:
		ae := Validation(http.StatusBadRequest, `order: must be "asc" or "desc", got %q`, order)
		ae.Param = "order"
		return l, ae
	}
	return l, nil
}

// page is l's page of items (oldest first): an after that names no item is a 400.
func (l itemList) page(items []completions.ResponsesItem) (responseItemList, error) {
	if !l.asc {
		slices.Reverse(items)
	}
	if l.after != "" {
		i := slices.IndexFunc(items, func(it completions.ResponsesItem) bool { return it.ID == l.after })
		if i < 0 {
			ae := Validation(http.StatusBadRequest, "after: %q is not an item of this list", l.after)
			ae.Param = "after"
			return responseItemList{}, ae
		}
		items = items[i+1:]
	}
	page := responseItemList{Object: "list", Data: items[:min(l.limit, len(items))], HasMore: len(items) > l.limit}
	if page.Data == nil {
		page.Data = []completions.ResponsesItem{}
	}
	if n := len(page.Data); n > 0 {
		page.FirstID, page.LastID = &page.Data[0].ID, &page.Data[n-1].ID
	}
	return page, nil
}
