package queue_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue/queuetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// TestInProgressOnTheLastReceiveIsAnError: a record found in progress
// elsewhere on its message's last receive goes to the dead-letter queue: its
// line is ERROR, written at LogLevel ERROR, and says so (as a record not
// started on its last receive does); before its last receive it is a WARN,
// which says nothing of the DLQ. It is not counted as dead-lettered
// unstarted: its fact may still complete under the worker that holds it.
func TestInProgressOnTheLastReceiveIsAnError(t *testing.T) {
	for _, c := range []struct {
		name  string
		count int
		level slog.Level // the logger's
		want  string     // the line's level; "" for none
	}{
		{"receive max-1", 4, slog.LevelInfo, "WARN"},
		{"last receive", 5, slog.LevelInfo, "ERROR"},
		{"last receive at LogLevel ERROR", 5, slog.LevelError, "ERROR"},
		{"receive max-1 at LogLevel ERROR", 4, slog.LevelError, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := queuetest.NewFixture(t)
			holdFact(t, f, "o-1", time.Now().Add(time.Minute))
			var logs bytes.Buffer
			cfg := f.Config(contract.Raw)
			cfg.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: c.level}))
			cfg.Visibility, cfg.MaxReceiveCount = &queuetest.Changes{}, 5
			h := sqsbatch.New(f.Guard, queuetest.OrderKey, f.Effect, cfg)
			m := queuetest.Received("o-1", c.count, "")
			resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{m}})
			if err != nil || len(resp.BatchItemFailures) != 1 {
				t.Fatalf("Handle: %v, %+v; want the record reported failed", err, resp)
			}
			var line map[string]any
			for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				var fields map[string]any
				if json.Unmarshal([]byte(l), &fields) == nil && fields["msg"] == "record" {
					line = fields
				}
			}
			if c.want == "" {
				if line != nil {
					t.Errorf("a line at LogLevel ERROR: %v", line)
				}
				return
			}
			if line == nil {
				t.Fatalf("no record line at LogLevel %s in:\n%s", c.level, logs.String())
			}
			reason, _ := line["reason"].(string)
			dlq := strings.Contains(reason, "this was its last receive (maxReceiveCount 5): SQS moves it to the dead-letter queue")
			if line["outcome"] != "in_progress" || line["level"] != c.want || dlq != (c.count == 5) {
				t.Errorf("outcome %v, level %v (want %s), reason %q (says the DLQ: %v, want %v)", line["outcome"], line["level"], c.want, reason, dlq, c.count == 5)
			}
			if got := f.Metric(t, "DeadLetteredUnstarted"); got != 0 {
				t.Errorf("DeadLetteredUnstarted %v, want 0", got)
			}
		})
	}
}
