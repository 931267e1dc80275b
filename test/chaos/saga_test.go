package chaos_test

import (
	"context"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/test/chaos"
)

// TestSaga: a short run of the saga simulation on each store keeps every
// invariant (no double effect, no lost compensation, no stuck execution)
// while the runs retry after effects, start orders twice, redrive failed
// executions and crash invocations, the downstream absorbing by key only
// the re-runs after an invocation that died or failed to complete its
// record; the same seed gives the same run; and each sabotage is caught
// with double effects: the one that keys steps by the execution's ARN, and
// no-guard, whose every call runs the effect again under the same key.
func TestSaga(t *testing.T) {
	var redrives, duplicates, crashes, timeouts, replays, inProgress, absorbed int
	crashed := map[string]int{} // by step and by point
	for _, tc := range []struct {
		seed  int64
		store string
	}{{1, "memory"}, {2, "memory"}, {3, "dynamodb"}} {
		sum := runSaga(t, chaos.SagaConfig{Seed: tc.seed, Sagas: 300, Store: tc.store})
		if !sum.OK() {
			t.Fatalf("seed %d: %s", tc.seed, report(sum))
		}
		t.Log(report(sum))
		redrives += sum.Redrives
		duplicates += sum.DuplicateStarts
		crashes += sum.Crashes
		timeouts += sum.Timeouts
		replays += sum.Replays
		inProgress += sum.InProgress
		absorbed += sum.KeyAbsorbed
		for k, n := range sum.CrashPoints {
			step, point, _ := strings.Cut(k, "/")
			crashed[step] += n
			crashed[point] += n
		}
		if sum.Compensations == 0 || sum.Succeeded == 0 || sum.Compensated == 0 || sum.Rejected == 0 {
			t.Fatalf("seed %d: not every outcome was reached: %s", tc.seed, report(sum))
		}
		if tc.store == "memory" {
			if again := runSaga(t, chaos.SagaConfig{Seed: tc.seed, Sagas: 300, Store: tc.store}); report(again) != report(sum) {
				t.Fatalf("seed %d is not deterministic:\n%s\n%s", tc.seed, report(sum), report(again))
			}
		}
	}
	if redrives == 0 || duplicates == 0 || crashes == 0 || timeouts == 0 || replays == 0 || inProgress == 0 || absorbed == 0 {
		t.Fatalf("the runs did not exercise every path: %d redrives, %d duplicate starts, %d crashes, %d timeouts, %d replays, %d told in progress, %d re-runs absorbed by key",
			redrives, duplicates, crashes, timeouts, replays, inProgress, absorbed)
	}
	for _, where := range []string{"reserve-stock", "charge", "ship", "refund", "release-stock", "before-effect", "after-effect", "after-complete", "killed"} {
		if crashed[where] == 0 {
			t.Fatalf("no invocation crashed at %s: %v", where, crashed)
		}
	}
	for _, sabotage := range []string{"execution-key", "no-guard"} {
		sab := runSaga(t, chaos.SagaConfig{Seed: 1, Sagas: 300, Sabotage: sabotage})
		if sab.OK() || sab.DoubleEffects == 0 {
			t.Fatalf("the sabotage %s went unseen: %s", sabotage, report(sab))
		}
		t.Log(report(sab))
	}
}

func runSaga(t *testing.T, cfg chaos.SagaConfig) *chaos.SagaSummary {
	t.Helper()
	if cfg.Store == "dynamodb" {
		cfg.DynamoDB = ddb
	}
	sum, err := chaos.RunSaga(context.Background(), cfg)
	if err != nil {
		t.Fatalf("seed %d: %v", cfg.Seed, err)
	}
	return sum
}

func report(s *chaos.SagaSummary) string {
	var b strings.Builder
	s.Report(&b)
	return b.String()
}
