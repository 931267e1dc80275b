// Package queuetest is the fixture the tests of every queue-fed source
// share (packages sqsbatch, eventbridge, s3event): a guard over a counting
// in-memory store, with the handler's log lines and metrics captured, and
// SQS records built as SQS delivers them.
package queuetest

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
	"github.com/idempotent-consumer/idempotent-consumer/internal/fakeclock"
	"github.com/idempotent-consumer/idempotent-consumer/internal/testkit/storespy"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Order is the tests' business message.
type Order struct {
	OrderID string `json:"orderId"`
	Amount  int    `json:"amount"`
	Mode    string `json:"mode,omitempty"` // "fail", "panic", "slow": how Fixture.Effect behaves
}

// OrderKey is the key of an Order: its id.
func OrderKey(o Order) (string, error) { return o.OrderID, nil }

// CountingStore is the fixture's store: a storespy.Counter over a
// MemoryStore, which tests may also reach directly, uncounted.
type CountingStore struct {
	*storespy.Counter
	MemoryStore *storetest.MemoryStore
}

// NewCountingStore returns an empty CountingStore.
func NewCountingStore() *CountingStore {
	m := storetest.NewMemoryStore()
	return &CountingStore{Counter: storespy.NewCounter(m), MemoryStore: m}
}

// Fixture is a guard over a counting store, with the handlers' logs and
// metrics.
type Fixture struct {
	Store   *CountingStore
	Guard   *idempotency.Guard
	effects sync.Map // order id -> *atomic.Int32
	Logs    bytes.Buffer
	Metrics bytes.Buffer
	Mu      sync.Mutex // guards Logs and Metrics
}

// NewFixture returns a Fixture whose guard has the namespace "charge".
func NewFixture(t testing.TB) *Fixture {
	return newFixtureWith(t, idempotency.Config{Namespace: "charge"})
}

