package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/eventbridge"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/s3event"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// The sources simulation: the consumer's other sources, an EventBridge rule
// and an S3 bucket, each delivering into its own standard queue, consumed
// by the real adapter (eventbridge.New, s3event.New) under a
// guard on the memory store, on the virtual clock, with the faults of each
// source:
//
//   - "eventbridge_producer_retry": the producer calls PutEvents again with
//     the same detail: a new event, with a new id and time.
//   - "eventbridge_rule_retry": the rule delivers an event again (it did
//     not see SQS's answer): the same event, the same id, later.
//   - "s3_repeat": S3 sends a notification again: the same records.
//   - "s3_multi_record": a notification of two to four records, each a
//     fact of its own.
//   - "record_failure": in a multi-record notification, one record's effect
//     fails (its downstream refuses it, for now) while the others succeed:
//     the message comes back, its records done are duplicates.
//   - "s3_test_event": S3's s3:TestEvent, which must be acknowledged.
//   - "store_throttle", "store_ambiguous" (a write applied, its answer
//     lost), "crash_before_delete" (the invocation's answer lost: the
//     whole batch comes back), and poison (an event without its detail, a
//     record whose key does not decode), which must reach the DLQ.
//
// The invariants, per fact: its effect applied once (downstream
// idempotent on Reservation.Key, as a payment API is), never entered again
// once its record is completed (a double effect), and its record
// completed unless it is poison (lost otherwise); a message is deleted only
// when all of its records' facts are completed; every message ends deleted
// or in the DLQ (stuck otherwise), a test event deleted, and only poison in
// the DLQ. The sabotage "delete-any-record" deletes an S3 message as soon as
// one of its records succeeded, and must lose facts; "raw-events" reads the
// events as raw messages (the whole event hashed, its id and time with the
// detail), so that a producer's retry is a mismatch that ends in the DLQ.

// SourcesSummary is what the sources simulation counted.
type SourcesSummary struct {
	Facts, Messages, Deliveries, Records   int
	Faults, Outcomes                       map[string]int
	Applied, Reruns                        int // effects applied downstream; effects entered again for an applied key (a takeover after a lost complete), which the downstream absorbs
	DeadLettered                           int
	DoubleEffects, Lost, Stuck, Violations int
	Problems                               []string
}

// Line is the sources' part of the per-seed line: their new faults and
// their verdict.
func (s *SourcesSummary) Line() string {
	return fmt.Sprintf("eb_producer_retries=%d eb_rule_retries=%d s3_repeats=%d s3_multi_record=%d record_failures=%d s3_test_events=%d sources_facts=%d sources_double_effects=%d sources_lost=%d sources_stuck=%d sources_violations=%d",
		s.Faults["eventbridge_producer_retry"], s.Faults["eventbridge_rule_retry"], s.Faults["s3_repeat"], s.Faults["s3_multi_record"],
		s.Faults["record_failure"], s.Faults["s3_test_event"], s.Facts, s.DoubleEffects, s.Lost, s.Stuck, s.Violations)
}

// OK reports whether every invariant held.
func (s *SourcesSummary) OK() bool {
	return s.DoubleEffects == 0 && s.Lost == 0 && s.Stuck == 0 && s.Violations == 0
}

func (s *SourcesSummary) problem(format string, args ...any) {
	s.Violations++
	if len(s.Problems) < 20 {
		s.Problems = append(s.Problems, fmt.Sprintf(format, args...))
	}
}

// Fault probabilities of the sources simulation.
const (
	pEBProducerRetry = 0.30
	pEBRuleRetry     = 0.10
	pS3Repeat        = 0.20
	pS3Multi         = 0.25
	pRecordFail      = 0.30 // of a multi-record notification, once
	pSourcePoison    = 0.01
	pSrcThrottle     = 0.01
	pSrcAmbiguous    = 0.01
	pSrcCrash        = 0.01
	srcVisibility    = 6 * time.Minute
	srcLease         = 10 * time.Second
	srcMaxReceives   = 5
)

