// Package shop is the app of docs/testing.md's "A snapshot and cdk-nag test
// of your stack": a small stack whose snapshot and cdk-nag tests are the
// test file the page shows, so that the page's code compiles and passes
// (readme_test.go checks that the page shows it verbatim).
package shop

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// NewShopStack returns the shop's stack: an orders queue, encrypted and
// TLS-only, with its dead-letter queue; the one cdk-nag finding that does
// not apply is suppressed with its reason.
func NewShopStack(scope constructs.Construct, id string) awscdk.Stack {
	stack := awscdk.NewStack(scope, jsii.String(id), nil)
	dlq := awssqs.NewQueue(stack, jsii.String("OrdersDLQ"), &awssqs.QueueProps{
		EnforceSSL: jsii.Bool(true),
		Encryption: awssqs.QueueEncryption_SQS_MANAGED,
	})
	cdknag.NagSuppressions_AddResourceSuppressions(dlq, &[]*cdknag.NagPackSuppression{{
		Id:     jsii.String("Serverless-SQSRedrivePolicy"),
		Reason: jsii.String("a dead-letter queue is where redrives end: it has none of its own"),
	}}, nil)
	awssqs.NewQueue(stack, jsii.String("Orders"), &awssqs.QueueProps{
		EnforceSSL:      jsii.Bool(true),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		DeadLetterQueue: &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(5)},
	})
	return stack
}
