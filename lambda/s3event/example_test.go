package s3event_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/s3event"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// A queue that a bucket's notifications are delivered to: one fact per
// record, the key decoded.
func ExampleNew() {
	guard, _ := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "uploads"})
	written := time.Now().Add(-time.Minute) // within the guard's Window (24 h by default)
	h := s3event.New(guard, s3event.ObjectKey, func(ctx context.Context, o s3event.Object, r idempotency.Reservation) (string, error) {
		fmt.Printf("import %s/%s (%d bytes) as %s\n", o.Bucket, o.Key, o.Size, r.Key)
		return "", nil
	}, sqsbatch.Config{Batch: handler.Batch{Logger: slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelError})), Metrics: io.Discard}})
	body := `{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","eventTime":"` + written.Format(time.RFC3339) + `","eventName":"ObjectCreated:Put",` +
		`"s3":{"bucket":{"name":"invoices"},"object":{"key":"2026/caf%C3%A9+bill.pdf","size":1024,"eTag":"d41d8cd98f00b204e9800998ecf8427e","sequencer":"0055AED6DCD90281E5"}}}]}`
	resp, _ := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-1", Body: body}}})
	fmt.Println("failed:", len(resp.BatchItemFailures))
	// Output:
	// import invoices/2026/café bill.pdf (1024 bytes) as uploads#invoices/2026/café bill.pdf@0055AED6DCD90281E5
	// failed: 0
}
