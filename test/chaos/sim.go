// Package chaos is a seeded, deterministic simulation of the at-least-once
// path SNS → SQS → Lambda → idempotency store, run through the real library
// (idempotency.Guard and sqsbatch.Handler) under faults, with invariants
// checked per business fact at the end.
//
// What it models: a producer that retries (the same fact published again as a
// new message) and sometimes reuses an order id for other content; SNS fan-out
// to three consumers with duplicate and delayed (reordered) deliveries;
// standard SQS queues with visibility timeouts, receive counts and a redrive to
// a DLQ; several concurrent Lambda workers per queue receiving random batches;
// crashes of a worker at every step of a record (before and after each store
// call, during the effect, after completion and before the delete), and the
// Lambda runtime killing an invocation at its deadline; faults on every store
// call (throttling, 5xx, the ambiguous kind that took effect although the
// caller saw an error, and latency spikes that carry the clock past the
// worker's lease, which is shorter than the function timeout, so that a live
// worker outlives it); faults of the payment provider; and hostile messages.
//
// The seams of the guard (issue 8) have faults of their own, each counted
// under its name in Summary.Faults:
//
//   - "store_sdk_retry:<op>", for reserve, complete, release and commit: the
//     write is applied, its answer is lost, and the SDK's retryer sends the
//     same request again after a short backoff; the guard gets the second
//     answer (a failed condition on its own record, or nothing left to
//     release). The record's outcome is checked: a retried reserve or commit
//     is never reported in progress or a duplicate, a retried release never
//     a lost lease, a retried complete is processed. (The "store_ambiguous"
//     fault stays: the SDK gave up and the guard saw an error.)
//   - "effect_until_deadline", "effect_at_deadline" and
//     "effect_deadline_exceeded": the charge's provider call runs until the
//     effect's context ends (the charge made first and the effect succeeding
//     when its context is done; the provider answering at the very deadline;
//     or the effect returning the context's error, the charge made). The
//     context ends the guard's FinishBudget before the lease; the harness
//     checks that every effect's context leaves that budget, and that the
//     complete or release after such an effect is sent with at least the
//     budget left (Summary.FinishedInBudget).
//   - A business window shorter than the function timeout: the "points"
//     consumer keeps facts for 30s, with a 1m function timeout and a 10s
//     lease, so that redeliveries after the visibility timeout, late
//     producer retries and late conflicting variants find the window over.
//     A fact published again by its producer after its window legitimately
//     runs again (Summary.RanAgainAfterWindow); an effect applied while an
//     earlier application's window (from the time its completion was sent,
//     to the second the store keeps) was still open, or applied from a
//     message published before that application completed (the queue's
//     redelivery of a fact that ran), is a double effect.
//   - "whole_batch_failure" (issue 19): once a record of an invocation has
//     completed, a later record's effect kills the invocation as a whole (an
//     environment killed for memory, an effect that ignores its context):
//     nothing is deleted and SQS makes the whole batch visible again after
//     the visibility timeout (6m), completed records included. The "stamps"
//     consumer has the shortest window the construct allows with its
//     default lease, Window = LeaseMax = the function timeout (1m), so its
//     redeliveries (and points') come after the window: the adapter judges
//     each record by its age (the envelope's Timestamp, else the
//     SentTimestamp the harness sends) and ends those as expired, never run.
//     The invariants: no double effect; an expired record is at least as old
//     as its window (less limits.ClockSkewMargin) and its message ends in
//     the DLQ; a valid fact never applied because all its messages expired
//     is counted (Summary.ExpiredFacts), not lost. Summary.LateRedeliveries
//     counts the redeliveries of completed facts' messages older than the
//     window, the deliveries that would have run again; the "no-age"
//     sabotage sends no origin time, so that the adapter cannot judge them,
//     and must show double effects.
//   - "tx_invalid": an order with more line items than a transaction can
//     hold, which the transactional consumers turn into more writes than
//     DynamoDB allows in one transaction. dynamostore refuses them itself;
//     on the memory store the harness refuses them the same way (an error
//     wrapping idempotency.ErrTxInvalid, nothing written). Each such message
//     must be reported failed for that refusal (never a function error),
//     reach the DLQ, and is counted there as expected ("tx_invalid"), not
//     lost. The charge consumer processes the same order normally.
//
// A downstream outage (Config.Outage, outage.go): the charge's provider
// fails for a span of virtual time, and the adapters change the simulated
// queues' visibilities (their backoff, or none with Config.FixedVisibility);
// the queues then have a maxReceiveCount of 5.
//
// The consumers: "charge" runs a non-transactional effect that calls a fake
// payment provider which honours the idempotency key (Reservation.Key), as a
// real payment API does; "wallet" and "points" run a transactional effect (a
// balance increment and a per-order ledger entry, committed with the
// COMPLETED record by Guard.RunTx), with windows of 24h and 30s; "stamps"
// is another transactional consumer, with a window of 1m.
//
// Determinism: every simulated actor is a task of a cooperative,
// discrete-event scheduler (sched.go); exactly one runs at a time, and every
// random choice is drawn by the running task from one generator seeded with
// the seed. Store calls, effects and waits for a queue are the points where a
// task gives up its turn. Each task's code runs on one goroutine: a worker
// calls the adapter with a Concurrency of 1, which runs the batch's records
// one after another in batch order in the calling goroutine, so the schedule
// is the simulation's alone and the same seed gives the same run, step for
// step, whatever the Go scheduler does. A crash does not stop the library in
// its tracks: it marks the invocation dead, and every later store call and
// effect of it fails at once without reaching anything (sim.kill). A task that
// waits for anything but the scheduler is a deadlock: the run fails within
// Config.Stall of real time, naming the task and its last store call or
// effect.
//
// Limits of the model: the adapter compares its MinRemaining (by default the
// guard's FinishBudget plus a second) with the real clock, which the virtual
// deadlines make meaningless, so it never holds a record back; the guard's
// own rule (reserve nothing with no more than FinishBudget of the lease left)
// reads the virtual clock and does, so a record the adapter would have held
// back with between 2s and 3s left is started by the guard here, and one
// started later still is killed with its invocation. The effect's context
// carries its virtual deadline but never fires (its real-time timer is a
// century away): effects read ctx.Deadline() and honour it themselves, as a
// context-aware client would. The records of one batch run one after another
// (Concurrency 1): the concurrency modelled is that of workers and
// invocations (16 workers per queue, interleaved at every store call and
// effect), not that of records of one batch; the adapter's concurrent path
// (its semaphore, its message groups on goroutines of their own, the wait of
// a same-batch duplicate for its first record) is tested in package sqsbatch,
// not here. The completed-key cache is off (the guard here is shared by all
// of a consumer's workers, where each execution environment has its own);
// two variants of one order never share a batch. The SDK's retry is modelled
// behind the Store interface, not in the SDK's HTTP transport (dynamostore's
// own tests do that against a real server); the one fault injected in the
// transport is the two-Region mode's ReplicatedWriteConflictException on
// dynamostore, whose retry is the store's own (regions.go). Its waits are
// real and random, so a run on dynamostore in that mode does not replay
// step for step; the memory store's runs do.
package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

