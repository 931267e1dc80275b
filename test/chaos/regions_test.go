package chaos_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/test/chaos"
)

// TestRegions is the short version of `make chaos-regions`: every fact
// delivered in two Regions whose guards share one table in multi-Region
// strong consistency, with twice the faults. Every invariant must hold
// (0 double effects, 0 lost, 0 stuck), and together the runs must deliver
// in both Regions, cut us-east-2 off from the table, answer racing
// writes with ReplicatedWriteConflictException and wait for slow replicas.
// One run goes through dynamostore on kumo, whose DynamoDB client's
// transport answers the conflicts: there dynamostore's own retry must have
// sent a write the most times it sends one (limits.ConflictAttempts) and
// given up, a store error wrapping dynamostore.ErrReplicatedConflict. Its
// race window is raised to a second so that the retry's waits (their caps
// add up to 1.775s) sometimes end inside it: with the default 50ms it never
// gives up at 60 facts. No run makes more attempts than the store.
func TestRegions(t *testing.T) {
	seen := map[string]int{}
	for _, c := range []struct {
		store  string
		seed   int64
		facts  int
		window time.Duration
	}{{"memory", 1, 300, 0}, {"memory", 2, 300, 0}, {"memory", 3, 300, 0}, {"dynamodb", 1, 20, 2 * time.Second}} {
		t.Run(fmt.Sprintf("%s/seed=%d", c.store, c.seed), func(t *testing.T) {
			sum := run(t, chaos.Config{Seed: c.seed, Facts: c.facts, Store: c.store, FaultScale: 2, Regions: true, RaceWindow: c.window})
			t.Log(sum.Line())
			if sum.Regions.Table != "mrsc" || len(sum.Regions.Deliveries) != 2 || sum.Regions.Deliveries[0] == 0 || sum.Regions.Deliveries[1] == 0 {
				t.Errorf("not two Regions on an MRSC table: %+v", sum.Regions)
			}
			if sum.Regions.DoubleGrants != 0 {
				t.Errorf("%d reservations granted while another of the same fact was live", sum.Regions.DoubleGrants)
			}
			if most := sum.Regions.MostConflicts; most > limits.ConflictAttempts {
				t.Errorf("a write was answered with the conflict %d times; the store sends one at most %d times", most, limits.ConflictAttempts)
			}
			if c.store == "dynamodb" && (sum.Faults["replicated_write_conflict_exhausted"] == 0 || sum.Regions.MostConflicts != limits.ConflictAttempts) {
				t.Errorf("dynamostore gave up on %d writes, the most conflicts of one write %d; want some, and %d (the store's own retry, to its last attempt)",
					sum.Faults["replicated_write_conflict_exhausted"], sum.Regions.MostConflicts, limits.ConflictAttempts)
			}
			for _, k := range []string{"region_cut_off", "replicated_write_conflict", "mrsc_slow_replica"} {
				seen[k] += sum.Faults[k]
			}
		})
	}
	for k, n := range seen {
		if n == 0 {
			t.Errorf("no run injected %s", k)
		}
	}
}

// TestRegionsMrecIsCaught: the guard on a global table in multi-Region
// eventual consistency (the mrec sabotage: a store per Region, replicated
// last writer wins after a lag) runs facts delivered in both Regions twice,
// at every seed used.
func TestRegionsMrecIsCaught(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		sum := run(t, chaos.Config{Seed: seed, Facts: 300, Sabotage: "mrec", FaultScale: 2})
		t.Log(sum.Line())
		if sum.DoubleEffects == 0 || sum.Regions.DoubleGrants == 0 || sum.Regions.Table != "mrec" {
			t.Errorf("seed %d: the mrec sabotage went unnoticed: %s", seed, sum.Line())
		}
	}
}

// TestRegionsDeterministic: a seed replays the same two-Region run, MRSC
// and mrec, step for step, with one processor or several. (The problems
// found name the reservations' owner tokens, which are random: compared
// by their count, Violations.)
func TestRegionsDeterministic(t *testing.T) {
	for _, sabotage := range []string{"", "mrec"} {
		cfg := chaos.Config{Seed: 42, Facts: 100, FaultScale: 2, Regions: true, Sabotage: sabotage}
		a := run(t, cfg)
		procs := runtime.GOMAXPROCS(1)
		b := run(t, cfg)
		runtime.GOMAXPROCS(procs)
		a.Wall, b.Wall = 0, 0
		a.Problems, b.Problems = nil, nil
		if fmt.Sprintf("%+v", *a) != fmt.Sprintf("%+v", *b) {
			t.Errorf("%q: two runs of seed 42 differ:\n%+v\n%+v", sabotage, *a, *b)
		}
	}
}
