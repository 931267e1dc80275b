package s3event_test

import (
	"context"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/contracttest"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue/queuetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/s3event"
)

// TestFromEnvReadsTheContractsSource: the handler runs on a contract of
// delivery s3, one fact per record, keyed by ObjectKey; on any other
// delivery it refuses to start.
func TestFromEnvReadsTheContractsSource(t *testing.T) {
	s := contracttest.Settings()
	s.Delivery = contract.S3
	store := storetest.NewMemoryStore()
	var got []s3event.Object
	effect := func(_ context.Context, o s3event.Object, _ idempotency.Reservation) (string, error) {
		got = append(got, o)
		return "", nil
	}
	h, err := s3event.FromEnv(s3event.ObjectKey, effect, contracttest.Getenv(s.Encode()), handler.WithStore(store), handler.WithMetrics(io.Discard), handler.WithLogger(slog.New(slog.NewJSONHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	body := `{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"us-west-2","eventTime":"` + time.Now().Add(-time.Minute).UTC().Format(time.RFC3339) + `","eventName":"ObjectCreated:Put",` +
		`"s3":{"bucket":{"name":"uploads"},"object":{"key":"in/a+b.pdf","size":7,"eTag":"e7","versionId":"v1","sequencer":"0A"}}}]}`
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{queuetest.Record("a", body), queuetest.Record("b", body)}})
	if err != nil || len(resp.BatchItemFailures) > 0 || len(got) != 1 {
		t.Fatalf("%v %v, ran %d", resp, err, len(got))
	}
	if o := got[0]; o.Bucket != "uploads" || o.Key != "in/a b.pdf" || o.VersionID != "v1" || o.Size != 7 || o.ETag != "e7" {
		t.Fatalf("object %+v", o)
	}
	if rec, _ := store.Get(context.Background(), "charge#uploads/in/a b.pdf@v1"); rec == nil {
		t.Fatal("no record charge#uploads/in/a b.pdf@v1")
	}
	s.Delivery = contract.Envelope
	if _, err := s3event.FromEnv(s3event.ObjectKey, effect, contracttest.Getenv(s.Encode()), handler.WithStore(store)); err == nil || !strings.Contains(err.Error(), "this entry point reads bodies of delivery \"s3\"") {
		t.Errorf("delivery envelope: %v", err)
	}
}
