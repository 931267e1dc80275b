package chaos

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// The downstream outage (issue 36, item 4): Config.Outage makes the charge
// consumer's payment provider answer every call with an error for a span of
// virtual time, then recover. Run twice on one seed, with the queue's fixed
// visibility timeout (Config.FixedVisibility: the adapter's backoff off) and
// with the adapter's default backoff, it shows what the backoff is for: with
// the fixed timeout (6 × the function timeout) a message fails its
// outageReceives receives within half an hour and is dead-lettered; on the
// backoff it waits at least 65 minutes before its last receive.
const (
	// outageReceives is the queues' maxReceiveCount in the outage mode:
	// the construct's default, which the backoff's horizon is made for.
	outageReceives = 5
	// outagePoll is how long an idle worker waits for a message while the
	// producer runs in the outage mode, where facts come every few
	// seconds (long polling returns at once on a message; here it is
	// found on the next poll).
	outagePoll = 10 * time.Second
	// outageMarker is in the error of every provider call the outage
	// fails.
	outageMarker = "the downstream outage"
)

// OutageSummary is what the outage mode measures, of the charge consumer.
type OutageSummary struct {
	// Backoff: the adapter backed failed records off (its defaults);
	// otherwise they came back after the queue's visibility timeout.
	Backoff bool
	// Start and End bound the outage, from the start of the run.
	Start, End time.Duration
	// DeadLettered counts the charge queue's messages of valid facts
	// without a conflicting variant dead-lettered; DeadLetteredFacts the valid facts all of whose
	// charge messages were (never charged: each waits in the DLQ for a
	// redrive, counted here, not lost).
	DeadLettered, DeadLetteredFacts int
	// ChargedThenDeadLettered counts the valid facts the provider charged
	// while the invocation never saw it succeed (an ambiguous answer, a
	// crash or a deadline after the call: the record released, or its
	// lease lapsed) whose every charge message the outage then
	// dead-lettered: charged, its record absent or IN_PROGRESS past its
	// lease, and a redrive answered from the provider's idempotency key.
	ChargedThenDeadLettered int
	// Attempts counts the provider calls during the outage; PeakPerMinute
	// and PeakPerSecond the most in one minute (second) of virtual time,
	// counted from the outage's start.
	Attempts, PeakPerMinute, PeakPerSecond int
	// Drain is the time from the outage's end until the charge queue was
	// empty (every message deleted or dead-lettered).
	Drain time.Duration
	// VisibilityChanges counts the ChangeMessageVisibility calls the
	// adapters made (every queue).
	VisibilityChanges int

	perMinute, perSecond map[int64]int
	emptyAt              time.Time
}

// inOutage reports whether the provider is down now.
func (s *sim) inOutage() bool {
	if s.cfg.Outage <= 0 {
		return false
	}
	now := s.clock.Now()
	start := epoch.Add(s.cfg.OutageStart)
	return !now.Before(start) && now.Before(start.Add(s.cfg.Outage))
}

// providerAttempt counts a call of the payment provider; during the outage
// it returns the provider's error.
func (s *sim) providerAttempt() error {
	if !s.inOutage() {
		return nil
	}
	o := s.stats.Outage
	since := s.clock.Now().Sub(epoch.Add(s.cfg.OutageStart))
	o.Attempts++
	o.perMinute[int64(since/time.Minute)]++
	o.perSecond[int64(since/time.Second)]++
	s.stats.Faults["provider_outage"]++
	return fmt.Errorf("payment provider: 503 service unavailable (injected: %s, %s from %s)",
		outageMarker, s.cfg.Outage, s.cfg.OutageStart)
}

// left notes a message of q leaving it (deleted or dead-lettered): the
// time the charge queue is last empty is when it drained.
func (s *sim) left(q *queue) {
	if s.stats.Outage != nil && q.live == 0 && len(s.consumers) > 0 && q == s.consumers[0].q {
		s.stats.Outage.emptyAt = s.clock.Now()
	}
}

