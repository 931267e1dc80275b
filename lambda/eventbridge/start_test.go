package eventbridge_test

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
	"github.com/idempotent-consumer/idempotent-consumer/lambda/eventbridge"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue/queuetest"
)

// TestFromEnvReadsTheContractsSource: the handler runs on a contract of
// delivery eventbridge, the key reading the event's source and the detail;
// on any other delivery it refuses to start, naming the variable.
func TestFromEnvReadsTheContractsSource(t *testing.T) {
	s := contracttest.Settings()
	s.Delivery = contract.EventBridge
	store := storetest.NewMemoryStore()
	runs := 0
	key := func(e eventbridge.Event[queuetest.Order]) (string, error) {
		return e.Source + "/" + e.Detail.OrderID, nil
	}
	effect := func(_ context.Context, e eventbridge.Event[queuetest.Order], _ idempotency.Reservation) (string, error) {
		runs++
		return "", nil
	}
	h, err := eventbridge.FromEnv(key, effect, contracttest.Getenv(s.Encode()), handler.WithStore(store), handler.WithMetrics(io.Discard), handler.WithLogger(slog.New(slog.NewJSONHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	ev := func(id string) string {
		return `{"version":"0","id":"` + id + `","detail-type":"OrderPlaced","source":"shop","account":"111122223333","time":"` + time.Now().Add(-time.Minute).UTC().Format(time.RFC3339) + `","region":"eu-west-1","resources":[],"detail":{"orderId":"o-1","amount":5}}`
	}
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{queuetest.Record("a", ev("1")), queuetest.Record("b", ev("2"))}})
	if err != nil || len(resp.BatchItemFailures) > 0 || runs != 1 {
		t.Fatalf("%v %v, ran %d", resp, err, runs)
	}
	if rec, _ := store.Get(context.Background(), "charge#shop/o-1"); rec == nil {
		t.Fatal("no record charge#shop/o-1")
	}
	for _, d := range []contract.Delivery{contract.Raw, contract.S3} {
		s.Delivery = d
		_, err := eventbridge.FromEnv(key, effect, contracttest.Getenv(s.Encode()), handler.WithStore(store))
		if err == nil || !strings.Contains(err.Error(), contract.DeliveryVar) || !strings.Contains(err.Error(), `the contract's is "`+string(d)+`"`) {
			t.Errorf("delivery %s: %v", d, err)
		}
	}
}
