package ops

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// The redrive's methods.
const (
	// methodMove is SQS's message move task (StartMessageMoveTask): SQS
	// moves the messages itself, at most one task per queue at a time.
	methodMove = "move"
	// methodCopy receives each message from the dead-letter queue, sends it
	// to the queue with its attributes (and, on FIFO queues, its group and
	// deduplication ids), then deletes it from the dead-letter queue.
	methodCopy = "copy"
)

// maxMoveRate is the largest MaxNumberOfMessagesPerSecond of a message
// move task (the SQS API reference, StartMessageMoveTask).
const maxMoveRate = 500

type redriveFlags struct {
	dryRun     bool
	method     string
	rate       int
	max        int
	poll       time.Duration
	visibility time.Duration
	// The operator's replay of expired messages (expired.go).
	replayExpired bool
	reason        string
	messageIDs    idSet
}

// idSet collects a repeated flag's values.
type idSet map[string]bool

func (s idSet) String() string { return "" }

func (s idSet) Set(v string) error {
	if v == "" {
		return errors.New("give a message id")
	}
	s[v] = true
	return nil
}

func runRedrive(ctx context.Context, o *options, args []string) error {
	fs := flag.NewFlagSet("redrive", flag.ContinueOnError)
	fs.SetOutput(o.stderr)
	var c common
	r := redriveFlags{messageIDs: idSet{}}
	c.register(fs)
	fs.BoolVar(&r.dryRun, "dry-run", false, "say per message what the consumer will do with it once redriven, and move nothing")
	fs.StringVar(&r.method, "method", methodMove, "move (SQS's message move task) or copy (receive, send, delete; keeps attributes, FIFO group and deduplication ids)")
	fs.IntVar(&r.rate, "rate", 0, fmt.Sprintf("at most this many messages a second (move: 1 to %d; 0: SQS's own rate, or no limit for copy)", maxMoveRate))
	fs.IntVar(&r.max, "max", 0, "at most this many messages (copy and dry run; 0: all)")
	fs.DurationVar(&r.poll, "poll", 2*time.Second, "how often a move task's progress is read")
	fs.DurationVar(&r.visibility, "visibility", 2*time.Minute, "how long a message received from the dead-letter queue stays invisible while it is judged (dry run) or copied")
	fs.BoolVar(&r.replayExpired, "replay-expired", false, "send back, as the operator's replay, the messages a plain redrive would expire again (older than the window): each runs unless its fact's record still holds the key; needs --reason, copies (never a move task), and audits each message in a line, the record and the consumer's log")
	fs.StringVar(&r.reason, "reason", "", "why the expired messages must run (required with --replay-expired): in the audit line, the record and the consumer's log; no key or personal data")
	fs.Var(r.messageIDs, "message-id", "replay only this message of the dead-letter queue (repeatable; with --replay-expired)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("redrive takes no arguments, got %q", fs.Args())
	}
	methodSet := false
	fs.Visit(func(f *flag.Flag) { methodSet = methodSet || f.Name == "method" })
	switch {
	case r.replayExpired && strings.TrimSpace(r.reason) == "":
		return errors.New("--replay-expired: give --reason, why the expired messages must run (an archive replayed on purpose, after checking that their facts did not happen); it goes into the audit")
	case r.replayExpired && methodSet && r.method != methodCopy:
		return errors.New("--replay-expired copies each message (a message move task cannot add the replay's attribute): leave out --method, or give copy")
	case !r.replayExpired && (r.reason != "" || len(r.messageIDs) > 0):
		return errors.New("--reason and --message-id go with --replay-expired")
	}
	if r.method != methodMove && r.method != methodCopy {
		return fmt.Errorf("--method %q: give move or copy", r.method)
	}
	if r.method == methodMove && (r.rate < 0 || r.rate > maxMoveRate) {
		return fmt.Errorf("--rate %d: a message move task takes 1 to %d messages a second (0: SQS's own rate)", r.rate, maxMoveRate)
	}
	t, err := locate(ctx, o, &c, true)
	if err != nil {
		return err
	}
	switch {
	case r.dryRun:
		return t.dryRun(ctx, o, &r, c.json)
	case r.replayExpired:
		return t.replayExpired(ctx, o, &r)
	case r.method == methodMove:
		return t.move(ctx, o, &r)
	}
	return t.copy(ctx, o, &r)
}

