package kumo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

// step is one business message of the FIFO proof: the seq-th of its group.
type step struct {
	ID    string `json:"id"`
	Group string `json:"group"`
	Seq   int    `json:"seq"`
}

// published is what the publisher knows of a message: its group and its
// place in the publish order. The harness attaches the group to each record
// as SQS does (kumo's ReceiveMessage returns no MessageGroupId) and restores
// SQS's order of a redelivered group (kumo requeues them in map order).
type published struct {
	group string
	order int
}

// fifoRun is one run of the FIFO proof: what the effects did and what the
// per-batch checks found.
type fifoRun struct {
	mu         sync.Mutex
	attempts   map[string]int       // effect starts, by message id
	completed  map[string][]int     // group → seqs, in the order their effects succeeded
	receives   map[string]string    // message id → ApproximateReceiveCount when it succeeded
	violations []string             // broken rules, one line each
	notStarted int                  // records reported failed without running, after a failure of their group
	reordered  map[bool]int         // batches whose order the harness restored, by "held a redelivery"
	inFlight   map[string]int       // group → the poller whose batch holds it
	byBatch    map[int][]string     // batch → message ids whose effect started in it
	published  map[string]published // SNS message id → what the publisher knows
}

func (r *fifoRun) violate(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.violations = append(r.violations, fmt.Sprintf(format, args...))
}

type batchKey struct{}

// TestFIFOGroupsThroughKumo is the FIFO proof on an emulator. Messages of
// four groups are published, interleaved, to an SNS FIFO topic on kumo that
// delivers (SNS envelope, as the construct subscribes) into a FIFO queue
// with a FIFO dead-letter queue. Two pollers receive batches of up to 10
// as the event-source mapping does and invoke the real handler, built by
// sqsbatch.FromEnv from the environment a FIFO consumer's construct writes
// (QUEUE_FIFO=true), on a DynamoDB table on kumo; they delete what the
// partial batch response does not name, and the rest comes back after the
// visibility timeout. Two effects fail: A-2 on its first attempt, C-4 on its
// first two. It checks:
//   - within each group the effects happened once each, in publish order,
//     across failures and redeliveries (A-2 and C-4 succeed on a later
//     receive, and their successors after them);
//   - in each batch, after a record of a group failed, the later records of
//     that group were not started in that invocation and were reported as
//     failures, while the records of other groups were processed;
//   - no two pollers held records of one group at once (kumo locks a group
//     while a message of it is in flight), and first deliveries arrived in
//     publish order;
//   - a Publish repeated with the same MessageDeduplicationId reached the
//     consumer once (kumo's SNS hands the id on; its SQS FIFO queue
//     deduplicates by it);
//   - nothing ended in the dead-letter queue.
//
// The sabotage subtest runs the same harness with a consumer not told FIFO
// and records without a MessageGroupId (a standard consumer): the checks
// must then find the broken order.
func TestFIFOGroupsThroughKumo(t *testing.T) {
	t.Run("FIFO consumer", func(t *testing.T) {
		r := runFIFO(t, true)
		for _, v := range r.violations {
			t.Error(v)
		}
		if r.notStarted == 0 {
			t.Error("no record was ever held back after a failure of its group: the batches did not exercise the rule")
		}
		if r.receives["A-2"] != "2" || r.receives["C-4"] != "3" {
			t.Errorf("A-2 succeeded on receive %s, C-4 on receive %s; want 2 and 3", r.receives["A-2"], r.receives["C-4"])
		}
		if r.reordered[false] > 0 {
			t.Errorf("kumo delivered %d batches of first deliveries out of publish order", r.reordered[false])
		}
		t.Logf("completed %v; %d records held back after a failure of their group; kumo's redelivered groups needed reordering in %d batches", r.completed, r.notStarted, r.reordered[true])
	})
	t.Run("sabotage: a consumer not told FIFO", func(t *testing.T) {
		r := runFIFO(t, false)
		broken := strings.Join(r.violations, "\n")
		if !strings.Contains(broken, "was started after") && !strings.Contains(broken, "out of order") {
			t.Fatalf("the checks found nothing wrong with a consumer that does not order groups:\n%s", broken)
		}
	})
}