// Timing of the modelled system, in virtual time.
const (
	// functionTimeout is each invocation's deadline: the Lambda runtime
	// kills the invocation there.
	functionTimeout = time.Minute
	// leaseMax caps the guard's lease below the function timeout (as
	// IDEMPOTENCY_LEASE_MAX may), so that a live worker can outlive its
	// lease: the case the fencing of complete and release is for.
	leaseMax = 10 * time.Second
	// visibilityTimeout is 6 × the function timeout, as AWS advises and the
	// construct enforces.
	visibilityTimeout = 6 * functionTimeout
	// finishBudget is the guard's FinishBudget: the effect's context ends
	// that long before the lease.
	finishBudget = limits.DefaultFinishBudget
	// maxReceiveCount is the queues' redrive policy: generous enough that a
	// valid message never reaches the DLQ through faults alone.
	maxReceiveCount = 10
	batchSize       = 10
	workersPerQueue = 16
	publishInterval = 20 * time.Millisecond
	// maxMessageBytes is the adapter's message limit in the simulation,
	// small so that oversized messages stay cheap.
	maxMessageBytes = 8 << 10
	// longWindow is the business window of charge and wallet; shortWindow
	// that of points: shorter than the function timeout, not shorter than
	// the lease (the guard refuses that). stamps has the shortest window the
	// construct allows with its default lease: Window = LeaseMax = the
	// function timeout.
	longWindow  = 24 * time.Hour
	shortWindow = 30 * time.Second
	// txInvalidLines is the number of line items of a tx_invalid order:
	// with the balance and the ledger entry, more writes than
	// dynamostore.MaxTxWrites.
	txInvalidLines = 100
	// limit is how much virtual time a run may take before it is declared
	// undrained.
	limit = 12 * time.Hour
)

