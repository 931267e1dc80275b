package sqsapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
)

// errCaptured ends a request once recorder has kept it.
var errCaptured = errors.New("captured")

// recorder is an HTTP client that keeps the request it is given and sends
// nothing: it compares what this package and the SDK's client put on the
// wire.
type recorder struct {
	req  *http.Request
	body []byte
}

func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	r.req = req
	r.body, _ = io.ReadAll(req.Body)
	return nil, errCaptured
}

var testCreds = credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "token")

// TestRequestsAsTheSDK: each action's request is the one the SDK's SQS
// client makes for it: POST to the same URL, the same Content-Type,
// X-Amz-Target and X-Amzn-Query-Mode, the same JSON body, signed for sqs in
// the queue's region with the session token, the target among the signed
// headers.
func TestRequestsAsTheSDK(t *testing.T) {
	const arn, url = "arn:aws:sqs:eu-west-1:123456789012:orders", "https://sqs.eu-west-1.amazonaws.com/123456789012/orders"
	cfg := aws.Config{Region: "eu-west-1", Credentials: testCreds, Retryer: func() aws.Retryer { return aws.NopRetryer{} }}
	ctx := context.Background()
	for action, calls := range map[string]struct {
		ours func(c *Client, q *Queue) error
		sdk  func(c *sqs.Client) error
	}{
		"GetQueueUrl": {
			func(c *Client, _ *Queue) error { _, err := c.Queue(ctx, arn); return err },
			func(c *sqs.Client) error {
				_, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("orders"), QueueOwnerAWSAccountId: aws.String("123456789012")})
				return err
			},
		},
		"GetQueueAttributes": {
			func(c *Client, q *Queue) error { _, err := c.VisibilityTimeout(ctx, q); return err },
			func(c *sqs.Client) error {
				_, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameVisibilityTimeout}})
				return err
			},
		},
		"ChangeMessageVisibility": {
			func(c *Client, q *Queue) error {
				return c.ChangeMessageVisibility(ctx, q, "rh+/=1", 7500*time.Millisecond)
			},
			func(c *sqs.Client) error {
				_, err := c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String("rh+/=1"), VisibilityTimeout: 7})
				return err
			},
		},
	} {
		var ours, theirs recorder
		oursCfg, sdkCfg := cfg, cfg
		oursCfg.HTTPClient, sdkCfg.HTTPClient = &ours, &theirs
		c := New(oursCfg)
		a, _ := parseQueueARN(arn)
		if err := calls.ours(c, &Queue{arn: a, endpoint: "https://sqs.eu-west-1.amazonaws.com/", url: url}); !errors.Is(err, errCaptured) {
			t.Fatalf("%s: %v", action, err)
		}
		if err := calls.sdk(sqs.NewFromConfig(sdkCfg)); !errors.Is(err, errCaptured) {
			t.Fatalf("%s, the SDK: %v", action, err)
		}
		compareRequests(t, action, ours, theirs)
	}
}

func compareRequests(t *testing.T, action string, ours, theirs recorder) {
	t.Helper()
	if ours.req.Method != theirs.req.Method || ours.req.URL.String() != theirs.req.URL.String() {
		t.Errorf("%s: %s %s; the SDK's %s %s", action, ours.req.Method, ours.req.URL, theirs.req.Method, theirs.req.URL)
	}
	for _, h := range []string{"Content-Type", "X-Amz-Target", "X-Amzn-Query-Mode", "X-Amz-Security-Token"} {
		if got, want := ours.req.Header.Get(h), theirs.req.Header.Get(h); got != want || got == "" {
			t.Errorf("%s: %s %q; the SDK's %q", action, h, got, want)
		}
	}
	var got, want any
	if err := json.Unmarshal(ours.body, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(theirs.body, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: body %s; the SDK's %s", action, ours.body, theirs.body)
	}
	auth := ours.req.Header.Get("Authorization")
	scope := func(a string) string {
		_, s, _ := strings.Cut(a, "Credential=AKIDEXAMPLE/")
		s, _, _ = strings.Cut(s, ",")
		return s[8:]
	}
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") || scope(auth) != scope(theirs.req.Header.Get("Authorization")) ||
		!strings.Contains(auth, "SignedHeaders=content-length;content-type;host;x-amz-date;x-amz-security-token;x-amz-target;x-amzn-query-mode,") {
		t.Errorf("%s: Authorization %q; the SDK's %q", action, auth, theirs.req.Header.Get("Authorization"))
	}
}

// TestErrorOfTheDocumentedAnswer: the error answer the SQS Developer Guide
// shows ("Interpreting Amazon SQS JSON API responses") reads as the SDK
// reads it: the query code as ErrorCode, the type without its namespace,
// the message, the fault, the request; and the SDK's standard retryer
// retries throttling and 5xx answers, not a caller's error.
func TestErrorOfTheDocumentedAnswer(t *testing.T) {
	resp := &http.Response{StatusCode: 400, Header: http.Header{}}
	resp.Header.Set("x-amzn-RequestId", "66916324-67ca-54bb-a410-3f567a7a0571")
	resp.Header.Set("x-amzn-query-error", "AWS.SimpleQueueService.NonExistentQueue;Sender")
	e := errorOf("GetQueueAttributes", resp, []byte(`{"__type": "com.amazonaws.sqs#QueueDoesNotExist", "message": "The specified queue does not exist."}`))
	var api smithy.APIError = e
	if api.ErrorCode() != "AWS.SimpleQueueService.NonExistentQueue" || e.Type != "QueueDoesNotExist" || api.ErrorMessage() != "The specified queue does not exist." ||
		api.ErrorFault() != smithy.FaultClient || e.HTTPStatusCode() != 400 ||
		e.Error() != "AWS.SimpleQueueService.NonExistentQueue (QueueDoesNotExist): The specified queue does not exist. (HTTP 400, request 66916324-67ca-54bb-a410-3f567a7a0571)" {
		t.Errorf("%+v: %v", e, e)
	}
	retryer := retry.NewStandard()
	for _, c := range []struct {
		status int
		body   string
		header string
		retry  bool
	}{
		{400, `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"gone"}`, "AWS.SimpleQueueService.NonExistentQueue;Sender", false},
		{400, `{"__type":"com.amazonaws.sqs#ReceiptHandleIsInvalid","message":"bad"}`, "ReceiptHandleIsInvalid;Sender", false},
		{400, `{"__type":"com.amazonaws.sqs#ThrottlingException","message":"slow down"}`, "", true},
		{400, `{"__type":"com.amazonaws.sqs#RequestThrottled","message":"slow down"}`, "RequestThrottled;Sender", true},
		{500, `{"__type":"com.amazonaws.sqs#InternalError","message":"oops"}`, "InternalError;Receiver", true},
		{503, `<html>Service Unavailable</html>`, "", true},
	} {
		resp := &http.Response{StatusCode: c.status, Header: http.Header{}}
		resp.Header.Set("X-Amzn-Query-Error", c.header)
		e := errorOf("ChangeMessageVisibility", resp, []byte(c.body))
		if retryer.IsErrorRetryable(e) != c.retry || e.ErrorCode() == "" || e.Message == "" {
			t.Errorf("%d %s: retried %v, code %q, message %q", c.status, c.body, retryer.IsErrorRetryable(e), e.ErrorCode(), e.Message)
		}
	}
}

// closer is a loopback listener that accepts connections and closes them
// at once (an endpoint that fails every request), counting them.
func closer(t *testing.T) (string, *atomic.Int64) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return "http://" + l.Addr().String(), &n
}

