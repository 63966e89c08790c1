package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// TestGatewayModel: GatewayModel asks GET /v1/models/{name} with the name's '/' kept as
// path separators and its segments escaped, and answers the server's id; a 404 is an
// *Error of that status.
func TestGatewayModel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.EscapedPath() {
		case "/v1/models/custom/gpt-4o%20x":
			w.Write([]byte(`{"id":"openai/gpt-4o x","object":"model","created":1,"owned_by":"openai"}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":{"message":"no","type":"invalid_request_error","param":"model","code":"model_not_found"}}`))
		}
	}))
	defer srv.Close()
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.GatewayModel(context.Background(), "custom/gpt-4o x")
	if err != nil || m.ID != "openai/gpt-4o x" || m.OwnedBy != "openai" {
		t.Fatalf("GatewayModel = %+v, %v", m, err)
	}
	_, err = c.GatewayModel(context.Background(), "nobody/x")
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusNotFound || ce.Code != "model_not_found" {
		t.Fatalf("unknown model: %v, want a 404 *client.Error", err)
	}
}
