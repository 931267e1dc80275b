package build_test

import (
	"os/exec"
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
