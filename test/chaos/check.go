package chaos

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// Summary is the outcome of a run: its counters and the invariants' verdict.
type Summary struct {
	Seed       int64
	Facts      int
	Store      string
	OldOmitted bool // the memory store answered failed conditions without the old record
	FaultScale float64
	Sabotage   string

	// Messages is the number of SQS messages enqueued (every consumer);
	// Deliveries the number of records handed to a handler, of which
	// DuplicateDeliveries carried a fact the consumer had been handed
	// before.
	Messages, Deliveries, DuplicateDeliveries int
	Invocations, BatchErrors                  int
	StoreCalls                                int
	// Crashes is the number of worker crashes, by crash point in
	// CrashPoints. StoreFaults is the number of injected store faults;
	// Faults counts every kind of injected fault and hostile input.
	Crashes     int
	CrashPoints map[string]int
	StoreFaults int
	Faults      map[string]int
	// Outcomes counts the adapter's per-record outcomes, by consumer.
	Outcomes map[string]int
	// DLQ counts the dead-lettered messages, by queue and class.
	DLQ map[string]int
	// EffectsPastLease counts effects that started after their lease had
	// ended (the worker stalled in the reserve): the charge aborts its call,
	// as a context-aware client would.
	EffectsPastLease int
	// Takeovers counts reservations that took over an expired lease;
	// StaleRejected the completes and releases of a stale owner that the
	// fencing refused; StaleDeletes the deletes with an old receipt. (A
	// lapsed reservation is never taken over by other content under the same
	// key: that is a payload mismatch, which the shadow store checks.)
	Takeovers, StaleRejected, StaleDeletes int
	// ProviderReplays counts the charges the provider answered from its
	// idempotency keys (each one a double charge avoided); ProviderRefused
	// the keys reused with other parameters.
	ProviderReplays, ProviderRefused int
	// DLQValid counts messages of valid facts that were dead-lettered
	// after maxReceiveCount deliveries that all failed for injected
	// reasons, while the fact was applied through another message.
	DLQValid int
	// ExpiredReservations counts IN_PROGRESS records, past their lease, of
	// dead-lettered bad input whose last release failed or never ran:
	// harmless, since a reservation takes them over.
	ExpiredReservations int

	// The invariants: effects applied more than once, valid facts never
	// applied, valid facts left IN_PROGRESS, and every other violation.
	DoubleEffects, Lost, Stuck, Violations int
	// Problems describes the first violations.
	Problems []string

	Virtual time.Duration // virtual time the run took
	Wall    time.Duration // real time (not part of the run's determinism)
	Steps   int           // scheduler steps
	Trace   uint64        // hash of the schedule: equal runs, equal traces
}

func newSummary(cfg Config) *Summary {
	return &Summary{Seed: cfg.Seed, Facts: cfg.Facts, Store: cfg.Store, FaultScale: cfg.FaultScale, Sabotage: cfg.Sabotage,
		CrashPoints: map[string]int{}, Faults: map[string]int{}, Outcomes: map[string]int{}, DLQ: map[string]int{}}
}

// OK reports whether every invariant held.
func (s *Summary) OK() bool {
	return s.DoubleEffects == 0 && s.Lost == 0 && s.Stuck == 0 && s.Violations == 0
}

// DuplicateShare is the share of deliveries that carried a fact already
// delivered to the same consumer.
func (s *Summary) DuplicateShare() float64 {
	if s.Deliveries == 0 {
		return 0
	}
	return float64(s.DuplicateDeliveries) / float64(s.Deliveries)
}

// Line is the one-line verdict.
func (s *Summary) Line() string {
	return fmt.Sprintf("chaos: seed=%d facts=%d deliveries=%d crashes=%d store_faults=%d double_effects=%d lost=%d stuck=%d violations=%d",
		s.Seed, s.Facts, s.Deliveries, s.Crashes, s.StoreFaults, s.DoubleEffects, s.Lost, s.Stuck, s.Violations)
}

