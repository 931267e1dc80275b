package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// order is the business message both consumers decode.
type order struct {
	OrderID    string `json:"orderId"`
	CustomerID string `json:"customerId"`
	Amount     int64  `json:"amount"`
	Currency   string `json:"currency"`
	PlacedAt   string `json:"placedAt,omitempty"`
	// Lines are the amounts of the order's line items; the transactional
	// consumers write one ledger line each.
	Lines []int64 `json:"lines,omitempty"`
}

func orderKey(o order) (string, error) { return o.OrderID, nil }

// validate reports an order no retry can fix, as the example handlers do.
func (o order) validate() error {
	switch {
	case o.Amount <= 0:
		return fmt.Errorf("%w: order %s: amount %d must be positive", outcome.ErrBadInput, o.OrderID, o.Amount)
	case o.CustomerID == "" || len(o.Currency) != 3:
		return fmt.Errorf("%w: order %s: no customer or currency", outcome.ErrBadInput, o.OrderID)
	}
	return nil
}

// invocation is one Lambda invocation: a batch handed to the adapter, which
// runs its records one after another on the worker's goroutine.
type invocation struct {
	w        *worker
	deadline time.Time
	// dead: the invocation crashed or was killed at its deadline (kill);
	// the worker runs again at restart.
	dead    bool
	restart time.Time
	// outcomes are the adapter's log lines, by message id. Written by the
	// adapter's Handle (on the worker's goroutine) and read after it.
	outcomes map[string]logged
	// retried are the writes the SDK sent twice (store_sdk_retry), by key,
	// with the answer the guard got.
	retried map[string][]retry
	// origins is, by order id, the latest origin time (message.stamp) of
	// the batch's messages of that order: the message an application of
	// the batch comes from was published then or before.
	origins map[string]time.Time
	// completed counts the records of the invocation whose complete or
	// commit the store applied.
	completed int
	// conflicts counts the ReplicatedWriteConflictException answers of
	// the store call under way (two-Region mode); conflictAt is the real
	// time the transport gave the last of them, zero once the store's
	// retry was sent (conflictTransport).
	conflicts  int
	conflictAt time.Time
}

// retry is a write applied, its answer lost, and sent again.
type retry struct {
	op  string
	err error
}

type logged struct{ outcome, reason string }

type invKey struct{}

// invCtx is the invocation's context: its deadline is virtual (the lease is
// taken from it) and it carries the invocation to the store and the effects.
// It is never cancelled.
type invCtx struct{ inv *invocation }

func (c invCtx) Deadline() (time.Time, bool) { return c.inv.deadline, true }
func (invCtx) Done() <-chan struct{}         { return nil }

// Err is never an error: the invocation ends by its deadline, which the
// harness enforces in virtual time (sim.alive).
func (invCtx) Err() error { return nil }
func (c invCtx) Value(k any) any {
	if k == (invKey{}) {
		return c.inv
	}
	return nil
}

// capture is the adapter's logger: it keeps each record's outcome and reason
// in its invocation.
type capture struct{}

func (capture) Enabled(context.Context, slog.Level) bool { return true }
func (capture) Handle(ctx context.Context, r slog.Record) error {
	inv, _ := ctx.Value(invKey{}).(*invocation)
	if inv == nil {
		return nil
	}
	var id string
	var l logged
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "message_id":
			id = a.Value.String()
		case "outcome":
			l.outcome = a.Value.String()
		case "reason":
			l.reason = a.Value.String()
		}
		return true
	})
	if id != "" {
		inv.outcomes[id] = l
	}
	return nil
}
func (c capture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c capture) WithGroup(string) slog.Handler      { return c }

// consumer is one subscriber of the topic: its queue, guard and handler.
type consumer struct {
	index int
	name  string
	// tx: the effect is transactional (Guard.RunTx), run by wallet.
	tx bool
	// region is the consumer's Region in the two-Region mode, else nil.
	region  *region
	window  time.Duration
	wallet  *wallet
	q       *queue
	guard   *idempotency.Guard
	handler interface {
		Handle(context.Context, events.SQSEvent) (events.SQSEventResponse, error)
	}
}