// receive receives up to n (at most 10) messages of the dead-letter queue,
// with every attribute, invisible for r.visibility.
func (t *target) receive(ctx context.Context, r *redriveFlags, n int) ([]sqstypes.Message, error) {
	out, err := t.c.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(t.dlqURL),
		MaxNumberOfMessages:         int32(min(n, 10)),
		VisibilityTimeout:           int32(max(r.visibility/time.Second, 1)),
		WaitTimeSeconds:             1,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		return nil, fmt.Errorf("receive from the dead-letter queue %s: %w", t.dlqURL, err)
	}
	return out.Messages, nil
}

// judgedMessage is what the redrive's dry run says of one message.
type judgedMessage struct {
	MessageID string `json:"message_id"`
	// Key is the fact's record key ("" when the message cannot be read).
	Key string `json:"key,omitempty"`
	// Verdict is what the consumer does with the message once redriven.
	Verdict Verdict `json:"verdict"`
}

// judgeRedriven says what the consumer will do with m once redriven: a new
// message (new id, new SentTimestamp, now), whose SNS envelope, if any, keeps
// its publish time, so that its age starts again only with raw delivery.
func (t *target) judgeRedriven(ctx context.Context, m sqstypes.Message, now time.Time) judgedMessage {
	j := judgedMessage{MessageID: aws.ToString(m.MessageId)}
	if t.inspect == nil {
		j.Verdict = Verdict{"unknown", "build the command with the consumer's key function (ops.WithKey) to judge each message"}
		return j
	}
	redriven := events.SQSMessage{Body: aws.ToString(m.Body), Attributes: map[string]string{"SentTimestamp": strconv.FormatInt(now.UnixMilli(), 10)}}
	for name, a := range m.MessageAttributes { // a replay's marker (replay.Attribute) travels with the message
		if a.StringValue != nil {
			if redriven.MessageAttributes == nil {
				redriven.MessageAttributes = map[string]events.SQSMessageAttribute{}
			}
			redriven.MessageAttributes[name] = events.SQSMessageAttribute{DataType: aws.ToString(a.DataType), StringValue: a.StringValue}
		}
	}
	facts, err := t.inspect(&redriven)
	if err != nil {
		j.Verdict = Verdict{"bad_input", oneLine(err.Error()) + ": it goes back to the dead-letter queue after maxReceiveCount receives"}
		return j
	}
	if len(facts) == 0 {
		j.Verdict = Verdict{"processed", "S3's test event: acknowledged and deleted, no fact to run"}
		return j
	}
	// One verdict per fact (an S3 notification's records); the message's is
	// theirs when they agree, and lists each otherwise.
	var keys, each []string
	for _, f := range facts {
		rec, err := t.store.Get(ctx, f.Key)
		v := Verdict{"unknown", "the record could not be read: " + oneLine(fmt.Sprint(err))}
		if err == nil {
			v = judge(rec, f, t.guard.Expired(f), now)
		}
		if len(keys) == 0 {
			j.Verdict = v
		} else if v.Outcome != j.Verdict.Outcome {
			j.Verdict.Outcome = "mixed"
		}
		keys, each = append(keys, f.Key), append(each, f.Key+": "+v.Outcome+" ("+v.Reason+")")
	}
	j.Key = strings.Join(keys, ", ")
	if len(facts) > 1 {
		j.Verdict.Reason = strings.Join(each, "; ")
	}
	return j
}

// dryRun receives the dead-letter queue's messages (each at most once),
// says what the consumer will do with each once redriven, and makes them
// visible again.
func (t *target) dryRun(ctx context.Context, o *options, r *redriveFlags, asJSON bool) error {
	var (
		judged  []judgedMessage
		handles []string
		seen    = map[string]bool{}
	)
	defer func() { t.release(context.WithoutCancel(ctx), handles) }()
	now := o.now()
	for r.max == 0 || len(judged) < r.max {
		want := 10
		if r.max > 0 {
			want = r.max - len(judged)
		}
		msgs, err := t.receive(ctx, r, want)
		if err != nil {
			return err
		}
		fresh := 0
		for _, m := range msgs {
			handles = append(handles, aws.ToString(m.ReceiptHandle))
			if seen[aws.ToString(m.MessageId)] {
				continue
			}
			seen[aws.ToString(m.MessageId)] = true
			fresh++
			judged = append(judged, t.judgeRedriven(ctx, m, now))
		}
		if fresh == 0 {
			break
		}
	}
	counts := map[string]int{}
	for _, j := range judged {
		counts[j.Verdict.Outcome]++
	}
	if asJSON {
		return json.NewEncoder(o.stdout).Encode(struct {
			DeadLetterQueue string          `json:"dead_letter_queue"`
			Queue           string          `json:"queue"`
			Messages        []judgedMessage `json:"messages"`
			Counts          map[string]int  `json:"counts"`
		}{t.dlqURL, t.queueURL, judged, counts})
	}
	fmt.Fprintf(o.stdout, "dry run: %d messages in %s, redriven to %s, would be:\n", len(judged), t.dlqURL, t.queueURL)
	tw := tabwriter.NewWriter(o.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MESSAGE\tKEY\tOUTCOME\tWHY")
	for _, j := range judged {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", j.MessageID, j.Key, j.Verdict.Outcome, j.Verdict.Reason)
	}
	tw.Flush()
	var parts []string
	for _, name := range []string{"processed", "duplicate", "in_progress", "mismatch", "expired", "bad_input", "unknown"} {
		if counts[name] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[name], name))
		}
	}
	fmt.Fprintf(o.stdout, "total: %d (%s); nothing moved\n", len(judged), strings.Join(parts, ", "))
	return nil
}

