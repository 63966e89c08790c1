package telemetry

import (
	"net/http"
	"strconv"
	"time"
)

// RouteFunc names the route a finished request took (a mux pattern such as "POST
// /api/v1/completions"), "" when none matched. The server package provides it
// (server.RoutePattern).
type RouteFunc func(r *http.Request) string

// Middleware counts and times every HTTP request by route and status; model selection
// requests are also counted per router (custom when the request named a preference_id,
// which the handler reports through the request's context — see MarkCustomRouter —,
// default otherwise).
func (m *Metrics) Middleware(route RouteFunc) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			rec := &codeRecorder{ResponseWriter: w}
			mark := &routerMark{}
			next.ServeHTTP(rec, r.WithContext(withRouterMark(r.Context(), mark)))
			el := time.Since(start).Seconds()
			pattern := route(r)
			if pattern == "" {
				pattern = "unrouted"
			}
			code := rec.code
			if code == 0 {
				code = http.StatusOK
			}
			m.httpRequests.WithLabelValues(pattern, strconv.Itoa(code)).Inc()
			m.httpDuration.WithLabelValues(pattern).Observe(el)
			if isModelSelect(pattern) {
				router := "default"
				if mark.custom.Load() {
					router = "custom"
				}
				m.selects.WithLabelValues(router, strconv.Itoa(code)).Inc()
				m.selectDur.WithLabelValues(router).Observe(el)
			}
		})
	}
}

func isModelSelect(pattern string) bool {
	return pattern == "POST /api/v1/model-select" || pattern == "POST /v1/modelSelect"
}

// codeRecorder remembers the status code; it passes Flush and Unwrap through so streams
// keep working.
type codeRecorder struct {
	http.ResponseWriter
	code int
}

func (r *codeRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *codeRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *codeRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (r *codeRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
