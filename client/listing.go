package client

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ListOptions selects one page of a listing. Records come newest first (messages of a
// conversation oldest first). The zero value asks for the first page of 20.
type ListOptions struct {
	// Status keeps records in these states (jobs: queued, running, completed, failed and,
	// for optimization jobs, interrupted; router models: active, archived).
	Status []string
	// CreatedAfter keeps records created at or after it; zero: no lower bound.
	CreatedAfter time.Time
	// CreatedBefore keeps records created strictly before it; zero: no upper bound.
	CreatedBefore time.Time
	// Limit is the page size, 1 to 100; 0 lets the server choose (20).
	Limit int
	// Cursor is the NextCursor of the previous page; "" starts at the beginning.
	Cursor string
}

func (o *ListOptions) query() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	if len(o.Status) > 0 {
		q.Set("status", strings.Join(o.Status, ","))
	}
	if !o.CreatedAfter.IsZero() {
		q.Set("created_after", o.CreatedAfter.UTC().Format(time.RFC3339Nano))
	}
	if !o.CreatedBefore.IsZero() {
		q.Set("created_before", o.CreatedBefore.UTC().Format(time.RFC3339Nano))
	}
	if o.Limit != 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	return q
}

// Page is one page of a listing.
type Page[T any] struct {
	// Data holds the page's records.
	Data []T `json:"data"`
	// NextCursor fetches the next page (ListOptions.Cursor); "" on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// All walks every page of a listing from opts on (nil: the start, default page size),
// yielding each record; it stops at the first error, which it yields. list is one of the
// Client's List methods, e.g. c.ListTrainingJobs.
func All[T any](ctx context.Context, opts *ListOptions, list func(context.Context, *ListOptions) (*Page[T], error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		o := ListOptions{}
		if opts != nil {
			o = *opts
		}
		for {
			p, err := list(ctx, &o)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, v := range p.Data {
				if !yield(v, nil) {
					return
				}
			}
			if p.NextCursor == "" {
				return
			}
			o.Cursor = p.NextCursor
		}
	}
}

// Deletion is the server's answer to a delete.
type Deletion struct {
	ID string `json:"id"`
	// Object is training_job, router_model, optimization_job, conversation or api_key.
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
	// Cancelled is true when a queued or running job was cancelled before the delete.
	Cancelled bool `json:"cancelled,omitempty"`
	// Artifacts counts the best-agent files deleted with an optimization job.
	Artifacts int `json:"artifacts,omitempty"`
	// Messages counts the messages deleted with a conversation.
	Messages int `json:"messages,omitempty"`
}

// Conversation is a stored conversation, without its messages.
type Conversation struct {
	ID           string    `json:"id"`
	Title        string    `json:"title"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
	MessageCount int       `json:"message_count"`
}

// ConversationMessage is one stored message of a conversation.
type ConversationMessage struct {
	Seq     int            `json:"seq"`
	Role    string         `json:"role"`
	Content []ContentBlock `json:"content"`
	// ID is the responseMessageId of an assistant message; Model the provider/model that
	// wrote it.
	ID      string    `json:"id,omitempty"`
	Model   string    `json:"model,omitempty"`
	Created time.Time `json:"created"`
}

func list[T any](ctx context.Context, c *Client, path string, opts *ListOptions) (*Page[T], error) {
	var p Page[T]
	if err := c.do(ctx, http.MethodGet, path, opts.query(), nil, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

func (c *Client) remove(ctx context.Context, path, id string) (*Deletion, error) {
	if id == "" {
		return nil, fmt.Errorf("client: DELETE %s: %w", path, ErrMissingID)
	}
	var d Deletion
	if err := c.do(ctx, http.MethodDelete, path+url.PathEscape(id), nil, nil, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// ListTrainingJobs returns one page of the key's router training jobs, newest first.
func (c *Client) ListTrainingJobs(ctx context.Context, opts *ListOptions) (*Page[TrainingStatus], error) {
	return list[TrainingStatus](ctx, c, "/api/v1/routers/train/jobs", opts)
}

// DeleteTrainingJob deletes a training job record; a queued or running job is cancelled
// first (a running one that does not stop within 30 s is a 409 *Error: retry). The router
// model it trained stays.
func (c *Client) DeleteTrainingJob(ctx context.Context, id string) (*Deletion, error) {
	return c.remove(ctx, "/api/v1/routers/train/jobs/", id)
}

// ListRouterModels returns one page of the key's router models, newest first.
func (c *Client) ListRouterModels(ctx context.Context, opts *ListOptions) (*Page[RouterModel], error) {
	return list[RouterModel](ctx, c, "/api/v1/routers/models", opts)
}

// DeleteRouterModel deletes a router model with its weights; it answers 404 everywhere
// afterwards.
func (c *Client) DeleteRouterModel(ctx context.Context, id string) (*Deletion, error) {
	return c.remove(ctx, "/api/v1/routers/models/", id)
}

// ListOptimizationJobs returns one page of the key's optimization jobs, newest first.
func (c *Client) ListOptimizationJobs(ctx context.Context, opts *ListOptions) (*Page[OptimizationStatus], error) {
	return list[OptimizationStatus](ctx, c, "/api/v1/optimize/jobs", opts)
}

// DeleteOptimizationJob deletes an optimization job and its best-agent files; a queued or
// running job is cancelled first.
func (c *Client) DeleteOptimizationJob(ctx context.Context, id string) (*Deletion, error) {
	return c.remove(ctx, "/api/v1/optimize/jobs/", id)
}

// ListConversations returns one page of the key's conversations, newest first (Status
// must be empty: conversations have none).
func (c *Client) ListConversations(ctx context.Context, opts *ListOptions) (*Page[Conversation], error) {
	return list[Conversation](ctx, c, "/api/v1/conversations", opts)
}

// Conversation returns one of the key's conversations, without its messages.
func (c *Client) Conversation(ctx context.Context, id string) (*Conversation, error) {
	if id == "" {
		return nil, fmt.Errorf("client: Conversation: %w", ErrMissingID)
	}
	var conv Conversation
	if err := c.do(ctx, http.MethodGet, "/api/v1/conversations/"+url.PathEscape(id), nil, nil, &conv); err != nil {
		return nil, err
	}
	return &conv, nil
}

// ConversationMessages returns one page of a conversation's messages, oldest first (only
// Limit and Cursor of opts apply).
func (c *Client) ConversationMessages(ctx context.Context, id string, opts *ListOptions) (*Page[ConversationMessage], error) {
	if id == "" {
		return nil, fmt.Errorf("client: ConversationMessages: %w", ErrMissingID)
	}
	return list[ConversationMessage](ctx, c, "/api/v1/conversations/"+url.PathEscape(id)+"/messages", opts)
}

// DeleteConversation deletes a conversation with all its messages.
func (c *Client) DeleteConversation(ctx context.Context, id string) (*Deletion, error) {
	return c.remove(ctx, "/api/v1/conversations/", id)
}
