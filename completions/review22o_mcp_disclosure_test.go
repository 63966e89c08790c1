package completions

import (
	"errors"
	"strings"
	"testing"
)

// TestReview22oMCPForbiddenServerRefusedAsUnknown: an mcp tool on the Responses API naming
// a server the scope may not use was refused with its own error (the HTTP server's 403
// naming it), and one naming no server with a message listing every configured server,
// so a key held to some servers learnt the others' names either way. Both are now the same
// refusal on server_label, listing only the servers the scope may use; a Go caller still
// tells the first by ErrMCPServerNotAllowed.
func TestReview22oMCPForbiddenServerRefusedAsUnknown(t *testing.T) {
	h, mcp := newMCPHarness(t, true) // servers docs and other
	scope := Scope{Owner: "alice", MCPServers: []string{"docs"}}
	refuse := func(label string) error {
		_, err := respondMCP(t, h.g, scope, `{"model":"a/m","input":"hi","tools":[{"type":"mcp","server_label":"`+label+`"}]}`)
		var ve *ValidationError
		if !errors.Is(err, ErrInvalid) || !errors.As(err, &ve) || ve.Field != "tools[0].server_label" {
			t.Fatalf("server_label %q: %v, want a validation error on tools[0].server_label", label, err)
		}
		return err
	}
	forbidden, unknown := refuse("other"), refuse("nope")
	if forbidden.Error() != unknown.Error() {
		t.Errorf("a server the key may not use: %q, an unknown one: %q", forbidden, unknown)
	}
	if strings.Contains(unknown.Error(), "other") || !strings.Contains(unknown.Error(), "docs") {
		t.Errorf("the refusal %q should list docs only", unknown)
	}
	if !errors.Is(forbidden, ErrMCPServerNotAllowed) || errors.Is(unknown, ErrMCPServerNotAllowed) {
		t.Errorf("ErrMCPServerNotAllowed: forbidden %v, unknown %v", errors.Is(forbidden, ErrMCPServerNotAllowed), errors.Is(unknown, ErrMCPServerNotAllowed))
	}
	if h.a.callCount("m") != 0 || mcp.lists != 0 {
		t.Fatalf("refused requests reached upstream %d or listed %d", h.a.callCount("m"), mcp.lists)
	}
}
