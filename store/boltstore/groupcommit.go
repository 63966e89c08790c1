package boltstore

import (
	"errors"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// groupCommit runs concurrent write transactions together: the first writer commits at
// once; writers that arrive while a commit is in progress queue up and share the next
// commit (one fsync for all of them). A lone writer therefore never waits, and under load
// the fsync rate no longer bounds the write rate. There is no window (a wait for more
// writers before committing, as usagelog.History's background writer has): Update's
// callers wait for the commit (a budget charge, a stored answer the client waits for), so
// a window would be added to every write at a low rate, while under load the commit in
// progress is the window (serve at concurrency 8 syncs its bbolt file once per ~50
// requests: BENCHMARKS.md, "Request history: the writer's group commit").
//
// If one function of a group fails, the group's transaction is rolled back, the failing
// function is run alone (its error goes to its caller) and the others are run again as a
// new group — so a function may run more than once, as store.Driver allows.
type groupCommit struct {
	db      *bolt.DB
	mu      sync.Mutex
	pending []*groupCall
	busy    bool
	maxSize int
}

type groupCall struct {
	fn   func(*bolt.Tx) error
	done chan error
}

// errGroupMember marks a group rolled back because one member failed.
var errGroupMember = errors.New("boltstore: group member failed")

func (g *groupCommit) update(fn func(*bolt.Tx) error) error {
	c := &groupCall{fn: contained(fn), done: make(chan error, 1)}
	g.mu.Lock()
	g.pending = append(g.pending, c)
	if g.busy {
		g.mu.Unlock()
		return <-c.done
	}
	g.busy = true
	g.mu.Unlock()
	g.drain()
	return <-c.done
}

// drain commits queued groups until none is left; only one drain runs at a time.
func (g *groupCommit) drain() {
	for {
		g.mu.Lock()
		n := len(g.pending)
		if n == 0 {
			g.busy = false
			g.mu.Unlock()
			return
		}
		if g.maxSize > 0 && n > g.maxSize {
			n = g.maxSize
		}
		group := g.pending[:n:n]
		g.pending = append([]*groupCall(nil), g.pending[n:]...)
		g.mu.Unlock()
		g.commit(group)
	}
}

func (g *groupCommit) commit(group []*groupCall) {
	if len(group) == 1 {
		group[0].done <- g.db.Update(group[0].fn)
		return
	}
	failed := -1
	err := g.db.Update(func(tx *bolt.Tx) error {
		for i, c := range group {
			if err := c.fn(tx); err != nil {
				failed = i
				return errGroupMember
			}
		}
		return nil
	})
	switch {
	case failed >= 0:
		group[failed].done <- g.db.Update(group[failed].fn)
		rest := append(append([]*groupCall(nil), group[:failed]...), group[failed+1:]...)
		g.commit(rest)
	default:
		// nil, or a commit failure that every member shares.
		for _, c := range group {
			c.done <- err
		}
	}
}

// contained turns a panic in fn into an error for fn's caller alone: a panic must not take
// down the goroutine that is committing other callers' writes.
func contained(fn func(*bolt.Tx) error) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("boltstore: write function panicked: %v", v)
			}
		}()
		return fn(tx)
	}
}
