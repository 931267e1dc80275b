package main

import (
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/saga/internal/sagatest"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/saga/names"
)

// TestStepRunsOncePerOrder: the step refund calls its service once per
// order, whatever Step Functions repeats, and names its failures
// (sagatest.CheckStep), on dynalite.
func TestStepRunsOncePerOrder(t *testing.T) {
	sagatest.CheckStep(t, names.Refund, service, "")
}
