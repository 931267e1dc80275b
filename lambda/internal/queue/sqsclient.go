package queue

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
)

// WithVisibility brings records found in progress, and failed records on
// the backoff, back through v instead of the SQS client that FromEnv builds
// (Config.Visibility).
func WithVisibility(v VisibilityChanger) handler.Option {
	return func(o *build.Options) { o.Source[visibilityOption] = v }
}

// visibilityOption is WithVisibility's key in build.Options.Source.
const visibilityOption = "sqs.visibility"

// NewVisibility returns the VisibilityChanger that calls SQS through the
// AWS SDK's SQS client on cfg (its credentials, endpoint, retryer and HTTP
// client): it finds the queue of an event source ARN (GetQueueUrl) and its
// visibility timeout (GetQueueAttributes) once per queue, then calls
// ChangeMessageVisibility, each in the queue's region (the ARN's). FromEnv
// and Start wire it; a handler built with New sets it in
// Config.Visibility. The construct's role grants the three actions on the
// consumer's queue (CDK's SqsEventSource grants the queue's consume
// actions: sqs:ReceiveMessage, sqs:ChangeMessageVisibility,
// sqs:GetQueueUrl, sqs:DeleteMessage, sqs:GetQueueAttributes).
func NewVisibility(cfg aws.Config) VisibilityChanger {
	return &visibility{api: sqs.NewFromConfig(cfg)}
}

type visibility struct {
	api      *sqs.Client
	queues   sync.Map // queue ARN -> queueRef
	timeouts sync.Map // queue ARN -> its visibility timeout
}

// queueRef is a queue found from its event source ARN: its region, where
// its requests go, and its URL, which names it in them.
type queueRef struct {
	region, url string
}

func (v *visibility) QueueVisibility(ctx context.Context, queueARN string) (time.Duration, error) {
	if d, ok := v.timeouts.Load(queueARN); ok {
		return d.(time.Duration), nil
	}
	q, err := v.queue(ctx, queueARN)
	if err != nil {
		return 0, err
	}
	out, err := v.api.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(q.url), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameVisibilityTimeout},
	}, q.in)
	if err != nil {
		return 0, fmt.Errorf("queue %s: %w", queueARN, err)
	}
	s, ok := out.Attributes[string(types.QueueAttributeNameVisibilityTimeout)]
	n, err := strconv.Atoi(s)
	if !ok || err != nil || n < 0 {
		return 0, fmt.Errorf("queue %s: GetQueueAttributes answered VisibilityTimeout %q, not a number of seconds", queueARN, s)
	}
	d := time.Duration(n) * time.Second
	v.timeouts.Store(queueARN, d)
	return d, nil
}

// ChangeVisibility calls ChangeMessageVisibility with timeout in whole
// seconds (SQS's unit), rounded down.
func (v *visibility) ChangeVisibility(ctx context.Context, queueARN, receiptHandle string, timeout time.Duration) error {
	q, err := v.queue(ctx, queueARN)
	if err != nil {
		return err
	}
	_, err = v.api.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: aws.String(q.url), ReceiptHandle: aws.String(receiptHandle), VisibilityTimeout: int32(timeout / time.Second),
	}, q.in)
	if err != nil {
		return fmt.Errorf("queue %s: %w", queueARN, err)
	}
	return nil
}

// queue finds the queue of queueARN, once: the SQS documentation gives no
// rule that builds a queue's URL from its ARN, so GetQueueUrl is asked
// with the queue's name and owner. A failed lookup is not remembered.
func (v *visibility) queue(ctx context.Context, queueARN string) (queueRef, error) {
	if q, ok := v.queues.Load(queueARN); ok {
		return q.(queueRef), nil
	}
	a, err := parseQueueARN(queueARN)
	if err != nil {
		return queueRef{}, err
	}
	q := queueRef{region: a.Region}
	out, err := v.api.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(a.Resource), QueueOwnerAWSAccountId: aws.String(a.AccountID)}, q.in)
	if err != nil {
		return queueRef{}, fmt.Errorf("queue %s: %w", queueARN, err)
	}
	if q.url = aws.ToString(out.QueueUrl); q.url == "" {
		return queueRef{}, fmt.Errorf("queue %s: GetQueueUrl answered no QueueUrl", queueARN)
	}
	v.queues.Store(queueARN, q)
	return q, nil
}

// in is the option of a request to q: its region.
func (q queueRef) in(o *sqs.Options) { o.Region = q.region }

// parseQueueARN reads an event source ARN
// (arn:<partition>:sqs:<region>:<account>:<name>), refusing any other
// than an SQS queue's before a request is made; the SDK's client refuses
// a region that cannot stand in a host name.
func parseQueueARN(queueARN string) (arn.ARN, error) {
	a, err := arn.Parse(queueARN)
	if err != nil || a.Service != "sqs" || a.Region == "" || a.AccountID == "" || a.Resource == "" || strings.Contains(a.Resource, ":") {
		return arn.ARN{}, fmt.Errorf("event source %q is not an SQS queue ARN (arn:<partition>:sqs:<region>:<account>:<name>)", queueARN)
	}
	return a, nil
}

// visibilityOf is the changer FromEnv gives the adapter: the caller's
// (WithVisibility), none with a store of the caller's (a test's, which
// talks to no AWS), or one on the configuration that built the DynamoDB
// client.
func visibilityOf(env *build.Env) VisibilityChanger {
	switch v, _ := env.Opts.Source[visibilityOption].(VisibilityChanger); {
	case v != nil:
		return v
	case env.Opts.Store != nil || env.Opts.AWSConfig == nil:
		return nil
	}
	return NewVisibility(*env.Opts.AWSConfig)
}
