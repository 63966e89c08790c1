package completions

// inFlightOf is how many calls of model (a limited member) are counted in flight.
func inFlightOf(g *Gateway, model string) int64 {
	u := g.routes().limits.of(model)
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.inFlight
}

// callsInMinuteOf is how many calls of model (a limited member) are counted in the last minute.
func callsInMinuteOf(g *Gateway, model string) int64 {
	u := g.routes().limits.of(model)
	u.mu.Lock()
	defer u.mu.Unlock()
	n, _ := u.rpm.sum(g.opts.Now(), 1<<62)
	return n
}

// queuedOn is how many requests are queued for a slot in flight of model (a limited member).
func queuedOn(g *Gateway, model string) int {
	u := g.routes().limits.of(model)
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.waiters)
}