type srcMessage struct {
	id, body        string
	facts           []string // the keys of the facts its records carry ("" for a poison record)
	poison, test    bool
	sent, visibleAt time.Time
	receives        int
	state           msgState
}

type srcQueue struct {
	name string
	msgs []*srcMessage
}

// srcSim is one run of the sources simulation. It runs on one goroutine:
// the adapter runs each batch's records in order (Concurrency 1).
type srcSim struct {
	rng      *rand.Rand
	clock    *clock
	sum      *SourcesSummary
	sabotage string
	store    *srcStore
	inner    *storetest.MemoryStore
	applied  map[string]int // downstream, by the reservation's key
	failOnce map[string]bool
	seq      int
}

// srcStore injects store faults into the memory store.
type srcStore struct {
	sim *srcSim
	idempotency.Store
}

var errSrcThrottled = errors.New("injected: ProvisionedThroughputExceededException")

func (s *srcStore) fault(write bool, apply func() error) error {
	x := s.sim.rng.Float64()
	switch {
	case x < pSrcThrottle:
		s.sim.sum.Faults["store_throttle"]++
		return errSrcThrottled
	case write && x < pSrcThrottle+pSrcAmbiguous:
		if err := apply(); err != nil {
			return err
		}
		s.sim.sum.Faults["store_ambiguous"]++
		return errors.New("injected: the write was applied, its answer lost")
	}
	return apply()
}

func (s *srcStore) Reserve(ctx context.Context, r idempotency.Record, now time.Time) error {
	return s.fault(true, func() error { return s.Store.Reserve(ctx, r, now) })
}

func (s *srcStore) Get(ctx context.Context, k string) (rec *idempotency.Record, err error) {
	err = s.fault(false, func() error { rec, err = s.Store.Get(ctx, k); return err })
	return rec, err
}

func (s *srcStore) Complete(ctx context.Context, r idempotency.Record) error {
	return s.fault(true, func() error { return s.Store.Complete(ctx, r) })
}

func (s *srcStore) Release(ctx context.Context, k, owner string) error {
	return s.fault(true, func() error { return s.Store.Release(ctx, k, owner) })
}

// srcCtx is an invocation's context: its deadline is virtual, far in the
// real future (epoch), so that the adapter never holds a record back.
type srcCtx struct{ deadline time.Time }

func (c srcCtx) Deadline() (time.Time, bool) { return c.deadline, true }
func (srcCtx) Done() <-chan struct{}         { return nil }
func (srcCtx) Err() error                    { return nil }
func (srcCtx) Value(any) any                 { return nil }

