package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/idempotent-consumer/idempotent-consumer/test/chaos"
	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

var ddb *dynamodb.Client

func TestMain(m *testing.M) {
	client, stop := kumotest.StartDynamoDB(false) // the simulation injects its own faults
	ddb = client
	code := m.Run()
	stop()
	os.Exit(code)
}

// run runs one simulation and fails t, with the report and the command that
// replays the run, if an invariant broke.
func run(t *testing.T, cfg chaos.Config) *chaos.Summary {
	t.Helper()
	if cfg.Store == "dynamodb" {
		cfg.DynamoDB = ddb
	}
	sum, err := chaos.Run(context.Background(), cfg)
	if sum == nil {
		t.Fatalf("seed %d: %v", cfg.Seed, err)
	}
	var report strings.Builder
	sum.Report(&report)
	if err != nil || (!sum.OK() && cfg.Sabotage == "") {
		t.Errorf("seed %d, %s store: %v\n%s\nreplay: cd test && go run ./cmd/chaos -seed %d -facts %d -store %s -fault-scale %g",
			cfg.Seed, cfg.Store, err, report.String(), cfg.Seed, cfg.Facts, cfg.Store, cfg.FaultScale)
	}
	return sum
}

// TestChaos is the short version of `make chaos`: a few fixed seeds on each
// store, with fewer facts and twice the faults. Every invariant must
// hold, with at least 30% of the deliveries duplicates, and together the runs
// must inject every fault kind, crash at every crash point, let facts of the
// short window run again after it (from a late producer retry), bring
// messages of completed facts back after their window (whole-batch
// failures, redelivered after the visibility timeout) and judge them
// expired, and dead-letter the writes the store refuses as invalid.
func TestChaos(t *testing.T) {
	seen := map[string]int{}
	var ranAgain, finished, late, expired int
	for _, c := range []struct {
		store string
		seeds []int64
		facts int
	}{
		{"memory", []int64{1, 2, 3}, 250},
		{"dynamodb", []int64{1, 2}, 60},
	} {
		for _, seed := range c.seeds {
			t.Run(fmt.Sprintf("%s/seed=%d", c.store, seed), func(t *testing.T) {
				sum := run(t, chaos.Config{Seed: seed, Facts: c.facts, Store: c.store, FaultScale: 2})
				if share := sum.DuplicateShare(); share < 0.3 {
					t.Errorf("duplicates are %.1f%% of the deliveries, want at least 30%%", 100*share)
				}
				for k, n := range sum.Faults {
					seen[k] += n
				}
				for k, n := range sum.CrashPoints {
					seen["crash:"+k] += n
				}
				for k, n := range sum.DLQ {
					seen["dlq:"+k] += n
				}
				ranAgain += sum.RanAgainAfterWindow
				finished += sum.FinishedInBudget
				late += sum.LateRedeliveries
				expired += sum.Expired
			})
		}
	}
	for _, kind := range []string{
		"store_throttle", "store_5xx", "store_ambiguous", "store_spike_request", "store_spike_response",
		"provider_503", "provider_ambiguous", "effect_panic", "sns_duplicate", "producer_retry", "slow_delivery",
		"crash:before_reserve", "crash:after_reserve", "crash:during_effect", "crash:before_complete", "crash:after_complete",
		"crash:before_commit", "crash:after_commit", "crash:before_get", "crash:before_delete",
		"store_sdk_retry:reserve", "store_sdk_retry:complete", "store_sdk_retry:release", "store_sdk_retry:commit",
		"effect_until_deadline", "effect_at_deadline", "effect_deadline_exceeded",
		"tx_invalid", "dlq:wallet/tx_invalid", "dlq:points/tx_invalid",
		"whole_batch_failure", "dlq:stamps/expired", "dlq:points/expired",
	} {
		if seen[kind] == 0 {
			t.Errorf("no run injected %s", kind)
		}
	}
	if ranAgain == 0 {
		t.Error("no fact ran again after its window: the short window is not exercised")
	}
	if late == 0 || expired == 0 {
		t.Errorf("%d late redeliveries, %d records expired: the redelivery after the window is not exercised", late, expired)
	}
	if finished == 0 {
		t.Error("no complete or release followed an effect that ran until its context ended")
	}
}

