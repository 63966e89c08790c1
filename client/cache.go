package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// PurgeCache deletes this key's answers in the server's response cache (DELETE
// /api/v1/cache): those asked for in namespace when it is not nil ("" for the ones asked
// without one), else all. It returns how many were deleted.
func (c *Client) PurgeCache(ctx context.Context, namespace *string) (int, error) {
	var q url.Values
	if namespace != nil {
		q = url.Values{"namespace": {*namespace}}
	}
	var out struct {
		Deleted int `json:"deleted"`
	}
	if err := c.do(ctx, http.MethodDelete, "/api/v1/cache", q, nil, &out); err != nil {
		return 0, err
	}
	return out.Deleted, nil
}

// DeleteCached deletes one cached answer of this key (DELETE /api/v1/cache/{key}) by the
// key it was answered with (CacheStatus.Key, the X-Switchyard-Cache-Key header). An
// answer not cached (any more) is a *Error with status 404.
func (c *Client) DeleteCached(ctx context.Context, key string) error {
	if key == "" {
		return fmt.Errorf("client: DELETE /api/v1/cache/: %w (PurgeCache deletes many)", ErrMissingID)
	}
	return c.do(ctx, http.MethodDelete, "/api/v1/cache/"+url.PathEscape(key), nil, nil, nil)
}
