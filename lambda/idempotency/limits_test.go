package idempotency_test

import (
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// TestResultBoundIsWhatAnItemHolds: Config.MaxResultBytes is accepted up to
// limits.LargestResultBytes, what a DynamoDB item holds beside the record
// (dynamostore's TestTheLargestRecordFitsAnItem sums it), and refused past
// it, in the words the contract uses at synth and at init.
func TestResultBoundIsWhatAnItemHolds(t *testing.T) {
	cfg := func(n int) idempotency.Config {
		return idempotency.Config{Namespace: "orders", Window: time.Hour, TTLAfterWindow: time.Hour, LeaseMax: time.Minute, FinishBudget: time.Second, MaxResultBytes: n}
	}
	if problems := cfg(limits.LargestResultBytes).Problems(); len(problems) > 0 {
		t.Errorf("MaxResultBytes %d: %q", limits.LargestResultBytes, problems)
	}
	problems := cfg(limits.LargestResultBytes + 1).Problems()
	for _, want := range []string{"MaxResultBytes 350001 is out of range", "to 350000, what a DynamoDB item holds beside the record"} {
		if len(problems) != 1 || !strings.Contains(problems[0], want) {
			t.Errorf("MaxResultBytes %d: %q; want %q", limits.LargestResultBytes+1, problems, want)
		}
	}
}
