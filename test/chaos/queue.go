package chaos

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// fact is one business fact the producer publishes: an order placed. Poison
// facts are published as messages no consumer can ever process; a conflict
// fact is later republished under the same order id with another amount (a
// producer bug: same key, different content).
type fact struct {
	index    int
	id       string // the order id
	customer string
	amount   int64
	poison   string // the kind of bad input, "" for a valid fact
	conflict int64  // the amount of the conflicting variant, 0 for none
	// hash is the payload hash of each variant (the same for every
	// consumer: they ignore the same fields).
	hash [2]string
}

// badAt reports whether consumer c can never process the fact: bad input
// for every consumer, or writes a transactional consumer's store refuses.
func (f *fact) badAt(c *consumer) bool {
	return f.poison != "" && (f.poison != "tx_invalid" || c.tx)
}

// amountOf returns the amount of a variant.
func (f *fact) amountOf(variant int) int64 {
	if variant == 1 {
		return f.conflict
	}
	return f.amount
}

// body is the business message of a variant.
func (f *fact) body(variant int, placedAt time.Time) string {
	ts := placedAt.UTC().Format(time.RFC3339Nano)
	switch f.poison {
	case "not_json":
		return fmt.Sprintf(`{"orderId":%q, "amount": %d EUR}`, f.id, f.amount)
	case "wrong_shape":
		return fmt.Sprintf(`{"orderId":[%q],"customerId":%q,"amount":"ten","currency":"EUR"}`, f.id, f.customer)
	case "deep":
		return fmt.Sprintf(`{"orderId":%q,"customerId":%q,"amount":%d,"currency":"EUR","meta":%s1%s}`, f.id, f.customer, f.amount, strings.Repeat("[", 100), strings.Repeat("]", 100))
	case "too_large":
		return fmt.Sprintf(`{"orderId":%q,"customerId":%q,"amount":%d,"currency":"EUR","note":%q}`, f.id, f.customer, f.amount, strings.Repeat("x", maxMessageBytes))
	}
	// Valid facts, and poison whose key, amount or line items are the
	// problem.
	var lines []int64
	if f.poison == "tx_invalid" {
		lines = make([]int64, txInvalidLines)
		for i := range lines {
			lines[i] = 1 + int64(i)
		}
	}
	b, _ := json.Marshal(struct {
		OrderID    string  `json:"orderId"`
		CustomerID string  `json:"customerId"`
		Amount     int64   `json:"amount"`
		Currency   string  `json:"currency"`
		PlacedAt   string  `json:"placedAt"`
		Lines      []int64 `json:"lines,omitempty"`
	}{f.id, f.customer, f.amountOf(variant), "EUR", ts, lines})
	return string(b)
}

// direct reports whether the fact's messages bypass SNS: a misconfigured
// producer writing straight into a queue, the only way some bodies can
// arrive.
func (f *fact) direct() bool { return f.poison == "bad_envelope" || f.poison == "invalid_utf8" }

func (f *fact) directBody() string {
	if f.poison == "bad_envelope" {
		return fmt.Sprintf(`{"Type":"Notification","TopicArn":%q,"Message":{"orderId":%q}}`, topicARN, f.id)
	}
	return "{\"orderId\":\"" + f.id + "\xff\xfe\"}"
}

const topicARN = "arn:aws:sns:eu-west-1:123456789012:orders"

type msgState int

const (
	live msgState = iota
	deleted
	deadLettered
)

// message is one SQS message: one delivery of a variant of a fact into one
// queue. Duplicates (SNS redelivery, producer retries) are separate messages
// with their own ids.
type message struct {
	id       string
	q        *queue
	f        *fact
	variant  int
	business string // the business message, or the verbatim body of a direct message
	direct   bool
	snsID    string
	// why the message exists: "first", "producer_retry", "sns_duplicate" or
	// "conflict".
	origin string
	// publishedAt is when SNS accepted the Publish (the envelope's
	// Timestamp; zero for a direct message), sentAt when the message
	// entered the queue (its SentTimestamp).
	publishedAt, sentAt time.Time
	visibleAt           time.Time
	receives            int
	receipt             string // of the latest receive: only it may delete
	state               msgState
	// The outcome and reason the adapter logged for the latest judged
	// delivery, and the first reason logged for each outcome: what an
	// operator finds when looking up a dead-lettered message's id in the
	// logs.
	lastOutcome, lastReason string
	reasons                 map[string]string
	keyReused               bool // a delivery failed because the provider refused the reused key
	txInvalid               bool // a delivery failed because the store refused its writes as invalid
	outageFailed            bool // a delivery failed because of the downstream outage (Config.Outage)
}