// Fault probabilities, per opportunity.
const (
	pProducerRetry = 0.30
	pSNSDuplicate  = 0.20
	pSlowDelivery  = 0.02
	pPoison        = 0.015
	pConflict      = 0.01

	pThrottle  = 0.015
	pServer    = 0.010
	pAmbiguous = 0.010
	pSDKRetry  = 0.010 // of a write
	pSpike     = 0.003

	pProviderDown      = 0.02
	pProviderAmbiguous = 0.01
	pProviderSpike     = 0.005
	pEffectPanic       = 0.003
	pEffectToDeadline  = 0.015 // split between the three kinds

	pCrash             = 0.002 // at each crash point of a record
	pCrashBeforeDelete = 0.01  // per invocation, after the handler returned
	// pWholeBatch is the chance that a record's effect kills its
	// invocation once an earlier record of it completed: the whole batch
	// comes back after the visibility timeout (whole_batch_failure).
	pWholeBatch = 0.01
)

// poisonKinds are the bad inputs the producer emits, in turn. "tx_invalid"
// is bad only for the transactional consumers: the store refuses its writes.
var poisonKinds = []string{"tx_invalid", "not_json", "wrong_shape", "empty_key", "control_key", "long_key", "deep", "zero_amount", "too_large", "bad_envelope", "invalid_utf8"}

// consumerSpecs are the subscribers of the topic.
var consumerSpecs = []struct {
	name   string
	tx     bool
	window time.Duration
	lease  time.Duration
}{
	{"charge", false, longWindow, leaseMax},
	{"wallet", true, longWindow, leaseMax},
	{"points", true, shortWindow, leaseMax},
	{"stamps", true, functionTimeout, functionTimeout},
}

// Config configures a run.
type Config struct {
	// Seed fixes every random choice: the same seed gives the same run.
	Seed int64
	// Facts is the number of business facts published. Default: 1000.
	Facts int
	// Store is "memory" (storetest.MemoryStore) or "dynamodb"
	// (dynamostore on the server DynamoDB points at). Default: memory.
	Store string
	// DynamoDB is the client for the dynamodb store; the run creates its
	// own table.
	DynamoDB *dynamodb.Client
	// Sabotage breaks the system on purpose, to show the invariants catch
	// it: "token-as-key" (the charge passes the reservation's owner token
	// downstream instead of its key), "unfenced-complete" (complete ignores
	// the owner), "effect-outside-tx" (the wallet credits outside the
	// transaction), "ignore-failures" (workers delete every message of a
	// batch), "short-window" (the points guard keeps facts for a third of
	// the window the business asked for) or "foreign-retry" (a reserve
	// retried by the SDK finds its first attempt's record under another
	// owner token, as the guard saw it before it recognised its own) or
	// "effect-to-lease" (an effect that runs until its context ends runs
	// until the lease instead, as its context ended before the finishing
	// budget existed) or "blocking-store" (the first reserve blocks until
	// the run ends, as a store call without a timeout would: the run must
	// fail as a deadlock, not hang) or "no-age" (the records carry no
	// origin time, neither SentTimestamp nor the envelope's Timestamp, so
	// that the adapter cannot tell a redelivery after the window: the age
	// check disabled) or "mrec" (two Regions on a global table in
	// multi-Region eventual consistency: two stores replicated last writer
	// wins; see regions.go; implies Regions). Default: none.
	Sabotage string
	// Regions runs the two-Region mode (regions.go): every fact delivered
	// in us-east-1 and us-east-2, each Region with its own queue,
	// workers and faults, both Regions' guards on one table in
	// multi-Region strong consistency; only the charge consumer, as MRSC
	// has no transactions. The sources simulation does not run.
	Regions bool
	// RaceWindow is, in the two-Region mode on MRSC, how soon after
	// another Region's write of an item a write of it is answered
	// ReplicatedWriteConflictException. Default: 50ms.
	RaceWindow time.Duration
	// FaultScale multiplies the probability of every injected fault and
	// crash, so that a short run sees every kind. Default: 1.
	FaultScale float64
	// Log receives a line for each of the first problems found. Default:
	// none.
	Log io.Writer
	// Stall bounds the real time one step of the simulation may take (a
	// task holding its turn: a store call, an effect, the adapter between
	// them; a few milliseconds): a task that holds it longer is blocked
	// outside the scheduler, and the run fails as a deadlock that names
	// it. Default: one minute.
	Stall time.Duration
	// Outage, when positive, is a downstream outage (outage.go): the
	// charge consumer's payment provider answers every call with an
	// error for Outage of virtual time from OutageStart (default: half
	// the Outage), then recovers. In this mode the queues have a
	// maxReceiveCount of 5, the producer spreads its facts over twice the
	// Outage, and the adapters change visibilities through the simulated
	// ChangeMessageVisibility (sqsVisibility), with the default backoff
	// or, with FixedVisibility, none (BackoffBase −1: a failed record
	// comes back after the queue's visibility timeout). Summary.Outage
	// holds what it measures; OutageTable prints two runs side by side.
	Outage, OutageStart time.Duration
	FixedVisibility     bool
}

