package sweep_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestTheSweeperLinksNoSource: the sweeper's bootstrap (cmd/sweeper) holds
// the DynamoDB client and the sweep, and none of the consumers' code: no
// queue, stream, HTTP, webhook or step source, nor their cores, nor the SQS,
// Kinesis or Secrets Manager clients, nor the SDK's package config.
func TestTheSweeperLinksNoSource(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./cmd/sweeper").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	const lib = "github.com/idempotent-consumer/idempotent-consumer/lambda/"
	const cores = "github.com/idempotent-consumer/idempotent-consumer/lambda/internal/" // the sources' shared cores
	if !slices.Contains(deps, lib+"sweep") || !slices.Contains(deps, "github.com/aws/aws-sdk-go-v2/service/dynamodb") {
		t.Fatalf("go list -deps ./cmd/sweeper has no sweep or no DynamoDB client; the test is not looking at the sweeper:\n%s", out)
	}
	for _, p := range deps {
		for _, other := range []string{lib + "sqsbatch", lib + "httpkey", lib + "webhook", lib + "endpoint", lib + "kinesis", lib + "dynamodbstream",
			lib + "step", lib + "eventbridge", lib + "s3event", cores + "queue", cores + "stream", cores + "batch",
			"github.com/aws/aws-sdk-go-v2/service/sqs", "github.com/aws/aws-sdk-go-v2/service/kinesis", "github.com/aws/aws-sdk-go-v2/service/secretsmanager",
			"github.com/aws/aws-sdk-go-v2/config"} {
			if p == other {
				t.Errorf("the sweeper links %s", p)
			}
		}
	}
}
