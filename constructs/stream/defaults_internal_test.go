package stream

import (
	"fmt"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/propdoc"
)

// TestPropsDocStatesTheDefaults: users read each default in the props' doc
// comments, and the construct applies the constants of props.go: a changed
// constant fails until the doc says the new value.
func TestPropsDocStatesTheDefaults(t *testing.T) {
	for field, want := range map[string]string{
		"BatchSize":                 fmt.Sprintf("Default: %d ", defaultBatchSize),
		"RetryAttempts":             fmt.Sprintf("Default: %d.", defaultRetryAttempts),
		"MaxRecordAge":              fmt.Sprintf("Default: %v hours.", defaultMaxRecordAge.Hours()),
		"FailureRetention":          fmt.Sprintf("Default: %v days.", defaultFailureRetention.Hours()/24),
		"ParallelizationFactor":     fmt.Sprintf("Default: %d.", defaultParallelizationFactor),
		"IteratorAgeAlarmThreshold": fmt.Sprintf("Default: %v minutes.", defaultIteratorAgeAlarm.Minutes()),
	} {
		doc, err := propdoc.Field("props.go", "IdempotentStreamConsumerProps", field)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(doc, want) {
			t.Errorf("IdempotentStreamConsumerProps.%s's doc does not state its default %q: %s", field, want, doc)
		}
	}
}
