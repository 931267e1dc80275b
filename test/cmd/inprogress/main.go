// Command inprogress measures how long concurrent duplicates of the same
// orders take to be absorbed, with and without bringing in-progress
// deliveries back when the blocking lease can end (sqsbatch.Config.Visibility,
// sqsbatch.NewVisibility), on kumo started in process: DynamoDB for the
// records, SQS for the queue, and a local event source of -pollers
// concurrent "invocations", each receiving a batch, handing it to the
// adapter (the store and the configuration the handler builds from the
// contract) under a deadline of -timeout, and deleting what it did not
// report failed, as Lambda's SQS event source does.
//
// -orders orders are each sent -copies times, one copy of every order per
// round, so that copies of one order land in different batches and meet
// each other's reservations (in_progress). The queue's visibility timeout
// is 6 × -timeout, the construct's default. It prints, for each mode, the
// time from the first receive to the last message absorbed (deleted), the
// in_progress outcomes and the effects run (which must be -orders):
//
//	go run ./cmd/inprogress -orders 10 -copies 4 -pollers 4 -timeout 5s
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	pub "github.com/idempotent-consumer/idempotent-consumer/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/guardconfig"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

type order struct {
	OrderID string `json:"orderId"`
}

func main() {
	orders := flag.Int("orders", 10, "distinct orders")
	copies := flag.Int("copies", 4, "copies of each order")
	pollers := flag.Int("pollers", 4, "concurrent invocations")
	timeout := flag.Duration("timeout", 5*time.Second, "the function's timeout (the lease); the queue's visibility timeout is 6×")
	work := flag.Duration("work", time.Second, "how long each effect takes")
	flag.Parse()
	for _, after := range []bool{false, true} {
		r, err := run(*orders, *copies, *pollers, *timeout, *work, after)
		if err != nil {
			fmt.Fprintln(os.Stderr, "inprogress:", err)
			os.Exit(1)
		}
		mode := "before (back after the visibility timeout)"
		if after {
			mode = "after (back when the lease can end)"
		}
		fmt.Printf("%-44s first delivery → last duplicate absorbed: %6.1fs  in_progress: %3d  visibility changes: %3d  effects: %d of %d orders  messages: %d\n",
			mode, r.took.Seconds(), r.inProgress, r.changes, r.effects, *orders, r.absorbed)
	}
}

type result struct {
	took                                   time.Duration
	inProgress, changes, effects, absorbed int
}

// counting counts the visibility changes.
type counting struct {
	handler.VisibilityChanger
	n atomic.Int64
}

func (c *counting) ChangeVisibility(ctx context.Context, arn, handle string, d time.Duration) error {
	c.n.Add(1)
	return c.VisibilityChanger.ChangeVisibility(ctx, arn, handle, d)
}

func run(orders, copies, pollers int, timeout, work time.Duration, after bool) (result, error) {
	ctx := context.Background()
	cl, stop := kumotest.Start()
	defer stop()
	table, err := kumotest.NewTable(ctx, cl.DynamoDB, "inprogress")
	if err != nil {
		return result{}, err
	}
	visibility := int(6 * timeout / time.Second)
	n := time.Now().UnixNano()
	dlq, err := cl.SQS.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("inprogress-dlq-%d", n))})
	if err != nil {
		return result{}, err
	}
	dattrs, err := cl.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: dlq.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return result{}, err
	}
	q, err := cl.SQS.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("inprogress-%d", n)), Attributes: map[string]string{
		"VisibilityTimeout": strconv.Itoa(visibility),
		"RedrivePolicy":     fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"5"}`, dattrs.Attributes["QueueArn"]),
	}})
	if err != nil {
		return result{}, err
	}
	qattrs, err := cl.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return result{}, err
	}
	queueARN := qattrs.Attributes["QueueArn"]

	s := contract.Defaults(timeout)
	s.Table, s.Namespace, s.Consumer, s.Delivery, s.MaxReceiveCount = table, "charge", "inprogress", contract.Raw, 5
	store, err := dynamostore.FromEnv(cl.DynamoDB, pub.Env(s.Encode()).Getenv)
	if err != nil {
		return result{}, err
	}
	guard, err := idempotency.NewGuard(store, guardconfig.Of(s))
	if err != nil {
		return result{}, err
	}
	cfg := sqsbatch.Config{
		Delivery:        s.Delivery,
		MaxReceiveCount: s.MaxReceiveCount,
		Batch:           handler.Batch{Consumer: s.Consumer, MinRemaining: s.MinRemaining, Concurrency: s.BatchConcurrency, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), Metrics: io.Discard},
	}
	var changer *counting
	if after {
		changer = &counting{VisibilityChanger: sqsbatch.NewVisibility(cl.Config)}
		cfg.Visibility = changer
	} else {
		cfg.InProgressWait = -1 // as before: no wait in the invocation either
	}
	var effects atomic.Int64
	h := sqsbatch.New(guard, func(o order) (string, error) { return o.OrderID, nil }, func(ctx context.Context, o order, _ idempotency.Reservation) (string, error) {
		select {
		case <-time.After(work):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		effects.Add(1)
		return "ok", nil
	}, cfg)

	for c := range copies {
		for i := range orders {
			body := fmt.Sprintf(`{"orderId":"o-%d"}`, i)
			if _, err := cl.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String(body)}); err != nil {
				return result{}, fmt.Errorf("send copy %d: %w", c, err)
			}
		}
	}
	total := orders * copies
	var (
		mu                   sync.Mutex
		first, last          time.Time
		absorbed, inProgress int
		wg                   sync.WaitGroup
		give                 = time.Now().Add(10 * time.Duration(visibility) * time.Second)
	)
	done := func() bool { mu.Lock(); defer mu.Unlock(); return absorbed >= total || time.Now().After(give) }
	for range pollers {
		wg.Go(func() {
			for !done() {
				out, err := cl.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
					MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
				if err != nil || len(out.Messages) == 0 {
					continue
				}
				mu.Lock()
				if first.IsZero() {
					first = time.Now()
				}
				mu.Unlock()
				ev := events.SQSEvent{}
				for _, m := range out.Messages {
					ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
						Body: aws.ToString(m.Body), Attributes: m.Attributes, EventSourceARN: queueARN})
				}
				ictx, cancel := context.WithTimeout(ctx, timeout)
				resp, err := h.Handle(ictx, ev)
				cancel()
				if err != nil {
					continue // the whole batch comes back
				}
				failed := map[string]bool{}
				for _, f := range resp.BatchItemFailures {
					failed[f.ItemIdentifier] = true
				}
				for _, m := range out.Messages {
					if failed[aws.ToString(m.MessageId)] {
						mu.Lock()
						inProgress++
						mu.Unlock()
						continue
					}
					if _, err := cl.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: m.ReceiptHandle}); err == nil {
						mu.Lock()
						absorbed++
						last = time.Now()
						mu.Unlock()
					}
				}
			}
		})
	}
	wg.Wait()
	r := result{took: last.Sub(first), inProgress: inProgress, effects: int(effects.Load()), absorbed: absorbed}
	if changer != nil {
		r.changes = int(changer.n.Load())
	}
	if absorbed < total {
		return r, fmt.Errorf("only %d of %d messages absorbed", absorbed, total)
	}
	return r, nil
}
