package server

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Virtual keys' and teams' max_parallel_requests (LiteLLM's): how many requests of a key,
// or of all a team's keys, may be in flight at once. A request holds its slot from its
// arrival (before its body is read) until its handler returns: a stream until its last
// event, a /v1/realtime WebSocket session until it closes. With Config.SharedLimits each
// replica publishes its holds as store.Counters gauges, and a request is admitted while
// its replica's holds and the others' (as of their last Sync) are under the bound: the
// bound holds across replicas give or take what they admitted since their last Sync, and a
// replica that dies with requests in flight frees them when its lease expires (a few
// --limits-sync-interval).

// sharedParallel prefixes the gauges of max_parallel_requests in Config.SharedLimits.
const sharedParallel = "par/"

// parallelLimiter counts this process's requests in flight per unit: "key/<key id>" and a
// team's budget id (teamBudgetID).
type parallelLimiter struct {
	mu sync.Mutex
	n  map[string]int
}

// parallelUnit is one bound a request is held to: LiteLLM's descriptor (api_key, team)
// and value for the headers and message, the unit counted and its bound.
type parallelUnit struct {
	descriptor, value, unit string
	limit                   int
}

// parallelUnits are the bounds of max_parallel_requests a virtual key's request is held
// to: the key's own, then its team's.
func parallelUnits(vk virtualKeyScope) []parallelUnit {
	var us []parallelUnit
	if vk.MaxParallel > 0 {
		us = append(us, parallelUnit{descriptor: "api_key", value: vk.KeyID, unit: "key/" + vk.KeyID, limit: vk.MaxParallel})
	}
	if vk.TeamMaxParallel > 0 && vk.Team != "" {
		us = append(us, parallelUnit{descriptor: "team", value: vk.TeamID, unit: vk.Team, limit: vk.TeamMaxParallel})
	}
	return us
}

// takeParallel takes a slot of each of vk's max_parallel_requests bounds for one request,
// all or none, and sets LiteLLM's x-ratelimit-{api_key,team}-{limit,remaining}-
// max_parallel_requests headers on w. release gives them back (once, however often it is
// called); over a bound it returns the 429 to answer, with Retry-After and LiteLLM's
// rate_limit_type header, and takes nothing.
func (s *Server) takeParallel(w http.ResponseWriter, vk virtualKeyScope) (release func(), refused *APIError) {
	us := parallelUnits(vk)
	if len(us) == 0 {
		return func() {}, nil
	}
	now := time.Now()
	l := &s.parallel
	h := w.Header()
	l.mu.Lock()
	if l.n == nil {
		l.n = map[string]int{}
	}
	inFlight := make([]int, len(us))
	for i, u := range us {
		inFlight[i] = l.n[u.unit] + int(s.shared.Others(sharedParallel+u.unit, now))
		if inFlight[i] < u.limit {
			continue
		}
		l.mu.Unlock()
		setParallelHeaders(h, u, 0)
		h.Set("Retry-After", "1")
		h.Set("Rate_limit_type", "max_parallel_requests") // LiteLLM's header of its 429
		whose := "the key has"
		if u.descriptor == "team" {
			whose = "the team's keys have"
		}
		ae := Errorf(http.StatusTooManyRequests, KindTooManyRequests,
			"Rate limit exceeded for %s: %s. Limit type: max_parallel_requests. Current limit: %d, Remaining: 0. %s %d requests in flight (max_parallel_requests %d): retry when one has ended",
			u.descriptor, u.value, u.limit, whose, inFlight[i], u.limit)
		ae.Retryable = true
		return nil, ae
	}
	for i, u := range us {
		l.n[u.unit]++
		setParallelHeaders(h, u, u.limit-inFlight[i]-1)
	}
	l.mu.Unlock()
	for _, u := range us {
		s.shared.Hold(sharedParallel+u.unit, 1)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			for _, u := range us {
				if l.n[u.unit]--; l.n[u.unit] <= 0 {
					delete(l.n, u.unit)
				}
			}
			l.mu.Unlock()
			for _, u := range us {
				s.shared.Hold(sharedParallel+u.unit, -1)
			}
		})
	}, nil
}

// setParallelHeaders sets LiteLLM's headers of one max_parallel_requests bound (its
// parallel_request_limiter_v3's x-ratelimit-{descriptor}-{limit,remaining}-{type}).
func setParallelHeaders(h http.Header, u parallelUnit, remaining int) {
	prefix := fmt.Sprintf("x-ratelimit-%s-", u.descriptor)
	h[http.CanonicalHeaderKey(prefix+"limit-max_parallel_requests")] = []string{strconv.Itoa(u.limit)}
	h[http.CanonicalHeaderKey(prefix+"remaining-max_parallel_requests")] = []string{strconv.Itoa(max(remaining, 0))}
}
