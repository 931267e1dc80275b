package sqsbatch_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// TestBackoffSchedule: capped exponential with equal jitter, in whole
// seconds: c/2 at u = 0, almost c at u → 1, c = min(Cap, Base·2^(n−1)).
func TestBackoffSchedule(t *testing.T) {
	def := contract.Backoff{Base: contract.DefaultBackoffBase, Cap: contract.DefaultBackoffCap}
	for _, c := range []struct {
		name string
		b    contract.Backoff
		n    int
		u    float64
		want time.Duration
	}{
		{"first receive, floor", def, 1, 0, 5 * time.Minute},
		{"first receive, middle", def, 1, 0.5, 7*time.Minute + 30*time.Second},
		{"first receive, top", def, 1, 0.999999, 10 * time.Minute},
		{"second receive doubles", def, 2, 0, 10 * time.Minute},
		{"third receive", def, 3, 0.5, 30 * time.Minute},
		{"fourth receive is capped", def, 4, 0, 30 * time.Minute},
		{"far receive stays capped", def, 40, 0.999999, time.Hour},
		{"rounded up to a second", contract.Backoff{Base: 3 * time.Second, Cap: time.Minute}, 1, 0, 2 * time.Second},
		{"off", contract.Backoff{}, 1, 0.5, 0},
		{"receive 0 (unknown)", def, 0, 0.5, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.b.Delay(c.n, c.u); got != c.want {
				t.Errorf("Delay(%d, %v) = %s, want %s", c.n, c.u, got, c.want)
			}
		})
	}
	if h, f := def.Horizon(5), def.Floor(5); h != 130*time.Minute || f != 65*time.Minute {
		t.Errorf("default horizon %s, floor %s; want 2h10m and 1h5m (an hour's outage ridden out)", h, f)
	}
}

// backoffFixture is a handler with a visibility changer, MaxReceiveCount 5
// and a fixed jitter of 0.5.
func backoffFixture(t *testing.T, fn handler.Func[order], mod func(*sqsbatch.Config)) (*fixture, *changes, *sqsbatch.Handler[order]) {
	f := newFixture(t)
	ch := &changes{}
	cfg := f.Config(contract.Raw)
	cfg.Visibility, cfg.MaxReceiveCount, cfg.Random = ch, 5, func() float64 { return 0.5 }
	if mod != nil {
		mod(&cfg)
	}
	if fn == nil {
		fn = f.Effect
	}
	return f, ch, sqsbatch.New(f.Guard, orderKey, fn, cfg)
}

func body(id, mode string) string { return `{"orderId":"` + id + `","amount":5,"mode":"` + mode + `"}` }

func receivedBody(b string, count int, group string) events.SQSMessage {
	m := received("x", count, group)
	m.Body = b
	return m
}