// queue is a standard SQS queue with a redrive policy: receives return a
// random sample of visible messages (no order), a received message is
// invisible for the visibility timeout unless deleted with its latest
// receipt, and a message received more than maxReceiveCount times goes to
// the DLQ.
type queue struct {
	name string
	// consumer is the consumer's name: the same for its queues in both
	// Regions.
	consumer string
	envelope bool // SNS delivers in an envelope (raw message delivery off)
	tx       bool // its consumer's effect is transactional
	msgs     []*message
	live     int
	dlq      []*message
	seq      int
}

func (q *queue) add(m *message) {
	if m.sentAt.IsZero() {
		m.sentAt = m.visibleAt
	}
	q.seq++
	m.id = fmt.Sprintf("%s-%d", q.name, q.seq)
	m.q = q
	q.msgs = append(q.msgs, m)
	q.live++
}

// compact drops the messages that left the queue from its list.
func (q *queue) compact() {
	if len(q.msgs) < 256 || q.live*2 > len(q.msgs) {
		return
	}
	kept := q.msgs[:0]
	for _, m := range q.msgs {
		if m.state == live {
			kept = append(kept, m)
		}
	}
	clear(q.msgs[len(kept):])
	q.msgs = kept
}

// nextVisible returns the earliest time a live message becomes visible.
func (q *queue) nextVisible() (time.Time, bool) {
	var next time.Time
	found := false
	for _, m := range q.msgs {
		if m.state == live && (!found || m.visibleAt.Before(next)) {
			next, found = m.visibleAt, true
		}
	}
	return next, found
}

// receive returns up to max visible messages, in random order, and makes
// them invisible for the visibility timeout. A message received more than
// maxReceiveCount times goes to the DLQ instead. Two variants of one order
// never share a batch (see consumer.go: the harness tells the records' store
// calls apart by key).
func (s *sim) receive(q *queue, max int) []*message {
	now := s.clock.Now()
	var visible []*message
	for _, m := range q.msgs {
		if m.state == live && !m.visibleAt.After(now) {
			visible = append(visible, m)
		}
	}
	var batch []*message
	for len(batch) < max && len(visible) > 0 {
		j := s.rng.IntN(len(visible))
		m := visible[j]
		visible[j] = visible[len(visible)-1]
		visible = visible[:len(visible)-1]
		if m.receives >= s.maxReceives {
			s.deadLetter(m)
			continue
		}
		if conflicting(batch, m) {
			continue
		}
		m.receives++
		s.receipts++
		m.receipt = fmt.Sprintf("rcpt-%d", s.receipts)
		if s.cfg.Outage > 0 {
			s.byReceipt[m.receipt] = m
		}
		m.visibleAt = now.Add(visibilityTimeout)
		batch = append(batch, m)
	}
	q.compact()
	return batch
}

func conflicting(batch []*message, m *message) bool {
	for _, b := range batch {
		if b.f == m.f && b.variant != m.variant {
			return true
		}
	}
	return false
}

func (s *sim) deadLetter(m *message) {
	m.state = deadLettered
	m.q.live--
	m.q.dlq = append(m.q.dlq, m)
	s.stats.DLQ[m.q.name+"/"+dlqClass(m)]++
	s.left(m.q)
}

// dlqClass names why a message is in the DLQ, for the summary.
func dlqClass(m *message) string {
	switch {
	case m.f.poison == "tx_invalid" && m.q.tx:
		return "tx_invalid"
	case m.f.poison != "" && m.f.poison != "tx_invalid":
		return "bad_input"
	case m.lastOutcome == "expired":
		return "expired"
	case m.variant == 1 || m.f.conflict != 0:
		return "conflict"
	}
	return "valid"
}

