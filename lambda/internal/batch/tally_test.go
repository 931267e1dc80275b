package batch

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

func TestTallyErr(t *testing.T) {
	store := fmt.Errorf("store reserve: %w: %w", idempotency.ErrStore, errors.New("throttled"))
	for _, c := range []struct {
		name    string
		reports []Report
		judged  bool // a record judged without a fact
		want    string
	}{
		{"every fact judged", []Report{{Outcome: outcome.Processed}, {Outcome: outcome.Failed, Err: errors.New("boom")}}, false, ""},
		{"no fact judged", []Report{{Outcome: outcome.Failed, Err: store}, {Outcome: outcome.NotStarted}}, false, "no record of the batch could be judged: "},
		{"a test event judged", []Report{{Outcome: outcome.NotStarted}}, true, ""},
		{"misconfigured", []Report{{Outcome: outcome.Processed}, {Outcome: outcome.Failed, Err: fmt.Errorf("%w: view", outcome.ErrMisconfigured)}}, false, "record 1 of the batch: "},
		{"an empty batch", nil, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var tl Tally
			for i, r := range c.reports {
				tl.Add(r, i)
			}
			if c.judged {
				tl.Judged()
			}
			err := tl.Err()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("err %v, want none", err)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
				t.Fatalf("err %v, want one starting %q", err, c.want)
			}
		})
	}
}

func TestEmitCountsOutcomesCapacityAndExtra(t *testing.T) {
	var buf bytes.Buffer
	o := handler.Batch{Metrics: &buf}
	defaults(&o, time.Second)
	var tl Tally
	tl.Add(Report{Outcome: outcome.Processed, Capacity: idempotency.Capacity{Read: 0.5, Write: 2}}, 0)
	tl.Add(Report{Outcome: outcome.Duplicate, Capacity: idempotency.Capacity{Read: 0.5}}, 1)
	tl.Emit(&o, 1500*time.Millisecond, "Skipped", 3)
	line := buf.String()
	for _, want := range []string{`"Processed":1`, `"Duplicate":1`, `"Skipped":3`, `"ReadUnits":1`, `"WriteUnits":2`, `"ProcessedWriteUnits":2`, `"DuplicateReadUnits":0.5`, `"BatchDuration":1500`, `"Consumer":"consumer"`} {
		if !strings.Contains(line, want) {
			t.Errorf("metrics line %s lacks %s", line, want)
		}
	}
}

func TestLevel(t *testing.T) {
	for _, c := range []struct {
		o              outcome.Outcome
		warning, final bool
		want           slog.Level
	}{
		{outcome.Processed, false, false, slog.LevelInfo},
		{outcome.Duplicate, true, false, slog.LevelWarn},
		{outcome.InProgress, false, false, slog.LevelWarn},
		{outcome.NotStarted, false, true, slog.LevelError},
		{outcome.Mismatch, false, false, slog.LevelError},
		{outcome.Expired, false, false, slog.LevelError},
		{outcome.LeaseLost, false, false, slog.LevelError},
	} {
		if got := Level(c.o, c.warning, c.final); got != c.want {
			t.Errorf("Level(%v, %v, %v) = %v, want %v", c.o, c.warning, c.final, got, c.want)
		}
	}
}

// TestOf: Of carries each setting every batch source shares into its
// field, and leaves what is the handler's (Logger, Metrics, MetricsLevel)
// to the handler.
func TestOf(t *testing.T) {
	s := contract.Defaults(time.Minute)
	s.Table, s.Namespace, s.Consumer = "t", "ns", "c"
	s.BatchConcurrency, s.MinRemaining, s.MetricsNamespace = 7, 9*time.Second, "Shop"
	got := Of(s)
	if got.Concurrency != 7 || got.MinRemaining != 9*time.Second || got.Consumer != "c" || got.MetricsNamespace != "Shop" {
		t.Errorf("Of() = %+v", got)
	}
	if got.Logger != nil || got.Metrics != nil || got.MetricsLevel != "" {
		t.Error("Of set what is the handler's to choose")
	}
}