func (s *sim) newConsumer(name string, tx bool, window, lease time.Duration, inner idempotency.TxStore, r *region) (*consumer, error) {
	c := &consumer{index: len(s.consumers), name: name, tx: tx, window: window, region: r}
	c.q = &queue{name: c.label(), consumer: name, envelope: name == "charge", tx: tx}
	if r != nil && r.local != nil {
		inner = r.local // mrec: the Region's own replica
	}
	if tx {
		c.wallet = &wallet{sim: s, name: name, ledger: make(map[string]*entry), balance: make(map[string]int64),
			pending: make(map[string]credit), log: make(map[string][]credit)}
	}
	store := &faultStore{sim: s, inner: inner, wallet: c.wallet, region: r, window: window}
	if s.cfg.Sabotage == "short-window" && name == "points" {
		window /= 3 // the checks still expect c.window
	}
	g, err := idempotency.NewGuard(store, idempotency.Config{
		Namespace:     name,
		Window:        window,
		LeaseMax:      lease,
		FinishBudget:  finishBudget,
		PayloadIgnore: []string{"placedAt"},
		Now:           s.clock.Now,
	})
	if err != nil {
		return nil, err
	}
	cfg := sqsbatch.Config{
		// One after another in batch order, on the worker's goroutine:
		// the schedule is the simulation's, not the Go scheduler's.
		Batch:           handler.Batch{Concurrency: 1, Consumer: name, Logger: slog.New(capture{}), Metrics: io.Discard},
		MaxMessageBytes: maxMessageBytes,
	}
	if s.cfg.Outage > 0 {
		// The adapter drives the simulated queue's visibilities, its
		// jitter drawn from the run's generator.
		cfg.MaxReceiveCount = s.maxReceives
		cfg.Visibility = sqsVisibility{s}
		cfg.Random = s.rng.Float64
		if s.cfg.FixedVisibility {
			cfg.BackoffBase = -1
		}
	}
	c.guard = g
	if tx {
		c.handler = sqsbatch.NewTx(g, orderKey, c.wallet.credit, cfg)
	} else {
		c.handler = sqsbatch.New(g, orderKey, s.charge, cfg)
	}
	if c.index == 0 {
		for _, f := range s.facts {
			for v := range 2 {
				if fc, err := g.Fact(f.id, []byte(f.body(v, epoch))); err == nil {
					f.hash[v] = fc.Hash
				}
			}
		}
	}
	return c, nil
}

// label names the consumer: its name, and its Region in the two-Region mode.
func (c *consumer) label() string {
	if c.region == nil {
		return c.name
	}
	return c.name + "@" + c.region.name
}

// regionScale multiplies the probability of the consumer's crashes and store
// faults: its Region's, 1 with one Region.
func (c *consumer) regionScale() float64 {
	if c.region == nil {
		return 1
	}
	return c.region.scale
}

// worker is one concurrent Lambda execution environment polling a queue.
type worker struct {
	sim *sim
	c   *consumer
	t   *task
}

func (w *worker) run(t *task) {
	w.t = t
	s := w.sim
	for {
		q := w.c.q
		if s.producerDone && q.live == 0 {
			return
		}
		msgs := s.receive(q, 1+s.rng.IntN(batchSize))
		if len(msgs) == 0 {
			// Long polling: wait for the next message to become visible,
			// or, while the producer runs, for a new one.
			wait := time.Hour
			if !s.producerDone {
				wait = s.poll
			}
			next, ok := q.nextVisible()
			switch {
			case ok:
				wait = min(wait, max(next.Sub(s.clock.Now()), time.Millisecond))
			case s.producerDone:
				return // the receive dead-lettered the last messages
			}
			s.park(t, wait+s.between(0, 5*time.Millisecond))
			continue
		}
		w.invoke(msgs)
	}
}

