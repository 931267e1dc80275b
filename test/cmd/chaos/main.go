// Command chaos runs the deterministic at-least-once simulation (package
// chaos) once and prints its counters; its last line is the verdict:
//
//	chaos: seed=<S> facts=<N> deliveries=<D> crashes=<C> store_faults=<F> whole_batch_failures=<W> late_redeliveries=<R> expired=<E> double_effects=<X> lost=<L> stuck=<K> violations=<V> eb_producer_retries=… eb_rule_retries=… s3_repeats=… s3_multi_record=… record_failures=… s3_test_events=… sources_facts=<N> sources_double_effects=<X'> sources_lost=<L'> sources_stuck=<K'> sources_violations=<V'>
//
// W counts the invocations failed as a whole after a record completed, R the
// redeliveries of completed facts' messages older than their window, E the
// records the adapter judged expired. The sources_ part is the sources
// simulation's (chaos.RunSources: N more facts from an EventBridge rule and
// an S3 bucket) with its faults counted. It exits 0 only when X, L, K, V and
// their sources_ counterparts are all 0. The same seed replays the same run.
//
//	go run ./cmd/chaos -seed 7 -facts 10000
//	go run ./cmd/chaos -seed 7 -facts 2000 -store dynamodb   # on kumo, in process
//
// With -mode saga, it runs the saga simulation instead (chaos.RunSaga:
// -sagas orders through reserve stock → charge → ship on a model of Step
// Functions, with package step's handlers), then the same seed with each
// sabotage: execution-key (steps keyed by the execution's ARN) and no-guard
// (a guard whose store forgets every record, so that every call runs the
// effect again under the same idempotency key); it prints each run's
// report, whose last line is
//
//	saga: seed=<S> store=<store> [sabotage=<name>] sagas=<N> executions=… duplicate_starts=… restarts=… steps=… retries=… timeouts=… crashes=… store_faults=… redrives=… compensations=… key_absorbed=… double_effects=<X> lost=<L> stuck=<K>
//
// (key_absorbed: re-runs of an effect under its key after an invocation
// died or failed to complete its record, which the downstream absorbs) and
// exits 0 only when the first keeps its invariants (X, L and K all 0) and
// every sabotage breaks them. With -sabotage execution-key or no-guard it
// runs only that sabotage, and exits 1 as its invariants break:
//
//	go run ./cmd/chaos -mode saga -seed 1 -sagas 10000
//
// With -regions, it runs the two-Region mode (chaos.Config.Regions: every
// fact delivered in us-east-1 and us-east-2, both Regions' guards on one
// table in multi-Region strong consistency, with Region-local crashes and
// throttling, a Region cut off from the table, slow replicas and
// ReplicatedWriteConflictException), then the same seed with the mrec
// sabotage (a store per Region, replicated last writer wins after a lag);
// each report ends with
//
//	regions: seed=<S> facts=<N> table=<mrsc|mrec> regions=… deliveries=… crashes=… store_faults=… cut_off=… write_conflicts=… conflicts_exhausted=… slow_replicas=… replicated=… lww_overwrites=… lag_long=… double_grants=<G> double_effects=<X> lost=<L> stuck=<K> violations=<V>
//
// and it exits 0 only when the MRSC run keeps its invariants and the mrec
// run shows double effects:
//
//	go run ./cmd/chaos -regions -seed 1 -facts 10000
//
// With -outage, the charge consumer's payment provider is down for that
// span of virtual time (from -outage-start, default half of it), and the
// seed runs twice, with the queue's fixed visibility timeout and with the
// adapter's backoff; the command prints both reports, then the two side by
// side (chaos.OutageTable), and exits 0 only when both keep the invariants
// and the backoff dead-letters fewer messages:
//
//	go run ./cmd/chaos -seed 1 -facts 300 -outage 1h
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/test/chaos"
	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

