package sqsbatch_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// BenchmarkHandle is the adapter's and the guard's own CPU per new record
// (the in-memory store: no SDK, no network), for SNS-enveloped orders of
// about 150 bytes and of about 60 KiB (an order with 600 lines), where the
// passes over each message's JSON (the envelope, the decode, the canonical
// parser for the hash) are most of the cost.
func BenchmarkHandle(b *testing.B) {
	lines := make([]string, 600)
	for i := range lines {
		lines[i] = fmt.Sprintf(`{"sku":"SKU-%06d","qty":%d,"price":"%d.99","note":"line %d of the order, with some text"}`, i, i%7+1, i%90+10, i)
	}
	for _, size := range []struct{ name, extra string }{
		{"small", ""},
		{"large", `,"lines":[` + strings.Join(lines, ",") + `]`},
	} {
		b.Run("message="+size.name, func(b *testing.B) {
			g, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "charge"})
			if err != nil {
				b.Fatal(err)
			}
			h := sqsbatch.New(g, orderKey, func(_ context.Context, o order, _ idempotency.Reservation) (string, error) {
				return "ch_" + o.OrderID, nil
			}, sqsbatch.Config{Delivery: contract.Envelope, Batch: handler.Batch{Consumer: "charge", Concurrency: 1, Logger: outcome.NewLogger(io.Discard, slog.LevelInfo), Metrics: io.Discard}})
			batch := func(n int) events.SQSEvent {
				var ev events.SQSEvent
				for i := range 10 {
					ev.Records = append(ev.Records, message(fmt.Sprintf(`{"orderId":"o-%d-%d","amount":5%s}`, n, i, size.extra), contract.Envelope))
				}
				return ev
			}
			bytes := len(batch(0).Records[0].Body)
			n := 0
			for b.Loop() {
				b.StopTimer()
				ev := batch(n)
				n++
				b.StartTimer()
				if resp, err := h.Handle(context.Background(), ev); err != nil || len(resp.BatchItemFailures) > 0 {
					b.Fatalf("%v, %d failures", err, len(resp.BatchItemFailures))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(10*n), "ns/rec")
			b.ReportMetric(float64(bytes), "body-B")
		})
	}
}
