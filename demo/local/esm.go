package local

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// faults decides which failures a poller injects.
type faults interface {
	// crashBeforeDelete reports whether the poller "crashes" after the
	// function answered and before it deleted anything: the whole batch
	// comes back after the visibility timeout.
	crashBeforeDelete() bool
	// expireVisibility reports whether a record of queue should have its
	// visibility timeout run out while the function works on it, so that
	// another poller receives it meanwhile.
	expireVisibility(queue, body string) bool
}

// pollerStats are the counts of one event-source mapping.
type pollerStats struct {
	records atomic.Int64 // handed to the function
	// failedBatches are the batches left whole: a function error, a
	// timeout, a transport error or an invalid response.
	failedBatches                    atomic.Int64
	crashesInjected, expiredInjected atomic.Int64
}

// poller does what Lambda's SQS event-source mapping does for one execution
// environment: receive a batch (batch size, batching window), invoke the
// function, delete the records the partial batch response does not name,
// and leave the whole batch on a function error, a timeout or an invalid
// response. The queue's own redrive policy moves poison messages.
type poller struct {
	m        *Mapping
	sqs      *sqs.Client
	queueURL string
	queueARN string
	rt       *runtime
	wait     time.Duration // the scaled batching window
	faults   faults
	stats    *pollerStats
	logf     func(format string, args ...any)
	// observe, if set, sees the body of every record handed to the
	// function with its receive count (ApproximateReceiveCount).
	observe func(body string, receives int)
	// region is the Region of the queue and the function (the records'
	// awsRegion): Region unless set (regions.go).
	region string
}

func (p *poller) run(ctx context.Context) {
	for ctx.Err() == nil {
		msgs, err := p.receive(ctx)
		if err != nil {
			if ctx.Err() == nil {
				p.logf("%s: receive: %v", p.m.ID, err)
				time.Sleep(100 * time.Millisecond)
			}
			continue
		}
		if len(msgs) > 0 {
			p.handle(ctx, msgs)
		}
	}
}

// receive gathers up to BatchSize messages, waiting at most the batching
// window once the first has arrived.
func (p *poller) receive(ctx context.Context) ([]sqstypes.Message, error) {
	var msgs []sqstypes.Message
	deadline := time.Time{}
	for len(msgs) < p.m.BatchSize {
		waitSeconds := int32(1)
		if len(msgs) > 0 {
			if !time.Now().Before(deadline) {
				break
			}
			waitSeconds = 0
		}
		out, err := p.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    aws.String(p.queueURL),
			MaxNumberOfMessages:         int32(min(10, p.m.BatchSize-len(msgs))),
			WaitTimeSeconds:             waitSeconds,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		})
		if err != nil {
			return msgs, err
		}
		if len(out.Messages) == 0 {
			if len(msgs) > 0 {
				time.Sleep(min(10*time.Millisecond, time.Until(deadline)))
			}
			if len(msgs) == 0 {
				return nil, nil
			}
			continue
		}
		if len(msgs) == 0 {
			deadline = time.Now().Add(p.wait)
		}
		msgs = append(msgs, out.Messages...)
		if p.wait == 0 {
			break
		}
	}
	return msgs, nil
}