func main() {
	seed := flag.Int64("seed", 0, "random seed; 0 picks one from the clock (printed either way)")
	facts := flag.Int("facts", 10000, "number of business facts published")
	store := flag.String("store", "memory", "idempotency store: memory or dynamodb (kumo, in process)")
	scale := flag.Float64("fault-scale", 1, "multiply the probability of every fault and crash")
	sabotage := flag.String("sabotage", "", "break the system on purpose to see the invariants fail: with -mode saga execution-key or no-guard; otherwise token-as-key, unfenced-complete, effect-outside-tx, ignore-failures, short-window, foreign-retry, effect-to-lease, no-age, blocking-store (fails as a deadlock after a minute), or for the sources simulation delete-any-record or raw-events")
	outage := flag.Duration("outage", 0, "a downstream outage: the charge provider fails for this long (virtual time); runs the seed with fixed visibility and with backoff, and prints them side by side")
	outageStart := flag.Duration("outage-start", 0, "with -outage: when the outage starts, from the start of the run (default: half the outage)")
	mode := flag.String("mode", "queues", "queues (the consumers and sources) or saga (the saga steps on Step Functions)")
	sagas := flag.Int("sagas", 10000, "with -mode saga: number of orders")
	regions := flag.Bool("regions", false, "two Regions: every fact delivered in us-east-1 and us-east-2 on one MRSC table, then the same seed with the mrec sabotage (-sabotage mrec: that alone)")
	flag.Parse()
	if *outage > 0 {
		factsSet := false
		flag.Visit(func(f *flag.Flag) { factsSet = factsSet || f.Name == "facts" })
		if !factsSet {
			*facts = 1000
		}
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano() % 1_000_000
	}
	if *mode == "saga" {
		os.Exit(runSaga(chaos.SagaConfig{Seed: *seed, Sagas: *sagas, Store: *store, Sabotage: *sabotage}))
	}
	if *mode != "queues" {
		fmt.Fprintf(os.Stderr, "chaos: unknown -mode %q (queues or saga)\n", *mode)
		os.Exit(2)
	}
	cfg := chaos.Config{Seed: *seed, Facts: *facts, Store: *store, FaultScale: *scale, Sabotage: *sabotage, Regions: *regions}
	replay := ""
	if cfg.Regions {
		replay = " -regions"
	}
	fmt.Printf("chaos: seed %d, %d facts, %s store; replay: cd test && go run ./cmd/chaos -seed %d -facts %d -store %s -fault-scale %g%s\n",
		*seed, *facts, *store, *seed, *facts, *store, *scale, replay)
	if *store == "dynamodb" {
		client, stop := kumotest.StartDynamoDB(false) // the simulation injects its own faults
		defer stop()
		cfg.DynamoDB = client
	}
	if *outage > 0 {
		cfg.Outage, cfg.OutageStart = *outage, *outageStart
		os.Exit(runOutage(cfg))
	}
	if cfg.Regions && cfg.Sabotage == "" {
		os.Exit(runRegions(cfg))
	}
	sum, err := chaos.Run(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
	}
	if sum == nil {
		os.Exit(2)
	}
	sum.Report(os.Stdout)
	if err != nil || !sum.OK() {
		os.Exit(1)
	}
}

// runRegions runs cfg in two Regions on the MRSC table, then the same seed
// with the mrec sabotage (on the memory store, whatever cfg's: it models a
// store per Region), prints both reports and returns the exit code: 0 only
// when the first keeps its invariants and the sabotage shows double
// effects.
func runRegions(cfg chaos.Config) int {
	code := 0
	for _, sabotage := range []string{"", "mrec"} {
		cfg.Sabotage = sabotage
		if sabotage == "mrec" {
			cfg.Store = "memory"
		}
		sum, err := chaos.Run(context.Background(), cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "chaos:", err)
		}
		if sum == nil {
			return 2
		}
		sum.Report(os.Stdout)
		switch {
		case sabotage == "" && (err != nil || !sum.OK()):
			code = 1
		case sabotage != "" && sum.DoubleEffects == 0:
			fmt.Println("chaos: the mrec sabotage showed no double effect")
			code = 1
		}
	}
	return code
}

// runOutage runs cfg with fixed visibility and with backoff, prints both
// reports and the table, and returns the exit code.
func runOutage(cfg chaos.Config) int {
	var sums [2]*chaos.Summary
	code := 0
	for i, fixed := range []bool{true, false} {
		cfg.FixedVisibility = fixed
		sum, err := chaos.Run(context.Background(), cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "chaos:", err)
		}
		if sum == nil {
			return 2
		}
		fmt.Printf("--- %s\n", map[bool]string{true: "fixed visibility", false: "backoff"}[fixed])
		sum.Report(os.Stdout)
		if err != nil || !sum.OK() {
			code = 1
		}
		sums[i] = sum
	}
	fmt.Println()
	chaos.OutageTable(os.Stdout, sums[0], sums[1])
	if sums[1].Outage.DeadLettered >= sums[0].Outage.DeadLettered && sums[0].Outage.DeadLettered > 0 {
		fmt.Println("chaos: the backoff dead-lettered no fewer messages than the fixed visibility")
		code = 1
	}
	return code
}

// runSaga runs the saga simulation, and unless cfg.Sabotage is set the same
// seed with the sabotages execution-key and no-guard, prints their reports
// and returns the exit code.
func runSaga(cfg chaos.SagaConfig) int {
	if cfg.Store == "dynamodb" {
		client, stop := kumotest.StartDynamoDB(false) // the simulation injects its own faults
		defer stop()
		cfg.DynamoDB = client
	}
	fmt.Printf("chaos: saga mode, seed %d, %d sagas, %s store; replay: cd test && go run ./cmd/chaos -mode saga -seed %d -sagas %d -store %s\n",
		cfg.Seed, cfg.Sagas, cfg.Store, cfg.Seed, cfg.Sagas, cfg.Store)
	runs := []chaos.SagaConfig{cfg}
	if cfg.Sabotage == "" {
		for _, name := range []string{"execution-key", "no-guard"} {
			sab := cfg
			sab.Sabotage = name
			runs = append(runs, sab)
		}
	}
	code := 0
	for _, c := range runs {
		sum, err := chaos.RunSaga(context.Background(), c)
		if err != nil {
			fmt.Fprintln(os.Stderr, "chaos:", err)
			return 2
		}
		sum.Report(os.Stdout)
		switch {
		case c.Sabotage == "" && !sum.OK(), c.Sabotage != "" && cfg.Sabotage != "" && !sum.OK():
			code = 1
		case c.Sabotage != "" && cfg.Sabotage == "" && sum.OK():
			fmt.Println("chaos: the sabotage went unseen")
			code = 1
		}
	}
	return code
}
