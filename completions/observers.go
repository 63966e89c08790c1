package completions

import "context"

// Observers fans one request out to several Observers, in order (e.g. the console's
// recorder and a metrics exporter). Nil entries are skipped.
type Observers []Observer

// ObserveRequest passes r to every observer.
func (os Observers) ObserveRequest(ctx context.Context, r RequestRecord) {
	for _, o := range os {
		if o != nil {
			o.ObserveRequest(ctx, r)
		}
	}
}

// JoinObservers returns the non-nil observers as one: nil when there are none, the observer
// itself when there is one, else an Observers.
func JoinObservers(obs ...Observer) Observer {
	var out Observers
	for _, o := range obs {
		if o != nil {
			out = append(out, o)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return out
}
