package client

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPollStopsWhenDone(t *testing.T) {
	calls := 0
	get := func(context.Context) (int, error) { calls++; return calls, nil }
	var got []int
	for v, err := range poll(context.Background(), time.Millisecond, time.Hour, get, func(v int) bool { return v == 3 }, nil) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if len(got) != 3 || got[2] != 3 {
		t.Fatalf("yielded %v, want [1 2 3]", got)
	}
	last, err := waitLast(poll(context.Background(), time.Millisecond, time.Hour, get, func(v int) bool { return v == 5 }, nil))
	if last != 5 || err != nil {
		t.Fatalf("waitLast = %d, %v; want 5, nil", last, err)
	}
}

func TestWaitLastKeepsLastValueOnError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	get := func(context.Context) (int, error) {
		calls++
		if calls == 3 {
			return 0, boom
		}
		return calls, nil
	}
	last, err := waitLast(poll(context.Background(), time.Millisecond, time.Hour, get, func(int) bool { return false }, nil))
	if last != 2 || !errors.Is(err, boom) {
		t.Fatalf("waitLast = %d, %v; want 2, boom", last, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// A poll whose context ends stops with the context's error.
	if _, err = waitLast(poll(ctx, 0, time.Hour, get, func(int) bool { return false }, nil)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waitLast: err = %v, want context.Canceled", err)
	}
}
