package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"

	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/telemetry"
)

// telemetryFlags are serve's observability flags.
type telemetryFlags struct {
	Metrics      bool
	MetricsAddr  string
	MetricsToken string
	// MetricsTLS is --metrics-tls: --metrics-addr serves HTTPS with serve's --tls-cert.
	MetricsTLS bool
	OwnerLabel bool
	// LiteLLM adds the metrics under LiteLLM's names (--litellm-metrics, or "prometheus"
	// among a --litellm-config's callbacks).
	LiteLLM bool
	// TraceContent, TraceContentMaxBytes and TraceContentLegacy: telemetry.TracingOptions'
	// CaptureContent, MaxContentBytes and LegacyContent.
	TraceContent         bool
	TraceContentMaxBytes int
	TraceContentLegacy   bool
}

func (f *telemetryFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.Metrics, "metrics", true, "serve Prometheus metrics at GET /metrics (outside the API keys; see --metrics-token)")
	fs.StringVar(&f.MetricsAddr, "metrics-addr", "", "serve /metrics on this address instead of the API's listener (e.g. 127.0.0.1:9090)")
	fs.StringVar(&f.MetricsToken, "metrics-token", "", "bearer token /metrics requires (empty: none)")
	fs.BoolVar(&f.MetricsTLS, "metrics-tls", false, "serve --metrics-addr over HTTPS with the certificate of --tls-cert/--tls-key (read again at SIGHUP as the API's), so a scraper's --metrics-token does not travel in the clear; needs --metrics-addr and --tls-cert (without it --metrics-addr is plain HTTP)")
	fs.BoolVar(&f.LiteLLM, "litellm-metrics", false, "also serve LiteLLM's Prometheus metrics at /metrics (litellm_proxy_total_requests_metric_total, litellm_spend_metric_total, …) for dashboards built on them; on by itself when --litellm-config's litellm_settings.callbacks names prometheus")
	fs.BoolVar(&f.OwnerLabel, "metrics-owner-label", false, "label gateway request and cost metrics, and the LiteLLM metrics with a team label (requests, spend, tokens, latency, deployment calls, budget gauges), with the API key's id (one series per key and model); without it, teams of different API keys sharing a team id add up in LiteLLM's series, and their budget gauges show the team charged last")
	fs.BoolVar(&f.TraceContent, "trace-content", false, "put prompts and answers on the chat spans (gen_ai.input.messages, gen_ai.output.messages; also OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true): they may be personal data")
	fs.IntVar(&f.TraceContentMaxBytes, "trace-content-max-bytes", telemetry.DefaultMaxContentBytes, "bound on each content attribute of a span (texts cut with a marker; at least 256)")
	fs.BoolVar(&f.TraceContentLegacy, "trace-content-legacy", false, "with content capture on, also put prompts and answers in the older shape (gen_ai.content.prompt/completion span events, flattened gen_ai.prompt.{i}.* attributes) for Langfuse before 2025-09 and Phoenix before 15.10")
}

// observability is a serve process's metrics and tracer (either may be nil: off).
type observability struct {
	metrics *telemetry.Metrics
	tracing *telemetry.Tracing
	// litellm: add the metrics under LiteLLM's names once the gateway is built.
	litellm bool
}

func newObservability(ctx context.Context, f telemetryFlags, log *slog.Logger) (*observability, error) {
	o := &observability{}
	if f.Metrics {
		o.metrics = telemetry.New(telemetry.Options{OwnerLabel: f.OwnerLabel, StatusOf: server.ErrorStatus})
		o.litellm = f.LiteLLM
	} else if f.LiteLLM {
		log.Warn("LiteLLM's metrics are not served: --metrics is off")
	}
	if f.TraceContentMaxBytes < 256 {
		return nil, fmt.Errorf("--trace-content-max-bytes %d: must be at least 256", f.TraceContentMaxBytes)
	}
	// OpenTelemetry's own log lines (an endpoint that does not parse, quoted whole) go to
	// the process log with their URLs redacted, instead of stderr as they are.
	otel.SetLogger(logr.FromSlogHandler(redactingHandler{log.Handler()}))
	t, err := telemetry.TracingFromEnv(ctx, version, telemetry.TracingOptions{CaptureContent: f.TraceContent, MaxContentBytes: f.TraceContentMaxBytes,
		LegacyContent: f.TraceContentLegacy})
	if err != nil {
		// An endpoint that does not parse is quoted in the error, credentials and all.
		return nil, secretFreeError{err}
	}
	if f.TraceContentLegacy && t != nil && !t.CapturesContent() {
		log.Warn("--trace-content-legacy does nothing without content capture (--trace-content or " + telemetry.ContentCaptureEnv + "=true)")
	}
	o.tracing = t
	if t != nil {
		endpoint := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
		if endpoint == "" {
			endpoint = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
		}
		log.Info("tracing on", "endpoint", endpointForLog(endpoint), "content", t.CapturesContent())
		// The exporter's failures (a collector down) go to the process log, structured and
		// at most once a minute, instead of a stdlib line every export.
		otel.SetErrorHandler(exportErrors(log, time.Minute))
	}
	return o, nil
}

// endpointForLog is an OTLP endpoint as serve logs it: scheme, host and path (Langfuse's
// /api/public/otel), without the user:password or query string a vendor's token may be in.
func endpointForLog(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "(URL not shown)"
	}
	out := u.Scheme + "://" + u.Host + u.EscapedPath()
	if u.RawQuery != "" {
		out += "?…"
	}
	return out
}

