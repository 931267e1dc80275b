package ops

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/replay"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// replayExpired sends the dead-letter queue's expired messages back to the
// queue as the operator's replay (replay.Attribute): each one that
// a plain redrive would expire again, or the ones named by --message-id,
// copied with its attributes and the replay's audit (who, why, when), then
// deleted from the dead-letter queue. One JSON line per message says what
// was done, or why not: a message that is not expired stays in the
// dead-letter queue (a plain redrive handles it).
func (t *target) replayExpired(ctx context.Context, o *options, r *redriveFlags) error {
	if t.inspect == nil {
		return errors.New("--replay-expired replays only the messages the consumer would expire: build the command with the consumer's key function (ops.WithKey) to judge them")
	}
	by := t.operator(ctx)
	if by == "" {
		return fmt.Errorf("%w: a replay records who made it, and STS did not say who runs the command (GetCallerIdentity)", errRefused)
	}
	now := o.now()
	if n := len(replay.Replay{By: by, Reason: r.reason, At: now, MessageID: strings.Repeat("x", 100)}.Encode()); n > replay.MaxBytes {
		return fmt.Errorf("--reason: the replay's audit would take %d bytes, more than %d: give a shorter reason", n, replay.MaxBytes)
	}
	audit := outcome.NewLogger(o.stdout, slog.LevelInfo)
	fifo := strings.HasSuffix(t.queueURL, ".fifo")
	var (
		handles       []string // received and left in the dead-letter queue
		seen          = map[string]bool{}
		replayed, not int
		unchosen      int // received, not named by --message-id, or past --max
	)
	defer func() { t.release(context.WithoutCancel(ctx), handles) }()
	for r.max == 0 || replayed < r.max {
		msgs, err := t.receive(ctx, r, 10)
		if err != nil {
			return err
		}
		fresh := 0
		for _, m := range msgs {
			id := aws.ToString(m.MessageId)
			if !seen[id] {
				fresh++ // a message not received before, chosen or not: more may follow
			}
			if seen[id] || (len(r.messageIDs) > 0 && !r.messageIDs[id]) || (r.max > 0 && replayed >= r.max) {
				if !seen[id] {
					unchosen++
				}
				seen[id] = true
				handles = append(handles, aws.ToString(m.ReceiptHandle))
				continue
			}
			seen[id] = true
			ok, err := t.replayOne(ctx, audit, m, replay.Replay{By: by, Reason: r.reason, At: now, MessageID: id}, fifo)
			if err != nil {
				return fmt.Errorf("after %d replays: %w", replayed, err)
			}
			if !ok {
				handles = append(handles, aws.ToString(m.ReceiptHandle))
				not++
				continue
			}
			replayed++
		}
		if fresh == 0 {
			break
		}
	}
	fmt.Fprintf(o.stderr, "replayed: %d expired messages from %s to %s; %d left in the dead-letter queue (not expired)", replayed, t.dlqURL, t.queueURL, not)
	if unchosen > 0 {
		fmt.Fprintf(o.stderr, ", %d not chosen (--message-id, --max)", unchosen)
	}
	fmt.Fprintln(o.stderr)
	for id := range r.messageIDs {
		if !seen[id] {
			return fmt.Errorf("message %s was not received from %s (not there, or invisible: received by another reader in the last --visibility)", id, t.dlqURL)
		}
	}
	return nil
}

// replayOne replays m, if a plain redrive would expire it, with the audit
// a, and writes its line. ok is false when m stays in the dead-letter
// queue; an error, when a request failed.
func (t *target) replayOne(ctx context.Context, audit *slog.Logger, m sqstypes.Message, a replay.Replay, fifo bool) (ok bool, err error) {
	delete(m.MessageAttributes, replay.Attribute) // judged as a plain redrive: an earlier replay's marker is replaced
	j := t.judgeRedriven(ctx, m, a.At)
	attrs := []slog.Attr{slog.String("consumer", t.s.Consumer), slog.String("message_id", a.MessageID), slog.String("key", j.Key),
		slog.String("operator", a.By), slog.String("reason", a.Reason), slog.String("verdict", j.Verdict.Outcome)}
	if j.Verdict.Outcome != outcome.Expired.String() {
		audit.LogAttrs(ctx, slog.LevelWarn, "replay", append(attrs, slog.String("refused",
			fmt.Sprintf("not replayed, left in the dead-letter queue: a plain redrive would not expire it (%s: %s); idemctl redrive handles it", j.Verdict.Outcome, j.Verdict.Reason)))...)
		return false, nil
	}
	if m.MessageAttributes == nil {
		m.MessageAttributes = map[string]sqstypes.MessageAttributeValue{}
	}
	m.MessageAttributes[replay.Attribute] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(a.Encode())}
	if err := t.send(ctx, m, fifo); err != nil {
		return false, err
	}
	if _, err := t.c.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(t.dlqURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
		return false, fmt.Errorf("message %s was replayed but not deleted from the dead-letter queue: %w (its fact's record makes the second copy a duplicate)", a.MessageID, err)
	}
	audit.LogAttrs(ctx, slog.LevelInfo, "replay", append(attrs, slog.Time("at", a.At.UTC()),
		slog.String("result", fmt.Sprintf("replayed: sent to the queue with the %s attribute; it runs unless its fact's record still holds the key (then a duplicate), and expires again if still unhandled %s after %s",
			replay.Attribute, t.s.Window, a.At.UTC().Format(time.RFC3339))))...)
	return true, nil
}
