package local

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/sivchari/kumo"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// TestLargestMessageThroughSNSAndSQS publishes, on kumo, the largest
// message each delivery mode takes (at the largest MaxMessageBytes the
// construct allows for it), of the worst content for JSON escaping, and one
// byte more; receives what SNS delivered into the queue (MaximumMessageSize
// 1 MiB, as the construct sets it), and hands it to the adapter configured
// as the construct configures it. kumo enforces no size limit, so the test
// also checks that the delivered body fits SQS's 1 MiB.
func TestLargestMessageThroughSNSAndSQS(t *testing.T) {
	srv := kumo.NewServer()
	defer srv.Close()
	c := newClients(srv.URL)
	ctx := context.Background()
	for _, m := range []struct {
		delivery contract.Delivery
		limit    int
	}{
		{contract.Raw, contract.MaxQueueBodyBytes},
		{contract.Envelope, contract.MaxEnvelopedMessageBytes},
	} {
		t.Run(string(m.delivery), func(t *testing.T) {
			topic, err := c.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("sizes-" + string(m.delivery))})
			if err != nil {
				t.Fatal(err)
			}
			q, err := c.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("sizes-" + string(m.delivery)),
				Attributes: map[string]string{"MaximumMessageSize": strconv.Itoa(contract.MaxQueueBodyBytes)}})
			if err != nil {
				t.Fatal(err)
			}
			attrs, err := c.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.sns.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"),
				Endpoint:   aws.String(attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]),
				Attributes: map[string]string{"RawMessageDelivery": strconv.FormatBool(m.delivery == contract.Raw)}}); err != nil {
				t.Fatal(err)
			}
			guard, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "sizes"})
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			h := sqsbatch.New(guard, func(o struct{ OrderID string }) (string, error) { return o.OrderID, nil },
				func(context.Context, struct{ OrderID string }, idempotency.Reservation) (string, error) {
					return "ok", nil
				},
				sqsbatch.Config{Delivery: m.delivery, MaxMessageBytes: m.limit, Batch: handler.Batch{Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Metrics: io.Discard}})
			for _, size := range []int{m.limit, m.limit + 1} {
				msg := worstCase(t, "o-"+strconv.Itoa(size), size)
				if _, err := c.sns.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String(msg)}); err != nil {
					t.Fatal(err)
				}
				out, err := c.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 2})
				if err != nil || len(out.Messages) != 1 {
					t.Fatalf("receive: %d messages, %v", len(out.Messages), err)
				}
				body := aws.ToString(out.Messages[0].Body)
				logs.Reset()
				resp, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m", Body: body}}})
				if err != nil {
					t.Fatal(err)
				}
				var line struct{ Outcome, Reason string }
				_ = json.Unmarshal(logs.Bytes(), &line)
				want := map[bool]string{true: "processed", false: "bad_input"}[size == m.limit]
				if line.Outcome != want || (want == "processed") != (len(resp.BatchItemFailures) == 0) {
					t.Fatalf("message of %d bytes, delivered in a body of %d: %s (%s), want %s", size, len(body), line.Outcome, line.Reason, want)
				}
				if want == "processed" && len(body) > contract.MaxQueueBodyBytes {
					t.Fatalf("SNS delivered a body of %d bytes, more than SQS takes (%d)", len(body), contract.MaxQueueBodyBytes)
				}
				t.Logf("%s: published %d bytes, SNS delivered a body of %d bytes: %s", m.delivery, size, len(body), line.Outcome)
			}
		})
	}
}

// worstCase returns an order message of exactly n bytes whose padding is
// escaped quotes, which an SNS envelope escapes again: its envelope is
// about twice its size.
func worstCase(t *testing.T, orderID string, n int) string {
	t.Helper()
	head, tail := `{"orderId":"`+orderID+`","pad":"`, `"}`
	room := n - len(head) - len(tail)
	if room < 0 {
		t.Fatalf("no room for a %d-byte message", n)
	}
	return head + strings.Repeat(`\"`, room/2) + strings.Repeat("x", room%2) + tail
}
