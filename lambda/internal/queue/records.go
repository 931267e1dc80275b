package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/batch"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// records runs the facts of a message that carries several (Records), in
// order, each with its own outcome; the message succeeds when all of them
// did, and is reported failed otherwise (its records already done are
// duplicates when it comes back). A body the source skips is acknowledged.
func (b *round[T]) records(ctx context.Context, rec *events.SQSMessage) report {
	items, skip, err := b.h.records.ReadRecords([]byte(rec.Body))
	switch {
	case err != nil:
		return report{Report: batch.Bad(err)}
	case skip != "":
		return report{Report: batch.Report{Outcome: outcome.Processed}, skip: skip}
	}
	r := report{Report: batch.Report{Outcome: outcome.Processed}, records: make([]report, len(items))}
	for i := range items {
		r.records[i] = b.fact(ctx, rec, &items[i])
		if o := r.records[i].Outcome; !o.Succeeded() && r.Outcome.Succeeded() {
			r.Outcome, r.Err = o, fmt.Errorf("record %d: %w", i, errOrOutcome(r.records[i]))
		}
	}
	return r
}

// errOrOutcome is a report's error, or its outcome as one.
func errOrOutcome(r report) error {
	if r.Err != nil {
		return r.Err
	}
	return errors.New(r.Outcome.String())
}

// logSkipped writes the line of a body acknowledged (deleted) without a
// fact, and why.
func (h *Handler[T]) logSkipped(ctx context.Context, rec *events.SQSMessage, why string) {
	h.e.Logger.LogAttrs(ctx, slog.LevelInfo, "test_event",
		slog.String("consumer", h.e.Consumer),
		slog.String("message_id", rec.MessageId),
		slog.String("reason", why))
}
