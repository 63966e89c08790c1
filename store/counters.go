package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
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
// last Sync. A process's record holds only the keys it counted in its last two Syncs, so
// its size follows the traffic of a couple of seconds, not every key it ever saw; no two
// processes write the same record, so they never contend.
//
// Counters also shares gauges: how many of something (a key's requests in flight) each
// process holds now (Hold). Every Sync publishes this process's gauges whole and reads the
// others'; Others is their sum. A process's gauges count only while its record keeps
// changing: one that stops publishing (a replica that died with requests in flight) is
// left out once its lease — a few of its Sync intervals, which its record carries — has
// passed, so its holds expire with it.
//
// Make one with NewCounters. It is safe for concurrent use; Add and Hold never wait on the
// store.
type Counters struct {
	st      *Store
	name    string
	process string // this process's record: name/process

	mu    sync.Mutex // own, epochs, subs, gauges, others, othersAt, lease
	own   map[string]*ownCount
	epoch int64 // a key counted afresh gets the next epoch
	subs  []subscription
	// gauges are this process's holds (Hold), others the other processes' summed as of
	// othersAt (the last Sync); lease is how long this process's published gauges hold
	// without a newer record (set by Run from its interval).
	gauges   map[string]int64
	others   map[string]int64
	othersAt time.Time
	lease    time.Duration

	// syncMu serialises Syncs; what follows is Sync's own.
	syncMu   sync.Mutex
	round    int64     // Syncs that published
	lastSync time.Time // when the last Sync read the others' records (zero: never)
	seen     map[string]*peer
}

type ownCount struct {
	n     int64 // since the key was (last) first counted
	epoch int64
	round int64 // the Sync round that last saw a change
	last  time.Time
}

// peer is what this process knows of another process's record.
type peer struct {
	at      time.Time // the record's own time, as last read
	changed time.Time // when (this process's clock) the record last changed
	counts  map[string]countEntry
	heard   map[string]time.Time // when each key was last in the record (this clock)
	gauges  map[string]int64     // the record's gauges, as last read
	lease   time.Duration        // how long they hold past changed
}

type subscription struct {
	prefix string
	apply  func(key string, delta int64, now time.Time)
}

// countEntry is one key's count in a record: the count, and the epoch it counts in (a key
// forgotten after two idle minutes starts again from 0 in a new epoch).
type countEntry struct {
	N     int64 `json:"n"`
	Epoch int64 `json:"e"`
}

// countersRecord is a process's published counts and gauges.
type countersRecord struct {
	At     time.Time             `json:"at"`
	Counts map[string]countEntry `json:"counts"`
	// Gauges are the process's non-zero holds (Hold), whole; LeaseMS how long, in
	// milliseconds, they hold without a newer record (absent in earlier builds' records,
	// which hold no gauges).
	Gauges  map[string]int64 `json:"gauges,omitempty"`
	LeaseMS int64            `json:"lease_ms,omitempty"`
}

const (
	// countersStale is how long a process's record may stay unchanged, by the reader's
	// clock, before it counts as gone (any process deletes it).
	countersStale = 5 * time.Minute
	// countersIdle is how long a key no one adds to stays counted in memory.
	countersIdle = 2 * time.Minute
	// publishRounds is how many Syncs a changed key stays in the record: a reader that
	// misses one record still sees it.
	publishRounds = 2
	// defaultGaugeLease is how long a process's gauges hold without a newer record when
	// its Syncs are not run by Run (which sets a few of its intervals).
	defaultGaugeLease = 15 * time.Second
)

// NewCounters returns the counters called name (one record per process in the collection
// SharedCounters, keyed name/<process id>) of st; the process id is chosen at random.
func NewCounters(st *Store, name string) *Counters {
	var b [8]byte
	rand.Read(b[:])
	return &Counters{st: st, name: name, process: hex.EncodeToString(b[:]), own: map[string]*ownCount{}, seen: map[string]*peer{},
		gauges: map[string]int64{}, lease: defaultGaugeLease}
}

// Hold adds delta (positive to take, negative to give back) to this process's gauge under
// key; the next Sync publishes the gauges whole. A nil Counters holds nothing.
func (c *Counters) Hold(key string, delta int64) {
	if c == nil || delta == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.gauges[key] + delta; n > 0 {
		c.gauges[key] = n
	} else {
		delete(c.gauges, key)
	}
}

// Others is the sum of the other processes' gauges under key as of the last Sync: those
// whose lease still held then. Once this process has not synced for twice its own lease
// (the store does not answer) it is 0: the others' holds are unknown, and each process
// then bounds only its own. A nil Counters has none.
func (c *Counters) Others(key string, now time.Time) int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Sub(c.othersAt) > 2*c.lease {
		return 0
	}
	return c.others[key]
}

// Process is this process's id among those sharing the counters (random, chosen by
// NewCounters; a restarted process has another): it names what the process holds in
// records shared with the others, such as a budget's requests in flight.
func (c *Counters) Process() string { return c.process }

// Subscribe has apply called, during Sync, with each key starting with prefix that another
// process added to since the last Sync, and how much it added. Subscribe before the first
// Sync.
func (c *Counters) Subscribe(prefix string, apply func(key string, delta int64, now time.Time)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.subs = append(c.subs, subscription{prefix, apply})
}

