// Package sqsapi is the part of Amazon SQS a queue consumer calls when it
// brings a message back sooner: a queue's URL (GetQueueUrl), its
// VisibilityTimeout (GetQueueAttributes) and ChangeMessageVisibility. It
// speaks SQS's AWS JSON 1.0 protocol (POST /, X-Amz-Target:
// AmazonSQS.<Action>, Content-Type: application/x-amz-json-1.0), signed with
// SigV4, over the aws.Config the consumer's DynamoDB client is built on, so
// that a queue consumer's bootstrap links no SQS client (issue 32: the
// generated client and its schemas weigh about 145 KB; the signer, the
// retryer and the HTTP transport are the DynamoDB client's already).
//
// The protocol is the SQS Developer Guide's "Making query API requests
// using AWS JSON protocol" and "Interpreting Amazon SQS JSON API responses"
// (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-making-api-requests-json.html,
// .../sqs-json-api-responses.html); the actions and their errors are the
// API Reference's (GetQueueUrl, GetQueueAttributes, ChangeMessageVisibility).
package sqsapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

const (
	// contentType is AWS JSON 1.0's media type.
	contentType = "application/x-amz-json-1.0"
	// targetPrefix is the service name of X-Amz-Target.
	targetPrefix = "AmazonSQS."
	// signingName is SQS's SigV4 service name.
	signingName = "sqs"
	// maxResponse bounds the bytes read of one response: the answers of
	// the three actions are a few hundred bytes.
	maxResponse = 1 << 20
)

// Client calls SQS on one AWS configuration. It is safe for concurrent use.
type Client struct {
	creds     aws.CredentialsProvider
	http      aws.HTTPClient
	retryer   aws.Retryer
	signer    *v4.Signer
	endpoints endpointConfig
}

// New returns a client of cfg: its credentials, HTTP client (a new
// awshttp.BuildableClient without one), retryer (cfg.Retryer, or the SDK's
// standard or adaptive retryer of cfg.RetryMode and cfg.RetryMaxAttempts, as
// an SDK client builds it) and endpoint (cfg.BaseEndpoint or SQS's own from
// cfg.ConfigSources, else the queue's regional endpoint).
func New(cfg aws.Config) *Client {
	c := &Client{creds: cfg.Credentials, http: cfg.HTTPClient, retryer: retryerOf(cfg), signer: v4.NewSigner(), endpoints: endpointConfigOf(cfg)}
	if c.http == nil {
		c.http = awshttp.NewBuildableClient()
	}
	return c
}

// Queue is one queue, found from its ARN (Client.Queue): where its requests
// go and its URL, which names it in them.
type Queue struct {
	arn      queueARN
	endpoint string
	url      string
}

// Queue finds the queue of an event source ARN
// (arn:<partition>:sqs:<region>:<account>:<name>): its endpoint and, with
// GetQueueUrl (the queue's name and owner), its URL. The SQS documentation
// gives no rule that builds a queue's URL from its ARN, so it is asked for.
func (c *Client) Queue(ctx context.Context, arn string) (*Queue, error) {
	a, err := parseQueueARN(arn)
	if err != nil {
		return nil, err
	}
	endpoint, err := c.endpoints.resolve(a)
	if err != nil {
		return nil, fmt.Errorf("queue %s: %w", arn, err)
	}
	if !strings.HasSuffix(endpoint, "/") {
		endpoint += "/" // the operation's path, as the SDK joins it
	}
	q := &Queue{arn: a, endpoint: endpoint}
	var out struct {
		URL string `json:"QueueUrl"`
	}
	in := struct {
		Name  string `json:"QueueName"`
		Owner string `json:"QueueOwnerAWSAccountId"`
	}{a.name, a.account}
	if err := c.call(ctx, q, "GetQueueUrl", in, &out); err != nil {
		return nil, err
	}
	if out.URL == "" {
		return nil, fmt.Errorf("queue %s: GetQueueUrl answered no QueueUrl", arn)
	}
	q.url = out.URL
	return q, nil
}

// VisibilityTimeout returns the queue's VisibilityTimeout attribute
// (GetQueueAttributes).
func (c *Client) VisibilityTimeout(ctx context.Context, q *Queue) (time.Duration, error) {
	var out struct{ Attributes map[string]string }
	in := struct {
		URL   string   `json:"QueueUrl"`
		Names []string `json:"AttributeNames"`
	}{q.url, []string{"VisibilityTimeout"}}
	if err := c.call(ctx, q, "GetQueueAttributes", in, &out); err != nil {
		return 0, err
	}
	v, ok := out.Attributes["VisibilityTimeout"]
	n, err := strconv.Atoi(v)
	if !ok || err != nil || n < 0 {
		return 0, fmt.Errorf("queue %s: GetQueueAttributes answered VisibilityTimeout %q, not a number of seconds", q.arn, v)
	}
	return time.Duration(n) * time.Second, nil
}

