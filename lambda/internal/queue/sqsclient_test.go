package queue

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
)

// noRequests fails the test on any request: a changer given an ARN that is
// not a queue's must refuse it before calling SQS.
type noRequests struct{ t *testing.T }

func (n noRequests) Do(r *http.Request) (*http.Response, error) {
	n.t.Errorf("request to %s", r.URL)
	return nil, http.ErrNotSupported
}

// TestVisibilityRefusesAnARNNotAQueues: an event source ARN that is not an
// SQS queue's is refused, naming it, without a request. The changer's calls
// to SQS are tested on kumo (test/kumo, TestVisibilityOnKumo).
func TestVisibilityRefusesAnARNNotAQueues(t *testing.T) {
	v := NewVisibility(aws.Config{Region: "eu-west-1", HTTPClient: noRequests{t}})
	for _, arn := range []string{"arn:aws:sns:eu-west-1:123456789012:orders", "orders", "arn:aws:sqs:eu-west-1:123456789012", ""} {
		if err := v.ChangeVisibility(context.Background(), arn, "rh", time.Second); err == nil || !strings.Contains(err.Error(), "not an SQS queue ARN") {
			t.Errorf("ChangeVisibility(%q): %v", arn, err)
		}
		if _, err := v.QueueVisibility(context.Background(), arn); err == nil {
			t.Errorf("QueueVisibility(%q): no error", arn)
		}
	}
}

// fakeSQS answers the three actions of the changer as SQS does (AWS JSON
// 1.0: the action in X-Amz-Target) and keeps each request with its body.
type fakeSQS struct {
	mu     sync.Mutex
	reqs   []*http.Request
	bodies []map[string]any
}

func (f *fakeSQS) Do(r *http.Request) (*http.Response, error) {
	var body map[string]any
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &body)
	f.mu.Lock()
	f.reqs, f.bodies = append(f.reqs, r), append(f.bodies, body)
	f.mu.Unlock()
	answer := map[string]string{
		"AmazonSQS.GetQueueUrl":             `{"QueueUrl":"https://sqs.us-east-2.amazonaws.com/123456789012/orders"}`,
		"AmazonSQS.GetQueueAttributes":      `{"Attributes":{"VisibilityTimeout":"45"}}`,
		"AmazonSQS.ChangeMessageVisibility": `{}`,
	}[r.Header.Get("X-Amz-Target")]
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body: io.NopCloser(strings.NewReader(answer)), Request: r}, nil
}

// TestVisibilityCallsTheQueuesRegion: the changer finds a queue by the
// name and owner of its ARN, in the ARN's region whatever the
// configuration's, once (its URL and timeout are remembered), and changes
// a message's visibility in whole seconds, each request signed for SQS in
// that region. The calls on SQS's own terms are tested on kumo
// (test/kumo, TestVisibilityOnKumo, TestVisibilityErrorsOnKumo).
func TestVisibilityCallsTheQueuesRegion(t *testing.T) {
	sqs := &fakeSQS{}
	v := NewVisibility(aws.Config{Region: "eu-west-1", HTTPClient: sqs, Credentials: credentials.NewStaticCredentialsProvider("AKID", "secret", "")})
	const arn = "arn:aws:sqs:us-east-2:123456789012:orders"
	for range 2 {
		if d, err := v.QueueVisibility(context.Background(), arn); err != nil || d != 45*time.Second {
			t.Fatalf("QueueVisibility: %v, %v", d, err)
		}
	}
	if err := v.ChangeVisibility(context.Background(), arn, "rh", 7500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var targets []string
	for i, r := range sqs.reqs {
		targets = append(targets, strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS."))
		if r.URL.Host != "sqs.us-east-2.amazonaws.com" || !strings.Contains(r.Header.Get("Authorization"), "/us-east-2/sqs/aws4_request") {
			t.Errorf("request %d to %s, %s; want the queue's region, us-east-2", i, r.URL.Host, r.Header.Get("Authorization"))
		}
	}
	if got := strings.Join(targets, ","); got != "GetQueueUrl,GetQueueAttributes,ChangeMessageVisibility" {
		t.Fatalf("requests %s", got)
	}
	if b := sqs.bodies[0]; b["QueueName"] != "orders" || b["QueueOwnerAWSAccountId"] != "123456789012" {
		t.Errorf("GetQueueUrl %v", b)
	}
	const url = "https://sqs.us-east-2.amazonaws.com/123456789012/orders"
	if b := sqs.bodies[2]; b["QueueUrl"] != url || b["ReceiptHandle"] != "rh" || b["VisibilityTimeout"] != 7.0 {
		t.Errorf("ChangeMessageVisibility %v; want the queue's URL, the handle and 7 seconds", b)
	}
}

// TestNewWiresTheVisibilityOfItsConfiguration: the adapter gets the
// caller's changer, none with a store of the caller's, and an SQS client
// of the AWS configuration otherwise.
func TestNewWiresTheVisibilityOfItsConfiguration(t *testing.T) {
	mine := NewVisibility(aws.Config{})
	if got := visibilityOf(&build.Env{Opts: &build.Options{Source: map[string]any{visibilityOption: mine}}}); got != mine {
		t.Errorf("WithVisibility: %v", got)
	}
	if got := visibilityOf(&build.Env{Opts: &build.Options{Store: storetest.NewMemoryStore(), AWSConfig: &aws.Config{Region: "eu-west-1"}}}); got != nil {
		t.Errorf("with a store of the caller's: %v", got)
	}
	if got := visibilityOf(&build.Env{Opts: &build.Options{AWSConfig: &aws.Config{Region: "eu-west-1"}}}); got == nil {
		t.Error("no changer over the AWS configuration")
	}
}
