package sweep

import (
	"context"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
)

// Start is the sweeper function's entry point: it reads its Config from the
// environment (FromEnv) and the AWS configuration Lambda gives, and hands
// the Lambda runtime a handler that runs one sweep per invocation and
// returns its Summary. An event that is a previous run's Summary goes on
// from its Next; any other (a schedule's) starts a new pass. Each run logs one summary line ("sweep",
// with the Region, AWS_REGION, as every line of the runtime's), at ERROR
// when it failed. A configuration it cannot run with is logged at
// FATAL and ends the process. It does not return.
func Start() {
	o := build.Resolve[func(*build.Options)](nil)
	build.Run(o, func() (func(context.Context, event) (Summary, error), error) {
		cfg, err := FromEnv(o.Getenv)
		if err != nil {
			return nil, err
		}
		aws, err := build.LambdaConfig()
		if err != nil {
			return nil, err
		}
		s, err := New(dynamodb.NewFromConfig(aws), cfg)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, e event) (Summary, error) {
			sum, err := s.Run(ctx, e.Next)
			logRun(ctx, o.Logger, cfg, sum, err)
			return sum, err
		}, nil
	})
}

// event is what the sweeper reads of its invocation's event: the Next of a
// previous run's Summary, nil in any other event (a schedule's, which
// decodes to no cursor rather than to segment 0).
type event struct {
	Next *Cursor
}

// logRun writes a run's summary line (the logger's lines carry the Region,
// "region", whose replica was swept): what it scanned, found expired, deleted
// and kept (re-reserved since the scan, or in conflict with another
// Region's write), whether the pass completed and where the next run goes
// on from; at ERROR with the reason when the run failed.
func logRun(ctx context.Context, logger *slog.Logger, cfg Config, sum Summary, err error) {
	attrs := []slog.Attr{
		slog.String("table", cfg.Table),
		slog.Int("scanned", sum.Scanned), slog.Int("expired", sum.Expired), slog.Int("deleted", sum.Deleted),
		slog.Int("skipped_reserved", sum.Reserved), slog.Int("skipped_conflict", sum.Conflicts),
		slog.Int("pages", sum.Pages), slog.Bool("complete", sum.Complete),
	}
	if sum.Next != nil {
		attrs = append(attrs, slog.Int("next_segment", sum.Next.Segment), slog.Int("segments_done", sum.Next.Visited))
	}
	level := slog.LevelInfo
	if err != nil {
		level = slog.LevelError
		attrs = append(attrs, slog.String("reason", err.Error()))
	}
	logger.LogAttrs(ctx, level, "sweep", attrs...)
}