// Report writes the details, then Line last.
func (s *Summary) Report(w io.Writer) {
	store := s.Store
	if s.OldOmitted {
		store += " (failed conditions without the old record)"
	}
	fmt.Fprintf(w, "store=%s fault_scale=%g messages=%d deliveries=%d duplicates=%d (%.1f%%) invocations=%d (%.1f records each) batch_errors=%d store_calls=%d\n",
		store, s.FaultScale, s.Messages, s.Deliveries, s.DuplicateDeliveries, 100*s.DuplicateShare(), s.Invocations, float64(s.Deliveries)/float64(max(s.Invocations, 1)), s.BatchErrors, s.StoreCalls)
	fmt.Fprintf(w, "crash points: %s\n", counts(s.CrashPoints))
	fmt.Fprintf(w, "faults: %s\n", counts(s.Faults))
	fmt.Fprintf(w, "outcomes: %s\n", counts(s.Outcomes))
	fmt.Fprintf(w, "dlq: %s valid_dead_lettered=%d\n", counts(s.DLQ), s.DLQValid)
	fmt.Fprintf(w, "fencing: effects_past_lease=%d takeovers=%d stale_rejected=%d stale_deletes=%d provider_replays=%d provider_refused=%d expired_reservations=%d\n",
		s.EffectsPastLease, s.Takeovers, s.StaleRejected, s.StaleDeletes, s.ProviderReplays, s.ProviderRefused, s.ExpiredReservations)
	fmt.Fprintf(w, "virtual=%v steps=%d trace=%016x wall=%v\n", s.Virtual.Round(time.Millisecond), s.Steps, s.Trace, s.Wall.Round(time.Millisecond))
	for _, p := range s.Problems {
		fmt.Fprintf(w, "violation: %s\n", p)
	}
	if s.Sabotage != "" {
		fmt.Fprintf(w, "sabotage: %s\n", s.Sabotage)
	}
	fmt.Fprintln(w, s.Line())
}

func counts(m map[string]int) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s=%d ", k, m[k])
	}
	return strings.TrimSpace(b.String())
}

// check checks the invariants once the queues drained.
func (s *sim) check(ctx context.Context, inner idempotency.Store) error {
	// Every lease is over now: whatever is IN_PROGRESS stays so for good.
	s.clock.advanceTo(s.clock.Now().Add(idempotency.DefaultLeaseMax + time.Minute))
	s.stats.ProviderReplays, s.stats.ProviderRefused = s.provider.replays, s.provider.refused
	for _, c := range s.consumers {
		if c.q.live != 0 {
			s.problem("queue %s not drained: %d messages left", c.name, c.q.live)
		}
	}
	// The store holds what the model holds.
	for _, k := range slices.Sorted(maps.Keys(s.shadow.recs)) {
		got, err := inner.Get(ctx, k)
		if err != nil {
			return fmt.Errorf("chaos: final read of %s: %w", k, err)
		}
		if want := s.shadow.recs[k]; got == nil || !same(*got, want) {
			s.problem("record %s: the store holds %+v, the model %+v", k, got, want)
		}
	}
	balances := make(map[string]int64)
	for _, c := range s.consumers {
		for _, f := range s.facts {
			applied, err := s.applied(ctx, c, f)
			if err != nil {
				return err
			}
			if c.name == "wallet" {
				for _, v := range applied {
					balances[f.customer] += cashback(f.amountOf(v))
				}
			}
			s.checkFact(c, f, applied)
		}
	}
	if err := s.checkBalances(ctx, balances); err != nil {
		return err
	}
	return nil
}

// applied returns the variants of f that consumer c applied, once per
// application.
func (s *sim) applied(ctx context.Context, c *consumer, f *fact) ([]int, error) {
	variant := func(amount int64) int {
		if f.conflict != 0 && amount == f.conflict {
			return 1
		}
		return 0
	}
	var out []int
	switch c.name {
	case "charge":
		for _, p := range s.provider.byOrder[f.id] {
			out = append(out, variant(p.amount))
		}
	case "wallet":
		var count, amount int64
		if s.cfg.Store == "dynamodb" {
			vals, err := readNumbers(ctx, s.cfg.DynamoDB, s.table, "ledger#"+f.id, "credits", "amount")
			if err != nil {
				return nil, fmt.Errorf("chaos: read the ledger of %s: %w", f.id, err)
			}
			count, amount = vals[0], vals[1]
		} else if e := s.wallet.ledger[f.id]; e != nil {
			count, amount = int64(e.count), e.amount
		}
		for range count {
			out = append(out, variant(amount))
		}
	}
	return out, nil
}

