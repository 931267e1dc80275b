package main

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// maxPayloadBytes is Lambda's limit on an invocation's payload (6 MB), which
// bounds an SQS event source mapping's batch as much as its batch size does.
const maxPayloadBytes = 6 << 20

// maxBatchRecords is the largest batch size an SQS event source mapping
// takes (with a batching window).
const maxBatchRecords = 10000

// messages makes the SQS records of a run: order i is "order-<run>-<i>", in
// an SNS envelope (the construct's default delivery) or alone (raw message
// delivery; "small": a minimal order and the shortest receipt handles SQS
// gives, the most records 6 MB holds), with the attributes
// and receipt handle SQS gives a record, so that a batch's payload is the
// size Lambda would hand over.
type messages struct {
	run       int
	delivery  string // "envelope", "raw" or "small"
	published string // the SNS Timestamp: the run's start, inside the business window
	sent      string // the SQS SentTimestamp
}

func newMessages(run int, delivery string) messages {
	now := time.Now().UTC()
	return messages{run: run, delivery: delivery, published: now.Format("2006-01-02T15:04:05.000Z"), sent: strconv.FormatInt(now.UnixMilli(), 10)}
}

// record is order i's SQS record.
func (m messages) record(i int) events.SQSMessage {
	id := fmt.Sprintf("order-%d-%08d", m.run, i)
	msg := `{"orderId":"` + id + `","customerId":"c-` + strconv.Itoa(i%997) + `","amount":` + strconv.Itoa(500+i%9000) +
		`,"currency":"EUR","email":"customer@example.com","placedAt":"2026-11-29T12:00:00Z"}`
	body := `{"Type":"Notification","MessageId":"6f1c2a9e-1b7e-5c4a-9a0e-` + fmt.Sprintf("%012d", i) + `","TopicArn":"arn:aws:sns:us-east-1:123456789012:orders",` +
		`"Message":` + strconv.Quote(msg) + `,"Timestamp":"` + m.published + `","SignatureVersion":"1",` +
		`"Signature":"` + strings.Repeat("A", 344) + `","SigningCertURL":"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0000000000000000000000.pem",` +
		`"UnsubscribeURL":"https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-east-1:123456789012:orders:00000000-0000-0000-0000-000000000000"}`
	handle := "AQEB" + strings.Repeat("x", 340)
	switch m.delivery {
	case "raw":
		body = msg
	case "small":
		body = `{"orderId":"` + id + `","amount":` + strconv.Itoa(500+i%9000) + `,"currency":"EUR"}`
		handle = "AQEB" + strings.Repeat("x", 176)
	}
	sum := md5.Sum([]byte(body))
	return events.SQSMessage{
		MessageId:     fmt.Sprintf("8d0c4f1e-%04d-4000-8000-%012d", m.run%10000, i),
		ReceiptHandle: handle,
		Body:          body,
		Md5OfBody:     hex.EncodeToString(sum[:]),
		Attributes: map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": m.sent,
			"SenderId": "AIDAIENQZJOLO23YVJ4VO", "ApproximateFirstReceiveTimestamp": m.sent},
		MessageAttributes: map[string]events.SQSMessageAttribute{},
		EventSourceARN:    "arn:aws:sqs:us-east-1:123456789012:ChargeOrder",
		EventSource:       "aws:sqs",
		AWSRegion:         "us-east-1",
	}
}

// batches cuts records [0, n) into invocation payloads as an event source
// mapping of batch size size would: up to size records each, and never more
// than maxPayloadBytes. next returns the following payload and its record
// count, or nil when the run is over.
func (m messages) batches(n, size int) (next func() ([]byte, int, error)) {
	const open, end = `{"Records":[`, `]}`
	i := 0
	return func() ([]byte, int, error) {
		if i >= n {
			return nil, 0, nil
		}
		buf := []byte(open)
		count := 0
		for ; i < n && count < size; i++ {
			rec, err := json.Marshal(m.record(i))
			if err != nil {
				return nil, 0, err
			}
			sep := 0
			if count > 0 {
				sep = 1
			}
			if len(buf)+sep+len(rec)+len(end) > maxPayloadBytes {
				if count == 0 {
					return nil, 0, fmt.Errorf("record %d alone is %d bytes, over the payload limit", i, len(rec))
				}
				break
			}
			if sep == 1 {
				buf = append(buf, ',')
			}
			buf = append(buf, rec...)
			count++
		}
		return append(buf, end...), count, nil
	}
}
