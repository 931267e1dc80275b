// Package sources_test proves the consumer's sources other than SNS on kumo:
// an EventBridge rule's SQS target (events_test.go) and an S3 bucket's
// notifications (objects_test.go), each through the real handler on kumo's
// DynamoDB, and what kumo does not model with AWS-shaped messages sent to
// its queues.
//
// The tests share one kumo server, apart from test/kumo's: kumo's services
// are singletons of the process that each server rewires when it starts,
// while its S3 still emits a put's notifications from goroutines of its
// own, so a second server started in one binary after a PutObject races
// with them.
package sources_test

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

var shared struct {
	once    sync.Once
	clients kumotest.Clients
	stop    func()
}

// server is the package's kumo server, started by its first test.
func server(t *testing.T) kumotest.Clients {
	t.Helper()
	shared.once.Do(func() { shared.clients, shared.stop = kumotest.Start() })
	return shared.clients
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.stop != nil {
		shared.stop()
	}
	os.Exit(code)
}

// queueRef is a queue's URL and ARN.
type queueRef struct{ url, arn string }

// newQueue creates a queue on kumo with the attributes.
func newQueue(ctx context.Context, t *testing.T, client *sqs.Client, name string, attrs map[string]string) queueRef {
	t.Helper()
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatal(err)
	}
	got, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return queueRef{url: aws.ToString(out.QueueUrl), arn: got.Attributes["QueueArn"]}
}

// standardQueue creates a standard queue on kumo.
func standardQueue(ctx context.Context, t *testing.T, client *sqs.Client, name string) queueRef {
	t.Helper()
	return newQueue(ctx, t, client, name, map[string]string{"VisibilityTimeout": "30"})
}
