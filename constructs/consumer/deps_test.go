package consumer_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestTheConstructsLinkNoSDKAndNoCDKNag: no package of constructs/..., nor
// any of its tests, depends on the AWS SDK or on cdk-nag, so that neither
// is in the package graph of a CDK app that uses the constructs (the
// record's attribute names come from the leaf package
// internal/schema; the suppressions are written as cdk-nag's
// metadata by constructs/internal/nag). The tests that need either live in
// internal/testkit/apptest.
func TestTheConstructsLinkNoSDKAndNoCDKNag(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test", "../...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	constructs, cdk := 0, false
	for _, p := range deps {
		switch {
		case strings.HasPrefix(p, "github.com/idempotent-consumer/idempotent-consumer/constructs/"):
			constructs++
		case strings.HasPrefix(p, "github.com/aws/aws-cdk-go/awscdk/v2"):
			cdk = true
		}
	}
	if constructs < 3 || !cdk {
		t.Fatalf("go list -deps -test ../... lists %d packages of constructs/ and CDK %t; the test is not looking at the constructs:\n%s", constructs, cdk, out)
	}
	for _, p := range deps {
		if strings.Contains(p, "aws-sdk-go-v2") || strings.Contains(p, "cdk-nag") {
			t.Errorf("constructs/... depends on %s", p)
		}
	}
}
