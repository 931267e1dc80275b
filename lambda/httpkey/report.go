package httpkey

import (
	"context"
	"log/slog"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/emf"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
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
	}
	// The path may hold the key (PUT /payments/{key}, a Key function that
	// reads it): with hashed keys it is left out, as the handler cannot
	// tell which part is the key (DESIGN.md, "Hashed keys").
	if !h.guard.HashesKeys() {
		attrs = append(attrs, slog.String("path", x.r.URL.Path))
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

	// Only the request's own counts: its outcome (the queue adapter's names,
	// or Unauthorized and Unkeyed), ServerErrors for an answer of 500 and
	// above, and its duration. A line per request with every count at zero
	// would be four times as large, and a sum over a period is the same.
	metrics := make([]emf.Metric, 0, 3)
	name := ""
	for _, o := range outcome.Outcomes() {
		if o.String() == x.outcome {
			name = o.MetricName()
		}
	}
	switch x.outcome {
	case outcomeUnauthorized:
		name = outcome.MetricUnauthorized
	case outcomeUnkeyed:
		name = outcome.MetricUnkeyed
	}
	if name != "" {
		metrics = append(metrics, emf.Metric{Name: name, Unit: "Count", Value: 1})
	}
	if x.status >= 500 {
		metrics = append(metrics, emf.Metric{Name: outcome.MetricServerErrors, Unit: "Count", Value: 1})
	}
	metrics = append(metrics, emf.Metric{Name: outcome.MetricRequestDuration, Unit: "Milliseconds", Value: took.Milliseconds()})
	if err := emf.Write(h.cfg.Metrics, emf.Line{
		Namespace:  h.cfg.MetricsNamespace,
		Dimensions: outcome.MetricDimensions(h.cfg.Name, h.cfg.Region),
		LevelKey:   slog.LevelKey, Level: h.cfg.MetricsLevel, TimeKey: outcome.LogTimeKey,
		Metrics: metrics,
	}, time.Now()); err != nil {
		h.cfg.Logger.Error("metrics", slog.String("reason", err.Error()))
	}
}
