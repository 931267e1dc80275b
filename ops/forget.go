package ops

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// defaultForgetMargin is forget's default margin: an IN_PROGRESS record is
// forgotten only once its lease ended this long before the command's clock.
const defaultForgetMargin = 30 * time.Second

func runForget(ctx context.Context, o *options, args []string) error {
	fs := flag.NewFlagSet("forget", flag.ContinueOnError)
	fs.SetOutput(o.stderr)
	var c common
	var ff factFlags
	c.register(fs)
	ff.register(fs)
	reason := fs.String("reason", "", "why the fact must run again (required): written in the audit line")
	dryRun := fs.Bool("dry-run", false, "say what would be deleted, and delete nothing")
	margin := fs.Duration("margin", defaultForgetMargin, fmt.Sprintf("an IN_PROGRESS record is forgotten only once its lease ended this long ago (at least %s): the skew allowed between this clock and the functions'", limits.ClockSkewMargin))
	if err := fs.Parse(args); err != nil {
		return err
	}
	if strings.TrimSpace(*reason) == "" {
		return errors.New("give --reason: why the fact must run again (a bug fixed, a refund made by hand); it goes into the audit line")
	}
	if *margin < limits.ClockSkewMargin {
		return fmt.Errorf("--margin %s is less than %s, the skew allowed between this clock and the functions'", *margin, limits.ClockSkewMargin)
	}
	t, err := locate(ctx, o, &c, false)
	if err != nil {
		return err
	}
	f, err := ff.fact(t, fs.Args())
	if err != nil {
		return err
	}
	now := o.now()
	audit := outcome.NewLogger(o.stdout, slog.LevelInfo)
	attrs := []slog.Attr{
		slog.String("consumer", t.s.Consumer), slog.String("table", t.s.Table), slog.String("key", f.Key),
		slog.String("reason", *reason), slog.Bool("dry_run", *dryRun), slog.String("operator", t.operator(ctx)),
		slog.String("margin", margin.String()),
	}
	var removed *idempotency.Record
	if *dryRun {
		removed, err = t.store.Get(ctx, f.Key)
		if err != nil {
			return fmt.Errorf("read the record of %s: %w", f.Key, err)
		}
		if err = dynamostore.Forgettable(removed, now, *margin); err != nil {
			err = fmt.Errorf("nothing would be deleted: %w", err)
		}
	} else {
		removed, err = t.store.Forget(ctx, f.Key, now, *margin)
	}
	if removed != nil {
		attrs = append(attrs, recordAttr(removed))
	}
	if err != nil {
		audit.LogAttrs(ctx, slog.LevelWarn, "forget", append(attrs, slog.String("refused", err.Error()))...)
		if errors.Is(err, dynamostore.ErrLiveLease) || errors.Is(err, dynamostore.ErrNoRecord) || errors.Is(err, idempotency.ErrUnreadableRecord) || strings.Contains(err.Error(), "nothing deleted") {
			return fmt.Errorf("%w: %w", errRefused, err)
		}
		return err
	}
	msg := forgottenMessage(t.s.CacheSize, now)
	if *dryRun {
		msg = "would be forgotten (dry run): nothing deleted"
	}
	audit.LogAttrs(ctx, slog.LevelInfo, "forget", append(attrs, slog.String("result", msg))...)
	return nil
}

// forgottenMessage says what a forget does: the fact's next delivery runs
// its effect, and, where the consumer caches completed keys, from when in
// every warm execution environment (limits.CacheLifetime).
func forgottenMessage(cacheSize int, now time.Time) string {
	const msg = "forgotten: the fact's next delivery runs its effect"
	if cacheSize == 0 {
		return msg
	}
	by := now.Add(limits.CacheLifetime + time.Second).UTC().Truncate(time.Second)
	return fmt.Sprintf("%s from %s at the latest: until then, a warm execution environment that remembers the fact (CacheSize %d) may still answer a delivery as a duplicate from memory (for at most %s)",
		msg, by.Format(time.RFC3339), cacheSize, limits.CacheLifetime)
}

// recordAttr is a record as the audit line writes it.
func recordAttr(r *idempotency.Record) slog.Attr {
	attrs := []any{
		slog.String("status", string(r.Status)), slog.String("owner", r.Owner),
		slog.Time("expires_at", r.ExpiresAt.UTC()), slog.Time("ttl", r.TTL.UTC()),
		slog.String("payload_hash", r.PayloadHash), slog.Int("result_bytes", len(r.Result)),
	}
	if r.Status == idempotency.StatusInProgress {
		attrs = append(attrs, slog.Time("lease_until", r.LeaseUntil.UTC()))
	}
	if r.Result != "" {
		attrs = append(attrs, slog.String("result", r.Result))
	}
	if r.Replay != "" {
		attrs = append(attrs, slog.String("replay", r.Replay))
	}
	return slog.Group("record", attrs...)
}