// RunSources runs the sources simulation: facts facts, half of them
// EventBridge events and half S3 uploads, from seed.
func RunSources(seed int64, facts int, sabotage string) *SourcesSummary {
	s := &srcSim{
		rng:   rand.New(rand.NewPCG(uint64(seed), 0x50c3)),
		clock: &clock{now: epoch}, sabotage: sabotage,
		sum:     &SourcesSummary{Facts: facts, Faults: map[string]int{}, Outcomes: map[string]int{}},
		inner:   storetest.NewMemoryStore(),
		applied: map[string]int{}, failOnce: map[string]bool{},
	}
	s.store = &srcStore{sim: s, Store: s.inner}
	evGuard := s.guard("events")
	objGuard := s.guard("uploads")
	cfg := sqsbatch.Config{Concurrency: 1, Consumer: "sources", Logger: slog.New(srcLog{s}), Metrics: io.Discard}
	evQ, objQ := &srcQueue{name: "events"}, &srcQueue{name: "uploads"}
	evH := eventbridge.New(evGuard, func(e eventbridge.Event[order]) (string, error) { return e.Detail.OrderID, nil },
		func(ctx context.Context, e eventbridge.Event[order], r idempotency.Reservation) (string, error) {
			return "", s.effect(r.Key)
		}, cfg)
	evHandle := evH.Handle
	if sabotage == "raw-events" {
		// The events read as raw messages: the whole event hashed, its id
		// and time with the detail.
		raw := cfg
		raw.Delivery = contract.Raw
		evHandle = sqsbatch.New(evGuard, func(e struct{ Detail order }) (string, error) { return e.Detail.OrderID, nil },
			func(ctx context.Context, e struct{ Detail order }, r idempotency.Reservation) (string, error) {
				return "", s.effect(r.Key)
			}, raw).Handle
	}
	objH := s3event.New(objGuard, s3event.ObjectKey, func(ctx context.Context, o s3event.Object, r idempotency.Reservation) (string, error) {
		return "", s.effect(r.Key)
	}, cfg)
	var valid []string // every valid fact's record key

	// The EventBridge producer.
	for i := range facts / 2 {
		id := fmt.Sprintf("o-%d", i)
		if s.chance(pSourcePoison) {
			s.send(evQ, fmt.Sprintf(`{"version":"0","id":"ev-%d","detail-type":"OrderPlaced","source":"shop","account":"1","time":"%s","region":"eu-west-1","resources":[]}`, i, s.clock.Now().Format(time.RFC3339)), []string{""}, true)
			continue
		}
		valid = append(valid, "events#"+id)
		detail := fmt.Sprintf(`{"orderId":%q,"customerId":"c-%d","amount":%d,"currency":"EUR"}`, id, i%97, 1+i%500)
		ev := s.event(detail)
		s.send(evQ, ev, []string{"events#" + id}, false)
		if s.chance(pEBRuleRetry) {
			s.sum.Faults["eventbridge_rule_retry"]++
			s.send(evQ, ev, []string{"events#" + id}, false)
		}
		if s.chance(pEBProducerRetry) {
			s.sum.Faults["eventbridge_producer_retry"]++
			s.send(evQ, s.event(detail), []string{"events#" + id}, false)
		}
	}
	// The bucket: uploads, some notifications of several records.
	s.sum.Faults["s3_test_event"]++
	s.send(objQ, `{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"2100-01-01T00:00:00.000Z","Bucket":"uploads","RequestId":"5582815E1AEA5ADF","HostId":"x"}`, nil, false)
	for i := 0; i < facts-facts/2; {
		n := 1
		if s.chance(pS3Multi) {
			n = 2 + s.rng.IntN(3)
			s.sum.Faults["s3_multi_record"]++
		}
		var recs, keys []string
		poison := false
		for j := 0; j < n && i < facts-facts/2; j++ {
			key := fmt.Sprintf("in/%d/file %d.csv", i%13, i)
			enc := url.QueryEscape(key)
			if s.chance(pSourcePoison) {
				enc, poison = "bad%zz"+strconv.Itoa(i), true
				keys = append(keys, "")
			} else {
				k := fmt.Sprintf("uploads#bucket/%s@%016X", key, i)
				keys = append(keys, k)
				valid = append(valid, k)
			}
			recs = append(recs, s.record(enc, i))
			i++
		}
		if len(recs) > 1 && s.chance(pRecordFail) {
			s.sum.Faults["record_failure"]++
			for _, k := range keys[1:2] {
				s.failOnce[k] = true
			}
		}
		body := `{"Records":[` + strings.Join(recs, ",") + `]}`
		s.send(objQ, body, keys, poison)
		if s.chance(pS3Repeat) {
			s.sum.Faults["s3_repeat"]++
			s.send(objQ, body, keys, poison)
		}
	}

	s.drain([]*srcQueue{evQ, objQ}, map[*srcQueue]func(context.Context, events.SQSEvent) (events.SQSEventResponse, error){evQ: evHandle, objQ: objH.Handle})
	s.check(valid, []*srcQueue{evQ, objQ})
	return s.sum
}