// sim is the state of one run. Everything in it is touched only by the
// running task (or by the scheduler between steps), except where noted.
type sim struct {
	cfg       Config
	scale     float64 // Config.FaultScale
	rng       *rand.Rand
	clock     *clock
	sched     *scheduler
	facts     []*fact
	byFact    [][]*message
	consumers []*consumer
	stats     *Summary
	shadow    *shadow
	provider  *provider
	// deadlineEffects holds the lease of each reservation (by owner token)
	// whose effect ran until its context ended, until its complete or
	// release is sent.
	deadlineEffects map[string]time.Time

	// sdkRetry is set while the first attempt of a write the SDK will
	// send again is applied.
	sdkRetry bool

	producerDone bool
	snsSeq       int
	receipts     int
	// delivered counts deliveries per consumer and fact, to count the
	// duplicates.
	delivered map[string]int
	table     string

	// maxReceives is the queues' maxReceiveCount; poll how long an idle
	// worker waits for a new message while the producer runs; every the
	// mean time between two facts published.
	maxReceives int
	poll, every time.Duration
	// byReceipt is the message of each receipt handle given out.
	byReceipt map[string]*message

	// The two-Region mode (regions.go): the Regions, the latest write of
	// each item, and the reservations granted, by key; nil with one Region.
	regions    []*region
	lastWrites map[string]lastWrite
	grants     map[string][]*grant
}

