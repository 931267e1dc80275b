package queue

import (
	"context"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/sqsapi"
)

// WithVisibility brings records found in progress, and failed records on
// the backoff, back through v instead of the SQS client that FromEnv builds
// (Config.Visibility).
func WithVisibility(v VisibilityChanger) handler.Option {
	return func(o *build.Options) { o.Source[visibilityOption] = v }
}

// visibilityOption is WithVisibility's key in build.Options.Source.
const visibilityOption = "sqs.visibility"

// NewVisibility returns the VisibilityChanger that calls SQS with cfg (its
// credentials, endpoint, retryer and HTTP client): it finds the queue of an
// event source ARN (GetQueueUrl) and its visibility timeout
// (GetQueueAttributes) once per queue, then calls ChangeMessageVisibility.
// FromEnv and Start wire it; a handler built with New sets it in
// Config.Visibility. The construct's role grants the three actions on the
// consumer's queue (CDK's SqsEventSource grants the queue's consume
// actions: sqs:ReceiveMessage, sqs:ChangeMessageVisibility,
// sqs:GetQueueUrl, sqs:DeleteMessage, sqs:GetQueueAttributes). It links no
// SQS client: it speaks SQS's JSON protocol itself (lambda/internal/sqsapi).
func NewVisibility(cfg aws.Config) VisibilityChanger {
	return &visibility{api: sqsapi.New(cfg)}
}

type visibility struct {
	api      *sqsapi.Client
	queues   sync.Map // queue ARN -> *sqsapi.Queue
	timeouts sync.Map // queue ARN -> its visibility timeout
}

func (v *visibility) QueueVisibility(ctx context.Context, queueARN string) (time.Duration, error) {
	if d, ok := v.timeouts.Load(queueARN); ok {
		return d.(time.Duration), nil
	}
	q, err := v.queue(ctx, queueARN)
	if err != nil {
		return 0, err
	}
	d, err := v.api.VisibilityTimeout(ctx, q)
	if err != nil {
		return 0, err
	}
	v.timeouts.Store(queueARN, d)
	return d, nil
}

func (v *visibility) ChangeVisibility(ctx context.Context, queueARN, receiptHandle string, timeout time.Duration) error {
	q, err := v.queue(ctx, queueARN)
	if err != nil {
		return err
	}
	return v.api.ChangeMessageVisibility(ctx, q, receiptHandle, timeout)
}

func (v *visibility) queue(ctx context.Context, queueARN string) (*sqsapi.Queue, error) {
	if q, ok := v.queues.Load(queueARN); ok {
		return q.(*sqsapi.Queue), nil
	}
	q, err := v.api.Queue(ctx, queueARN)
	if err != nil {
		return nil, err
	}
	v.queues.Store(queueARN, q)
	return q, nil
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
