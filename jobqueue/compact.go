package jobqueue

// Compact drops from a buffered channel of job ids those live does not report as live
// (jobs cancelled or deleted while they waited: a worker would skip them, but until it
// reaches them they hold slots, and one key cycling submit and cancel while the workers
// are busy would fill the channel for every key). The live ids go back in their order
// without blocking; Compact returns those it could not put back because another sender
// took their room meanwhile, for the caller to queue some other way. Callers serialise
// Compact with their own sends where they can, so that nothing is returned.
func Compact(queue chan string, live func(id string) bool) (unsent []string) {
	var keep []string
	for range len(queue) {
		select {
		case id := <-queue:
			if live(id) {
				keep = append(keep, id)
			}
		default: // a worker took the rest
		}
	}
	for _, id := range keep {
		select {
		case queue <- id:
		default:
			unsent = append(unsent, id)
		}
	}
	return unsent
}
