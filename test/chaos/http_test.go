package chaos_test

import (
	"context"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/test/chaos"
)

// TestHTTPClientsRetry: clients that retry on timeouts, 409s and 5xx against
// an idempotent endpoint under store faults and killed invocations each end
// with the same 201, and each key is charged once; the same seed gives the
// same run. Without the guard (the sabotage), the invariants break.
func TestHTTPClientsRetry(t *testing.T) {
	var conflicts, timeouts, killed, replays int
	for _, seed := range []int64{1, 2, 3, 4} {
		sum, err := chaos.RunHTTP(context.Background(), chaos.HTTPConfig{Seed: seed, Keys: 40, Clients: 3})
		var report strings.Builder
		if sum != nil {
			sum.Report(&report)
		}
		if err != nil || !sum.OK() {
			t.Fatalf("seed %d: %v\n%s", seed, err, report.String())
		}
		t.Log(report.String())
		conflicts += sum.Statuses[409]
		timeouts += sum.ClientTimeouts
		killed += sum.Killed
		replays += sum.Replays
		again, _ := chaos.RunHTTP(context.Background(), chaos.HTTPConfig{Seed: seed, Keys: 40, Clients: 3})
		var second strings.Builder
		again.Report(&second)
		if second.String() != report.String() {
			t.Fatalf("seed %d is not deterministic:\n%s\n%s", seed, report.String(), second.String())
		}
	}
	if conflicts == 0 || timeouts == 0 || killed == 0 || replays == 0 {
		t.Fatalf("the runs did not exercise every path: %d 409s, %d client timeouts, %d killed invocations, %d replays", conflicts, timeouts, killed, replays)
	}
	sab, err := chaos.RunHTTP(context.Background(), chaos.HTTPConfig{Seed: 1, Keys: 40, Clients: 3, Sabotage: "no-guard"})
	if err != nil || sab.OK() {
		var report strings.Builder
		sab.Report(&report)
		t.Fatalf("the sabotage went unseen: %v\n%s", err, report.String())
	}
}
