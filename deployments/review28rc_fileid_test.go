package deployments

import (
	"context"
	"errors"
	"testing"
)

// TestReview28rcUpdateOfShadowedStoredID: /model/update of an id a config file's entry
// gives and a stored deployment (skipped) has too is ErrInConfig, as the update of any
// deployment of the file: it changed the stored one no one is served, and answered as if
// the deployment served by that id had changed. Delete still removes the skipped one.
func TestReview28rcUpdateOfShadowedStoredID(t *testing.T) {
	ctx := context.Background()
	restarted, _ := shadowedStoredID(t, nil)
	if _, err := restarted.Update(ctx, "shared", Input{ModelName: "renamed"}); !errors.Is(err, ErrInConfig) {
		t.Errorf("update of the file's id: %v, want ErrInConfig", err)
	}
	if list, _ := restarted.List(ctx); len(list) != 1 || list[0].ModelName != "stored-team" {
		t.Errorf("stored after the update: %+v, want stored-team unchanged", list)
	}
	if _, err := restarted.Delete(ctx, "shared"); err != nil {
		t.Errorf("delete of the skipped stored deployment: %v", err)
	}
	if list, _ := restarted.List(ctx); len(list) != 0 {
		t.Errorf("stored after the delete: %+v, want none", list)
	}
}
