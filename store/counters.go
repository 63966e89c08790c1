package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Counters shares counts among the processes of one store (replicas on one PostgreSQL
// database): each process counts what it does under a key (Add: a key's requests, its
// tokens), and Sync, called every second or so, publishes this process's counts in one
// record of its own and hands the counts the other processes added since the last Sync to
// the subscribers of their keys (Subscribe). A rate limit that counts its own requests
// and the others' deltas then holds across replicas, give or take what they did since the
// last Sync. A process's record is one write per Sync whatever the number of keys, and no
// two processes write the same record, so they never contend.
//
// Make one with NewCounters. It is safe for concurrent use.
type Counters struct {
	st      *Store
	name    string
	process string // this process's record: name/process
	// idle is how long a key this process stopped adding to stays in its record.
	idle time.Duration

	mu   sync.Mutex
	own  map[string]*ownCount
	seen map[string]map[string]int64 // other process → key → the count last seen
	subs []subscription
}

type ownCount struct {
	n    int64 // since this process started
	last time.Time
}

type subscription struct {
	prefix string
	apply  func(key string, delta int64, now time.Time)
}

// countersRecord is a process's published counts.
type countersRecord struct {
	At     time.Time        `json:"at"`
	Counts map[string]int64 `json:"counts"`
}

// countersStale is how old a process's record may be before it counts as gone (its
// counts are no longer applied, and any process deletes it).
const countersStale = 5 * time.Minute

// NewCounters returns the counters called name (one record per process in the collection
// SharedCounters, keyed name/<process id>) of st; the process id is chosen at random.
func NewCounters(st *Store, name string) *Counters {
	var b [8]byte
	rand.Read(b[:])
	return &Counters{st: st, name: name, process: hex.EncodeToString(b[:]), idle: 2 * time.Minute,
		own: map[string]*ownCount{}, seen: map[string]map[string]int64{}}
}

// Subscribe has apply called, during Sync, with each key starting with prefix that another
// process added to since the last Sync, and how much it added. Subscribe before the first
// Sync.
func (c *Counters) Subscribe(prefix string, apply func(key string, delta int64, now time.Time)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.subs = append(c.subs, subscription{prefix, apply})
}

// Add counts n (positive) under key for this process; the next Sync publishes it.
func (c *Counters) Add(key string, n int64, now time.Time) {
	if c == nil || n <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.own[key]
	if o == nil {
		o = &ownCount{}
		c.own[key] = o
	}
	o.n += n
	o.last = now
}

// Sync publishes this process's counts (those of keys added to within the last two
// minutes) and applies the other processes' counts added since the last Sync to the
// subscribers. The first Sync only learns where the others stand: what they counted before
// is not applied.
func (c *Counters) Sync(ctx context.Context, now time.Time) error {
	c.mu.Lock()
	rec := countersRecord{At: now, Counts: map[string]int64{}}
	for k, o := range c.own {
		if now.Sub(o.last) > c.idle {
			delete(c.own, k) // its next Add starts again from 0: the others read that as a new count
			continue
		}
		rec.Counts[k] = o.n
	}
	c.mu.Unlock()
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("store: encode counters: %w", err)
	}
	if err := c.st.Put(ctx, SharedCounters, c.name+"/"+c.process, b); err != nil {
		return fmt.Errorf("store: publish counters %s: %w", c.name, err)
	}
	entries, err := c.st.List(ctx, SharedCounters, ListOptions{Prefix: c.name + "/"})
	if err != nil {
		return fmt.Errorf("store: read counters %s: %w", c.name, err)
	}
	type delta struct {
		key string
		n   int64
	}
	var deltas []delta
	c.mu.Lock()
	present := map[string]bool{}
	for _, e := range entries {
		proc := strings.TrimPrefix(e.Key, c.name+"/")
		if proc == c.process {
			continue
		}
		var other countersRecord
		if json.Unmarshal(e.Value, &other) != nil || now.Sub(other.At) > countersStale {
			_ = c.st.Delete(ctx, SharedCounters, e.Key) // a process gone (or a record no one can read)
			continue
		}
		present[proc] = true
		last, known := c.seen[proc]
		if !known {
			c.seen[proc] = other.Counts // where it stands: only what it adds from now on counts
			continue
		}
		for k, n := range other.Counts {
			d := n
			if prev, ok := last[k]; ok && n >= prev {
				d = n - prev
			}
			if d > 0 {
				deltas = append(deltas, delta{k, d})
			}
		}
		c.seen[proc] = other.Counts
	}
	for proc := range c.seen {
		if !present[proc] {
			delete(c.seen, proc)
		}
	}
	subs := c.subs
	c.mu.Unlock()
	for _, d := range deltas {
		for _, s := range subs {
			if strings.HasPrefix(d.key, s.prefix) {
				s.apply(d.key, d.n, now)
			}
		}
	}
	return nil
}

// Run calls Sync every interval until ctx ends; a failed Sync is passed to onErr (when not
// nil) and the next one tries again.
func (c *Counters) Run(ctx context.Context, every time.Duration, onErr func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			// Leave the others no stale record to count.
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_ = c.st.Delete(dctx, SharedCounters, c.name+"/"+c.process)
			cancel()
			return
		case now := <-t.C:
			if err := c.Sync(ctx, now); err != nil && ctx.Err() == nil && onErr != nil {
				onErr(err)
			}
		}
	}
}
