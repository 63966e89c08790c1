package server

import (
	"context"
	"log/slog"
)

// RequestIDHandler wraps h so that every record logged with the context of a request the
// server is answering (slog's *Context methods) carries that request's request_id, as the
// access line does: the gateway's warnings about a request's attempts can be found by it.
// Records that already have a request_id (their own, or the logger's from With) are left as
// they are. Under WithGroup the id goes into the group, as every attribute does.
func RequestIDHandler(h slog.Handler) slog.Handler { return requestIDHandler{Handler: h} }

type requestIDHandler struct {
	slog.Handler
	hasID bool // the logger's own attributes (With) hold a request_id
}

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := requestID(ctx); id != "" && !h.hasID {
		has := false
		r.Attrs(func(a slog.Attr) bool {
			has = a.Key == "request_id"
			return !has
		})
		if !has {
			r.AddAttrs(slog.String("request_id", id))
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(as []slog.Attr) slog.Handler {
	has := h.hasID
	for _, a := range as {
		has = has || a.Key == "request_id"
	}
	return requestIDHandler{Handler: h.Handler.WithAttrs(as), hasID: has}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{Handler: h.Handler.WithGroup(name), hasID: h.hasID}
}