// TestRetriesAsTheRetryerSays: a request whose connection fails is retried
// by the configuration's retryer, up to its attempts (cfg.Retryer's 3, or
// cfg.RetryMaxAttempts' 2 over it), and the error names the action, the
// queue and the attempts; a done context ends the retries.
func TestRetriesAsTheRetryerSays(t *testing.T) {
	quick := func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 3
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
		})
	}
	for _, c := range []struct {
		cfg      aws.Config
		attempts int64
	}{
		{aws.Config{Retryer: quick}, 3},
		{aws.Config{Retryer: quick, RetryMaxAttempts: 2}, 2},
	} {
		endpoint, n := closer(t)
		c.cfg.BaseEndpoint, c.cfg.Credentials = aws.String(endpoint), testCreds
		_, err := New(c.cfg).Queue(context.Background(), "arn:aws:sqs:eu-west-1:123456789012:orders")
		if err == nil || n.Load() != c.attempts || !strings.Contains(err.Error(), "sqs GetQueueUrl on queue arn:aws:sqs:eu-west-1:123456789012:orders") {
			t.Errorf("%d connections, want %d: %v", n.Load(), c.attempts, err)
		}
	}
	endpoint, n := closer(t)
	slow := func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Hour, nil })
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := New(aws.Config{Retryer: slow, BaseEndpoint: aws.String(endpoint), Credentials: testCreds}).Queue(ctx, "arn:aws:sqs:eu-west-1:123456789012:orders")
	if !errors.Is(err, context.DeadlineExceeded) || n.Load() != 1 {
		t.Errorf("a done context: %d connections, %v", n.Load(), err)
	}
}

// failingCreds is a credentials provider that cannot retrieve any.
type failingCreds struct{}

func (failingCreds) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{}, errors.New("no role")
}

// TestCredentialsRefusedClearly: without credentials, or when the provider
// fails, a call fails naming it, sending nothing.
func TestCredentialsRefusedClearly(t *testing.T) {
	for _, c := range []struct {
		creds aws.CredentialsProvider
		want  string
	}{{nil, "no credentials in the AWS configuration"}, {failingCreds{}, "credentials: no role"}} {
		var rec recorder
		_, err := New(aws.Config{Credentials: c.creds, HTTPClient: &rec}).Queue(context.Background(), "arn:aws:sqs:eu-west-1:123456789012:orders")
		if err == nil || !strings.Contains(err.Error(), c.want) || rec.req != nil {
			t.Errorf("%T: %v (sent %v)", c.creds, err, rec.req != nil)
		}
	}
}

// TestNewTakesTheConfigurationsClient: the configuration's HTTP client
// carries the requests; without one, the SDK's buildable client does.
func TestNewTakesTheConfigurationsClient(t *testing.T) {
	var rec recorder
	if c := New(aws.Config{HTTPClient: &rec}); c.http != &rec {
		t.Errorf("HTTP client %T", c.http)
	}
	if c := New(aws.Config{}); c.http == nil {
		t.Error("no HTTP client")
	}
}