// TestDeterministic: a seed replays the same run, step for step, whatever
// the Go scheduler does: the second run has a single processor
// (GOMAXPROCS 1).
func TestDeterministic(t *testing.T) {
	for _, c := range []struct {
		store string
		facts int
	}{{"memory", 100}, {"dynamodb", 20}} {
		cfg := chaos.Config{Seed: 42, Facts: c.facts, Store: c.store, FaultScale: 2}
		a := run(t, cfg)
		procs := runtime.GOMAXPROCS(1)
		b := run(t, cfg)
		runtime.GOMAXPROCS(procs)
		a.Wall, b.Wall = 0, 0
		if fmt.Sprintf("%+v", *a) != fmt.Sprintf("%+v", *b) {
			t.Errorf("%s: two runs of seed 42 differ:\n%+v\n%+v", c.store, *a, *b)
		}
	}
}

// TestStoresAgree: on an odd seed the memory store answers a failed
// condition without the old record, as kumo does, so the DynamoDB store on
// kumo and the memory store must give the same run, step for step: the
// simulation doubles as a differential test of the two stores.
func TestStoresAgree(t *testing.T) {
	cfg := chaos.Config{Seed: 43, Facts: 40, FaultScale: 2}
	mem := run(t, cfg)
	cfg.Store = "dynamodb"
	ddb := run(t, cfg)
	mem.Store, mem.OldOmitted, mem.Wall, ddb.Wall = "dynamodb", false, 0, 0
	if fmt.Sprintf("%+v", *mem) != fmt.Sprintf("%+v", *ddb) {
		t.Errorf("the stores disagree:\nmemory   %+v\ndynamodb %+v", *mem, *ddb)
	}
}

// TestSabotageIsCaught: with the system broken on purpose, the invariants
// fail. A simulation that cannot fail proves nothing. Some breakages need a
// rare coincidence to show (a stale completion needs a worker stalled past its
// lease inside a complete while a duplicate takes the fact over), so each
// sabotage gets a few seeds to be caught.
func TestSabotageIsCaught(t *testing.T) {
	for _, c := range []struct {
		sabotage string
		facts    int
		failed   func(s *chaos.Summary) bool
	}{
		{"token-as-key", 200, func(s *chaos.Summary) bool { return s.DoubleEffects > 0 }},
		{"unfenced-complete", 500, func(s *chaos.Summary) bool { return s.Violations > 0 }},
		{"effect-outside-tx", 200, func(s *chaos.Summary) bool { return s.DoubleEffects > 0 }},
		{"ignore-failures", 200, func(s *chaos.Summary) bool { return s.Lost > 0 && s.Violations > 0 }},
		{"short-window", 300, func(s *chaos.Summary) bool { return s.DoubleEffects > 0 }},
		{"foreign-retry", 500, func(s *chaos.Summary) bool { return s.Violations > 0 }},
		{"effect-to-lease", 300, func(s *chaos.Summary) bool { return s.Violations > 0 }},
		// The age check off: the queue's redeliveries after the window
		// (whole batches failed after records completed) run again.
		{"no-age", 300, func(s *chaos.Summary) bool { return s.DoubleEffects > 0 }},
	} {
		t.Run(c.sabotage, func(t *testing.T) {
			for seed := int64(1); seed <= 5; seed++ {
				if sum := run(t, chaos.Config{Seed: seed, Facts: c.facts, Sabotage: c.sabotage, FaultScale: 2}); c.failed(sum) {
					t.Logf("caught with seed %d: %s", seed, sum.Line())
					return
				}
			}
			t.Error("the sabotage went unnoticed in 5 runs")
		})
	}
}

// TestDeadlockFailsFast: a task that waits for something other than the
// scheduler (here a store call that never answers, the "blocking-store"
// sabotage) fails the run with ErrDeadlock and a message that names the task
// and the call it is stuck in, after Config.Stall of real time, instead of
// hanging until go test's timeout. The context is only a backstop.
func TestDeadlockFailsFast(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, err := chaos.Run(ctx, chaos.Config{Seed: 1, Facts: 20, Sabotage: "blocking-store", Stall: 3 * time.Second})
	if !errors.Is(err, chaos.ErrDeadlock) {
		t.Fatalf("got %v, want a deadlock (chaos.ErrDeadlock)", err)
	}
	want := regexp.MustCompile(`task (charge|wallet|points)-worker-\d+ has held its turn for 3s of real time without giving it back: it is blocked outside the scheduler \(last: reserve (charge|wallet|points)#o-\d+, at virtual time `)
	if !want.MatchString(err.Error()) {
		t.Errorf("the deadlock does not name the task and the store call it waits in:\n%v", err)
	}
	t.Log(err)
}