// finishOutage computes the peaks and the drain time at the end of a run.
func (s *sim) finishOutage() {
	o := s.stats.Outage
	if o == nil {
		return
	}
	for _, n := range o.perMinute {
		o.PeakPerMinute = max(o.PeakPerMinute, n)
	}
	for _, n := range o.perSecond {
		o.PeakPerSecond = max(o.PeakPerSecond, n)
	}
	if !o.emptyAt.IsZero() {
		o.Drain = max(o.emptyAt.Sub(epoch.Add(o.End)), 0)
	}
	// The messages of a fact with a conflicting variant are left out:
	// the variant not applied is dead-lettered as a mismatch, outage or
	// not.
	o.DeadLettered = s.stats.DLQ["charge/valid"]
}

// sqsVisibility is the simulated queues' ChangeMessageVisibility, the
// adapter's Config.Visibility in the outage mode: the message of the
// receipt becomes visible timeout after the virtual now.
type sqsVisibility struct{ s *sim }

func (v sqsVisibility) QueueVisibility(context.Context, string) (time.Duration, error) {
	return visibilityTimeout, nil
}

func (v sqsVisibility) ChangeVisibility(ctx context.Context, queueARN, receipt string, timeout time.Duration) error {
	s := v.s
	if _, err := s.enter(ctx, "change_visibility", receipt); err != nil {
		return err
	}
	m, ok := s.byReceipt[receipt]
	if !ok || m.state != live || m.receipt != receipt || !strings.HasSuffix(queueARN, ":"+m.q.name) {
		// SQS: the receipt handle is not the message's latest, or the
		// message is gone.
		return fmt.Errorf("chaos: ChangeMessageVisibility %s on %s: ReceiptHandleIsInvalid", receipt, queueARN)
	}
	if timeout < 0 || timeout > contract.MaxBackoff {
		s.problem("ChangeMessageVisibility of %s to %s, outside SQS's 0 to 12h", m.id, timeout)
	}
	m.visibleAt = s.clock.Now().Add(timeout)
	s.stats.Outage.VisibilityChanges++
	return nil
}

// OutageTable writes the two runs of an outage side by side: fixed
// visibility (the queue's timeout) and backoff.
func OutageTable(w io.Writer, fixed, backoff *Summary) {
	f, b := fixed.Outage, backoff.Outage
	if f == nil || b == nil {
		fmt.Fprintln(w, "outage: not an outage run")
		return
	}
	fmt.Fprintf(w, "outage of %s from %s (charge's provider down), seed %d, %d facts, maxReceiveCount %d, visibility timeout %s:\n",
		f.End-f.Start, f.Start, fixed.Seed, fixed.Facts, outageReceives, visibilityTimeout)
	row := func(name string, a, c any) { fmt.Fprintf(w, "  %-42s %18v %18v\n", name, a, c) }
	row("", "fixed visibility", "backoff 10m..1h")
	row("charge messages dead-lettered (valid)", f.DeadLettered, b.DeadLettered)
	row("charge facts dead-lettered (never charged)", f.DeadLetteredFacts, b.DeadLetteredFacts)
	row("charged unseen, then dead-lettered", f.ChargedThenDeadLettered, b.ChargedThenDeadLettered)
	row("provider attempts during the outage", f.Attempts, b.Attempts)
	row("peak attempts per minute (outage)", f.PeakPerMinute, b.PeakPerMinute)
	row("peak attempts per second (outage)", f.PeakPerSecond, b.PeakPerSecond)
	row("drain after recovery", f.Drain.Round(time.Second), b.Drain.Round(time.Second))
	row("ChangeMessageVisibility calls", f.VisibilityChanges, b.VisibilityChanges)
	row("double effects", fixed.DoubleEffects, backoff.DoubleEffects)
	row("lost", fixed.Lost, backoff.Lost)
	row("stuck", fixed.Stuck, backoff.Stuck)
	row("violations", fixed.Violations, backoff.Violations)
}
