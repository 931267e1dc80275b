package chaos

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// Summary is the outcome of a run: its counters and the invariants' verdict.
type Summary struct {
	// Sources is the sources simulation's (sources.go): EventBridge and
	// S3 deliveries, run beside the SNS fan-out with the same seed.
	Sources SourcesSummary

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
	// DLQ counts the dead-lettered messages, by queue and class
	// ("tx_invalid": writes the store refused as invalid, as expected).
	DLQ map[string]int
	// EffectsPastDeadline counts effects that started after their context
	// had ended, FinishBudget before the lease (the worker stalled in the
	// reserve): the charge aborts its call, as a context-aware client would.
	EffectsPastDeadline int
	// FinishedInBudget counts the completes and releases after an effect
	// that ran until its context ended, each sent with at least the
	// finishing budget left before the lease. TxRefused counts the commits
	// the store refused as invalid (tx_invalid).
	FinishedInBudget, TxRefused int
	// RanAgainAfterWindow counts the facts applied again after the business
	// window of their previous application had ended (a window shorter than
	// the redeliveries): legitimate, not double effects. Reruns counts those
	// later applications.
	RanAgainAfterWindow, Reruns int
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
	// dead-lettered bad input whose last release failed or never ran, or of
	// facts whose messages all expired: harmless, since a reservation takes
	// them over.
	ExpiredReservations int
	// LateRedeliveries counts the deliveries, after the first, of a
	// message as old as its consumer's window, of a fact the consumer had
	// completed: the redeliveries that would run the effect again if the
	// adapter did not judge records by their age (issue 19). Expired counts
	// the records the adapter judged expired; ExpiredFacts the valid facts
	// never applied because every message of theirs expired, all of them
	// in the DLQ (a window shorter than the redeliveries: counted, not
	// lost).
	LateRedeliveries, Expired, ExpiredFacts int

	// The invariants: effects applied more than once, valid facts never
	// applied, valid facts left IN_PROGRESS, and every other violation.
	DoubleEffects, Lost, Stuck, Violations int
	// Problems describes the first violations.
	Problems []string
	// Outage is what the outage mode measured (Config.Outage); nil
	// without an outage.
	Outage *OutageSummary
	// Regions is what the two-Region mode measured (Config.Regions).
	Regions RegionsSummary

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
	return s.DoubleEffects == 0 && s.Lost == 0 && s.Stuck == 0 && s.Violations == 0 && s.Sources.OK()
}

// DuplicateShare is the share of deliveries that carried a fact already
// delivered to the same consumer.
func (s *Summary) DuplicateShare() float64 {
	if s.Deliveries == 0 {
		return 0
	}
	return float64(s.DuplicateDeliveries) / float64(s.Deliveries)
}

