package queue_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
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

// receipts is a VisibilityChanger that keeps SQS's rules of a receipt on
// the test's clock, as the SQS API Reference gives them for
// ChangeMessageVisibility: a timeout of 0 to 43,200 s, counted from the
// call; only while the message is in flight (MessageNotInflight); and never
// so that the receipt's total visibility exceeds 12 hours from its receive
// ("If you try to extend the visibility timeout beyond 12 hours, your
// request is rejected"). kumo models none of these.
type receipts struct {
	clock    *fakeclock.Clock
	queue    time.Duration // the queue's visibility timeout
	mu       sync.Mutex
	received map[string]time.Time // by receipt handle
	visible  map[string]time.Time // when it is visible again
	calls    map[string]time.Duration
	refused  []string
}

// receive starts a receipt now, under the queue's visibility timeout.
func (r *receipts) receive(handle string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.received == nil {
		r.received, r.visible, r.calls = map[string]time.Time{}, map[string]time.Time{}, map[string]time.Duration{}
	}
	now := r.clock.Now()
	r.received[handle], r.visible[handle] = now, now.Add(r.queue)
}

func (r *receipts) QueueVisibility(context.Context, string) (time.Duration, error) {
	return r.queue, nil
}

func (r *receipts) ChangeVisibility(_ context.Context, _, handle string, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	var err error
	switch received, ok := r.received[handle]; {
	case !ok:
		err = errors.New("ReceiptHandleIsInvalid")
	case d < 0 || d > contract.MaxBackoff:
		err = fmt.Errorf("InvalidParameterValue: VisibilityTimeout %s is not from 0 to 43200 seconds", d)
	case !now.Before(r.visible[handle]):
		err = errors.New("MessageNotInflight")
	case now.Add(d).Sub(received) > contract.MaxBackoff:
		err = fmt.Errorf("InvalidParameterValue: %s after %s in flight exceeds the receipt's 12 hours", d, now.Sub(received))
	}
	if err != nil {
		r.refused = append(r.refused, handle+": "+err.Error())
		return err
	}
	r.visible[handle], r.calls[handle] = now.Add(d), d
	return nil
}

// TestBackoffStaysWithinTheReceiptsTwelveHours: with BackoffBase and
// BackoffCap 12h (the contract accepts them), a failed message's delay is
// one SQS takes on every receive, even when the change comes as late in the
// receipt as it can while the message is in flight: an invocation that
// starts a second before the queue's visibility timeout ends (Lambda
// retries a throttled invocation until then), or one whose effect takes
// most of the function's timeout after a late start. The delay is what is
// left of the receipt's 12 hours from the earliest receive the invocation
// allows, less the margin, and the record's line says when it comes back.
func TestBackoffStaysWithinTheReceiptsTwelveHours(t *testing.T) {
	const qv = 15 * time.Minute // six times a function timeout of 150s
	for _, c := range []struct {
		name   string
		effect time.Duration // how long the effect takes, on the test's clock
	}{
		{"the invocation starts a second before the visibility timeout ends", 0},
		{"the effect ends a second before it", 2 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := contract.Defaults(qv / 6)
			s.Table, s.Namespace, s.Consumer = "t", "charge", "Shop/Charge"
			s.BackoffBase, s.BackoffCap = contract.MaxBackoff, contract.MaxBackoff
			b, _ := s.Backoff()
			s.Window = b.Horizon(s.MaxReceiveCount) + limits.ClockSkewMargin + time.Second
			if p := s.Problems(); len(p) != 0 {
				t.Fatalf("the contract refuses the settings: %v", p)
			}
			clock := fakeclock.New()
			f := windowFixture(t, s.Window, clock)
			sqs := &receipts{clock: clock, queue: qv}
			cfg := f.Config(contract.Raw)
			cfg.Visibility, cfg.MaxReceiveCount, cfg.BackoffBase, cfg.BackoffCap = sqs, s.MaxReceiveCount, s.BackoffBase, s.BackoffCap
			cfg.Random = func() float64 { return 0.999999 } // the top of the jitter: 12h
			slow := func(context.Context, queuetest.Order, idempotency.Reservation) (string, error) {
				clock.Advance(c.effect)
				return "", errors.New("payment provider unavailable")
			}
			h := sqsbatch.New(f.Guard, queuetest.OrderKey, slow, cfg)
			queue.SetClock((*queue.Handler[queuetest.Order])(h), clock.Now)
			m := queuetest.MessageAt(`{"orderId":"o-1","amount":5}`, contract.Raw, clock.Now())
			m.Attributes["ApproximateFirstReceiveTimestamp"] = strconv.FormatInt(clock.Now().UnixMilli(), 10)
			for n := 1; n < s.MaxReceiveCount; n++ {
				m.Attributes["ApproximateReceiveCount"] = strconv.Itoa(n)
				m.ReceiptHandle = fmt.Sprintf("rh-%d", n)
				sqs.receive(m.ReceiptHandle)
				clock.Advance(qv - c.effect - time.Second) // as late as the message stays in flight until the change
				if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{m}}); err != nil {
					t.Fatal(err)
				}
				if len(sqs.refused) > 0 {
					t.Fatalf("receive %d: SQS refused %v", n, sqs.refused)
				}
				d, changed := sqs.calls[m.ReceiptHandle]
				// 12h from the earliest receive the invocation allows (its
				// start less the queue's timeout), less the margin.
				want := contract.MaxBackoff - qv - time.Minute - c.effect
				line := lastLine(t, f, m.MessageId)
				if !changed || d != want {
					t.Fatalf("receive %d: visibility %s (changed %v), want %s: %v", n, d, changed, want, line["reason"])
				}
				if reason, _ := line["reason"].(string); !strings.Contains(reason, "visible again in "+d.String()) {
					t.Errorf("receive %d: the reason %q does not say when it comes back", n, reason)
				}
				clock.Advance(d)
			}
		})
	}
}