// invoke runs one invocation over msgs and deletes the messages the adapter
// reports done.
func (w *worker) invoke(msgs []*message) {
	s := w.sim
	s.stats.Invocations++
	inv := &invocation{w: w, deadline: s.clock.Now().Add(functionTimeout), outcomes: make(map[string]logged), retried: make(map[string][]retry),
		origins: make(map[string]time.Time)}
	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(msgs))}
	handles := make([]string, len(msgs))
	noAge := s.cfg.Sabotage == "no-age"
	for i, m := range msgs {
		handles[i] = m.receipt
		attrs := map[string]string{"ApproximateReceiveCount": strconv.Itoa(m.receives)}
		if !noAge {
			attrs["SentTimestamp"] = strconv.FormatInt(m.sentAt.UnixMilli(), 10)
		}
		ev.Records[i] = events.SQSMessage{
			MessageId:      m.id,
			ReceiptHandle:  m.receipt,
			Body:           render(m, noAge),
			EventSourceARN: "arn:aws:sqs:eu-west-1:123456789012:" + m.q.name,
			Attributes:     attrs,
		}
		if o, ok := inv.origins[m.f.id]; !ok || m.stamp().After(o) {
			inv.origins[m.f.id] = m.stamp()
		}
		s.countDelivery(w.c, m)
		if m.receives > 1 && !s.clock.Now().Before(m.stamp().Add(w.c.window-limits.ClockSkewMargin)) && len(s.shadow.completions[w.c.name+"#"+m.f.id]) > 0 {
			// The case of issue 19: a redelivery older than the window
			// of a fact the consumer completed.
			s.stats.LateRedeliveries++
		}
	}
	resp, err := w.c.handler.Handle(invCtx{inv}, ev)
	if inv.dead {
		// Nothing the dead invocation did after its crash was seen, and
		// no virtual time passed since.
		s.park(w.t, inv.restart.Sub(s.clock.Now()))
		return
	}
	// The handler returned: its log lines are written, whatever happens
	// to the invocation now.
	for _, m := range msgs {
		l, ok := inv.outcomes[m.id]
		if !ok {
			s.problem("%s: no log line for message %s", w.c.name, m.id)
			continue
		}
		m.lastOutcome, m.lastReason = l.outcome, l.reason
		if m.reasons == nil {
			m.reasons = make(map[string]string)
		}
		if _, ok := m.reasons[l.outcome]; !ok {
			m.reasons[l.outcome] = l.reason
		}
		m.keyReused = m.keyReused || strings.Contains(l.reason, errKeyReused.Error())
		m.outageFailed = m.outageFailed || strings.Contains(l.reason, outageMarker)
		if strings.Contains(l.reason, idempotency.ErrTxInvalid.Error()) {
			m.txInvalid = true
			if err != nil {
				s.problem("%s: message %s, refused as invalid, made the batch a function error: %v", w.c.name, m.id, err)
			}
		}
		s.checkOutcome(w.c, m, l)
		if l.outcome == "expired" {
			s.stats.Expired++
		}
		s.stats.Outcomes[w.c.name+"/"+l.outcome]++
	}
	s.checkRetried(w.c, inv, ev, msgs)
	point := ""
	switch {
	case !s.clock.Now().Before(inv.deadline):
		// It returned too late: Lambda killed the invocation, and its
		// answer never reached the event source mapping.
		point = "timeout"
	case s.chance(pCrashBeforeDelete * s.scale * w.c.regionScale()):
		point = "before_delete"
	}
	if point != "" {
		s.stats.Crashes++
		s.stats.CrashPoints[point]++
		s.park(w.t, s.between(100*time.Millisecond, 2*time.Second))
		return
	}
	failed := make(map[string]bool)
	if err != nil {
		s.stats.BatchErrors++
		for _, m := range msgs {
			failed[m.id] = true
		}
	}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for i, m := range msgs {
		if failed[m.id] && s.cfg.Sabotage != "ignore-failures" {
			continue
		}
		s.checkDone(w.c, m)
		s.delete(m, handles[i])
	}
	s.park(w.t, s.between(time.Millisecond, 20*time.Millisecond))
}

