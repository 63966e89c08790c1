package server

import (
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// An end user's requests_per_minute is read at each request naming it (endUserWithinRate)
// from the end user's record; endUserRates keeps what was read for endUserRateTTL, so a
// request of an end user seen lately reads no record. Every change of an end user's
// record in this process (create, update, delete, a budget it names updated) forgets its
// entry at once (endUserChanged), and, with Config.SharedLimits, in the other replicas at
// their next Sync of the shared counters (the key sharedEndUserChanged counts the
// changes), which is also how soon they count each other's requests against the rate:
// an update is in force everywhere within one --limits-sync-interval, and within the TTL
// where the replicas share no counters.

// endUserRateTTL is how long an end user's requests_per_minute is used without reading
// its record again (the bound of a change another process made that this one did not hear
// of).
const endUserRateTTL = 5 * time.Second

// maxEndUserRates bounds endUserRates' entries: past it the expired are dropped, and if
// none were, all (each end user then reads its record once more).
const maxEndUserRates = 50_000

// sharedEndUserChanged prefixes the shared counters' keys of end users' changes:
// prefix, then "<owner>/<end_user_id>".
const sharedEndUserChanged = "enduser/changed/"

// endUserRates caches end users' requests_per_minute by owner and id. The zero value is
// ready.
type endUserRates struct {
	mu sync.Mutex
	// gen counts the forgets: a read of the store that began before one is not kept.
	gen  uint64
	byID map[ownedEndUser]endUserRate
}

// ownedEndUser names an end user: its owner and id.
type ownedEndUser struct{ owner, id string }

// endUserRate is a requests_per_minute read at at (0: none, or no end user stored).
type endUserRate struct {
	rpm int
	at  time.Time
}

// lookup returns the requests_per_minute of k read less than endUserRateTTL before now
// (ok), else the generation a read of the store starting now keeps its result with
// (keep).
func (c *endUserRates) lookup(k ownedEndUser, now time.Time) (rpm int, gen uint64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, found := c.byID[k]; found && now.Sub(e.at) < endUserRateTTL && !now.Before(e.at) {
		return e.rpm, c.gen, true
	}
	return 0, c.gen, false
}

// keep stores rpm, read at now, for k unless an end user was forgotten since gen (the read
// may be older than the change).
func (c *endUserRates) keep(k ownedEndUser, rpm int, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.byID == nil {
		c.byID = map[ownedEndUser]endUserRate{}
	}
	if _, found := c.byID[k]; !found && len(c.byID) >= maxEndUserRates {
		for old, e := range c.byID {
			if now.Sub(e.at) >= endUserRateTTL {
				delete(c.byID, old)
			}
		}
		if len(c.byID) >= maxEndUserRates {
			clear(c.byID)
		}
	}
	c.byID[k] = endUserRate{rpm: rpm, at: now}
}

// forget drops k's entry: its record changed.
func (c *endUserRates) forget(k ownedEndUser) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.byID, k)
}

// endUserChanged forgets the requests_per_minute of owner's end users ids, here and, with
// Config.SharedLimits, in the other replicas: called once the change is stored.
func (s *Server) endUserChanged(owner string, ids ...string) {
	now := time.Now()
	for _, id := range ids {
		s.endUserRates.forget(ownedEndUser{owner, id})
		s.shared.Add(sharedEndUserChanged+owner+"/"+id, 1, now)
	}
}

// shareEndUserChanges makes the changes of end users other replicas count on c
// (endUserChanged) forget their entries here.
func (s *Server) shareEndUserChanges(c *store.Counters) {
	c.Subscribe(sharedEndUserChanged, func(key string, _ int64, _ time.Time) {
		s.endUserRates.forgetNamed(strings.TrimPrefix(key, sharedEndUserChanged))
	})
}

// forgetNamed drops the entry of the end user named "<owner>/<end_user_id>", as another
// replica spells it (either may hold a "/").
func (c *endUserRates) forgetNamed(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for k := range c.byID {
		if len(k.owner)+1+len(k.id) == len(name) && strings.HasPrefix(name, k.owner) && name[len(k.owner)] == '/' && name[len(k.owner)+1:] == k.id {
			delete(c.byID, k)
		}
	}
}