func (s *srcSim) guard(ns string) *idempotency.Guard {
	g, err := idempotency.NewGuard(s.store, idempotency.Config{Namespace: ns, Window: longWindow, LeaseMax: srcLease, Now: s.clock.Now})
	if err != nil {
		panic(err) // a constant configuration
	}
	return g
}

func (s *srcSim) chance(p float64) bool { return s.rng.Float64() < p }

func (s *srcSim) event(detail string) string {
	s.seq++
	s.clock.advanceTo(s.clock.Now().Add(time.Millisecond))
	return fmt.Sprintf(`{"version":"0","id":"ev-%08d","detail-type":"OrderPlaced","source":"shop","account":"111122223333","time":"%s","region":"eu-west-1","resources":[],"detail":%s}`,
		s.seq, s.clock.Now().UTC().Format(time.RFC3339), detail)
}

func (s *srcSim) record(encodedKey string, i int) string {
	s.clock.advanceTo(s.clock.Now().Add(time.Millisecond))
	return fmt.Sprintf(`{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"eu-west-1","eventTime":"%s","eventName":"ObjectCreated:Put",`+
		`"responseElements":{"x-amz-request-id":"R%d"},"s3":{"s3SchemaVersion":"1.0","bucket":{"name":"bucket"},"object":{"key":%q,"size":%d,"eTag":"e%d","sequencer":"%016X"}}}`,
		s.clock.Now().UTC().Format("2006-01-02T15:04:05.000Z"), s.rng.IntN(1e6), encodedKey, 1+i, i, i)
}

func (s *srcSim) send(q *srcQueue, body string, facts []string, poison bool) {
	s.sum.Messages++
	q.msgs = append(q.msgs, &srcMessage{id: fmt.Sprintf("%s-%d", q.name, len(q.msgs)), body: body, facts: facts, poison: poison,
		test: facts == nil, sent: s.clock.Now(), visibleAt: s.clock.Now()})
}

// effect is the downstream call: idempotent on the reservation's key, as a
// payment API is. It fails once for a record told to (record_failure).
func (s *srcSim) effect(key string) error {
	s.clock.advanceTo(s.clock.Now().Add(time.Duration(1+s.rng.IntN(20)) * time.Millisecond))
	if rec, _ := s.inner.Get(context.Background(), key); rec != nil && rec.Status == idempotency.StatusCompleted {
		s.sum.DoubleEffects++
		s.problem("the effect of %s ran again after its record completed", key)
	}
	if s.failOnce[key] {
		delete(s.failOnce, key)
		return errors.New("downstream refused the record, for now")
	}
	if s.applied[key] > 0 {
		s.sum.Reruns++
	} else {
		s.sum.Applied++
	}
	s.applied[key]++
	return nil
}

func (s *srcSim) problem(format string, args ...any) { s.sum.problem(format, args...) }

// drain plays the event source mappings until every queue is empty.
func (s *srcSim) drain(qs []*srcQueue, handlers map[*srcQueue]func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)) {
	for step := 0; step < 1_000_000; step++ {
		var next time.Time
		progressed := false
		for _, q := range qs {
			var batch []*srcMessage
			size := 1 + s.rng.IntN(10)
			for _, m := range q.msgs {
				if m.state != live {
					continue
				}
				if m.visibleAt.After(s.clock.Now()) {
					if next.IsZero() || m.visibleAt.Before(next) {
						next = m.visibleAt
					}
					continue
				}
				if len(batch) < size {
					batch = append(batch, m)
				}
			}
			if len(batch) > 0 {
				s.invoke(q, batch, handlers[q])
				progressed = true
			}
		}
		if !progressed {
			if next.IsZero() {
				return
			}
			s.clock.advanceTo(s.clock.Now().Add(next.Sub(s.clock.Now())))
		}
	}
}