// release makes received messages visible again.
func (t *target) release(ctx context.Context, handles []string) {
	for len(handles) > 0 {
		n := min(len(handles), 10)
		entries := make([]sqstypes.ChangeMessageVisibilityBatchRequestEntry, n)
		for i, h := range handles[:n] {
			entries[i] = sqstypes.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(h), VisibilityTimeout: 0}
		}
		_, _ = t.c.sqs.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(t.dlqURL), Entries: entries})
		handles = handles[n:]
	}
}

// approximateCount is the dead-letter queue's ApproximateNumberOfMessages.
func (t *target) approximateCount(ctx context.Context) int {
	attrs, err := queueAttributes(ctx, t.c.sqs, t.dlqURL)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(attrs[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
	return n
}

// move starts SQS's message move task from the dead-letter queue to the
// queue, unless one runs already (one per queue at a time), and follows its
// progress until it ends.
func (t *target) move(ctx context.Context, o *options, r *redriveFlags) error {
	list := func() (*sqstypes.ListMessageMoveTasksResultEntry, error) {
		out, err := t.c.sqs.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(t.dlqARN), MaxResults: aws.Int32(1)})
		if err != nil {
			return nil, fmt.Errorf("list the message move tasks of %s: %w", t.dlqARN, err)
		}
		if len(out.Results) == 0 {
			return nil, nil
		}
		return &out.Results[0], nil
	}
	last, err := list()
	if err != nil {
		return err
	}
	if last != nil && aws.ToString(last.Status) == "RUNNING" {
		return fmt.Errorf("%w: a message move task already runs on %s (handle %s, %d of %d moved): SQS runs one task per queue at a time; wait for it, or cancel it (aws sqs cancel-message-move-task --task-handle …)",
			errRefused, t.dlqARN, aws.ToString(last.TaskHandle), last.ApproximateNumberOfMessagesMoved, aws.ToInt64(last.ApproximateNumberOfMessagesToMove))
	}
	in := &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(t.dlqARN), DestinationArn: aws.String(t.queueARN)}
	if r.rate > 0 {
		in.MaxNumberOfMessagesPerSecond = aws.Int32(int32(r.rate))
	}
	started, err := t.c.sqs.StartMessageMoveTask(ctx, in)
	if err != nil {
		return fmt.Errorf("start a message move task from %s to %s: %w", t.dlqARN, t.queueARN, err)
	}
	fmt.Fprintf(o.stderr, "message move task %s: %s → %s\n", aws.ToString(started.TaskHandle), t.dlqARN, t.queueARN)
	bar := newProgress(o.stderr, "moved", 0)
	for {
		task, err := list()
		if err != nil {
			return err
		}
		if task == nil {
			return errors.New("the message move task is not listed")
		}
		bar.set(int(task.ApproximateNumberOfMessagesMoved), int(aws.ToInt64(task.ApproximateNumberOfMessagesToMove)))
		switch status := aws.ToString(task.Status); status {
		case "RUNNING", "CANCELLING":
		case "COMPLETED":
			bar.done()
			fmt.Fprintf(o.stdout, "redriven: %d messages moved from %s to %s (message move task); each is a new message (new id, new SentTimestamp)\n", task.ApproximateNumberOfMessagesMoved, t.dlqURL, t.queueURL)
			return nil
		default:
			bar.done()
			return fmt.Errorf("the message move task ended %s after %d messages: %s", status, task.ApproximateNumberOfMessagesMoved, aws.ToString(task.FailureReason))
		}
		if r.poll > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(r.poll):
			}
		}
	}
}