// Run runs one simulation and checks its invariants.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	if cfg.Facts <= 0 {
		cfg.Facts = 1000
	}
	if cfg.Store == "" {
		cfg.Store = "memory"
	}
	if cfg.FaultScale <= 0 {
		cfg.FaultScale = 1
	}
	if cfg.Sabotage == "mrec" {
		cfg.Regions = true
	}
	if cfg.Stall <= 0 {
		cfg.Stall = defaultStall
	}
	if cfg.RaceWindow <= 0 {
		cfg.RaceWindow = raceWindow
	}
	start := time.Now()
	s := &sim{
		cfg:       cfg,
		scale:     cfg.FaultScale,
		rng:       rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed)),
		clock:     &clock{now: epoch},
		delivered: make(map[string]int),
		stats:     newSummary(cfg),

		deadlineEffects: make(map[string]time.Time),
		maxReceives:     maxReceiveCount,
		poll:            200 * time.Millisecond,
		every:           publishInterval,
		byReceipt:       make(map[string]*message),
	}
	if cfg.Outage > 0 {
		if cfg.OutageStart <= 0 {
			s.cfg.OutageStart = cfg.Outage / 2
		}
		s.maxReceives, s.poll = outageReceives, outagePoll
		s.every = 2 * cfg.Outage / time.Duration(cfg.Facts)
		s.stats.Outage = &OutageSummary{Backoff: !cfg.FixedVisibility, Start: s.cfg.OutageStart, End: s.cfg.OutageStart + cfg.Outage,
			perMinute: make(map[int64]int), perSecond: make(map[int64]int)}
	}
	s.sched = newScheduler(s.clock, cfg.Stall)
	s.shadow = &shadow{sim: s, recs: make(map[string]idempotency.Record), completions: make(map[string][]time.Time)}
	s.provider = &provider{clock: s.clock, byKey: make(map[string]*payment)}

	ddb := cfg.DynamoDB
	if cfg.Regions && cfg.Sabotage != "mrec" && ddb != nil {
		ddb = s.conflictClient(ddb) // MRSC: the conflicts come from the table
	}
	inner, table, omitted, err := openStore(ctx, cfg.Store, cfg.Seed, ddb, "chaos")
	if err != nil {
		return nil, err
	}
	s.table, s.stats.OldOmitted = table, omitted
	regions := []*region{nil}
	if cfg.Regions {
		local, err := s.setupRegions()
		if err != nil {
			return nil, err
		}
		if local != nil {
			inner = local // mrec: the final check reads the first Region's replica
		}
		regions = s.regions
	}
	s.makeFacts()
	for _, r := range regions {
		for _, spec := range consumerSpecs {
			if r != nil && spec.tx {
				continue // MRSC supports no transactions
			}
			c, err := s.newConsumer(spec.name, spec.tx, spec.window, spec.lease, inner, r)
			if err != nil {
				return nil, err
			}
			s.consumers = append(s.consumers, c)
		}
	}
	s.sched.spawn("producer", epoch, s.produce)
	for _, c := range s.consumers {
		for i := range workersPerQueue {
			w := &worker{sim: s, c: c}
			s.sched.spawn(fmt.Sprintf("%s-worker-%d", c.label(), i), epoch.Add(time.Duration(i)*time.Millisecond), w.run)
		}
	}
	if err := s.sched.run(ctx, epoch.Add(limit)); err != nil {
		s.problem("run: %v", err)
		s.stats.Wall = time.Since(start)
		return s.stats, err
	}
	s.stats.Virtual = s.clock.Now().Sub(epoch)
	s.stats.Steps = s.sched.steps
	s.stats.Trace = s.sched.trace
	for _, r := range s.regions {
		if r.local != nil {
			s.replicate(ctx, r, true) // the run is over: every write arrived
		}
	}
	err = s.check(ctx, inner)
	if err != nil {
		s.problem("check: %v", err)
	}
	s.finishOutage()
	if !cfg.Regions {
		s.stats.Sources = *RunSources(cfg.Seed, cfg.Facts, sourcesSabotage(cfg.Sabotage))
	}
	s.stats.Wall = time.Since(start)
	return s.stats, err
}

// openStore opens the store a run names: "memory" (storetest.MemoryStore;
// odd seeds answer a failed condition without the old record, as kumo and
// dynalite do: the guard's read-after-failure path, reported by omitted) or
// "dynamodb" (dynamostore over a new table, named after prefix and seed, of
// the server ddb points at).
func openStore(ctx context.Context, kind string, seed int64, ddb *dynamodb.Client, prefix string) (store idempotency.TxStore, table string, omitted bool, err error) {
	switch kind {
	case "memory":
		m := storetest.NewMemoryStore()
		m.OmitOld = seed%2 != 0
		return m, "", m.OmitOld, nil
	case "dynamodb":
		if ddb == nil {
			return nil, "", false, errors.New("chaos: the dynamodb store needs a DynamoDB client")
		}
		table, err := kumotest.NewTable(ctx, ddb, fmt.Sprintf("%s-%d", prefix, uint64(seed)))
		if err != nil {
			return nil, "", false, err
		}
		return dynamostore.New(ddb, table), table, false, nil
	}
	return nil, "", false, fmt.Errorf("chaos: unknown store %q (memory or dynamodb)", kind)
}

