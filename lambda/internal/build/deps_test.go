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

// TestAQueueConsumerLinksOnlyItsSource: a queue consumer's bootstrap
// (app/cmd/charge, on sqsbatch.Start) links none of the other shapes' code:
// no HTTP handler, webhook verifier, Secrets Manager client, stream adapter,
// saga step, nor the other queue-fed sources (EventBridge events, S3
// notifications); the bootstrap holds what its source runs (issue 32). Nor
// the SDK's SQS client: the visibility changer speaks SQS's JSON protocol
// itself (lambda/internal/sqsapi), on the signer, retryer and transport
// the DynamoDB client links anyway.
func TestAQueueConsumerLinksOnlyItsSource(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../../app/cmd/charge").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const lib = "github.com/idempotent-consumer/idempotent-consumer/lambda/"
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, lib+"sqsbatch") || !slices.Contains(deps, lib+"internal/sqsapi") {
		t.Fatalf("go list -deps ../cmd/charge has no sqsbatch or no sqsapi; the test is not looking at a queue consumer:\n%s", out)
	}
	for _, other := range []string{lib + "httpkey", lib + "webhook", lib + "endpoint", lib + "streambatch", lib + "step", lib + "eventbridge", lib + "s3event",
		"github.com/aws/aws-sdk-go-v2/service/secretsmanager", "github.com/aws/aws-sdk-go-v2/service/kinesis"} {
		if slices.Contains(deps, other) {
			t.Errorf("app/cmd/charge, a queue consumer, links %s", other)
		}
	}
	const sqsClient = "github.com/aws/aws-sdk-go-v2/service/sqs"
	for _, p := range deps {
		if p == sqsClient || strings.HasPrefix(p, sqsClient+"/") {
			t.Errorf("app/cmd/charge, a queue consumer, links the SDK's SQS client (%s)", p)
		}
	}
}