func (s *srcSim) invoke(q *srcQueue, batch []*srcMessage, handle func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)) {
	ev := events.SQSEvent{}
	for _, m := range batch {
		if m.receives >= srcMaxReceives {
			m.state = deadLettered
			s.sum.DeadLettered++
			continue
		}
		m.receives++
		m.visibleAt = s.clock.Now().Add(srcVisibility)
		s.sum.Deliveries++
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: m.id, Body: m.body, EventSourceARN: "arn:aws:sqs:eu-west-1:1:" + q.name,
			Attributes: map[string]string{"ApproximateReceiveCount": strconv.Itoa(m.receives), "SentTimestamp": strconv.FormatInt(m.sent.UnixMilli(), 10)}})
	}
	if len(ev.Records) == 0 {
		return
	}
	resp, err := handle(srcCtx{deadline: s.clock.Now().Add(functionTimeout)}, ev)
	s.clock.advanceTo(s.clock.Now().Add(time.Duration(1+s.rng.IntN(50)) * time.Millisecond))
	if s.chance(pSrcCrash) {
		s.sum.Faults["crash_before_delete"]++
		return // the answer is lost: the whole batch comes back
	}
	failed := map[string]bool{}
	if err != nil {
		for _, r := range ev.Records {
			failed[r.MessageId] = true
		}
	}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for _, m := range batch {
		if m.state != live || m.receives == 0 {
			continue
		}
		del := !failed[m.id]
		if s.sabotage == "delete-any-record" && len(m.facts) > 1 {
			for _, k := range m.facts {
				if rec, _ := s.inner.Get(context.Background(), k); k != "" && rec != nil && rec.Status == idempotency.StatusCompleted {
					del = true
				}
			}
		}
		if !del {
			continue
		}
		for _, k := range m.facts {
			if rec, _ := s.inner.Get(context.Background(), k); k == "" || rec == nil || rec.Status != idempotency.StatusCompleted {
				if s.sabotage == "" {
					s.problem("message %s was deleted, but its fact %q is not completed", m.id, k)
				}
			}
		}
		m.state = deleted
	}
}

// check ends the run: every valid fact completed and applied once; every
// message deleted or dead-lettered, only poison in the DLQ.
func (s *srcSim) check(valid []string, qs []*srcQueue) {
	for _, k := range valid {
		rec, _ := s.inner.Get(context.Background(), k)
		switch {
		case rec == nil || rec.Status != idempotency.StatusCompleted:
			s.sum.Lost++
			if len(s.sum.Problems) < 20 {
				s.sum.Problems = append(s.sum.Problems, "fact "+k+" never completed")
			}
		case s.applied[k] == 0:
			s.problem("fact %s completed, its effect never applied", k)
		}
	}
	for _, q := range qs {
		for _, m := range q.msgs {
			switch {
			case m.state == live:
				s.sum.Stuck++
			case m.state == deadLettered && !m.poison:
				s.problem("message %s (not poison) ended in the DLQ", m.id)
			case m.test && m.state != deleted:
				s.problem("the s3:TestEvent %s was not acknowledged", m.id)
			}
		}
	}
	if s.sabotage != "" && s.sum.OK() {
		s.problem("sabotage %s: the invariants found nothing", s.sabotage)
	}
}

// srcLog counts the adapter's outcomes, per record.
type srcLog struct{ s *srcSim }

func (srcLog) Enabled(context.Context, slog.Level) bool { return true }
func (l srcLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "test_event" {
		l.s.sum.Outcomes["test_event"]++
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "outcome" {
			l.s.sum.Outcomes[a.Value.String()]++
			l.s.sum.Records++
		}
		return true
	})
	return nil
}
func (l srcLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l srcLog) WithGroup(string) slog.Handler      { return l }

// sourcesSabotage is the sabotage of Config that the sources simulation
// knows, or none.
func sourcesSabotage(s string) string {
	if s == "delete-any-record" || s == "raw-events" {
		return s
	}
	return ""
}
