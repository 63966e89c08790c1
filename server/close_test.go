package server

import (
	"context"
	"testing"
	"time"
)

// TestCloseLeavesTimeToLaterParts: Server.Close ran its parts in turn with one deadline, so
// a part stuck until the deadline (the request history's writer retrying through a database
// outage) left none to the parts after it (the daily spend's last write ran with its context
// already ended and was lost); each later part now finds time left.
func TestCloseLeavesTimeToLaterParts(t *testing.T) {
	s := &Server{}
	var laterRan bool
	var laterErr error
	s.OnClose(func(ctx context.Context) error { // registered first: runs last
		laterRan, laterErr = true, ctx.Err()
		return nil
	})
	s.OnClose(func(ctx context.Context) error { // runs first and waits out its context
		<-ctx.Done()
		return ctx.Err()
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.Close(ctx); err == nil {
		t.Error("the stuck part's error was not returned")
	}
	if !laterRan || laterErr != nil {
		t.Errorf("the later part ran %v with its context ended (%v)", laterRan, laterErr)
	}
	// Without a deadline every part has the caller's context as it is.
	s = &Server{}
	s.OnClose(func(ctx context.Context) error {
		if _, ok := ctx.Deadline(); ok {
			t.Error("a deadline was made up")
		}
		return nil
	})
	if err := s.Close(context.Background()); err != nil {
		t.Error(err)
	}
}