// checkOutcome checks that a valid fact's record failed only for a reason
// the simulation caused: an injected fault, or another worker holding or
// having taken over the fact.
func (s *sim) checkOutcome(c *consumer, m *message, l logged) {
	if l.outcome == "expired" {
		// Only a message as old as the window (less the adapter's
		// margin) is expired; its age only grew since the adapter judged it.
		if age := s.clock.Now().Sub(m.stamp()); age < c.window-limits.ClockSkewMargin {
			s.problem("%s: message %s of %s expired at the age of %v, younger than the window %v", c.name, m.id, m.f.id, age, c.window)
		}
		return
	}
	if m.f.badAt(c) || m.f.conflict != 0 {
		return
	}
	switch l.outcome {
	case "processed", "duplicate", "in_progress", "lease_lost", "not_started":
		return
	case "failed":
		if strings.Contains(l.reason, "injected") || strings.Contains(l.reason, "payment provider") {
			return
		}
	}
	s.problem("%s: valid message %s of %s ended %s for no injected reason: %s", c.name, m.id, m.f.id, l.outcome, l.reason)
}

// checkRetried checks the outcome of every record whose write the SDK sent
// twice (store_sdk_retry) in an invocation that returned: the guard must take
// the second answer for what it is. A reserve or commit that finds its own
// record took the key (never in progress, never a duplicate of itself); a
// release that finds nothing released (never a lost lease); a complete
// answered twice completed.
func (s *sim) checkRetried(c *consumer, inv *invocation, ev events.SQSEvent, msgs []*message) {
	for i, key := range c.guardKeys(ev) {
		rs := inv.retried[key]
		if key == "" || len(rs) == 0 {
			continue
		}
		m := msgs[i]
		l := inv.outcomes[m.id]
		for _, r := range rs {
			bad := false
			switch r.op {
			case "reserve", "commit":
				bad = errors.Is(r.err, idempotency.ErrConditionFailed) &&
					(l.outcome == "in_progress" || l.outcome == "duplicate" || l.outcome == "mismatch")
			case "release":
				bad = r.err == nil && (l.outcome == "lease_lost" || strings.Contains(l.reason, idempotency.ErrLeaseLost.Error()))
			case "complete":
				bad = r.err == nil && l.outcome != "processed"
			}
			if bad {
				s.problem("%s: %s %s was applied, then sent again by the SDK (answer: %v), and the record ended %s (%s)",
					c.name, r.op, key, r.err, l.outcome, l.reason)
			}
		}
	}
}

// guardKeys returns, for each record of a batch that the adapter runs under
// the guard, its fact's key; "" for the others: a record the adapter refuses
// before the guard (bad body, message or key), and a record whose fact an
// earlier record of the batch carries (it takes that record's outcome).
// Two variants of one order never share a batch (see receive), so a key
// names one record's store calls.
func (c *consumer) guardKeys(ev events.SQSEvent) []string {
	keys := make([]string, len(ev.Records))
	seen := make(map[string]bool)
	for i, rec := range ev.Records {
		payload, err := sqsbatch.Parse([]byte(rec.Body), contract.Auto)
		if err != nil || len(payload) > maxMessageBytes {
			continue
		}
		var o order
		if json.Unmarshal(payload, &o) != nil {
			continue
		}
		f, err := c.guard.Fact(o.OrderID, payload)
		if err != nil || seen[f.Key] {
			continue
		}
		seen[f.Key] = true
		keys[i] = f.Key
	}
	return keys
}

func (s *sim) countDelivery(c *consumer, m *message) {
	s.stats.Deliveries++
	if c.region != nil {
		s.stats.Regions.Deliveries[c.region.index]++
	}
	k := strconv.Itoa(c.index) + "/" + strconv.Itoa(m.f.index)
	if s.delivered[k] > 0 {
		s.stats.DuplicateDeliveries++
	}
	s.delivered[k]++
}