// ChangeMessageVisibility makes the message of receiptHandle visible again
// after timeout, counted from the call, in whole seconds (SQS's unit).
func (c *Client) ChangeMessageVisibility(ctx context.Context, q *Queue, receiptHandle string, timeout time.Duration) error {
	in := struct {
		URL     string `json:"QueueUrl"`
		Handle  string `json:"ReceiptHandle"`
		Seconds int64  `json:"VisibilityTimeout"`
	}{q.url, receiptHandle, int64(timeout / time.Second)}
	return c.call(ctx, q, "ChangeMessageVisibility", in, nil)
}

// call makes action on q's endpoint with the retryer: each attempt signed
// anew, retried as the SDK's retry middleware retries (the retryer's
// tokens, its retryable errors and delays, up to its MaxAttempts). The
// answer is decoded into out unless out is nil.
func (c *Client) call(ctx context.Context, q *Queue, action string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("sqs %s: %w", action, err)
	}
	release := func(error) error { return nil }
	for attempt := 1; ; attempt++ {
		resp, err := c.attempt(ctx, q, action, body)
		_ = release(err)
		if err == nil {
			if out == nil {
				return nil
			}
			if err := json.Unmarshal(resp, out); err != nil {
				return fmt.Errorf("sqs %s on queue %s: answer %.200q: %w", action, q.arn, resp, err)
			}
			return nil
		}
		if release, err = c.retry(ctx, attempt, err); err != nil {
			return fmt.Errorf("sqs %s on queue %s: %w", action, q.arn, err)
		}
	}
}

// retry waits before attempt+1 after the attempt's error err, when the
// retryer retries it: it returns the retry token's release, or err (the
// attempts exhausted, not retryable, no token, or ctx done).
func (c *Client) retry(ctx context.Context, attempt int, err error) (func(error) error, error) {
	if ctx.Err() != nil || !c.retryer.IsErrorRetryable(err) {
		return nil, err
	}
	if m := c.retryer.MaxAttempts(); m > 0 && attempt >= m {
		return nil, fmt.Errorf("%d attempts: %w", attempt, err)
	}
	release, tokenErr := c.retryer.GetRetryToken(ctx, err)
	if tokenErr != nil {
		return nil, errors.Join(err, tokenErr)
	}
	delay, delayErr := c.retryer.RetryDelay(attempt, err)
	if delayErr != nil {
		return nil, errors.Join(err, delayErr)
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, errors.Join(err, ctx.Err())
	case <-t.C:
		return release, nil
	}
}

// attempt sends one signed request and returns the answer's body, or the
// error: the service's (*Error), or the transport's, wrapped as the SDK
// wraps it (smithyhttp.RequestSendError) so that the retryer knows it.
func (c *Client) attempt(ctx context.Context, q *Queue, action string, body []byte) ([]byte, error) {
	attemptRelease, err := c.attemptToken(ctx)
	if err != nil {
		return nil, err
	}
	answer, err := c.send(ctx, q, action, body)
	_ = attemptRelease(err)
	return answer, err
}

// attemptToken is the retryer's token for one attempt (its rate limit in
// adaptive mode).
func (c *Client) attemptToken(ctx context.Context) (func(error) error, error) {
	if r, ok := c.retryer.(aws.RetryerV2); ok {
		return r.GetAttemptToken(ctx)
	}
	return c.retryer.GetInitialToken(), nil
}

func (c *Client) send(ctx context.Context, q *Queue, action string, body []byte) ([]byte, error) {
	if c.creds == nil {
		return nil, errors.New("no credentials in the AWS configuration")
	}
	creds, err := c.creds.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, q.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-Amz-Target", targetPrefix+action)
	// SQS is query-compatible: it names its errors as the query protocol
	// did, in X-Amzn-Query-Error, as it does for the SDK's clients.
	req.Header.Set("X-Amzn-Query-Mode", "true")
	sum := sha256.Sum256(body)
	if err := c.signer.SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), signingName, q.arn.region, time.Now().UTC()); err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &smithyhttp.RequestSendError{Err: err}
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, &smithyhttp.RequestSendError{Err: err}
	}
	if resp.StatusCode/100 != 2 {
		return nil, errorOf(action, resp, answer)
	}
	return answer, nil
}

// retryerOf is the retryer an SDK client of cfg uses (sqs.NewFromConfig's
// resolveRetryer and finalizeRetryMaxAttempts): cfg.Retryer's, else the
// standard or adaptive one of cfg.RetryMode; cfg.RetryMaxAttempts, when
// set, bounds either.
func retryerOf(cfg aws.Config) aws.Retryer {
	var r aws.Retryer
	switch {
	case cfg.Retryer != nil:
		r = cfg.Retryer()
	case cfg.RetryMode == aws.RetryModeAdaptive:
		r = retry.NewAdaptiveMode()
	default:
		r = retry.NewStandard()
	}
	if cfg.RetryMaxAttempts != 0 {
		r = retry.AddWithMaxAttempts(r, cfg.RetryMaxAttempts)
	}
	return r
}
