package build_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestTheEntryPointsLinkNoConfigPackage: no entry point's package graph (a
// consumer's bootstrap: handler and what it imports, as app/cmd/charge
// builds it) holds the SDK's package config or the credential providers it
// imports (STS, SSO, the container and instance metadata), which the
// default clients do not use (lambdaEnv reads the environment instead;
// DESIGN.md, "What a consumer process costs"). WithAWSConfig takes a
// configuration loaded by the user's own import of config.
func TestTheEntryPointsLinkNoConfigPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../../app/cmd/charge").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	dynamodb := false
	for _, p := range deps {
		dynamodb = dynamodb || p == "github.com/aws/aws-sdk-go-v2/service/dynamodb"
		if p == "github.com/aws/aws-sdk-go-v2/config" || strings.HasPrefix(p, "github.com/aws/aws-sdk-go-v2/credentials/") ||
			p == "github.com/aws/aws-sdk-go-v2/service/sts" || p == "github.com/aws/aws-sdk-go-v2/feature/ec2/imds" {
			t.Errorf("app/cmd/charge links %s", p)
		}
	}
	if !dynamodb {
		t.Fatalf("go list -deps ../cmd/charge has no DynamoDB client; the test is not looking at a bootstrap:\n%s", out)
	}
}

// streamCore is the stream sources' shared core.
const streamCore = "github.com/idempotent-consumer/idempotent-consumer/lambda/internal/stream"

// TestAQueueConsumerLinksOnlyItsSource: a queue consumer's bootstrap
// (app/cmd/charge, on sqsbatch.Start) links its source and the SDK's SQS
// client (the visibility changer's), and none of the other shapes' code: no
// HTTP handler, webhook verifier, Secrets Manager client, stream source
// (kinesis, dynamodbstream, their core), saga step, nor the other
// queue-fed sources (EventBridge events, S3 notifications); the bootstrap
// holds what its source runs (issue 32).
func TestAQueueConsumerLinksOnlyItsSource(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../../app/cmd/charge").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const lib = "github.com/idempotent-consumer/idempotent-consumer/lambda/"
	const sqsClient = "github.com/aws/aws-sdk-go-v2/service/sqs" // the visibility changer's
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, lib+"sqsbatch") || !slices.Contains(deps, sqsClient) {
		t.Fatalf("go list -deps ../cmd/charge has no sqsbatch or no SQS client; the test is not looking at a queue consumer:\n%s", out)
	}
	for _, other := range []string{lib + "httpkey", lib + "webhook", lib + "endpoint", lib + "kinesis", lib + "dynamodbstream", streamCore, lib + "step", lib + "eventbridge", lib + "s3event",
		"github.com/aws/aws-sdk-go-v2/service/secretsmanager", "github.com/aws/aws-sdk-go-v2/service/kinesis"} {
		if slices.Contains(deps, other) {
			t.Errorf("app/cmd/charge, a queue consumer, links %s", other)
		}
	}
}

// TestAStreamConsumerLinksOnlyItsSource: a stream consumer's bootstrap links
// its own stream source and none of the other shapes' code: not the other
// stream source, nor the queue source, HTTP handler, webhook verifier,
// Secrets Manager, SQS or Kinesis clients, or saga step. app/cmd/notify is
// a DynamoDB stream consumer's main; a Kinesis consumer's main links what
// package kinesis links, and its own imports.
func TestAStreamConsumerLinksOnlyItsSource(t *testing.T) {
	const lib = "github.com/idempotent-consumer/idempotent-consumer/lambda/"
	shapes := []string{lib + "sqsbatch", lib + "httpkey", lib + "webhook", lib + "endpoint", lib + "step",
		"github.com/aws/aws-sdk-go-v2/service/secretsmanager", "github.com/aws/aws-sdk-go-v2/service/sqs", "github.com/aws/aws-sdk-go-v2/service/kinesis"}
	for _, c := range []struct{ main, own, other string }{
		{"../../../app/cmd/notify", lib + "dynamodbstream", lib + "kinesis"},
		{"../../kinesis", lib + "kinesis", lib + "dynamodbstream"},
	} {
		out, err := exec.Command("go", "list", "-deps", c.main).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		deps := strings.Fields(string(out))
		if !slices.Contains(deps, c.own) || !slices.Contains(deps, streamCore) {
			t.Fatalf("go list -deps %s has no %s on the stream core; the test is not looking at a stream consumer:\n%s", c.main, c.own, out)
		}
		for _, other := range append([]string{c.other}, shapes...) {
			if slices.Contains(deps, other) {
				t.Errorf("%s, a stream consumer on %s, links %s", c.main, c.own, other)
			}
		}
	}
}