// newFixtureWith returns a Fixture whose guard has cfg.
func newFixtureWith(t testing.TB, cfg idempotency.Config) *Fixture {
	t.Helper()
	f := &Fixture{Store: NewCountingStore()}
	g, err := idempotency.NewGuard(f.Store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.Guard = g
	return f
}

// Config is a handler's configuration that writes to the fixture's logs
// and metrics.
func (f *Fixture) Config(d contract.Delivery) sqsbatch.Config {
	return sqsbatch.Config{
		Delivery: d,
		Batch:    handler.Batch{Consumer: "charge", Logger: slog.New(slog.NewJSONHandler(lockedWriter{&f.Mu, &f.Logs}, nil)), Metrics: lockedWriter{&f.Mu, &f.Metrics}},
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

// Handler is sqsbatch's handler of Orders with Effect.
func (f *Fixture) Handler(d contract.Delivery) *sqsbatch.Handler[Order] {
	return sqsbatch.New(f.Guard, OrderKey, f.Effect, f.Config(d))
}

// Effect counts an order's effects; its Mode makes it fail, panic or
// take 50ms.
func (f *Fixture) Effect(ctx context.Context, o Order, r idempotency.Reservation) (string, error) {
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

// EffectCount is how many times Effect ran for the order id.
func (f *Fixture) EffectCount(id string) int {
	n, ok := f.effects.Load(id)
	if !ok {
		return 0
	}
	return int(n.(*atomic.Int32).Load())
}

// LogLine returns the first log line of a message id.
func (f *Fixture) LogLine(t testing.TB, messageID string) map[string]any {
	t.Helper()
	lines := f.Lines(messageID)
	if len(lines) == 0 {
		t.Fatalf("no log line for %s in:\n%s", messageID, f.Logs.String())
	}
	return lines[0]
}

// Lines returns the log lines of a message id.
func (f *Fixture) Lines(messageID string) []map[string]any {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(f.Logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["message_id"] == messageID {
			out = append(out, m)
		}
	}
	return out
}

// Metric returns the value of a metric in the last EMF line.
func (f *Fixture) Metric(t testing.TB, name string) float64 {
	t.Helper()
	f.Mu.Lock()
	defer f.Mu.Unlock()
	lines := strings.Split(strings.TrimSpace(f.Metrics.String()), "\n")
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

// Message builds an SQS record carrying body, raw or in an SNS envelope,
// published and sent now.
func Message(body string, d contract.Delivery) events.SQSMessage {
	return MessageAt(body, d, time.Now())
}

// MessageAt is Message, published (the envelope's Timestamp) and sent (the
// SentTimestamp attribute) at at.
func MessageAt(body string, d contract.Delivery, at time.Time) events.SQSMessage {
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

// FailedIDs are the message ids a response reports failed.
func FailedIDs(resp events.SQSEventResponse) map[string]bool {
	m := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		m[f.ItemIdentifier] = true
	}
	return m
}

// Window is the business window of NewClockFixture's guard.
const Window = 10 * time.Minute

// NewClockFixture is NewFixture with a guard on a clock of the test's own,
// a business window of Window and a lease of a minute.
func NewClockFixture(t testing.TB) (*Fixture, *fakeclock.Clock) {
	t.Helper()
	c := fakeclock.New()
	return newFixtureWith(t, idempotency.Config{Namespace: "charge", Window: Window, LeaseMax: time.Minute, Now: c.Now}), c
}

// Changes is a visibility changer (handler.VisibilityChanger) that
// records the timeouts it sets.
type Changes struct {
	Mu    sync.Mutex
	Calls map[string]time.Duration // by receipt handle
	Fail  bool                     // every change fails (AccessDenied)
	Queue time.Duration            // the queue's visibility timeout (default 30s)
}

// QueueVisibility returns Queue, or 30s.
func (c *Changes) QueueVisibility(context.Context, string) (time.Duration, error) {
	if c.Queue == 0 {
		return 30 * time.Second, nil
	}
	return c.Queue, nil
}

// ChangeVisibility records d for handle, or fails.
func (c *Changes) ChangeVisibility(_ context.Context, queueARN, handle string, d time.Duration) error {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	if c.Fail {
		return errors.New("AccessDenied")
	}
	if queueARN == "" {
		return errors.New("no queue")
	}
	if c.Calls == nil {
		c.Calls = map[string]time.Duration{}
	}
	c.Calls[handle] = d
	return nil
}

// Received is a raw Order message on its count-th receive, with a receipt
// handle, of a FIFO message group when group is set.
func Received(id string, count int, group string) events.SQSMessage {
	m := Message(`{"orderId":"`+id+`","amount":5}`, contract.Raw)
	m.ReceiptHandle = "rh-" + m.MessageId
	m.Attributes["ApproximateReceiveCount"] = strconv.Itoa(count)
	if group != "" {
		m.Attributes["MessageGroupId"] = group
		m.EventSourceARN += ".fifo"
	}
	return m
}

// Record is an SQS record of body, sent now.
func Record(id, body string) events.SQSMessage {
	return events.SQSMessage{MessageId: id, Body: body, Attributes: map[string]string{"SentTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10)}}
}

// Sized returns an Order message of exactly n bytes for orderID whose pad is
// made of escaped quotes: the worst case for an SNS envelope, which escapes
// each of their two bytes again, so that the body is about twice the message.
func Sized(t testing.TB, orderID string, n int) string {
	t.Helper()
	head, tail := `{"orderId":"`+orderID+`","amount":1,"pad":"`, `"}`
	room := n - len(head) - len(tail)
	if room < 0 {
		t.Fatalf("no room for a %d-byte message", n)
	}
	return head + strings.Repeat(`\"`, room/2) + strings.Repeat("x", room%2) + tail
}

// CheckEveryFailureSaysWhy handles one raw message of body: the batch must
// not fail, and a message reported failed must have a log line with a
// reason.
func CheckEveryFailureSaysWhy(t testing.TB, f *Fixture, handle func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), body string) {
	t.Helper()
	rec := Message(body, contract.Raw)
	resp, err := handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}})
	if err != nil {
		t.Fatalf("the batch failed: %v", err)
	}
	if len(resp.BatchItemFailures) == 0 {
		return
	}
	lines := f.Lines(rec.MessageId)
	for _, l := range lines {
		if l["reason"] != nil {
			return
		}
	}
	t.Fatalf("reported failed without a reason: %v", lines)
}