// Line is the one-line verdict: regionsLine's in the two-Region mode.
func (s *Summary) Line() string {
	if s.Regions.Table != "" {
		return s.regionsLine()
	}
	return fmt.Sprintf("chaos: seed=%d facts=%d deliveries=%d crashes=%d store_faults=%d whole_batch_failures=%d late_redeliveries=%d expired=%d double_effects=%d lost=%d stuck=%d violations=%d",
		s.Seed, s.Facts, s.Deliveries, s.Crashes, s.StoreFaults, s.Faults["whole_batch_failure"], s.LateRedeliveries, s.Expired, s.DoubleEffects, s.Lost, s.Stuck, s.Violations) +
		" " + s.Sources.Line()
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
	fmt.Fprintf(w, "dlq: %s valid_dead_lettered=%d expired_facts=%d\n", counts(s.DLQ), s.DLQValid, s.ExpiredFacts)
	fmt.Fprintf(w, "fencing: effects_past_deadline=%d takeovers=%d stale_rejected=%d stale_deletes=%d provider_replays=%d provider_refused=%d expired_reservations=%d\n",
		s.EffectsPastDeadline, s.Takeovers, s.StaleRejected, s.StaleDeletes, s.ProviderReplays, s.ProviderRefused, s.ExpiredReservations)
	fmt.Fprintf(w, "seams: sdk_retries=%d effects_to_deadline=%d finished_in_budget=%d tx_refused=%d tx_invalid_dead_lettered=%d ran_again_after_window=%d (facts; %d reruns)\n",
		s.Faults["store_sdk_retry:reserve"]+s.Faults["store_sdk_retry:complete"]+s.Faults["store_sdk_retry:release"]+s.Faults["store_sdk_retry:commit"],
		s.Faults["effect_until_deadline"]+s.Faults["effect_at_deadline"]+s.Faults["effect_deadline_exceeded"],
		s.FinishedInBudget, s.TxRefused, s.DLQ["wallet/tx_invalid"]+s.DLQ["points/tx_invalid"], s.RanAgainAfterWindow, s.Reruns)
	if s.Regions.Table == "" { // the sources simulation does not run in two Regions
		fmt.Fprintf(w, "sources: messages=%d deliveries=%d records=%d applied=%d reruns=%d dead_lettered=%d faults: %s outcomes: %s\n",
			s.Sources.Messages, s.Sources.Deliveries, s.Sources.Records, s.Sources.Applied, s.Sources.Reruns, s.Sources.DeadLettered, counts(s.Sources.Faults), counts(s.Sources.Outcomes))
	}
	for _, p := range s.Sources.Problems {
		fmt.Fprintf(w, "violation: sources: %s\n", p)
	}
	fmt.Fprintf(w, "virtual=%v steps=%d trace=%016x wall=%v\n", s.Virtual.Round(time.Millisecond), s.Steps, s.Trace, s.Wall.Round(time.Millisecond))
	for _, p := range s.Problems {
		fmt.Fprintf(w, "violation: %s\n", p)
	}
	if r := s.Regions; r.Table != "" {
		fmt.Fprintf(w, "regions: table=%s deliveries %s=%d %s=%d replicated=%d lww_overwrites=%d stale_replications=%d double_grants=%d\n",
			r.Table, r.Regions[0], r.Deliveries[0], r.Regions[1], r.Deliveries[1], r.Replicated, r.Overwritten, r.Stale, r.DoubleGrants)
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
	s.clock.advanceTo(s.clock.Now().Add(limits.DefaultLeaseMax + time.Minute))
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
	s.checkBothRegions()
	for _, c := range s.consumers {
		if c.region != nil && c.region.index > 0 {
			continue // a fact is checked once, over both Regions' queues
		}
		balances := make(map[string]int64)
		for _, f := range s.facts {
			applied, err := s.applied(ctx, c, f)
			if err != nil {
				return err
			}
			for _, a := range applied {
				balances[f.customer] += cashback(f.amountOf(a.variant))
			}
			s.checkFact(c, f, applied)
		}
		if c.tx {
			if err := s.checkBalances(ctx, c.wallet, balances); err != nil {
				return err
			}
		}
	}
	return nil
}

// application is one application of a fact's effect: a payment the provider
// made, or a credit committed; at is when (for a credit, when its commit was
// sent).
type application struct {
	at, origin time.Time // origin: of the message it came from (see invocation.origins)
	variant    int
}

// applied returns the applications of f by consumer c, in the order they
// happened. A wallet's count of credits is the store's (its ledger entry);
// their times are the harness's, which must account for every one.
func (s *sim) applied(ctx context.Context, c *consumer, f *fact) ([]application, error) {
	variant := func(amount int64) int {
		if f.conflict != 0 && amount == f.conflict {
			return 1
		}
		return 0
	}
	var out []application
	if !c.tx {
		for _, p := range s.provider.byOrder[f.id] {
			out = append(out, application{at: p.at, origin: p.origin, variant: variant(p.amount)})
		}
		return out, nil
	}
	var count, amount int64
	if s.cfg.Store == "dynamodb" {
		vals, err := readNumbers(ctx, s.cfg.DynamoDB, s.table, c.name+"/ledger#"+f.id, "credits", "amount")
		if err != nil {
			return nil, fmt.Errorf("chaos: read the ledger of %s: %w", f.id, err)
		}
		count, amount = vals[0], vals[1]
	} else if e := c.wallet.ledger[f.id]; e != nil {
		count, amount = int64(e.count), e.amount
	}
	seen := c.wallet.log[f.id]
	for _, cr := range seen {
		out = append(out, application{at: cr.at, origin: cr.origin, variant: variant(cr.amount)})
	}
	if int64(len(seen)) != count || (count > 0 && seen[len(seen)-1].amount != amount) {
		s.problem("%s: the ledger of %s holds %d credits (last of %d), the harness saw %d applied", c.name, f.id, count, amount, len(seen))
		for range count - int64(len(seen)) {
			// Credits the harness did not see: applied at an unknown
			// time, so within the window of the others.
			out = append(out, application{at: s.clock.Now(), variant: variant(amount)})
		}
	}
	return out, nil
}

// doubles returns how many applications of key (after the first) are
// double effects: an application while the business window of the one
// before it was open, or from a message published before that window
// opened. The window of an application starts when the write that completed
// it was sent and lasts window; it is kept to the second (Record.ExpiresAt),
// so an application within the last second of it is given the benefit of
// the doubt. An application after the window from a message published after
// the one before completed is a new delivery of the fact by its producer (a
// late retry): it ran again after its window, as it should. One from a
// message published before is the queue's redelivery of a fact that ran
// (issue 19): a double effect.
func (s *sim) doubles(key string, window time.Duration, applied []application) (doubles, reruns int) {
	completions := s.shadow.completions[key]
	for j := 1; j < len(applied); j++ {
		prev, cur := applied[j-1].at, applied[j].at
		closed := false
		for _, cc := range completions {
			if !cc.Before(prev) && cur.After(cc.Add(window-time.Second)) && applied[j].origin.After(cc) {
				closed = true
				break
			}
		}
		if closed {
			reruns++
		} else {
			doubles++
		}
	}
	return doubles, reruns
}

// checkFact checks one fact at one consumer.
func (s *sim) checkFact(c *consumer, f *fact, applied []application) {
	key := c.name + "#" + f.id
	rec, had := s.shadow.recs[key]
	msgs := make([]*message, 0, 4)
	for _, m := range s.byFact[f.index] {
		if m.q.consumer == c.name {
			msgs = append(msgs, m)
		}
	}
	if f.poison == "tx_invalid" && c.tx {
		// The store refuses its writes: never applied, no record, every
		// message failed for that refusal and dead-lettered, as expected.
		if len(applied) > 0 || had {
			s.problem("%s: %s, whose writes the store refuses, was applied %d times; its record is %s", c.name, f.id, len(applied), describe(rec, had))
		}
		for _, m := range msgs {
			if m.state != deadLettered || !m.txInvalid && m.reasons["expired"] == "" {
				s.problem("%s: %s, whose writes the store refuses, ended %s, never failed for the refusal (last outcome %q: %s)", c.name, m.id, stateName(m.state), m.lastOutcome, m.lastReason)
			}
		}
		return
	}
	if f.badAt(c) {
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
			if m.state != deadLettered || m.reasons["bad_input"] == "" && m.reasons["expired"] == "" {
				s.problem("%s: bad input %s (%s) ended %s, last outcome %q (%s)", c.name, m.id, f.poison, stateName(m.state), m.lastOutcome, m.lastReason)
			}
		}
		return
	}
	for _, m := range msgs {
		if m.reasons["expired"] != "" && m.state != deadLettered {
			s.problem("%s: message %s of %s expired, then ended %s, not in the DLQ", c.name, m.id, f.id, stateName(m.state))
		}
	}
	if len(applied) == 0 && expiredAll(msgs) {
		// Every message of the fact came back older than the window and
		// is in the DLQ, counted: the window is shorter than the
		// redeliveries, and the fact's record may have been gone.
		s.stats.ExpiredFacts++
		if had {
			s.stats.ExpiredReservations++
		}
		return
	}
	if len(applied) == 0 && s.stats.Outage != nil && outageDeadLettered(msgs) {
		// Every message of the fact failed its receives in the outage
		// and is in the DLQ, counted: a redrive charges it.
		s.stats.Outage.DeadLetteredFacts++
		if had {
			s.stats.ExpiredReservations++
		}
		return
	}
	if len(applied) == 0 {
		s.stats.Lost++
		s.problemOnly("%s: lost: %s was never applied; its record is %s; its messages: %s", c.name, f.id, describe(rec, had), messageStates(msgs))
		if had && rec.Status == idempotency.StatusInProgress {
			s.stats.Stuck++
		}
		return
	}
	doubles, reruns := s.doubles(key, c.window, applied)
	if s.grants != nil && s.grantDoubles(key) {
		doubles = max(doubles, 1)
	}
	if doubles > 0 {
		s.stats.DoubleEffects++
		s.problemOnly("%s: %s applied %d times, %d of them within the window of the one before or from a message published before it completed", c.name, f.id, len(applied), doubles)
	}
	if reruns > 0 {
		s.stats.RanAgainAfterWindow++
		s.stats.Reruns += reruns
	}
	appliedVariant := [2]bool{}
	for _, a := range applied {
		appliedVariant[a.variant] = true
	}
	// The record is the last application's.
	v := applied[len(applied)-1].variant
	want := ""
	if c.tx {
		want = fmt.Sprintf("credited %d", cashback(f.amountOf(v)))
	} else {
		want = s.provider.byOrder[f.id][0].id
	}
	switch {
	case (!had || rec.Status == idempotency.StatusInProgress) && s.stats.Outage != nil && outageDeadLettered(msgs):
		// The provider made the charge, but the invocation never saw it
		// succeed (an ambiguous answer, a crash or a deadline after the
		// call): the record was released or its lease lapsed, and every
		// later receive failed in the outage. The messages are in the
		// DLQ; a redrive reserves the fact again (taking over a lapsed
		// lease) and the provider answers from its idempotency key.
		s.stats.Outage.ChargedThenDeadLettered++
	case had && rec.Status == idempotency.StatusInProgress:
		s.stats.Stuck++
		s.problemOnly("%s: stuck: %s applied but its record is IN_PROGRESS", c.name, f.id)
	case !had || rec.PayloadHash != f.hash[v] || rec.Result != want:
		s.problem("%s: %s applied (variant %d, %s) but its record is %s, result %q", c.name, f.id, v, want, describe(rec, had), rec.Result)
	}
	for _, m := range msgs {
		switch {
		case m.state == deleted && !appliedVariant[m.variant]:
			s.problem("%s: message %s of the variant not applied was deleted", c.name, m.id)
		case m.state == deadLettered && appliedVariant[m.variant]:
			// Every delivery failed, each for an injected reason
			// (checkOutcome); the fact was applied through another
			// message.
			s.stats.DLQValid++
		case m.state == deadLettered && m.reasons["mismatch"] == "" && m.reasons["expired"] == "" && !m.keyReused && !m.outageFailed:
			s.problem("%s: conflicting message %s dead-lettered with outcome %q (%s), want a payload mismatch", c.name, m.id, m.lastOutcome, m.lastReason)
		}
	}
}