func (p *poller) handle(ctx context.Context, msgs []sqstypes.Message) {
	p.stats.records.Add(int64(len(msgs)))
	region := p.region
	if region == "" {
		region = Region
	}
	event := sqsEvent(p.queueARN, region, msgs)
	payload, err := json.Marshal(event)
	if err != nil {
		p.logf("%s: encode event: %v", p.m.ID, err)
		return
	}
	for _, r := range event.Records {
		if p.observe != nil {
			n, _ := strconv.Atoi(r.Attributes[string(sqstypes.MessageSystemAttributeNameApproximateReceiveCount)])
			p.observe(r.Body, n)
		}
		if p.faults.expireVisibility(p.m.Queue, r.Body) {
			go p.expire(ctx, r.ReceiptHandle)
		}
	}
	inv, err := p.rt.invoke(ctx, payload)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			p.logf("%s: invoke: %v", p.m.ID, err)
			p.stats.failedBatches.Add(1)
		}
		return
	case inv.timedOut:
		p.logf("%s: the function timed out", p.m.ID)
		p.stats.failedBatches.Add(1)
		return
	case inv.funcErr != "":
		p.logf("%s: function error: %s", p.m.ID, inv.funcErr)
		p.stats.failedBatches.Add(1)
		return
	}
	failed, err := p.failures(inv.body, event)
	if err != nil {
		p.logf("%s: invalid response, the whole batch stays: %v", p.m.ID, err)
		p.stats.failedBatches.Add(1)
		return
	}
	if p.faults.crashBeforeDelete() {
		p.stats.crashesInjected.Add(1)
		return
	}
	var entries []sqstypes.DeleteMessageBatchRequestEntry
	for i, r := range event.Records {
		if !failed[r.MessageId] {
			entries = append(entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(r.ReceiptHandle)})
		}
	}
	for len(entries) > 0 {
		n := min(10, len(entries))
		if _, err := p.sqs.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(p.queueURL), Entries: entries[:n]}); err != nil {
			p.logf("%s: delete: %v", p.m.ID, err)
		}
		entries = entries[n:]
	}
}

// sqsEvent is the event Lambda's event-source mapping hands the function
// for msgs, received from the queue queueARN.
func sqsEvent(queueARN, region string, msgs []sqstypes.Message) events.SQSEvent {
	event := events.SQSEvent{Records: make([]events.SQSMessage, len(msgs))}
	for i, m := range msgs {
		sum := md5.Sum([]byte(aws.ToString(m.Body)))
		event.Records[i] = events.SQSMessage{
			MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
			Md5OfBody: hex.EncodeToString(sum[:]), Attributes: m.Attributes, EventSource: "aws:sqs",
			EventSourceARN: queueARN, AWSRegion: region,
		}
	}
	return event
}

// failures reads a partial batch response. Without ReportBatchItemFailures
// any answer means the whole batch succeeded.
func (p *poller) failures(body []byte, event events.SQSEvent) (map[string]bool, error) {
	failed := map[string]bool{}
	if !p.m.ReportBatchItemFailures {
		return failed, nil
	}
	var resp events.SQSEventResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("%v: %.200s", err, body)
	}
	inBatch := map[string]bool{}
	for _, r := range event.Records {
		inBatch[r.MessageId] = true
	}
	for _, f := range resp.BatchItemFailures {
		if !inBatch[f.ItemIdentifier] {
			return nil, fmt.Errorf("item identifier %q is not in the batch", f.ItemIdentifier)
		}
		failed[f.ItemIdentifier] = true
	}
	return failed, nil
}

// expire makes a record visible again while the function still works on
// it, as an expired visibility timeout does. A record already deleted (its
// effect was quicker) is left alone.
func (p *poller) expire(ctx context.Context, handle string) {
	time.Sleep(20 * time.Millisecond)
	_, err := p.sqs.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(p.queueURL), ReceiptHandle: aws.String(handle), VisibilityTimeout: 0})
	var invalid *sqstypes.ReceiptHandleIsInvalid
	switch {
	case err == nil:
		p.stats.expiredInjected.Add(1)
	case errors.As(err, &invalid), ctx.Err() != nil:
	default:
		p.logf("%s: expire visibility: %v", p.m.ID, err)
	}
}

// errorType returns the errorType of a Lambda function error answer.
func errorType(body []byte) string {
	var e struct {
		ErrorType    string `json:"errorType"`
		ErrorMessage string `json:"errorMessage"`
	}
	if json.Unmarshal(body, &e) != nil || e.ErrorType == "" {
		return ""
	}
	return e.ErrorType + ": " + e.ErrorMessage
}
