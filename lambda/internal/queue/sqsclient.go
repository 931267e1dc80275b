package queue

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
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

// SQSAPI is the part of the SQS client the visibility changer calls;
// *sqs.Client implements it.
type SQSAPI interface {
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	GetQueueUrl(ctx context.Context, in *sqs.GetQueueUrlInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error)
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

// NewVisibility returns the VisibilityChanger over api: it finds
// the queue's URL from the event source ARN (GetQueueUrl) and its
// visibility timeout (GetQueueAttributes) once per queue, then calls
// ChangeMessageVisibility. The construct's role grants both on
// the consumer's queue (CDK's SqsEventSource grants the queue's consume
// actions: sqs:ReceiveMessage, sqs:ChangeMessageVisibility,
// sqs:GetQueueUrl, sqs:DeleteMessage, sqs:GetQueueAttributes).
func NewVisibility(api SQSAPI) VisibilityChanger {
	return &visibility{api: api}
}

type visibility struct {
	api    SQSAPI
	urls   sync.Map // queue ARN -> URL
	queues sync.Map // queue ARN -> its visibility timeout
}

func (v *visibility) QueueVisibility(ctx context.Context, queueARN string) (time.Duration, error) {
	if d, ok := v.queues.Load(queueARN); ok {
		return d.(time.Duration), nil
	}
	url, err := v.url(ctx, queueARN)
	if err != nil {
		return 0, err
	}
	out, err := v.api.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameVisibilityTimeout}})
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameVisibilityTimeout)])
	if err != nil {
		return 0, fmt.Errorf("queue %s: VisibilityTimeout %q: %w", queueARN, out.Attributes[string(sqstypes.QueueAttributeNameVisibilityTimeout)], err)
	}
	d := time.Duration(n) * time.Second
	v.queues.Store(queueARN, d)
	return d, nil
}

func (v *visibility) ChangeVisibility(ctx context.Context, queueARN, receiptHandle string, timeout time.Duration) error {
	url, err := v.url(ctx, queueARN)
	if err != nil {
		return err
	}
	_, err = v.api.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: aws.String(url), ReceiptHandle: aws.String(receiptHandle), VisibilityTimeout: int32(timeout / time.Second),
	})
	return err
}

func (v *visibility) url(ctx context.Context, queueARN string) (string, error) {
	if u, ok := v.urls.Load(queueARN); ok {
		return u.(string), nil
	}
	parts := strings.Split(queueARN, ":") // arn:aws:sqs:<region>:<account>:<name>
	if len(parts) != 6 || parts[2] != "sqs" {
		return "", fmt.Errorf("event source %q is not an SQS queue ARN", queueARN)
	}
	out, err := v.api.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(parts[5]), QueueOwnerAWSAccountId: aws.String(parts[4])})
	if err != nil {
		return "", err
	}
	v.urls.Store(queueARN, aws.ToString(out.QueueUrl))
	return aws.ToString(out.QueueUrl), nil
}

// visibilityOf is the changer FromEnv gives the adapter: the caller's
// (WithVisibility), none with a store of the caller's (a test's, which
// talks to no AWS), or an SQS client of the configuration that built the
// DynamoDB client.
func visibilityOf(env *build.Env) VisibilityChanger {
	switch v, _ := env.Opts.Source[visibilityOption].(VisibilityChanger); {
	case v != nil:
		return v
	case env.Opts.Store != nil || env.Opts.AWSConfig == nil:
		return nil
	}
	return NewVisibility(sqs.NewFromConfig(*env.Opts.AWSConfig))
}