// checkDone checks a message the adapter reported done, before its delete:
// its fact must be completed, with its content.
func (s *sim) checkDone(c *consumer, m *message) {
	if m.f.badAt(c) {
		s.problem("%s: message %s (%s) reported done", c.name, m.id, m.f.poison)
		return
	}
	rec, ok := s.shadow.recs[c.name+"#"+m.f.id]
	if !ok || rec.Status != idempotency.StatusCompleted || rec.PayloadHash != m.f.hash[m.variant] {
		s.problem("%s: message %s of %s (variant %d) reported done, but its record is %s", c.name, m.id, m.f.id, m.variant, describe(rec, ok))
	}
}

func describe(rec idempotency.Record, ok bool) string {
	if !ok {
		return "absent"
	}
	return fmt.Sprintf("%s (owner %.8s, hash %.8s)", rec.Status, rec.Owner, rec.PayloadHash)
}

// payment is a charge the fake payment provider made, at a virtual time,
// for a message whose origin time is origin (see invocation.origins).
type payment struct {
	id, key, order, customer string
	amount                   int64
	at, origin               time.Time
}

// provider is a fake payment API that honours idempotency keys like a real
// one: a repeated key returns the original charge; a repeated key with other
// parameters is refused.
type provider struct {
	clock            *clock
	byKey            map[string]*payment
	byOrder          map[string][]*payment
	n                int
	replays, refused int
}

var errKeyReused = errors.New("payment provider: 400 idempotency key reused with different parameters")

func (p *provider) charge(key string, o order, origin time.Time) (string, error) {
	if pm, ok := p.byKey[key]; ok {
		if pm.amount != o.Amount || pm.customer != o.CustomerID || pm.order != o.OrderID {
			p.refused++
			return "", errKeyReused
		}
		p.replays++
		return pm.id, nil
	}
	p.n++
	pm := &payment{id: fmt.Sprintf("ch_%d", p.n), key: key, order: o.OrderID, customer: o.CustomerID, amount: o.Amount, at: p.clock.Now(), origin: origin}
	p.byKey[key] = pm
	if p.byOrder == nil {
		p.byOrder = make(map[string][]*payment)
	}
	p.byOrder[o.OrderID] = append(p.byOrder[o.OrderID], pm)
	return pm.id, nil
}

// charge is the charge consumer's effect: it charges the order through the
// provider, passing the fact's key as the idempotency key.
func (s *sim) charge(ctx context.Context, o order, r idempotency.Reservation) (string, error) {
	inv, err := s.enter(ctx, "effect", r.Key)
	if err != nil {
		return "", err
	}
	if err := s.maybeCrash(inv, "during_effect", pCrash); err != nil {
		return "", err
	}
	if err := s.maybeFailBatch(inv); err != nil {
		return "", err
	}
	if s.chance(pEffectPanic * s.scale) {
		s.stats.Faults["effect_panic"]++
		panic("injected: a transient bug in the effect")
	}
	if err := o.validate(); err != nil {
		return "", err
	}
	// The effect's context ends the finishing budget before the lease (its
	// virtual deadline cannot fire a real timer, so the effect honours it
	// itself, as a context-aware client would).
	deadline, ok := ctx.Deadline()
	if !ok || deadline.After(r.LeaseUntil.Add(-finishBudget)) {
		s.problem("charge %s: the effect's context ends at %v, less than the finishing budget %v before its lease %v",
			r.Key, deadline.Sub(epoch), finishBudget, r.LeaseUntil.Sub(epoch))
	}
	if !s.clock.Now().Before(deadline) {
		// A context-aware client refuses to start the call.
		s.stats.EffectsPastDeadline++
		return "", fmt.Errorf("payment provider call not made: %w (the effect's context ended)", context.DeadlineExceeded)
	}
	if err := s.providerAttempt(); err != nil {
		d, _ := s.latency(0, "")
		if dead := s.wait(inv, d); dead != nil {
			return "", dead
		}
		return "", err
	}
	key := r.Key
	if s.cfg.Sabotage == "token-as-key" {
		key = r.Token
	}
	if s.chance(pEffectToDeadline * s.scale) {
		return s.chargeToDeadline(inv, key, o, r, deadline)
	}
	d, _ := s.latency(pProviderSpike, "provider_spike")
	s.park(inv.w.t, d) // the request is in flight: it lands even if the invocation dies meanwhile
	var id string
	switch x := s.rng.Float64() / s.scale; {
	case x < pProviderDown:
		s.stats.Faults["provider_503"]++
		err = errors.New("payment provider: 503 service unavailable")
	case x < pProviderDown+pProviderAmbiguous:
		if _, err = s.pay(r, key, o, inv.origins[o.OrderID]); err == nil {
			s.stats.Faults["provider_ambiguous"]++
			err = errors.New("payment provider: timeout (the charge was made)")
		}
	default:
		id, err = s.pay(r, key, o, inv.origins[o.OrderID])
	}
	if dead := s.alive(inv); dead != nil {
		return "", dead
	}
	d, _ = s.latency(0, "")
	if dead := s.wait(inv, d); dead != nil {
		return "", dead
	}
	if dead := s.maybeCrash(inv, "during_effect", pCrash); dead != nil {
		return "", dead
	}
	return id, err
}

