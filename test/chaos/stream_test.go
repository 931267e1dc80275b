package chaos_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/test/chaos"
)

// TestStream runs the stream mode over 10,000 facts for three seeds: no
// double effect, nothing lost (every record completed, absorbed as a
// duplicate, or in the on-failure destination), nothing stuck, per-key
// order of effects kept; and the run must have met every mechanism it
// models (replays, bisections, splits, merges, aged and retried-out records
// in the destination, replays from it).
func TestStream(t *testing.T) {
	seen := map[string]int{}
	for _, seed := range []int64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			facts := 10000
			if raceDetector && seed > 1 {
				facts = 3000
			}
			sum := chaos.RunStream(context.Background(), chaos.StreamConfig{Seed: seed, Facts: facts})
			var report strings.Builder
			sum.Report(&report)
			t.Log(sum.Line())
			if !sum.OK() {
				t.Fatalf("invariants broken:\n%s", report.String())
			}
			for name, n := range map[string]int{"replayed records": sum.Replayed, "duplicates": sum.Duplicates, "bisections": sum.Bisections,
				"splits": sum.Splits, "merges": sum.Merges, "on-failure records": sum.OnFailure, "aged records": sum.Aged,
				"records replayed from the bucket": sum.ReplayedFromBucket, "facts recovered by the replay": sum.Recovered, "poison records": sum.Poison} {
				seen[name] += n
			}
		})
	}
	// Together, the runs meet every mechanism the model has.
	for name, n := range seen {
		if n == 0 {
			t.Errorf("no run has %s: the model did not exercise it", name)
		}
	}
}

// TestStreamSabotageIsCaught: each sabotage breaks the check it names.
func TestStreamSabotageIsCaught(t *testing.T) {
	for sabotage, want := range map[string]string{
		"transport-key":   "double effect",
		"lexical":         "lost",
		"children-first":  "order",
		"drop-aged":       "lost",
		"lambda-defaults": "stuck",
	} {
		t.Run(sabotage, func(t *testing.T) {
			sum := chaos.RunStream(context.Background(), chaos.StreamConfig{Seed: 1, Facts: 3000, Sabotage: sabotage})
			t.Log(sum.Line())
			found := false
			for _, p := range sum.Problems {
				if strings.HasPrefix(p, want) {
					found = true
					t.Log(p)
					break
				}
			}
			if !found {
				var report strings.Builder
				sum.Report(&report)
				t.Errorf("sabotage %s: no %q problem found:\n%s", sabotage, want, report.String())
			}
		})
	}
}
