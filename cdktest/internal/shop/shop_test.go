package shop_test

import (
	"os"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest/nagtest"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest/internal/shop"
)

// TestMain closes jsii once, after every test; it runs no test when jsii
// would run on an end-of-life Node.js, and says what to do.
func TestMain(m *testing.M) { os.Exit(cdktest.Main(m)) }

// newStack builds the stack in an app of its own, with your cdk.json's
// feature flags; a jsii panic fails the test with its message.
func newStack(t *testing.T, nag bool) awscdk.Stack {
	t.Helper()
	app, err := cdktest.NewApp(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var stack awscdk.Stack
	cdktest.Must(t, func() {
		stack = shop.NewShopStack(app, "Shop")
		if nag {
			nagtest.AddPacks(app) // AwsSolutions and Serverless
		}
	})
	return stack
}

// TestSnapshot compares the template with testdata/Shop.template.json
// (asset hashes masked); `go test -run Snapshot -update` rewrites it.
func TestSnapshot(t *testing.T) {
	cdktest.Snapshot(t, cdktest.Template(t, newStack(t, false)), "testdata/Shop.template.json")
}

// TestCDKNag fails with every unsuppressed cdk-nag finding: an error, which
// fails the synthesis, is reported like a warning.
func TestCDKNag(t *testing.T) {
	nagtest.NoFindings(t, newStack(t, true))
}
