package sqsbatch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/storespy"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

type order struct {
	OrderID string `json:"orderId"`
	Amount  int    `json:"amount"`
	Mode    string `json:"mode,omitempty"` // "fail", "panic", "slow": how the test effect behaves
}

func orderKey(o order) (string, error) { return o.OrderID, nil }

// countingStore is the fixture's store: a storespy.Counter over a
// MemoryStore, which tests may also reach directly, uncounted.
type countingStore struct {
	*storespy.Counter
	MemoryStore *storetest.MemoryStore
}

var errThrottled = errors.New("ProvisionedThroughputExceededException: throttled")

func newCountingStore() *countingStore {
	m := storetest.NewMemoryStore()
	return &countingStore{Counter: storespy.NewCounter(m), MemoryStore: m}
}

func (s *countingStore) calls() int { return s.Requests() }

// fixture is a handler over a counting store, with its logs and metrics.
type fixture struct {
	store   *countingStore
	guard   *idempotency.Guard
	effects sync.Map // order id -> *atomic.Int32
	logs    bytes.Buffer
	metrics bytes.Buffer
	mu      sync.Mutex // guards logs and metrics
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{store: newCountingStore()}
	g, err := idempotency.NewGuard(f.store, idempotency.Config{Namespace: "charge"})
	if err != nil {
		t.Fatal(err)
	}
	f.guard = g
	return f
}

func (f *fixture) config(d contract.Delivery) sqsbatch.Config {
	return sqsbatch.Config{
		Delivery: d,
		Consumer: "charge",
		Logger:   slog.New(slog.NewJSONHandler(lockedWriter{&f.mu, &f.logs}, nil)),
		Metrics:  lockedWriter{&f.mu, &f.metrics},
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (f *fixture) handler(d contract.Delivery) *sqsbatch.Handler[order] {
	return sqsbatch.New(f.guard, orderKey, f.effect, f.config(d))
}

func (f *fixture) effect(ctx context.Context, o order, r idempotency.Reservation) (string, error) {
	n, _ := f.effects.LoadOrStore(o.OrderID, new(atomic.Int32))
	switch o.Mode {
	case "fail":
		return "", errors.New("payment declined by the provider")
	case "panic":
		panic("a bug in the effect")
	case "slow":
		time.Sleep(50 * time.Millisecond)
	}
	n.(*atomic.Int32).Add(1)
	return "receipt-" + o.OrderID, nil
}

func (f *fixture) effectCount(id string) int {
	n, ok := f.effects.Load(id)
	if !ok {
		return 0
	}
	return int(n.(*atomic.Int32).Load())
}

// logLine returns the log line of a message id.
func (f *fixture) logLine(t *testing.T, messageID string) map[string]any {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range strings.Split(strings.TrimSpace(f.logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["message_id"] == messageID {
			return m
		}
	}
	t.Fatalf("no log line for %s in:\n%s", messageID, f.logs.String())
	return nil
}

// metric returns the value of a metric in the last EMF line.
func (f *fixture) metric(t *testing.T, name string) float64 {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(f.metrics.String()), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("metrics line %q: %v", lines[len(lines)-1], err)
	}
	v, ok := m[name].(float64)
	if !ok {
		t.Fatalf("metric %s missing in %v", name, m)
	}
	return v
}

var seq atomic.Int64

// message builds an SQS record carrying body, raw or in an SNS envelope,
// published and sent now.
func message(body string, d contract.Delivery) events.SQSMessage {
	return messageAt(body, d, time.Now())
}

// messageAt is message, published (the envelope's Timestamp) and sent (the
// SentTimestamp attribute) at at.
func messageAt(body string, d contract.Delivery, at time.Time) events.SQSMessage {
	id := fmt.Sprintf("msg-%d", seq.Add(1))
	if d == contract.Envelope {
		env, _ := json.Marshal(map[string]string{
			"Type": "Notification", "MessageId": "sns-" + id, "TopicArn": "arn:aws:sns:us-east-1:123456789012:orders",
			"Message": body, "Timestamp": at.UTC().Format("2006-01-02T15:04:05.000Z"), "SignatureVersion": "1",
		})
		body = string(env)
	}
	return events.SQSMessage{
		MessageId:      id,
		Body:           body,
		EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:charge",
		Attributes:     map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": strconv.FormatInt(at.UnixMilli(), 10)},
	}
}

func failedIDs(resp events.SQSEventResponse) map[string]bool {
	m := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		m[f.ItemIdentifier] = true
	}
	return m
}
