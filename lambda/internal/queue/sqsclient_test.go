package queue

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
)

type fakeSQS struct {
	lookups, attrs int
	changes        []sqs.ChangeMessageVisibilityInput
}

func (f *fakeSQS) GetQueueUrl(_ context.Context, in *sqs.GetQueueUrlInput, _ ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error) {
	f.lookups++
	return &sqs.GetQueueUrlOutput{QueueUrl: aws.String("https://sqs.eu-west-1.amazonaws.com/" + aws.ToString(in.QueueOwnerAWSAccountId) + "/" + aws.ToString(in.QueueName))}, nil
}

func (f *fakeSQS) GetQueueAttributes(_ context.Context, in *sqs.GetQueueAttributesInput, _ ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	f.attrs++
	return &sqs.GetQueueAttributesOutput{Attributes: map[string]string{"VisibilityTimeout": "180"}}, nil
}

func (f *fakeSQS) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	f.changes = append(f.changes, *in)
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

// TestVisibilityFindsTheQueueOnce: the changer looks the queue's URL up
// once per event source ARN and sets the timeout in seconds.
func TestVisibilityFindsTheQueueOnce(t *testing.T) {
	api := &fakeSQS{}
	v := NewVisibility(api)
	for _, h := range []string{"rh-1", "rh-2"} {
		if d, err := v.QueueVisibility(context.Background(), "arn:aws:sqs:eu-west-1:123456789012:orders"); err != nil || d != 180*time.Second {
			t.Fatalf("QueueVisibility = %v, %v", d, err)
		}
		if err := v.ChangeVisibility(context.Background(), "arn:aws:sqs:eu-west-1:123456789012:orders", h, 7*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.ChangeVisibility(context.Background(), "arn:aws:sns:eu-west-1:123456789012:orders", "rh-3", time.Second); err == nil {
		t.Error("an SNS ARN was taken for a queue")
	}
	if api.lookups != 1 || api.attrs != 1 || len(api.changes) != 2 || aws.ToString(api.changes[1].QueueUrl) != "https://sqs.eu-west-1.amazonaws.com/123456789012/orders" ||
		api.changes[1].VisibilityTimeout != 7 || aws.ToString(api.changes[1].ReceiptHandle) != "rh-2" {
		t.Errorf("lookups %d, changes %+v", api.lookups, api.changes)
	}
}

// TestNewWiresTheVisibilityOfItsConfiguration: the adapter gets the
// caller's changer, none with a store of the caller's, and an SQS client
// of the AWS configuration otherwise.
func TestNewWiresTheVisibilityOfItsConfiguration(t *testing.T) {
	mine := NewVisibility(&fakeSQS{})
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
