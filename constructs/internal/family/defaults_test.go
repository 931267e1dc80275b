package family

import (
	"fmt"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/propdoc"
)

// TestPropsDocStatesTheDefaults: users read each default in core.Props's
// doc comments, and the construct applies the constants of defaults.go: a
// changed constant fails until the doc says the new value.
func TestPropsDocStatesTheDefaults(t *testing.T) {
	for field, want := range map[string][]string{
		"MemorySize":                   {fmt.Sprintf("Default: %d MiB.", DefaultMemorySize)},
		"Timeout":                      {fmt.Sprintf("Default: %v seconds;", DefaultTimeout.Seconds()), fmt.Sprintf("%v seconds for an IdempotentEndpoint", DefaultEndpointTimeout.Seconds())},
		"ReservedConcurrentExecutions": {fmt.Sprintf("%d for an IdempotentEndpoint.", DefaultEndpointReservedConcurrency)},
		"LogRetention":                 {"Default: awslogs.RetentionDays_" + string(DefaultLogRetention) + ","},
		"RemovalPolicy":                {"Default: awscdk.RemovalPolicy_" + string(DefaultRemovalPolicy) + ","},
		"LogLevel":                     {"Default: awslambda.ApplicationLogLevel_" + string(DefaultLogLevel) + "."},
		"Tracing":                      {"Default: awslambda.Tracing_" + string(DefaultTracing) + ","},
		"TableFixedKeyValue":           {fmt.Sprintf("%q and the Namespace as the partition key's", DefaultPartitionValuePrefix)},
	} {
		doc, err := propdoc.Field("../../core/props.go", "Props", field)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(doc, w) {
				t.Errorf("core.Props.%s's doc does not state its default %q: %s", field, w, doc)
			}
		}
	}
}