// Add counts n (positive) under key for this process; the next Sync publishes it. A nil
// Counters counts nothing.
func (c *Counters) Add(key string, n int64, now time.Time) {
	if c == nil || n <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.own[key]
	if o == nil {
		c.epoch++
		o = &ownCount{epoch: c.epoch}
		c.own[key] = o
	}
	o.n += n
	o.last = now
	o.round = -1 // changed since the last Sync: the next one marks its round
}

// Sync publishes this process's recent counts and applies the other processes' counts
// added since the last Sync to the subscribers. The first Sync learns where the processes
// already running stand (what they counted before is not applied); a process that appears
// after it is counted from its start. A record left unchanged five minutes, by this
// process's clock, is a process gone: Sync deletes it.
func (c *Counters) Sync(ctx context.Context, now time.Time) error {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	c.round++
	rec := countersRecord{At: now, Counts: map[string]countEntry{}}
	c.mu.Lock()
	if len(c.gauges) > 0 {
		rec.Gauges = maps.Clone(c.gauges)
	}
	rec.LeaseMS = c.lease.Milliseconds()
	for k, o := range c.own {
		if o.round < 0 {
			o.round = c.round
		}
		switch {
		case now.Sub(o.last) > countersIdle:
			delete(c.own, k) // counted afresh, in a new epoch, when it comes back
		case c.round-o.round < publishRounds:
			rec.Counts[k] = countEntry{N: o.n, Epoch: o.epoch}
		}
	}
	subs := c.subs
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
	first := c.lastSync.IsZero()
	type delta struct {
		key string
		n   int64
	}
	var deltas []delta
	var stale []string
	present := map[string]bool{}
	for _, e := range entries {
		proc := strings.TrimPrefix(e.Key, c.name+"/")
		if proc == c.process {
			continue
		}
		var other countersRecord
		if json.Unmarshal(e.Value, &other) != nil {
			stale = append(stale, e.Key) // no one can read it
			continue
		}
		p := c.seen[proc]
		if p == nil {
			p = &peer{changed: now, counts: map[string]countEntry{}, heard: map[string]time.Time{}}
			c.seen[proc] = p
			p.gauges, p.lease = other.Gauges, time.Duration(other.LeaseMS)*time.Millisecond
			// On this process's first Sync the others were counting before it: only what
			// they add from now on counts. A process that appears later has published
			// nothing this one saw: all of its counts are new.
			for k, ce := range other.Counts {
				if !first {
					deltas = append(deltas, delta{k, ce.N})
				}
				p.counts[k], p.heard[k] = ce, now
			}
			p.at = other.At
			present[proc] = true
			continue
		}
		if !other.At.Equal(p.at) {
			p.at, p.changed = other.At, now
			p.gauges, p.lease = other.Gauges, time.Duration(other.LeaseMS)*time.Millisecond
		} else if now.Sub(p.changed) > countersStale {
			stale = append(stale, e.Key) // unchanged this long, by this clock: gone
			continue
		}
		present[proc] = true
		for k, ce := range other.Counts {
			d := ce.N
			if prev, ok := p.counts[k]; ok && prev.Epoch == ce.Epoch {
				d = ce.N - prev.N
			}
			if d > 0 {
				deltas = append(deltas, delta{k, d})
			}
			p.counts[k], p.heard[k] = ce, now
		}
		for k, at := range p.heard {
			if now.Sub(at) > countersStale {
				delete(p.counts, k)
				delete(p.heard, k)
			}
		}
	}
	others := map[string]int64{}
	for proc, p := range c.seen {
		if !present[proc] {
			delete(c.seen, proc)
			continue
		}
		if now.Sub(p.changed) > p.lease {
			continue // its lease ran out: a process gone, its holds with it
		}
		for k, n := range p.gauges {
			others[k] += n
		}
	}
	c.mu.Lock()
	c.others, c.othersAt = others, now
	c.mu.Unlock()
	c.lastSync = now
	for _, d := range deltas {
		for _, s := range subs {
			if strings.HasPrefix(d.key, s.prefix) {
				s.apply(d.key, d.n, now)
			}
		}
	}
	for _, key := range stale {
		_ = c.st.Delete(ctx, SharedCounters, key) // best effort: the next Sync tries again
	}
	return nil
}

// Run calls Sync every interval until ctx ends, each bounded in time, then publishes a
// last time (what this process counted since is not lost to the others); its record is
// left to go stale. A failed Sync is passed to onErr (when not nil) and the next one tries
// again.
func (c *Counters) Run(ctx context.Context, every time.Duration, onErr func(error)) {
	c.mu.Lock()
	c.lease = max(3*every, 3*time.Second) // a Sync or two may be late or fail
	c.mu.Unlock()
	t := time.NewTicker(every)
	defer t.Stop()
	bound := max(5*every, 5*time.Second)
	sync := func(parent context.Context) {
		sctx, cancel := context.WithTimeout(parent, bound)
		defer cancel()
		if err := c.Sync(sctx, time.Now()); err != nil && parent.Err() == nil && onErr != nil {
			onErr(err)
		}
	}
	for {
		select {
		case <-ctx.Done():
			sync(context.WithoutCancel(ctx))
			return
		case <-t.C:
			sync(ctx)
		}
	}
}
