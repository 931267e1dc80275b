package kumo_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

// countingClient is an HTTP client that counts the requests of each SQS
// action (X-Amz-Target) before sending them.
type countingClient struct {
	next aws.HTTPClient
	mu   sync.Mutex
	n    map[string]int
}

func (c *countingClient) Do(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.n[strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")]++
	c.mu.Unlock()
	return c.next.Do(r)
}

func (c *countingClient) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// visibilityRig is kumo, a changer of sqsbatch.NewVisibility on its
// configuration with counted requests, and an SDK client to set queues up.
type visibilityRig struct {
	sqs     *sqs.Client
	changer handler.VisibilityChanger
	count   *countingClient
}

func newVisibilityRig(t *testing.T) *visibilityRig {
	cl, stop := kumotest.Start()
	t.Cleanup(stop)
	count := &countingClient{next: awshttp.NewBuildableClient(), n: map[string]int{}}
	cfg := cl.Config
	cfg.HTTPClient = count
	return &visibilityRig{sqs: cl.SQS, changer: sqsbatch.NewVisibility(cfg), count: count}
}

// queue creates a standard queue of visibility timeout visibility and
// returns its URL and ARN.
func (r *visibilityRig) queue(t *testing.T, name string, visibility int) queueRef {
	t.Helper()
	ctx := context.Background()
	out, err := r.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{"VisibilityTimeout": fmt.Sprint(visibility)}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return queueRef{url: aws.ToString(out.QueueUrl), arn: got.Attributes["QueueArn"]}
}

// receive returns the receipt handles of the messages visible now.
func (r *visibilityRig) receive(t *testing.T, q queueRef) []string {
	t.Helper()
	out, err := r.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.url), MaxNumberOfMessages: 10, WaitTimeSeconds: 0})
	if err != nil {
		t.Fatal(err)
	}
	var handles []string
	for _, m := range out.Messages {
		handles = append(handles, aws.ToString(m.ReceiptHandle))
	}
	return handles
}

// TestVisibilityOnKumo: the changer sqsbatch.FromEnv wires (the SDK's SQS
// client) finds a queue from its event source ARN and reads its visibility
// timeout once per queue (one GetQueueUrl, one GetQueueAttributes for any
// number of calls), and its ChangeMessageVisibility takes effect: a
// message received (invisible for the queue's 45 s) and changed to 0 s is
// received again at once; changed to 30 s, it is not.
func TestVisibilityOnKumo(t *testing.T) {
	r := newVisibilityRig(t)
	ctx := context.Background()
	q := r.queue(t, fmt.Sprintf("visibility-%d", time.Now().UnixNano()), 45)
	for range 3 {
		if d, err := r.changer.QueueVisibility(ctx, q.arn); err != nil || d != 45*time.Second {
			t.Fatalf("QueueVisibility(%s) = %v, %v; want 45s", q.arn, d, err)
		}
	}
	if _, err := r.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.url), MessageBody: aws.String(`{"orderId":"o-1"}`)}); err != nil {
		t.Fatal(err)
	}
	first := r.receive(t, q)
	if len(first) != 1 || len(r.receive(t, q)) != 0 {
		t.Fatalf("received %d, then a message that should be invisible", len(first))
	}
	if err := r.changer.ChangeVisibility(ctx, q.arn, first[0], 0); err != nil {
		t.Fatalf("ChangeVisibility to 0: %v", err)
	}
	again := r.receive(t, q)
	if len(again) != 1 {
		t.Fatalf("after a change to 0 s, %d messages visible; want the one", len(again))
	}
	if err := r.changer.ChangeVisibility(ctx, q.arn, again[0], 30*time.Second); err != nil {
		t.Fatalf("ChangeVisibility to 30 s: %v", err)
	}
	if n := len(r.receive(t, q)); n != 0 {
		t.Errorf("after a change to 30 s, %d messages visible", n)
	}
	want := map[string]int{"GetQueueUrl": 1, "GetQueueAttributes": 1, "ChangeMessageVisibility": 2}
	if got := r.count.counts(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("requests %v; want %v (the queue and its timeout looked up once)", got, want)
	}
}

// apiError is the part of smithy.APIError an SDK client's caller reads.
type apiError interface {
	error
	ErrorCode() string
}

// TestVisibilityErrorsOnKumo: SQS's refusals come back as errors naming the
// action, SQS's code and message, the query protocol's code as an SDK
// client reports it (a smithy.APIError's ErrorCode), after one request (a refusal is not
// retried), and nothing is cached of a failed lookup: a queue that does not
// exist yet is found once it does. A receipt handle SQS never gave is
// refused (ReceiptHandleIsInvalid).
func TestVisibilityErrorsOnKumo(t *testing.T) {
	r := newVisibilityRig(t)
	ctx := context.Background()
	name := fmt.Sprintf("visibility-late-%d", time.Now().UnixNano())
	arn := "arn:aws:sqs:us-east-1:000000000000:" + name
	_, err := r.changer.QueueVisibility(ctx, arn)
	var api apiError
	if !errors.As(err, &api) || api.ErrorCode() != "AWS.SimpleQueueService.NonExistentQueue" ||
		!strings.Contains(err.Error(), "GetQueueUrl") || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), arn) {
		t.Fatalf("QueueVisibility of a queue that does not exist: %v", err)
	}
	if err := r.changer.ChangeVisibility(ctx, arn, "rh", time.Second); !errors.As(err, &api) || api.ErrorCode() != "AWS.SimpleQueueService.NonExistentQueue" {
		t.Fatalf("ChangeVisibility on a queue that does not exist: %v", err)
	}
	if got := r.count.counts()["GetQueueUrl"]; got != 2 {
		t.Errorf("%d GetQueueUrl for two refused calls; want 2 (one each, no retry)", got)
	}

	t.Logf("refused: %v", err)
	q := r.queue(t, name, 20)
	if d, err := r.changer.QueueVisibility(ctx, q.arn); err != nil || d != 20*time.Second {
		t.Fatalf("QueueVisibility once the queue exists = %v, %v", d, err)
	}
	err = r.changer.ChangeVisibility(ctx, q.arn, "not-a-receipt-handle", time.Second)
	if !errors.As(err, &api) || api.ErrorCode() != "ReceiptHandleIsInvalid" || !strings.Contains(err.Error(), "ChangeMessageVisibility") {
		t.Fatalf("ChangeVisibility with a receipt handle SQS never gave: %v", err)
	}
	t.Logf("refused: %v", err)
	if got := r.count.counts()["ChangeMessageVisibility"]; got != 1 {
		t.Errorf("%d ChangeMessageVisibility; want 1 (no retry)", got)
	}
}
