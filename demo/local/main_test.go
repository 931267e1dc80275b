package local

import (
	"os"
	"testing"

	"github.com/aws/jsii-runtime-go"
)

// TestMain closes jsii, the Node.js process behind the CDK calls of
// TestBootstrapStartsWithSynthesizedSettings, once, after every test: jsii
// is not thread-safe, so the tests of this package that synthesize do not
// run in parallel.
func TestMain(m *testing.M) {
	code := m.Run()
	jsii.Close()
	os.Exit(code)
}