// urlInText is a URL inside an error's text: a scheme, "://" and what follows up to a
// space or a quote.
var urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`)

// redactURLs is s with every URL in it as endpointForLog shows one: no user:password, the
// query string as "?…".
func redactURLs(s string) string {
	return urlInText.ReplaceAllStringFunc(s, endpointForLog)
}

// secretFreeError is an error whose text has its URLs redacted (redactURLs); it unwraps to
// the error it stands for.
type secretFreeError struct{ err error }

func (e secretFreeError) Error() string { return redactURLs(e.err.Error()) }
func (e secretFreeError) Unwrap() error { return e.err }

// redactingHandler passes records on with the URLs in their message and string or error
// attributes redacted (redactURLs).
type redactingHandler struct{ slog.Handler }

func (h redactingHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, redactURLs(r.Message), r.PC)
	// OpenTelemetry's complaints about OTEL_EXPORTER_OTLP_HEADERS quote the pair or value
	// it could not read ('parse headers' input="api-key: <token>", 'escape header value'):
	// the headers' values are the collector's credentials, so none of their text is shown.
	headers := strings.Contains(strings.ToLower(r.Message), "header")
	r.Attrs(func(a slog.Attr) bool {
		if headers && a.Value.Kind() != slog.KindAny {
			a = slog.String(a.Key, "[redacted]")
		}
		out.AddAttrs(redactAttr(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	for i, a := range attrs {
		attrs[i] = redactAttr(a)
	}
	return redactingHandler{h.Handler.WithAttrs(attrs)}
}

func (h redactingHandler) WithGroup(name string) slog.Handler {
	return redactingHandler{h.Handler.WithGroup(name)}
}

// redactAttr is a with its URLs redacted: a string's, an error's (as its text), a group's
// members'.
func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, redactURLs(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, m := range g {
			out[i] = redactAttr(m)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, redactURLs(err.Error()))
		}
		if st, ok := v.Any().(fmt.Stringer); ok {
			return slog.String(a.Key, redactURLs(st.String()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// exportErrors logs OpenTelemetry's errors as warnings, at most one per interval (with how
// many were dropped since the last).
func exportErrors(log *slog.Logger, interval time.Duration) otel.ErrorHandlerFunc {
	var (
		mu      sync.Mutex
		last    time.Time
		dropped int
	)
	return func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.Sub(last) >= interval {
			// The exporter's error quotes the collector's URL ('Post "https://…?api-key=…"').
			log.Warn("tracing: export failed", "err", redactURLs(err.Error()), "dropped_since_last", dropped)
			last, dropped = now, 0
			return
		}
		dropped++
	}
}

// wrapStore times the store's operations when metrics are on.
func (o *observability) wrapStore(d store.Driver) store.Driver {
	if o.metrics == nil {
		return d
	}
	return o.metrics.Store(d)
}

// middleware is the server's Config.Middleware: traces outermost, then metrics.
func (o *observability) middleware() []func(http.Handler) http.Handler {
	var mw []func(http.Handler) http.Handler
	if o.tracing != nil {
		mw = append(mw, o.tracing.Middleware(server.RoutePattern, server.RequestID, server.LogPath))
	}
	if o.metrics != nil {
		mw = append(mw, o.metrics.Middleware(server.RoutePattern))
	}
	return mw
}

// watchServices registers the scrape-time collectors of jobs and circuit breakers.
func (o *observability) watchServices(w *wiring) {
	if o.metrics == nil {
		return
	}
	if o.litellm {
		opts := telemetry.LiteLLMOptions{StatusOf: server.ErrorStatus, DeploymentID: w.gateway.DeploymentIDOf, BreakerStates: w.gateway.BreakerStates,
			AccountExists: server.BudgetAccountExists(w.store)}
		if lc := w.cfg.litellm; lc != nil {
			opts.EndUser = lc.PrometheusEndUser
			// A deployment with its own api_base or api_key calls a provider entry of its
			// own: LiteLLM names its model as the config does.
			opts.Models = map[string]string{}
			for _, d := range lc.Deployments {
				if d.Member != d.Model && strings.Contains(d.Model, "/") {
					opts.Models[d.Member] = d.Model
				}
			}
		}
		o.metrics.EnableLiteLLM(opts)
	}
	o.metrics.Breakers(w.gateway.BreakerStates)
	o.metrics.Latencies(w.gateway.Latencies)
	o.metrics.PendingCharges(w.gateway.PendingCharges)
	if w.health != nil {
		o.metrics.ModelHealth(w.health.Latest)
	}
	// Made-up model names take no model label value until they answer; model group names
	// and deployments' own names (LiteLLM's requested_model) are known ones.
	o.metrics.AdmitModels(func(m string) bool {
		return w.gateway.HasModel(m) || w.gateway.HasEmbeddingModel(m) || w.gateway.HasRerankModel(m) || w.gateway.IsModelGroup(m) ||
			w.gateway.IsDeploymentName(m)
	})
	o.metrics.Jobs("training", w.trainer.JobStats)
	o.metrics.Jobs("optimization", w.optimizer.JobStats)
	if w.batches != nil {
		o.metrics.Jobs("batch", w.batches.JobStats)
	}
}

// serveMetrics serves /metrics on its own listener until ctx ends (--metrics-addr): over
// TLS of tlsConfig when it is set (--metrics-tls), else plain HTTP.
func (o *observability) serveMetrics(ctx context.Context, f telemetryFlags, tlsConfig *tls.Config, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", f.MetricsAddr)
	if err != nil {
		return nil, listenError("--metrics-addr", f.MetricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", o.metrics.Handler(f.MetricsToken))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		TLSConfig: tlsConfig}
	go func() {
		var err error
		if tlsConfig != nil {
			err = hs.ServeTLS(ln, "", "") // the certificate from tlsConfig's GetCertificate
		} else {
			err = hs.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics listener", "err", err)
		}
	}()
	log.Info("metrics listening", "addr", ln.Addr().String(), "tls", tlsConfig != nil)
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}, nil
}