// delete deletes m if receipt is its latest receipt; an older receipt's
// delete does nothing (the message was received again since).
func (s *sim) delete(m *message, receipt string) bool {
	if m.state != live || m.receipt != receipt {
		s.stats.StaleDeletes++
		return false
	}
	m.state = deleted
	m.q.live--
	s.left(m.q)
	return true
}

// render returns the SQS body of m: with SNS envelope delivery the business
// message is the envelope's Message, and its Timestamp the publish time
// (none with noAge, the "no-age" sabotage).
func render(m *message, noAge bool) string {
	if m.direct {
		return m.business
	}
	msg := m.business
	if !m.q.envelope {
		return msg
	}
	env := map[string]string{
		"Type":             "Notification",
		"MessageId":        m.snsID,
		"TopicArn":         topicARN,
		"Message":          msg,
		"Timestamp":        m.publishedAt.UTC().Format("2006-01-02T15:04:05.000Z"),
		"SignatureVersion": "1",
	}
	if noAge {
		delete(env, "Timestamp")
	}
	b, _ := json.Marshal(env)
	return string(b)
}

// stamp is the message's origin time as the adapter reads it: the SNS
// publish time in an envelope, else the SQS SentTimestamp, to the
// millisecond.
func (m *message) stamp() time.Time {
	if !m.direct && m.q.envelope {
		return m.publishedAt.Truncate(time.Millisecond)
	}
	return m.sentAt.Truncate(time.Millisecond)
}

// publish publishes a variant of f at the virtual time at: SNS delivers it
// to every subscribed queue after a small delay (sometimes a long one:
// reordering), sometimes twice.
func (s *sim) publish(f *fact, variant int, at time.Time, origin string) {
	s.snsSeq++
	snsID := fmt.Sprintf("sns-%d", s.snsSeq)
	body := f.body(variant, at)
	for _, c := range s.consumers {
		copies := 1
		if s.chance(pSNSDuplicate) {
			copies = 2
			s.stats.Faults["sns_duplicate"]++
		}
		for k := range copies {
			delay := s.between(5*time.Millisecond, 200*time.Millisecond)
			if s.chance(pSlowDelivery) {
				delay = s.between(time.Second, 30*time.Second)
				s.stats.Faults["slow_delivery"]++
			}
			o := origin
			if k == 1 {
				o = "sns_duplicate"
			}
			s.enqueue(c.q, &message{f: f, variant: variant, business: body, snsID: snsID, origin: o, publishedAt: at, visibleAt: at.Add(delay)})
		}
	}
}

func (s *sim) enqueue(q *queue, m *message) {
	q.add(m)
	s.stats.Messages++
	s.byFact[m.f.index] = append(s.byFact[m.f.index], m)
}

// produce is the producer task: it publishes every fact once, some twice (a
// retry after a timeout it could not tell from a failure: same fact, new
// message), and the conflicting variants later.
func (s *sim) produce(t *task) {
	for _, f := range s.facts {
		now := s.clock.Now()
		if f.direct() {
			// A misconfigured producer writes straight into one queue.
			q := s.consumers[f.index%len(s.consumers)].q
			s.enqueue(q, &message{f: f, business: f.directBody(), direct: true, origin: "first", visibleAt: now})
		} else {
			s.publish(f, 0, now, "first")
			if s.chance(pProducerRetry) {
				// After an error that hid a success, at once; or after
				// its client's timeout.
				s.stats.Faults["producer_retry"]++
				after := s.between(50*time.Millisecond, 2*time.Second)
				if s.chance(0.5) {
					after = s.between(10*time.Second, 30*time.Second)
				}
				s.publish(f, 0, now.Add(after), "producer_retry")
			}
			if f.conflict != 0 {
				s.publish(f, 1, now.Add(s.between(0, 10*time.Minute)), "conflict")
			}
		}
		s.park(t, s.between(0, 2*s.every))
	}
	s.producerDone = true
}