// pay calls the payment provider for reservation r, and notes the call
// (two-Region mode: sim.paid).
func (s *sim) pay(r idempotency.Reservation, key string, o order, origin time.Time) (string, error) {
	s.paid(r)
	return s.provider.charge(key, o, origin)
}

// chargeToDeadline is a provider call that ends when the effect's context
// does: the charge made at once and the effect waiting for its context to end
// before it returns the charge (effect_until_deadline); the provider's answer
// arriving at the very deadline (effect_at_deadline); or the charge made and
// the effect returning the context's error at the deadline
// (effect_deadline_exceeded). What follows, complete or release, must still
// have the finishing budget before the lease: sim.finishing checks it.
func (s *sim) chargeToDeadline(inv *invocation, key string, o order, r idempotency.Reservation, deadline time.Time) (string, error) {
	kind := [...]string{"effect_until_deadline", "effect_at_deadline", "effect_deadline_exceeded"}[s.rng.IntN(3)]
	if s.cfg.Sabotage == "effect-to-lease" {
		deadline = r.LeaseUntil
	}
	s.stats.Faults[kind]++
	var id string
	var err error
	if kind != "effect_at_deadline" {
		id, err = s.pay(r, key, o, inv.origins[o.OrderID])
	}
	s.park(inv.w.t, deadline.Sub(s.clock.Now()))
	if dead := s.alive(inv); dead != nil {
		return "", dead
	}
	switch kind {
	case "effect_at_deadline":
		id, err = s.pay(r, key, o, inv.origins[o.OrderID])
	case "effect_deadline_exceeded":
		if err == nil {
			err = fmt.Errorf("payment provider: charge %s made, then %w (injected: the effect ran until its context ended)", id, context.DeadlineExceeded)
		}
		id = ""
	}
	s.deadlineEffects[r.Token] = r.LeaseUntil
	return id, err
}

// maybeFailBatch fails the invocation as a whole, with probability
// pWholeBatch, once a record of it has completed: the execution environment
// is killed (out of memory, an effect that ignores its context), so that
// Lambda deletes nothing and SQS makes the whole batch visible again after
// the visibility timeout, the completed records with it. For a consumer
// whose window is shorter than the visibility timeout they come back after
// their window (issue 19): the adapter must see their age and not run them.
func (s *sim) maybeFailBatch(inv *invocation) error {
	if inv.completed == 0 || !s.chance(pWholeBatch*s.scale) {
		return nil
	}
	s.stats.Faults["whole_batch_failure"]++
	return s.kill(inv, "whole_batch_failure")
}

// finishing checks the complete or release of the reservation owned by
// owner, if its effect ran until its context ended: it must be sent with at
// least the finishing budget left before the lease.
func (s *sim) finishing(op, key, owner string) {
	lease, ok := s.deadlineEffects[owner]
	if !ok {
		return
	}
	delete(s.deadlineEffects, owner)
	if left := lease.Sub(s.clock.Now()); left < finishBudget {
		s.problem("%s %s after an effect that ran until its context ended was sent with %v of the lease left, less than the finishing budget %v", op, key, left, finishBudget)
		return
	}
	s.stats.FinishedInBudget++
}

