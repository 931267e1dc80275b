package local

import (
	"os"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
)

// TestMain closes jsii, the Node.js process behind the CDK calls of
// TestBootstrapStartsWithSynthesizedSettings, once, after every test (jsii
// is not thread-safe, so the tests of this package that synthesize do not
// run in parallel), and runs no test when jsii would run on an end-of-life
// Node.js (cdktest.Main says what to do).
func TestMain(m *testing.M) { os.Exit(cdktest.Main(m)) }