// copy moves the dead-letter queue's messages one by one: receive, send to
// the queue with the message's attributes (its AWSTraceHeader, and on a
// FIFO queue its group and deduplication ids), then delete. A message is
// deleted only once sent: a failed send leaves it in the dead-letter queue,
// a failed delete leaves it in both (its fact's record makes the copy a
// duplicate).
func (t *target) copy(ctx context.Context, o *options, r *redriveFlags) error {
	fifo := strings.HasSuffix(t.queueURL, ".fifo")
	total := t.approximateCount(ctx)
	if r.max > 0 {
		total = min(total, r.max)
	}
	bar := newProgress(o.stderr, "copied", total)
	limit := newLimiter(r.rate)
	moved := 0
	for r.max == 0 || moved < r.max {
		want := 10
		if r.max > 0 {
			want = r.max - moved
		}
		msgs, err := t.receive(ctx, r, want)
		if err != nil {
			bar.done()
			return err
		}
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			if err := limit.wait(ctx); err != nil {
				bar.done()
				return err
			}
			if err := t.send(ctx, m, fifo); err != nil {
				bar.done()
				return fmt.Errorf("after %d messages: %w (the message stays in the dead-letter queue)", moved, err)
			}
			if _, err := t.c.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(t.dlqURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				bar.done()
				return fmt.Errorf("after %d messages: message %s was sent to the queue but not deleted from the dead-letter queue: %w (its fact's record makes the second copy a duplicate)", moved+1, aws.ToString(m.MessageId), err)
			}
			moved++
			bar.set(moved, max(total, moved))
		}
	}
	bar.done()
	fmt.Fprintf(o.stdout, "redriven: %d messages copied from %s to %s; each is a new message (new id, new SentTimestamp)\n", moved, t.dlqURL, t.queueURL)
	return nil
}

// send sends m to the queue with its attributes.
func (t *target) send(ctx context.Context, m sqstypes.Message, fifo bool) error {
	in := &sqs.SendMessageInput{QueueUrl: aws.String(t.queueURL), MessageBody: m.Body}
	if len(m.MessageAttributes) > 0 {
		in.MessageAttributes = m.MessageAttributes
	}
	if trace := m.Attributes[string(sqstypes.MessageSystemAttributeNameAWSTraceHeader)]; trace != "" {
		in.MessageSystemAttributes = map[string]sqstypes.MessageSystemAttributeValue{
			string(sqstypes.MessageSystemAttributeNameForSendsAWSTraceHeader): {DataType: aws.String("String"), StringValue: aws.String(trace)},
		}
	}
	if fifo {
		group := m.Attributes[string(sqstypes.MessageSystemAttributeNameMessageGroupId)]
		if group == "" {
			return fmt.Errorf("message %s of a FIFO dead-letter queue came without its MessageGroupId attribute, so its group cannot be kept; use --method move", aws.ToString(m.MessageId))
		}
		in.MessageGroupId = aws.String(group)
		dedup := m.Attributes[string(sqstypes.MessageSystemAttributeNameMessageDeduplicationId)]
		if dedup == "" {
			dedup = aws.ToString(m.MessageId)
		}
		in.MessageDeduplicationId = aws.String(dedup)
	}
	if _, err := t.c.sqs.SendMessage(ctx, in); err != nil {
		return fmt.Errorf("send message %s to %s: %w", aws.ToString(m.MessageId), t.queueURL, err)
	}
	return nil
}

// limiter spaces calls rate a second (no limit for 0).
type limiter struct {
	every time.Duration
	next  time.Time
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

func newLimiter(rate int) *limiter {
	l := &limiter{now: time.Now, sleep: sleepCtx}
	if rate > 0 {
		l.every = time.Second / time.Duration(rate)
	}
	return l
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// wait returns when the next call may go.
func (l *limiter) wait(ctx context.Context) error {
	if l.every == 0 {
		return nil
	}
	now := l.now()
	if l.next.After(now) {
		if err := l.sleep(ctx, l.next.Sub(now)); err != nil {
			return err
		}
		now = l.next
	}
	l.next = now.Add(l.every)
	return nil
}

// progress draws a progress bar on one line of w.
type progress struct {
	w            io.Writer
	label        string
	count, total int
	drawn        bool
}

func newProgress(w io.Writer, label string, total int) *progress {
	return &progress{w: w, label: label, total: total}
}

const progressWidth = 30

func (p *progress) set(done, total int) {
	p.count, p.total = done, total
	filled := progressWidth
	if total > 0 {
		filled = min(progressWidth, done*progressWidth/total)
	}
	pct := 100
	if total > 0 {
		pct = done * 100 / total
	}
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d %s (%d%%)", strings.Repeat("#", filled), strings.Repeat("-", progressWidth-filled), done, total, p.label, pct)
	p.drawn = true
}

func (p *progress) done() {
	if !p.drawn {
		p.set(p.count, p.total)
	}
	fmt.Fprintln(p.w)
}
