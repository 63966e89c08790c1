package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
)

// postForm posts a multipart form — fields, then content as the file field "file" named
// filename — to path and decodes the JSON answer into out. The form is built in memory so
// that a retried request can send it again.
func (c *Client) postForm(ctx context.Context, path string, fields [][2]string, filename string, content io.Reader, out any) error {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return fmt.Errorf("client: POST %s: %w", path, err)
		}
	}
	fw, err := mw.CreateFormFile("file", filename)
	if err != nil {
		return fmt.Errorf("client: POST %s: %w", path, err)
	}
	if _, err := io.Copy(fw, content); err != nil {
		return fmt.Errorf("client: POST %s: reading the content: %w", path, err)
	}
	if err := mw.Close(); err != nil {
		return fmt.Errorf("client: POST %s: %w", path, err)
	}
	req, err := c.newRequest(ctx, http.MethodPost, path, nil, nil)
	if err != nil {
		return err
	}
	b := body.Bytes()
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	req.ContentLength = int64(len(b))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("client: POST %s: decoding response: %w", path, err)
	}
	return nil
}
