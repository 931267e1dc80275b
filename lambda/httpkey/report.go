package httpkey

import (
	"context"
	"log/slog"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/emf"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

type requestIDKey struct{}

// withRequestID returns ctx carrying the request id that the request's line
// names (a Lambda event's requestContext.requestId).
func withRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// report writes the request's log line and its metrics line.
func (h *Handler) report(x *exchange, took time.Duration) {
	attrs := []slog.Attr{
		slog.String("endpoint", h.cfg.Name),
		slog.String("outcome", x.outcome),
		slog.Int("status", x.status),
		slog.String("method", x.r.Method),
		slog.String("path", x.r.URL.Path),
	}
	if x.key != "" {
		attrs = append(attrs, slog.String("key", x.key))
	}
	if id, ok := x.r.Context().Value(requestIDKey{}).(string); ok && id != "" {
		attrs = append(attrs, slog.String("request_id", id))
	}
	if x.reason != "" {
		attrs = append(attrs, slog.String("reason", x.reason))
	}
	h.cfg.Logger.LogAttrs(context.Background(), x.level, "request", attrs...)

	count := func(name string) int {
		if x.outcome == name {
			return 1
		}
		return 0
	}
	metrics := make([]emf.Metric, 0, 16)
	for _, o := range sqsbatch.Outcomes() {
		if o == sqsbatch.Expired {
			continue // no request has an age
		}
		metrics = append(metrics, emf.Metric{Name: o.MetricName(), Unit: "Count", Value: count(o.String())})
	}
	server := 0
	if x.status >= 500 {
		server = 1
	}
	metrics = append(metrics,
		emf.Metric{Name: MetricUnauthorized, Unit: "Count", Value: count(OutcomeUnauthorized)},
		emf.Metric{Name: MetricUnkeyed, Unit: "Count", Value: count(OutcomeUnkeyed)},
		emf.Metric{Name: MetricServerErrors, Unit: "Count", Value: server},
		emf.Metric{Name: MetricRequestDuration, Unit: "Milliseconds", Value: took.Milliseconds()},
	)
	if err := emf.Write(h.cfg.Metrics, emf.Line{
		Namespace: h.cfg.MetricsNamespace,
		Dimension: sqsbatch.MetricDimension, Value: h.cfg.Name,
		LevelKey: slog.LevelKey, Level: h.cfg.MetricsLevel, TimeKey: sqsbatch.LogTimeKey,
		Metrics: metrics,
	}, time.Now()); err != nil {
		h.cfg.Logger.Error("metrics", slog.String("reason", err.Error()))
	}
}