// checkFact checks one fact at one consumer.
func (s *sim) checkFact(c *consumer, f *fact, applied []int) {
	key := c.name + "#" + f.id
	rec, had := s.shadow.recs[key]
	msgs := make([]*message, 0, 4)
	for _, m := range s.byFact[f.index] {
		if m.q == c.q {
			msgs = append(msgs, m)
		}
	}
	if f.poison != "" {
		if len(applied) > 0 {
			s.problem("%s: bad input %s (%s) was applied", c.name, f.id, f.poison)
		}
		switch {
		case had && rec.Status == idempotency.StatusCompleted:
			s.problem("%s: bad input %s (%s) has a COMPLETED record", c.name, f.id, f.poison)
		case had:
			s.stats.ExpiredReservations++
		}
		for _, m := range msgs {
			if m.state != deadLettered || m.reasons["bad_input"] == "" {
				s.problem("%s: bad input %s (%s) ended %s, last outcome %q (%s)", c.name, m.id, f.poison, stateName(m.state), m.lastOutcome, m.lastReason)
			}
		}
		return
	}
	switch {
	case len(applied) == 0:
		s.stats.Lost++
		s.problemOnly("%s: lost: %s was never applied; its record is %s; its messages: %s", c.name, f.id, describe(rec, had), messageStates(msgs))
		if had && rec.Status == idempotency.StatusInProgress {
			s.stats.Stuck++
		}
		return
	case len(applied) > 1:
		s.stats.DoubleEffects++
		s.problemOnly("%s: %s applied %d times", c.name, f.id, len(applied))
	}
	v := applied[0]
	want := ""
	switch c.name {
	case "charge":
		want = s.provider.byOrder[f.id][0].id
	case "wallet":
		want = fmt.Sprintf("credited %d", cashback(f.amountOf(v)))
	}
	switch {
	case had && rec.Status == idempotency.StatusInProgress:
		s.stats.Stuck++
		s.problemOnly("%s: stuck: %s applied but its record is IN_PROGRESS", c.name, f.id)
	case !had || rec.PayloadHash != f.hash[v] || rec.Result != want:
		s.problem("%s: %s applied (variant %d, %s) but its record is %s, result %q", c.name, f.id, v, want, describe(rec, had), rec.Result)
	}
	for _, m := range msgs {
		switch {
		case m.state == deleted && m.variant != v:
			s.problem("%s: message %s of the variant not applied was deleted", c.name, m.id)
		case m.state == deadLettered && m.variant == v:
			// Every delivery failed, each for an injected reason
			// (checkOutcome); the fact was applied through another
			// message.
			s.stats.DLQValid++
		case m.state == deadLettered && m.reasons["mismatch"] == "" && !m.keyReused:
			s.problem("%s: conflicting message %s dead-lettered with outcome %q (%s), want a payload mismatch", c.name, m.id, m.lastOutcome, m.lastReason)
		}
	}
}

// problemOnly records the description of a problem counted elsewhere.
func (s *sim) problemOnly(format string, args ...any) {
	s.problem(format, args...)
	s.stats.Violations--
}

func (s *sim) checkBalances(ctx context.Context, want map[string]int64) error {
	customers := make(map[string]bool)
	for _, f := range s.facts {
		customers[f.customer] = true
	}
	for _, cu := range slices.Sorted(maps.Keys(customers)) {
		var got int64
		if s.cfg.Store == "dynamodb" {
			vals, err := readNumbers(ctx, s.cfg.DynamoDB, s.table, "balance#"+cu, "balance")
			if err != nil {
				return fmt.Errorf("chaos: read the balance of %s: %w", cu, err)
			}
			got = vals[0]
		} else {
			got = s.wallet.balance[cu]
		}
		if got != want[cu] {
			s.problem("wallet: balance of %s is %d, the ledger adds up to %d", cu, got, want[cu])
		}
	}
	return nil
}

func stateName(st msgState) string {
	return [...]string{"live", "deleted", "dead-lettered"}[st]
}

func messageStates(msgs []*message) string {
	var parts []string
	for _, m := range msgs {
		parts = append(parts, fmt.Sprintf("%s %s after %d receives (%s: %.120s)", m.id, stateName(m.state), m.receives, m.lastOutcome, m.lastReason))
	}
	return strings.Join(parts, "; ")
}
