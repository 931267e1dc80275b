package chaos_test

import (
	"fmt"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/test/chaos"
)

// TestSources is the short version of the sources simulation that `make
// chaos` runs beside the SNS fan-out: a few seeds, every invariant kept, and
// together they inject every fault of the sources (EventBridge producer and
// rule retries, S3 repeated notifications, multi-record notifications with
// one record failing, the test event, store faults, lost answers) and
// dead-letter the poison. A seed replays the same run.
func TestSources(t *testing.T) {
	seen := map[string]int{}
	dead := 0
	for seed := int64(1); seed <= 3; seed++ {
		sum := chaos.RunSources(seed, 400, "")
		if !sum.OK() {
			t.Errorf("seed %d: %s: %v", seed, sum.Line(), sum.Problems)
		}
		for k, n := range sum.Faults {
			seen[k] += n
		}
		dead += sum.DeadLettered
		if again := chaos.RunSources(seed, 400, ""); fmt.Sprintf("%+v", *again) != fmt.Sprintf("%+v", *sum) {
			t.Errorf("seed %d: two runs differ:\n%+v\n%+v", seed, *sum, *again)
		}
	}
	for _, k := range []string{"eventbridge_producer_retry", "eventbridge_rule_retry", "s3_repeat", "s3_multi_record", "record_failure", "s3_test_event", "store_throttle", "store_ambiguous", "crash_before_delete"} {
		if seen[k] == 0 {
			t.Errorf("no run injected %s", k)
		}
	}
	if dead == 0 {
		t.Error("no poison reached the DLQ")
	}
}

// TestSourcesSabotageIsCaught: an S3 message deleted as soon as one of its
// records succeeded (the message-level report ignored) loses the facts of
// its failed records, and the invariants say so.
//
// Events read as raw messages (the whole event hashed) make a producer's
// retry, a new event id with the same detail, a mismatch: a valid message in
// the DLQ.
func TestSourcesSabotageIsCaught(t *testing.T) {
	for _, c := range []struct {
		sabotage string
		caught   func(*chaos.SourcesSummary) bool
	}{
		{"delete-any-record", func(s *chaos.SourcesSummary) bool { return s.Lost > 0 }},
		{"raw-events", func(s *chaos.SourcesSummary) bool { return s.Violations > 0 && s.Outcomes["mismatch"] > 0 }},
	} {
		t.Run(c.sabotage, func(t *testing.T) {
			for seed := int64(1); seed <= 5; seed++ {
				if sum := chaos.RunSources(seed, 400, c.sabotage); c.caught(sum) {
					t.Logf("caught with seed %d: %s", seed, sum.Line())
					return
				}
			}
			t.Error("the sabotage went unnoticed in 5 runs")
		})
	}
}