// cashback is the wallet's credit for an order.
func cashback(amount int64) int64 { return max(amount/100, 1) }

// entry is the wallet's ledger line of one order.
type entry struct {
	count  int
	amount int64
}

// credit is one credit of an order, as the harness saw it applied, for a
// message whose origin time is origin (see invocation.origins).
type credit struct {
	order, customer string
	amount          int64
	at, origin      time.Time
}

// wallet is a transactional consumer: its effect credits the customer's
// balance and writes the order's ledger entry (and one line per line item),
// with the COMPLETED record, in one transaction. Its items are named after
// the consumer, so that the two wallets share the table.
type wallet struct {
	sim     *sim
	name    string
	ledger  map[string]*entry // memory store only
	balance map[string]int64  // memory store only
	// pending are the credits computed by an effect, by owner token, until
	// their commit is applied; log the credits applied, by order, in the
	// order they were applied: the times the store does not keep.
	pending map[string]credit
	log     map[string][]credit
}

// memTx is the writes of a wallet on the memory store: the function the
// store applies, and the number of writes the transaction would hold on
// DynamoDB, which faultStore.Commit limits as dynamostore does.
type memTx struct {
	writes int
	apply  storetest.MemoryWrites
}

func (w *wallet) credit(ctx context.Context, o order, r idempotency.Reservation) (any, string, error) {
	s := w.sim
	inv, err := s.enter(ctx, "effect", r.Key)
	if err != nil {
		return nil, "", err
	}
	if err := s.maybeCrash(inv, "during_effect", pCrash); err != nil {
		return nil, "", err
	}
	if err := s.maybeFailBatch(inv); err != nil {
		return nil, "", err
	}
	d, _ := s.latency(0, "")
	if err := s.wait(inv, d); err != nil {
		return nil, "", err
	}
	if err := o.validate(); err != nil {
		return nil, "", err
	}
	n := cashback(o.Amount)
	result := "credited " + strconv.FormatInt(n, 10)
	c := credit{order: o.OrderID, customer: o.CustomerID, amount: o.Amount, origin: inv.origins[o.OrderID]}
	if s.cfg.Sabotage == "effect-outside-tx" {
		// The naive handler: the credit happens in the effect, the record
		// is committed after it.
		if err := w.apply(ctx, o, n); err != nil {
			return nil, "", err
		}
		w.applied(c)
		return nil, result, nil
	}
	w.pending[r.Token] = c
	if s.cfg.Store == "dynamodb" {
		return w.items(o, n), result, nil
	}
	return memTx{writes: 2 + len(o.Lines), apply: func() error {
		w.applyMemory(o, n)
		return nil
	}}, result, nil
}

// committed records the credit of the reservation owned by owner, whose
// commit, sent at sent, the store just applied: the credit is applied as of
// the commit, where its window starts.
func (w *wallet) committed(owner string, sent time.Time) {
	if c, ok := w.pending[owner]; ok {
		delete(w.pending, owner)
		c.at = sent
		w.log[c.order] = append(w.log[c.order], c)
	}
}

// applied records a credit applied now, outside a commit (sabotage).
func (w *wallet) applied(c credit) {
	c.at = w.sim.clock.Now()
	w.log[c.order] = append(w.log[c.order], c)
}

func (w *wallet) applyMemory(o order, n int64) {
	e := w.ledger[o.OrderID]
	if e == nil {
		e = &entry{}
		w.ledger[o.OrderID] = e
	}
	e.count++
	e.amount = o.Amount
	w.balance[o.CustomerID] += n
}

func (w *wallet) apply(ctx context.Context, o order, n int64) error {
	if w.sim.cfg.Store == "dynamodb" {
		return applyItems(ctx, w.sim.cfg.DynamoDB, w.items(o, n))
	}
	w.applyMemory(o, n)
	return nil
}
