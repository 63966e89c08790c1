package telemetry

import (
	"context"
	"sync/atomic"
)

type routerMarkKey struct{}

// routerMark is where a model selection handler says a custom router answered.
type routerMark struct{ custom atomic.Bool }

func withRouterMark(ctx context.Context, m *routerMark) context.Context {
	return context.WithValue(ctx, routerMarkKey{}, m)
}

// MarkCustomRouter records, for the metrics of the request ctx belongs to, that a custom
// router (a preference_id) ranked the models. Without telemetry it does nothing.
func MarkCustomRouter(ctx context.Context) {
	if m, ok := ctx.Value(routerMarkKey{}).(*routerMark); ok {
		m.custom.Store(true)
	}
}
