package queue

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

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