// TestFailedRecordsBackOff: a failed record's message is made visible again
// on the schedule; a failed change keeps it failed (and says so); bad input
// and the last receive are untouched; a retry time the effect gives is
// honoured within the receive's ceiling; a FIFO group waits with its failed
// message, under the FIFO cap.
func TestFailedRecordsBackOff(t *testing.T) {
	throttled := func(d time.Duration) handler.Func[order] {
		return func(context.Context, order, idempotency.Reservation) (string, error) {
			return "", fmt.Errorf("provider: %w", sqsbatch.RetryAfter(errors.New("429 Too Many Requests"), d))
		}
	}
	for _, c := range []struct {
		name    string
		body    string
		count   int
		fn      handler.Func[order]
		mod     func(*sqsbatch.Config)
		fail    bool
		want    time.Duration // 0: unchanged
		outcome string
		old     bool // sent two days ago, past the window
	}{
		{"effect error, first receive", body("o-1", "fail"), 1, nil, nil, false, 7*time.Minute + 30*time.Second, "failed", false},
		{"effect error, third receive", body("o-1", "fail"), 3, nil, nil, false, 30 * time.Minute, "failed", false},
		{"panic", body("o-1", "panic"), 2, nil, nil, false, 15 * time.Minute, "failed", false},
		{"receive max-1", body("o-1", "fail"), 4, nil, nil, false, 45 * time.Minute, "failed", false},
		{"last receive: the queue's timeout", body("o-1", "fail"), 5, nil, nil, false, 0, "failed", false},
		{"bad input untouched", `{"amount":5}`, 1, nil, nil, false, 0, "bad_input", false},
		{"expired untouched", body("o-1", "fail"), 1, nil, nil, false, 0, "expired", true},
		{"the change fails: still failed", body("o-1", "fail"), 1, nil, nil, true, 0, "failed", false},
		{"RetryAfter honoured", body("o-1", ""), 1, throttled(90 * time.Second), nil, false, 90 * time.Second, "failed", false},
		{"RetryAfter rounded up", body("o-1", ""), 1, throttled(1500 * time.Millisecond), nil, false, 2 * time.Second, "failed", false},
		{"RetryAfter within the receive's ceiling", body("o-1", ""), 1, throttled(5 * time.Hour), nil, false, 10 * time.Minute, "failed", false},
		{"RetryAfter within the cap", body("o-1", ""), 4, throttled(5 * time.Hour), nil, false, time.Hour, "failed", false},
		{"RetryAfter of zero: the schedule", body("o-1", ""), 1, throttled(0), nil, false, 7*time.Minute + 30*time.Second, "failed", false},
		{"backoff off", body("o-1", "fail"), 1, nil, func(c *sqsbatch.Config) { c.BackoffBase = -1 }, false, 0, "failed", false},
		{"maxReceiveCount unknown", body("o-1", "fail"), 1, nil, func(c *sqsbatch.Config) { c.MaxReceiveCount = 0 }, false, 0, "failed", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, ch, h := backoffFixture(t, c.fn, c.mod)
			ch.Fail = c.fail
			m := receivedBody(c.body, c.count, "")
			if c.old {
				m.Attributes["SentTimestamp"] = strconv.FormatInt(time.Now().Add(-48*time.Hour).UnixMilli(), 10)
			}
			resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{m}})
			if err != nil || !failedIDs(resp)[m.MessageId] {
				t.Fatalf("Handle: %v, %+v; want the record reported failed", err, resp)
			}
			line := recordLine(t, f, m.MessageId)
			d, changed := ch.Calls[m.ReceiptHandle]
			switch {
			case line["outcome"] != c.outcome:
				t.Errorf("outcome %v, want %s", line["outcome"], c.outcome)
			case changed != (c.want > 0) || d != c.want:
				t.Errorf("visibility %v (changed %v), want %v", d, changed, c.want)
			case changed && !strings.Contains(line["reason"].(string), "visible again in"):
				t.Errorf("reason %q does not say when it comes back", line["reason"])
			case c.fail && !strings.Contains(f.Logs.String(), `"msg":"visibility"`):
				t.Error("a failed change is not logged")
			}
		})
	}
	t.Run("FIFO group waits, under its own cap", func(t *testing.T) {
		f, ch, h := backoffFixture(t, nil, func(c *sqsbatch.Config) { c.FIFO = true })
		first, second, other := receivedBody(body("o-1", "fail"), 3, "g"), receivedBody(body("o-2", ""), 3, "g"), receivedBody(body("o-3", ""), 3, "h")
		second.MessageId, second.ReceiptHandle = "m-2", "rh-m-2"
		other.MessageId, other.ReceiptHandle = "m-3", "rh-m-3"
		if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{first, second, other}}); err != nil {
			t.Fatal(err)
		}
		d1, d2 := ch.Calls[first.ReceiptHandle], ch.Calls[second.ReceiptHandle]
		// c = min(15m, 40m) = 15m: 7m30s + 0.5 × 7m30s, rounded up.
		if want := 11*time.Minute + 15*time.Second; d1 != want || d2 < want || d2 > want+time.Second {
			t.Errorf("group g: %v then %v, want %v for both (the FIFO cap)", d1, d2, want)
		}
		if _, changed := ch.Calls[other.ReceiptHandle]; changed || f.EffectCount("o-3") != 1 || f.EffectCount("o-2") != 0 {
			t.Errorf("the other group was changed (%v) or the effects ran wrong: o-2 %d, o-3 %d", changed, f.EffectCount("o-2"), f.EffectCount("o-3"))
		}
	})
	t.Run("healthy neighbour untouched", func(t *testing.T) {
		f, ch, h := backoffFixture(t, nil, nil)
		bad, good := receivedBody(body("o-1", "fail"), 1, ""), receivedBody(body("o-2", ""), 1, "")
		good.MessageId, good.ReceiptHandle = "m-2", "rh-m-2"
		resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{bad, good}})
		if err != nil || len(resp.BatchItemFailures) != 1 || f.EffectCount("o-2") != 1 {
			t.Fatalf("Handle: %v, %+v", err, resp)
		}
		if _, changed := ch.Calls[good.ReceiptHandle]; changed || len(ch.Calls) != 1 {
			t.Errorf("changes %v; want the failed record's only", ch.Calls)
		}
	})
}

// ExampleRetryAfter: an effect that knows when its downstream can take the
// call again (a 429's Retry-After) says so; the record comes back then,
// within the backoff's cap, instead of on the schedule.
func ExampleRetryAfter() {
	charge := func(ctx context.Context, o struct{ OrderID string }, r idempotency.Reservation) (string, error) {
		// resp, err := provider.Charge(ctx, …); on a 429:
		return "", sqsbatch.RetryAfter(errors.New("provider: 429 Too Many Requests"), 30*time.Second)
	}
	_, err := charge(context.Background(), struct{ OrderID string }{"o-1"}, idempotency.Reservation{})
	fmt.Println(err)
	// Output: provider: 429 Too Many Requests (retry after 30s)
}