// expiredAll reports whether every message is in the DLQ and at least one
// of them expired.
func expiredAll(msgs []*message) bool {
	expired := false
	for _, m := range msgs {
		if m.state != deadLettered {
			return false
		}
		expired = expired || m.reasons["expired"] != ""
	}
	return expired
}

// outageDeadLettered reports whether every message is in the DLQ and at
// least one of them failed in the outage.
func outageDeadLettered(msgs []*message) bool {
	outage := false
	for _, m := range msgs {
		if m.state != deadLettered {
			return false
		}
		outage = outage || m.outageFailed
	}
	return outage
}

// problemOnly records the description of a problem counted elsewhere.
func (s *sim) problemOnly(format string, args ...any) {
	s.problem(format, args...)
	s.stats.Violations--
}

func (s *sim) checkBalances(ctx context.Context, w *wallet, want map[string]int64) error {
	customers := make(map[string]bool)
	for _, f := range s.facts {
		customers[f.customer] = true
	}
	for _, cu := range slices.Sorted(maps.Keys(customers)) {
		var got int64
		if s.cfg.Store == "dynamodb" {
			vals, err := readNumbers(ctx, s.cfg.DynamoDB, s.table, w.name+"/balance#"+cu, "balance")
			if err != nil {
				return fmt.Errorf("chaos: read the balance of %s: %w", cu, err)
			}
			got = vals[0]
		} else {
			got = w.balance[cu]
		}
		if got != want[cu] {
			s.problem("%s: balance of %s is %d, the ledger adds up to %d", w.name, cu, got, want[cu])
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