// runFIFO runs the scenario; fifo says whether the consumer is told FIFO
// and its records carry their MessageGroupId.
func runFIFO(t *testing.T, fifo bool) *fifoRun {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, stop := kumotest.Start()
	defer stop()
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36) // kumo servers of a process share state

	// The resources a FIFO consumer's construct makes: a FIFO topic, a FIFO
	// queue without content-based deduplication, a FIFO dead-letter queue.
	dlq := mustQueue(ctx, t, c.SQS, "dlq-"+suffix+".fifo", nil)
	queue := mustQueue(ctx, t, c.SQS, "queue-"+suffix+".fifo", map[string]string{
		"VisibilityTimeout": "2",
		"RedrivePolicy":     fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":5}`, dlq.arn),
	})
	topic, err := c.SNS.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("orders-" + suffix + ".fifo"), Attributes: map[string]string{"FifoTopic": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SNS.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(queue.arn)}); err != nil {
		t.Fatal(err)
	}
	table, err := kumotest.NewTable(ctx, c.DynamoDB, "fifo")
	if err != nil {
		t.Fatal(err)
	}

	r := &fifoRun{attempts: map[string]int{}, completed: map[string][]int{}, receives: map[string]string{}, reordered: map[bool]int{},
		inFlight: map[string]int{}, byBatch: map[int][]string{}, published: map[string]published{}}
	failFirst := map[string]int{"A-2": 1, "C-4": 2}
	settings := contract.Defaults(30 * time.Second)
	settings.Table, settings.Namespace, settings.Consumer = table, "fifo", "ApplyPayment"
	settings.FIFO = fifo
	env := settings.Encode()
	h, err := sqsbatch.FromEnv(func(s step) (string, error) { return s.ID, nil },
		func(ctx context.Context, s step, res idempotency.Reservation) (string, error) {
			batch, _ := ctx.Value(batchKey{}).(int)
			r.mu.Lock()
			defer r.mu.Unlock()
			r.attempts[s.ID]++
			r.byBatch[batch] = append(r.byBatch[batch], s.ID)
			if r.attempts[s.ID] <= failFirst[s.ID] {
				return "", errors.New("downstream refused, for now")
			}
			r.completed[s.Group] = append(r.completed[s.Group], s.Seq)
			return "ok", nil
		},
		handler.WithGetenv(func(k string) string { return env[k] }),
		handler.WithStore(dynamostore.New(c.DynamoDB, table)),
		handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard))
	if err != nil {
		t.Fatal(err)
	}

	// Four groups of six, interleaved; B-3 published twice with one
	// deduplication id.
	groups, perGroup := []string{"A", "B", "C", "D"}, 6
	order := 0
	publish := func(s step) {
		body, _ := json.Marshal(s)
		out, err := c.SNS.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String(string(body)),
			MessageGroupId: aws.String(s.Group), MessageDeduplicationId: aws.String(s.ID)})
		if err != nil {
			t.Fatal(err)
		}
		r.published[aws.ToString(out.MessageId)] = published{group: s.Group, order: order}
		order++
	}
	for seq := 1; seq <= perGroup; seq++ {
		for _, g := range groups {
			s := step{ID: fmt.Sprintf("%s-%d", g, seq), Group: g, Seq: seq}
			publish(s)
			if s.ID == "B-3" {
				publish(s)
			}
		}
	}

	// Two pollers, until every message is done.
	total := len(groups) * perGroup
	var batches sync.Mutex
	next := 0
	var wg sync.WaitGroup
	for poller := range 2 {
		wg.Go(func() {
			for ctx.Err() == nil {
				r.mu.Lock()
				done := 0
				for _, seqs := range r.completed {
					done += len(seqs)
				}
				r.mu.Unlock()
				if done >= total {
					return
				}
				batches.Lock()
				next++
				batch := next
				batches.Unlock()
				r.poll(ctx, t, c.SQS, queue, h.Handle, poller, batch, fifo)
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("not every message was processed in time: %v", r.completed)
	}

	// Each group's effects once each, in publish order.
	for _, g := range groups {
		want := make([]int, perGroup)
		for i := range want {
			want[i] = i + 1
		}
		if !slices.Equal(r.completed[g], want) {
			r.violate("group %s: effects completed in the order %v, out of order (want %v)", g, r.completed[g], want)
		}
	}
	if n := r.attempts["B-3"]; n != 1 {
		r.violate("B-3, published twice with one deduplication id, was attempted %d times", n)
	}
	for _, q := range []struct{ name, url string }{{"queue", queue.url}, {"dead-letter queue", dlq.url}} {
		attrs, err := c.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(q.url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		visible, _ := strconv.Atoi(attrs.Attributes["ApproximateNumberOfMessages"])
		inFlight, _ := strconv.Atoi(attrs.Attributes["ApproximateNumberOfMessagesNotVisible"])
		if visible+inFlight > 0 {
			r.violate("the %s still holds %d messages, %d of them in flight", q.name, visible+inFlight, inFlight)
		}
	}
	return r
}

// poll receives one batch, invokes the handler and deletes what it
// processed, checking the batch's rules.
func (r *fifoRun) poll(ctx context.Context, t *testing.T, client *sqs.Client, q queueRef, handle func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), poller, batch int, fifo bool) {
	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(q.url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
	})
	if err != nil || len(out.Messages) == 0 {
		if err != nil && ctx.Err() == nil {
			t.Errorf("receive: %v", err)
		}
		return
	}
	type record struct {
		event events.SQSMessage
		step  step
		order int
	}
	var recs []record
	redelivery := false
	for _, m := range out.Messages {
		var env struct{ MessageId, Message string }
		var s step
		if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &env); err != nil || json.Unmarshal([]byte(env.Message), &s) != nil {
			t.Errorf("body %s is not an SNS envelope of a step", aws.ToString(m.Body))
			return
		}
		pub, ok := r.published[env.MessageId]
		if !ok {
			t.Errorf("message %s was never published", env.MessageId)
			return
		}
		attrs := map[string]string{}
		for k, v := range m.Attributes {
			attrs[k] = v
		}
		if fifo {
			attrs["MessageGroupId"] = pub.group // as SQS sends it; kumo does not
		}
		redelivery = redelivery || attrs["ApproximateReceiveCount"] != "1"
		recs = append(recs, record{event: events.SQSMessage{
			MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
			Attributes: attrs, EventSource: "aws:sqs", EventSourceARN: q.arn, AWSRegion: "us-east-1",
		}, step: s, order: pub.order})
	}
	if !slices.IsSortedFunc(recs, func(a, b record) int { return a.order - b.order }) {
		// SQS returns a group's messages in the order they were sent, also
		// when they come back; kumo requeues the messages that were in flight
		// together in map order.
		slices.SortStableFunc(recs, func(a, b record) int { return a.order - b.order })
		r.mu.Lock()
		r.reordered[redelivery]++
		r.mu.Unlock()
	}

	// No other poller holds a group of this batch.
	groups := map[string]bool{}
	r.mu.Lock()
	for _, rec := range recs {
		g := rec.step.Group
		if holder, held := r.inFlight[g]; held && holder != poller {
			r.violations = append(r.violations, fmt.Sprintf("batch %d: group %s was received while poller %d held it", batch, g, holder))
		}
		groups[g] = true
	}
	for g := range groups {
		r.inFlight[g] = poller
	}
	r.mu.Unlock()

	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(recs))}
	for i, rec := range recs {
		ev.Records[i] = rec.event
	}
	invokeCtx, cancel := context.WithTimeout(context.WithValue(ctx, batchKey{}, batch), 30*time.Second)
	resp, err := handle(invokeCtx, ev)
	cancel()
	if err != nil {
		t.Errorf("batch %d: function error %v", batch, err)
		return
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}

	// The per-group failure rule, for this invocation.
	r.mu.Lock()
	started := map[string]bool{}
	for _, id := range r.byBatch[batch] {
		started[id] = true
	}
	stopped := map[string]string{} // group → the record of it that failed
	for _, rec := range recs {
		g, id := rec.step.Group, rec.step.ID
		switch first, after := stopped[g]; {
		case after && started[id]:
			r.violations = append(r.violations, fmt.Sprintf("batch %d: %s was started after %s of its group failed", batch, id, first))
		case after && !failed[rec.event.MessageId]:
			r.violations = append(r.violations, fmt.Sprintf("batch %d: %s, after %s of its group failed, is not reported failed", batch, id, first))
		case after:
			r.notStarted++
		case failed[rec.event.MessageId]:
			stopped[g] = id
		default:
			r.receives[id] = rec.event.Attributes["ApproximateReceiveCount"]
		}
	}
	for g := range groups {
		delete(r.inFlight, g) // before the deletes: kumo keeps the group locked until then
	}
	r.mu.Unlock()

	var entries []sqstypes.DeleteMessageBatchRequestEntry
	for i, rec := range recs {
		if !failed[rec.event.MessageId] {
			entries = append(entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(rec.event.ReceiptHandle)})
		}
	}
	if len(entries) > 0 {
		if _, err := client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(q.url), Entries: entries}); err != nil {
			t.Errorf("batch %d: delete: %v", batch, err)
		}
	}
}

// queueRef names a queue by URL and ARN.
type queueRef struct{ url, arn string }

func mustQueue(ctx context.Context, t *testing.T, client *sqs.Client, name string, attrs map[string]string) queueRef {
	t.Helper()
	all := map[string]string{"FifoQueue": "true"}
	for k, v := range attrs {
		all[k] = v
	}
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: all})
	if err != nil {
		t.Fatal(err)
	}
	got, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return queueRef{url: aws.ToString(out.QueueUrl), arn: got.Attributes["QueueArn"]}
}
