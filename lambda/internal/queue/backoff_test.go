package queue_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/fakeclock"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue/queuetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// windowFixture is a queuetest.Fixture whose guard has the business window
// window, on clock.
func windowFixture(t *testing.T, window time.Duration, clock *fakeclock.Clock) *queuetest.Fixture {
	t.Helper()
	f := &queuetest.Fixture{Store: queuetest.NewCountingStore()}
	g, err := idempotency.NewGuard(f.Store, idempotency.Config{Namespace: "charge", Window: window, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	f.Guard = g
	return f
}

// lastLine is the last log line of a message id.
func lastLine(t *testing.T, f *queuetest.Fixture, messageID string) map[string]any {
	t.Helper()
	lines := f.Lines(messageID)
	if len(lines) == 0 {
		t.Fatalf("no line for %s in:\n%s", messageID, f.Logs.String())
	}
	return lines[len(lines)-1]
}

// TestRetryAfterNeverOutlivesTheWindow: a fact whose effect asks, on every
// receive, to be retried after the cap (a provider's Retry-After of an hour)
// runs on every receive up to its last under the shortest Window the
// contract accepts with the default backoff: RetryAfter is honoured within
// each receive's ceiling, so that the retry horizon the contract checks
// bounds it. Receives are driven on the test's clock (the guard's and the
// transport's): each comes when the visibility set on the one before ends.
func TestRetryAfterNeverOutlivesTheWindow(t *testing.T) {
	s := contract.Defaults(30 * time.Second)
	s.Table, s.Namespace, s.Consumer = "t", "charge", "Shop/Charge"
	b, _ := s.Backoff()
	horizon := b.Horizon(s.MaxReceiveCount)
	s.Window = horizon + limits.ClockSkewMargin + time.Second // the shortest the contract accepts
	if p := s.Problems(); len(p) != 0 {
		t.Fatalf("the contract refuses Window %s: %v", s.Window, p)
	}
	clock := fakeclock.New()
	f := windowFixture(t, s.Window, clock)
	ch := &queuetest.Changes{}
	cfg := f.Config(contract.Raw)
	cfg.Visibility, cfg.MaxReceiveCount, cfg.BackoffBase, cfg.BackoffCap = ch, s.MaxReceiveCount, s.BackoffBase, s.BackoffCap
	var runs atomic.Int32
	throttled := func(context.Context, queuetest.Order, idempotency.Reservation) (string, error) {
		runs.Add(1)
		return "", sqsbatch.RetryAfter(errors.New("provider: 429 Too Many Requests"), s.BackoffCap)
	}
	h := sqsbatch.New(f.Guard, queuetest.OrderKey, throttled, cfg)
	queue.SetClock((*queue.Handler[queuetest.Order])(h), clock.Now)
	sent := clock.Now()
	m := queuetest.MessageAt(`{"orderId":"o-1","amount":5}`, contract.Raw, sent)
	m.Attributes["ApproximateFirstReceiveTimestamp"] = strconv.FormatInt(sent.UnixMilli(), 10)
	for n := 1; n <= s.MaxReceiveCount; n++ {
		m.Attributes["ApproximateReceiveCount"] = strconv.Itoa(n)
		m.ReceiptHandle = fmt.Sprintf("rh-%d", n)
		if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{m}}); err != nil {
			t.Fatal(err)
		}
		line := lastLine(t, f, m.MessageId)
		if line["outcome"] != "failed" {
			t.Fatalf("receive %d of %d, %s after the send (Window %s): outcome %v, want failed (its effect ran): %v",
				n, s.MaxReceiveCount, clock.Now().Sub(sent), s.Window, line["outcome"], line["reason"])
		}
		d, changed := ch.Calls[m.ReceiptHandle]
		if n == s.MaxReceiveCount {
			if changed {
				t.Errorf("the last receive's visibility was changed to %s", d)
			}
			break
		}
		if !changed {
			t.Fatalf("receive %d: the visibility was not changed", n)
		}
		if d > b.Ceiling(n) {
			t.Errorf("receive %d: visibility %s, more than its ceiling %s", n, d, b.Ceiling(n))
		}
		clock.Advance(d)
	}
	if got := runs.Load(); got != int32(s.MaxReceiveCount) {
		t.Errorf("the effect ran %d times, want %d (once per receive)", got, s.MaxReceiveCount)
	}
}
