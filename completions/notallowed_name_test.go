package completions

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A key refused a model group is told the group's name it sent, not only the
// provider/model member it resolved to (which it never named); a provider/model name sent
// as it is stays the one named.
func TestModelNotAllowedNamesAskedModel(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"tiny": {Models: []string{"a/m1"}}, "ok": {Models: []string{"b/m2"}}}
	})
	scope := Scope{Budget: NewBudget(BudgetLimits{AllowedModels: []string{"ok"}})}
	_, err := h.g.Complete(context.Background(), scope, chatRequest(t, `{"model":"tiny","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`))
	if !errors.Is(err, ErrModelNotAllowed) || !strings.Contains(err.Error(), "tiny (its deployment a/m1)") {
		t.Errorf("group refused: %v, want ErrModelNotAllowed naming tiny and its member", err)
	}
	_, err = h.g.Complete(context.Background(), scope, chatRequest(t, `{"model":"a/m1","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`))
	if !errors.Is(err, ErrModelNotAllowed) || !strings.HasSuffix(err.Error(), ": a/m1") {
		t.Errorf("provider/model refused: %v", err)
	}
}
