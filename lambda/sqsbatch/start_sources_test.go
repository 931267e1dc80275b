package sqsbatch_test

import (
	"context"
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
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

func sqsRecord(id, body string) events.SQSMessage {
	return events.SQSMessage{MessageId: id, Body: body, Attributes: map[string]string{"SentTimestamp": "1764583200000"}}
}

// TestStartEventsReadsTheContractsSource: NewEvents runs on a contract of
// delivery eventbridge, the key reading the event's source and the detail;
// on any other delivery it refuses to start, naming the variable.
func TestStartEventsReadsTheContractsSource(t *testing.T) {
	s := settings()
	s.Delivery = contract.EventBridge
	s.Window = 100 * 365 * 24 * time.Hour
	store := storetest.NewMemoryStore()
	runs := 0
	key := func(e sqsbatch.Event[order]) (string, error) { return e.Source + "/" + e.Detail.OrderID, nil }
	effect := func(_ context.Context, e sqsbatch.Event[order], _ idempotency.Reservation) (string, error) {
		runs++
		return "", nil
	}
	h, err := sqsbatch.EventsFromEnv(key, effect, getenv(s.Encode()), handler.WithStore(store), handler.WithMetrics(io.Discard), handler.WithLogger(slog.New(slog.NewJSONHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	ev := func(id string) string {
		return `{"version":"0","id":"` + id + `","detail-type":"OrderPlaced","source":"shop","account":"111122223333","time":"2025-12-01T10:00:00Z","region":"eu-west-1","resources":[],"detail":{"orderId":"o-1","amount":5}}`
	}
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{sqsRecord("a", ev("1")), sqsRecord("b", ev("2"))}})
	if err != nil || len(resp.BatchItemFailures) > 0 || runs != 1 {
		t.Fatalf("%v %v, ran %d", resp, err, runs)
	}
	if rec, _ := store.Get(context.Background(), "charge#shop/o-1"); rec == nil {
		t.Fatal("no record charge#shop/o-1")
	}
	for _, d := range []contract.Delivery{contract.Raw, contract.S3} {
		s.Delivery = d
		_, err := sqsbatch.EventsFromEnv(key, effect, getenv(s.Encode()), handler.WithStore(store))
		if err == nil || !strings.Contains(err.Error(), contract.DeliveryVar) || !strings.Contains(err.Error(), `the contract's is "`+string(d)+`"`) {
			t.Errorf("delivery %s: %v", d, err)
		}
	}
}

// TestStartObjectsReadsTheContractsSource: NewObjects runs on a contract of
// delivery s3, one fact per record, keyed by sqsbatch.ObjectKey; on any
// other delivery it refuses to start.
func TestStartObjectsReadsTheContractsSource(t *testing.T) {
	s := settings()
	s.Delivery = contract.S3
	s.Window = 100 * 365 * 24 * time.Hour
	store := storetest.NewMemoryStore()
	var got []sqsbatch.Object
	effect := func(_ context.Context, o sqsbatch.Object, _ idempotency.Reservation) (string, error) {
		got = append(got, o)
		return "", nil
	}
	h, err := sqsbatch.ObjectsFromEnv(effect, getenv(s.Encode()), handler.WithStore(store), handler.WithMetrics(io.Discard), handler.WithLogger(slog.New(slog.NewJSONHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	body := `{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"us-west-2","eventTime":"2025-12-01T10:00:00.000Z","eventName":"ObjectCreated:Put",` +
		`"s3":{"bucket":{"name":"uploads"},"object":{"key":"in/a+b.pdf","size":7,"eTag":"e7","versionId":"v1","sequencer":"0A"}}}]}`
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{sqsRecord("a", body), sqsRecord("b", body)}})
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
	if _, err := sqsbatch.ObjectsFromEnv(effect, getenv(s.Encode()), handler.WithStore(store)); err == nil || !strings.Contains(err.Error(), "this entry point reads bodies of delivery \"s3\"") {
		t.Errorf("delivery envelope: %v", err)
	}
}