// makeFacts draws the facts: most valid, some poison, some with a
// conflicting variant.
func (s *sim) makeFacts() {
	nextPoison := 0
	for i := range s.cfg.Facts {
		f := &fact{index: i, id: fmt.Sprintf("o-%d", i), customer: fmt.Sprintf("c-%d", s.rng.IntN(50)), amount: 100 + s.rng.Int64N(100000)}
		switch {
		case s.chance(pPoison):
			f.poison = poisonKinds[nextPoison%len(poisonKinds)]
			nextPoison++
			switch f.poison {
			case "empty_key":
				f.id = ""
			case "control_key":
				f.id = fmt.Sprintf("o-%d\u0007", i)
			case "long_key":
				f.id = fmt.Sprintf("o-%d-%0*d", i, limits.MaxKeyBytes, 0)
			case "zero_amount":
				f.amount = 0
			}
		case s.chance(pConflict):
			f.conflict = f.amount + 1 + s.rng.Int64N(1000)
			s.stats.Faults["conflicting_payload"]++
		}
		switch f.poison {
		case "":
		case "tx_invalid":
			s.stats.Faults["tx_invalid"]++
		default:
			s.stats.Faults["bad_input:"+f.poison]++
		}
		s.facts = append(s.facts, f)
	}
	s.byFact = make([][]*message, len(s.facts))
}

// chance draws true with probability p.
func (s *sim) chance(p float64) bool { return s.rng.Float64() < p }

// between draws a duration in [lo, hi).
func (s *sim) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(s.rng.Int64N(int64(hi-lo)))
}

func (s *sim) park(t *task, d time.Duration) { s.sched.park(t, d) }

// problem records a violated invariant.
func (s *sim) problem(format string, args ...any) {
	s.stats.Violations++
	msg := fmt.Sprintf(format, args...)
	if len(s.stats.Problems) < 20 {
		s.stats.Problems = append(s.stats.Problems, msg)
		if s.cfg.Log != nil {
			fmt.Fprintln(s.cfg.Log, "violation:", msg)
		}
	}
}

// errCrashed is what a dead invocation's library gets from every store call
// and effect after its crash: nothing reaches the store, the provider or the
// wallet any more, and the harness discards whatever the adapter answers.
var errCrashed = errors.New("chaos: the invocation is dead (crashed or killed at its deadline)")

// maybeCrash crashes the invocation at a crash point with probability p:
// the worker dies there, as a Lambda process killed at that instant, and
// maybeCrash returns errCrashed, which its caller returns at once.
func (s *sim) maybeCrash(inv *invocation, point string, p float64) error {
	if !s.chance(p * s.scale * inv.w.c.regionScale()) {
		return nil
	}
	return s.kill(inv, point)
}

// kill ends the invocation at a crash point: from now on every store call
// and effect of it fails at once with errCrashed and no effect, so that the
// library runs to the end of Handle without touching the world or the
// clock, and the worker starts afresh after a while (invocation.restart).
// The library is not stopped in its tracks, as a dead process is, but
// nothing it does after this point is seen.
func (s *sim) kill(inv *invocation, point string) error {
	s.stats.Crashes++
	s.stats.CrashPoints[point]++
	inv.dead = true
	inv.restart = s.clock.Now().Add(s.between(100*time.Millisecond, 2*time.Second))
	return errCrashed
}

// latency returns the virtual latency of one leg of a call: usually a few
// milliseconds. With probability spike it is a spike (counted as the fault
// kind) longer than any lease granted before the call, and sometimes long
// enough to reach the invocation's deadline.
func (s *sim) latency(spike float64, kind string) (time.Duration, bool) {
	if !s.chance(spike * s.scale) {
		return s.between(time.Millisecond, 10*time.Millisecond), false
	}
	s.stats.Faults[kind]++
	return leaseMax + s.between(time.Second, 40*time.Second), true
}

// enter is the start of every store call and effect (op, on the fact's
// key): it finds the invocation, notes what its task does (for a deadlock
// report), refuses a dead invocation, and kills an invocation past its
// deadline.
func (s *sim) enter(ctx context.Context, op, key string) (*invocation, error) {
	inv, _ := ctx.Value(invKey{}).(*invocation)
	if inv == nil {
		panic("chaos: a store call or an effect outside an invocation")
	}
	if inv.dead {
		return inv, errCrashed
	}
	s.sched.note(inv.w.t, op+" "+key)
	return inv, s.alive(inv)
}

// alive kills the invocation if its deadline has passed, as the Lambda
// runtime does: a request it sent before still lands, but it sees no answer.
func (s *sim) alive(inv *invocation) error {
	if s.clock.Now().Before(inv.deadline) {
		return nil
	}
	return s.kill(inv, "timeout")
}

// wait parks the invocation's task for d, then kills it if its deadline
// passed meanwhile.
func (s *sim) wait(inv *invocation, d time.Duration) error {
	s.park(inv.w.t, d)
	return s.alive(inv)
}
