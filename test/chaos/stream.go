package chaos

// The stream mode: a seeded, deterministic simulation of Lambda's stream
// event source (Kinesis, one consumer, ParallelizationFactor 1) feeding the
// real stream adapter (kinesis.Handler on idempotency.Guard), with its
// checkpoint semantics, under faults. It is our own model of the event
// source, built from its documentation:
//
//   - A shard is read from its checkpoint, a batch at a time. The adapter's
//     partial batch response names the lowest failed sequence number:
//     Lambda resumes from it, so every later record of the batch is
//     delivered again, and the guard absorbs those that had completed.
//   - A function error (the invocation failed as a whole) bisects the batch
//     (BisectBatchOnFunctionError: the next attempt reads half as many
//     records, which consumes no retry); at one record it is a retry.
//   - After MaximumRetryAttempts retries of a batch, its records from the
//     checkpoint go to the on-failure destination (an S3 object with the
//     batch) and the checkpoint moves past them; a record older than
//     MaximumRecordAge when the shard reaches it goes there too, unread.
//   - Resharding: a split closes a shard and opens two children over its
//     hash range halves; a merge closes two adjacent shards and opens one
//     child over both ranges. A child is read only once every parent is
//     read to its end (parents first), so that a partition key's records are
//     consumed in order across shards.
//   - After the run, the on-failure objects are replayed through the handler
//     (the operator's replay, once the transient faults are over).
//
// What it leaves out: ParallelizationFactor above 1, enhanced fan-out,
// tumbling windows, the event source's own retries before invocation
// (throttling), concurrent shards (shards are read one poll at a time, in
// turn), KPL aggregation, and time spent inside an invocation (the clock
// moves between invocations).
//
// Faults: the downstream refusing an effect (transient), store calls
// throttled, a store write applied whose answer is lost (ambiguous), an
// invocation that fails as a whole after some of its records completed,
// poison records (not JSON) that no retry fixes, outages that leave records
// older than MaximumRecordAge, and producer retries (the same fact put
// again as a new record).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math/big"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/kinesis"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/ops"
)

// StreamConfig configures a stream run.
type StreamConfig struct {
	Seed  int64
	Facts int // business facts produced (default 10,000)
	Keys  int // partition keys (default Facts/20)
	// Sabotage breaks one part of the system, so that a check can be seen
	// failing: "transport-key" (the key is the sequence number, so the guard
	// cannot tell a replay), "lexical" (the checkpoint is the failed record
	// whose sequence number is lowest as a string), "children-first" (a
	// child shard is read before its parents are done), "drop-aged" (records
	// older than the maximum age are dropped, not kept), "lambda-defaults"
	// (Lambda's own defaults, unlimited retries and record age: a failing
	// record blocks its shard).
	Sabotage string
}

// Stream event source settings of the model.
const (
	streamBatchSize  = 50
	streamMaxRetries = 3
	streamMaxAge     = time.Hour
	streamWindow     = 24 * time.Hour
	streamLease      = 30 * time.Second
	maxIdleSteps     = 100
)

// StreamSummary is what a stream run did and found.
type StreamSummary struct {
	Seed                          int64
	Sabotage                      string
	Facts, Records                int
	Deliveries, Replayed          int // record deliveries; deliveries beyond each record's first
	Duplicates                    int // deliveries absorbed by the guard (outcome duplicate)
	Bisections, Retries           int
	Splits, Merges                int
	OnFailureObjects, OnFailure   int // objects and records sent to the on-failure destination
	Aged                          int // of which for their age
	ReplayedFromBucket, Recovered int // records replayed from the bucket; facts whose effect ran in the replay
	Poison                        int // poison records, all in the destination
	OutOfOrderAfterDestination    int // keys whose replayed fact ran after a later one (the destination's price)
	Problems                      []string
}

// OK reports whether every invariant held.
func (s *StreamSummary) OK() bool { return len(s.Problems) == 0 }

// Line is the run's one-line summary.
func (s *StreamSummary) Line() string {
	verdict := "ok"
	if !s.OK() {
		verdict = fmt.Sprintf("FAILED (%d problems)", len(s.Problems))
	}
	mode := "stream"
	if s.Sabotage != "" {
		mode = "stream sabotage=" + s.Sabotage
	}
	return fmt.Sprintf("%s seed=%d facts=%d records=%d deliveries=%d replayed=%d duplicates=%d bisections=%d retries=%d splits=%d merges=%d on-failure=%d records in %d objects (aged %d, poison %d) replayed-from-bucket=%d recovered=%d: %s",
		mode, s.Seed, s.Facts, s.Records, s.Deliveries, s.Replayed, s.Duplicates, s.Bisections, s.Retries, s.Splits, s.Merges,
		s.OnFailure, s.OnFailureObjects, s.Aged, s.Poison, s.ReplayedFromBucket, s.Recovered, verdict)
}

// Report writes the line and the problems.
func (s *StreamSummary) Report(w io.Writer) {
	fmt.Fprintln(w, s.Line())
	for i, p := range s.Problems {
		if i == 20 {
			fmt.Fprintf(w, "  … and %d more\n", len(s.Problems)-20)
			break
		}
		fmt.Fprintln(w, "  -", p)
	}
}

type sfact struct {
	id     string // "<key>/<n>"
	key    string
	n      int // its index among its key's facts
	poison bool
}

type srec struct {
	seq     string
	fact    *sfact
	arrival time.Time
	state   string // "", "completed", "destination"
}

type shard struct {
	id      int
	lo, hi  uint64 // hash range [lo, hi)
	parents []*shard
	recs    []*srec
	closed  bool
	ckpt    int
	retries int
	limit   int // the bisected batch size, 0: the full batch
}

func (sh *shard) done() bool { return sh.closed && sh.ckpt == len(sh.recs) }

type streamSim struct {
	cfg      StreamConfig
	rng      *rand.Rand
	now      time.Time
	sum      *StreamSummary
	shards   []*shard
	seqNum   *big.Int
	bump     int
	handler  *kinesis.Handler[sorder]
	store    *faultyStore
	bySeq    map[string]*srec
	applied  map[string]int      // fact id → effects
	order    map[string][]int    // key → fact indexes, in effect order, while consuming
	lastLine map[string][]string // the outcome lines of the current invocation, by sequence number
	objects  [][]*srec           // on-failure objects
	faulty   bool
	replay   bool
	// invocationFails makes the invocation fail as a whole after its first
	// effect; invocationRecords counts its effects.
	invocationFails   bool
	invocationRecords int
	failMode          map[string]int // fact id → transient failures left
}

type sorder struct {
	ID   string `json:"id"`
	Fact string `json:"fact"`
}

// RunStream runs one stream simulation.
func RunStream(ctx context.Context, cfg StreamConfig) *StreamSummary {
	if cfg.Facts <= 0 {
		cfg.Facts = 10000
	}
	if cfg.Keys <= 0 {
		cfg.Keys = max(cfg.Facts/20, 1)
	}
	s := &streamSim{
		cfg: cfg, rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed)), now: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC),
		sum: &StreamSummary{Seed: cfg.Seed, Facts: cfg.Facts, Sabotage: cfg.Sabotage}, seqNum: big.NewInt(7),
		bySeq: map[string]*srec{}, applied: map[string]int{}, order: map[string][]int{}, failMode: map[string]int{},
		faulty: true,
	}
	s.store = &faultyStore{inner: storetest.NewMemoryStore(), sim: s}
	guard, err := idempotency.NewGuard(s.store, idempotency.Config{Namespace: "ship", Window: streamWindow, LeaseMax: streamLease, Now: func() time.Time { return s.now }})
	if err != nil {
		s.problem("guard: %v", err)
		return s.sum
	}
	logger := slog.New(&lineCapture{sim: s})
	key := func(o sorder) (string, error) { return o.Fact, nil }
	if cfg.Sabotage == "transport-key" {
		// The key from the transport: the record's sequence number, which a
		// replay shares but a producer's retry does not.
		key = func(o sorder) (string, error) { return o.Fact + "@" + s.inFlight(o), nil }
	}
	s.handler = kinesis.New(guard, key, s.effect, handler.Batch{Concurrency: 1, Logger: logger, Metrics: io.Discard})

	s.shards = []*shard{{id: 0, lo: 0, hi: 1 << 32}, {id: 1, lo: 1 << 31, hi: 1 << 32}}
	s.shards[0].hi = 1 << 31
	facts := s.makeFacts()
	produced, idle := 0, 0
	for {
		if idle > maxIdleSteps {
			s.problem("stuck: the event source made no progress in %d polls after the last record was produced (shards not drained: %s)", maxIdleSteps, s.undrained())
			break
		}
		if produced < len(facts) {
			n := min(len(facts)-produced, 1+s.rng.IntN(40))
			for _, f := range facts[produced : produced+n] {
				s.put(f)
				if !f.poison && s.rng.IntN(10) == 0 {
					s.put(f) // a producer retry: the same fact, a new record
				}
			}
			produced += n
			s.maybeReshard()
		}
		progress := false
		for _, sh := range s.readable() {
			if s.poll(ctx, sh) {
				progress = true
			}
		}
		s.now = s.now.Add(time.Second)
		if s.rng.IntN(300) == 0 {
			s.now = s.now.Add(streamMaxAge + 30*time.Minute) // an outage: what waits is now too old
		}
		if produced == len(facts) && !progress {
			if s.drained() {
				break
			}
			idle++
		}
	}
	s.replayBucket(ctx)
	s.check(ctx, facts)
	return s.sum
}

// inFlight is the sequence number of the record of o's fact that the
// handler is running (for the transport-key sabotage): the first record of
// the fact not yet completed.
func (s *streamSim) inFlight(o sorder) string {
	var best string
	for seq, r := range s.bySeq {
		if r.fact.id == o.Fact && r.state == "" && (best == "" || cmpSeq(seq, best) < 0) {
			best = seq
		}
	}
	return best
}

func (s *streamSim) makeFacts() []*sfact {
	next := make([]int, s.cfg.Keys)
	facts := make([]*sfact, s.cfg.Facts)
	for i := range facts {
		k := s.rng.IntN(s.cfg.Keys)
		f := &sfact{key: fmt.Sprintf("o%d", k), n: next[k]}
		next[k]++
		f.id = fmt.Sprintf("%s/%d", f.key, f.n)
		f.poison = s.rng.IntN(400) == 0
		if !f.poison && s.rng.IntN(80) == 0 {
			s.failMode[f.id] = 1 + s.rng.IntN(6) // the downstream refuses it this many times (more than the retries: the destination)
		}
		facts[i] = f
	}
	return facts
}

// nextSeq returns the next sequence number: increasing, its length growing
// by a digit every few dozen records, so that batches straddle lengths and a
// string comparison would misorder them.
func (s *streamSim) nextSeq() string {
	s.bump++
	if s.bump%150 == 0 {
		s.seqNum.Mul(s.seqNum, big.NewInt(10))
	}
	s.seqNum.Add(s.seqNum, big.NewInt(int64(1+s.rng.IntN(3))))
	return s.seqNum.String()
}

func hashKey(k string) uint64 {
	h := fnv.New32a()
	h.Write([]byte(k))
	return uint64(h.Sum32())
}

func (s *streamSim) put(f *sfact) {
	h := hashKey(f.key)
	for _, sh := range s.shards {
		if !sh.closed && h >= sh.lo && h < sh.hi {
			r := &srec{seq: s.nextSeq(), fact: f, arrival: s.now}
			sh.recs = append(sh.recs, r)
			s.bySeq[r.seq] = r
			s.sum.Records++
			return
		}
	}
	s.problem("no open shard holds the hash of %s", f.key)
}

// maybeReshard splits an open shard, or merges two adjacent open ones.
func (s *streamSim) maybeReshard() {
	if s.rng.IntN(60) != 0 {
		return
	}
	var open []*shard
	for _, sh := range s.shards {
		if !sh.closed {
			open = append(open, sh)
		}
	}
	sort.Slice(open, func(i, j int) bool { return open[i].lo < open[j].lo })
	if len(open) < 6 && (len(open) < 2 || s.rng.IntN(2) == 0) {
		p := open[s.rng.IntN(len(open))]
		if p.hi-p.lo < 2 {
			return
		}
		mid := p.lo + (p.hi-p.lo)/2
		p.closed = true
		s.shards = append(s.shards,
			&shard{id: len(s.shards), lo: p.lo, hi: mid, parents: []*shard{p}},
			&shard{id: len(s.shards) + 1, lo: mid, hi: p.hi, parents: []*shard{p}})
		s.sum.Splits++
		return
	}
	i := s.rng.IntN(len(open) - 1)
	a, b := open[i], open[i+1]
	a.closed, b.closed = true, true
	s.shards = append(s.shards, &shard{id: len(s.shards), lo: a.lo, hi: b.hi, parents: []*shard{a, b}})
	s.sum.Merges++
}

// readable are the shards the event source reads: parents first.
func (s *streamSim) readable() []*shard {
	var out []*shard
	for _, sh := range s.shards {
		ok := s.cfg.Sabotage == "children-first"
		if !ok {
			ok = true
			for _, p := range sh.parents {
				if !p.done() {
					ok = false
				}
			}
		}
		if ok && sh.ckpt < len(sh.recs) {
			out = append(out, sh)
		}
	}
	return out
}

func (s *streamSim) drained() bool {
	for _, sh := range s.shards {
		if sh.ckpt < len(sh.recs) {
			return false
		}
	}
	return true
}

func (s *streamSim) undrained() string {
	var out []string
	for _, sh := range s.shards {
		if sh.ckpt < len(sh.recs) {
			out = append(out, fmt.Sprintf("shard %d at %d of %d", sh.id, sh.ckpt, len(sh.recs)))
		}
	}
	return strings.Join(out, ", ")
}

// poll reads one batch of a shard from its checkpoint and invokes the
// handler, as Lambda's event source does; it reports whether the
// checkpoint moved.
func (s *streamSim) poll(ctx context.Context, sh *shard) bool {
	// Records older than the maximum age go to the destination unread.
	aged := sh.ckpt
	for aged < len(sh.recs) && s.cfg.Sabotage != "lambda-defaults" && s.now.Sub(sh.recs[aged].arrival) > streamMaxAge {
		aged++
	}
	if aged > sh.ckpt {
		if s.cfg.Sabotage == "drop-aged" {
			for _, r := range sh.recs[sh.ckpt:aged] {
				r.state = "dropped"
			}
		} else {
			s.toDestination(sh.recs[sh.ckpt:aged])
			s.sum.Aged += aged - sh.ckpt
		}
		sh.ckpt, sh.retries, sh.limit = aged, 0, 0
		return true
	}
	size := streamBatchSize
	if sh.limit > 0 {
		size = sh.limit
	}
	batch := sh.recs[sh.ckpt:min(len(sh.recs), sh.ckpt+size)]
	ev := events.KinesisEvent{Records: make([]events.KinesisEventRecord, len(batch))}
	for i, r := range batch {
		data := []byte(fmt.Sprintf(`{"id":%q,"fact":%q}`, r.fact.key, r.fact.id))
		if r.fact.poison {
			data = []byte("not json: " + r.fact.id)
		}
		ev.Records[i] = events.KinesisEventRecord{EventID: fmt.Sprintf("shardId-%012d:%s", sh.id, r.seq), Kinesis: events.KinesisRecord{
			SequenceNumber: r.seq, PartitionKey: r.fact.key, Data: data, ApproximateArrivalTimestamp: events.SecondsEpochTime{Time: r.arrival},
		}}
		s.sum.Deliveries++
	}
	s.lastLine = map[string][]string{}
	s.invocationFails = s.faulty && len(batch) > 0 && s.rng.IntN(30) == 0
	s.invocationRecords = 0
	resp, err := s.handler.Handle(ctx, ev)
	s.markCompleted(batch)
	switch {
	case err != nil: // a function error: bisect, or retry
		if len(batch) > 1 && s.cfg.Sabotage != "no-bisect" {
			sh.limit = max(len(batch)/2, 1)
			s.sum.Bisections++
			return false
		}
		return s.retry(sh, batch)
	case len(resp.BatchItemFailures) == 0:
		sh.ckpt += len(batch)
		sh.retries, sh.limit = 0, 0
		return true
	}
	reported := resp.BatchItemFailures[0].ItemIdentifier
	if s.cfg.Sabotage == "lexical" {
		reported = s.lexicalLowestFailed(batch)
	}
	idx := -1
	for i, r := range batch {
		if r.seq == reported {
			idx = i
		}
	}
	if idx < 0 {
		s.problem("shard %d: the reported sequence number %s is not in the batch", sh.id, reported)
		return s.retry(sh, batch)
	}
	moved := idx > 0
	sh.ckpt += idx
	if moved {
		sh.retries = 0
	}
	if sh.limit > 0 && moved {
		sh.limit = 0
	}
	if !moved {
		return s.retry(sh, sh.recs[sh.ckpt:min(len(sh.recs), sh.ckpt+size)])
	}
	return true
}

// retry counts one retry of the batch at the checkpoint; past the maximum,
// its records go to the destination and the checkpoint moves past them.
func (s *streamSim) retry(sh *shard, batch []*srec) bool {
	sh.retries++
	s.sum.Retries++
	if s.cfg.Sabotage == "lambda-defaults" || sh.retries <= streamMaxRetries {
		return false
	}
	s.toDestination(batch)
	sh.ckpt += len(batch)
	sh.retries, sh.limit = 0, 0
	return true
}

func (s *streamSim) toDestination(recs []*srec) {
	obj := make([]*srec, 0, len(recs))
	for _, r := range recs {
		if r.state != "completed" {
			r.state = "destination"
		}
		obj = append(obj, r)
	}
	s.objects = append(s.objects, obj)
	s.sum.OnFailureObjects++
	s.sum.OnFailure += len(recs)
}

// markCompleted marks the records the handler completed or absorbed, from
// its log lines.
func (s *streamSim) markCompleted(batch []*srec) {
	for _, r := range batch {
		for _, o := range s.lastLine[r.seq] {
			switch o {
			case "processed", "duplicate":
				r.state = "completed"
			}
			if o == "duplicate" {
				s.sum.Duplicates++
			}
		}
	}
}

// lexicalLowestFailed is the sabotage: the failed record of the batch whose
// sequence number is lowest as a string.
func (s *streamSim) lexicalLowestFailed(batch []*srec) string {
	low := ""
	for _, r := range batch {
		for _, o := range s.lastLine[r.seq] {
			if o != "processed" && o != "duplicate" && (low == "" || r.seq < low) {
				low = r.seq
			}
		}
	}
	return low
}

// replayBucket replays every on-failure object through the handler, the
// transient faults over.
func (s *streamSim) replayBucket(ctx context.Context) {
	s.faulty, s.replay = false, true
	s.now = s.now.Add(time.Hour) // the operator's fix
	for _, obj := range s.objects {
		// A record no retry fixes (bad input) is settled by hand and left
		// in the bucket; the records of its key behind it were not started,
		// and the object is replayed again without it.
		remaining := obj
		for attempt := 0; attempt < 3 && len(remaining) > 0; attempt++ {
			s.replayObject(ctx, remaining)
			var next []*srec
			for _, r := range remaining {
				if r.state == "completed" || slicesContains(s.lastLine[r.seq], "bad_input") {
					continue
				}
				next = append(next, r)
			}
			remaining = next
		}
	}
}

func slicesContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// replayObject replays one on-failure object through the handler, read
// back as ops.FailureEvent reads the object Lambda wrote.
func (s *streamSim) replayObject(ctx context.Context, obj []*srec) {
	ev := events.KinesisEvent{Records: make([]events.KinesisEventRecord, len(obj))}
	for i, r := range obj {
		data := []byte(fmt.Sprintf(`{"id":%q,"fact":%q}`, r.fact.key, r.fact.id))
		if r.fact.poison {
			data = []byte("not json: " + r.fact.id)
		}
		ev.Records[i] = events.KinesisEventRecord{Kinesis: events.KinesisRecord{SequenceNumber: r.seq, PartitionKey: r.fact.key, Data: data, ApproximateArrivalTimestamp: events.SecondsEpochTime{Time: r.arrival}}}
	}
	payload, _ := json.Marshal(ev)
	object, _ := json.Marshal(map[string]any{"version": "1.0", "payload": string(payload)})
	event, err := ops.FailureEvent(object)
	if err != nil {
		s.problem("on-failure object: %v", err)
		return
	}
	var replay events.KinesisEvent
	if err := json.Unmarshal(event, &replay); err != nil {
		s.problem("on-failure object: %v", err)
		return
	}
	s.sum.ReplayedFromBucket += len(replay.Records)
	s.lastLine = map[string][]string{}
	s.invocationFails = false
	if _, err := s.handler.Handle(ctx, replay); err != nil {
		s.problem("replay of an on-failure object failed as a whole: %v", err)
	}
	s.markCompleted(obj)
}

func (s *streamSim) problem(f string, args ...any) {
	s.sum.Problems = append(s.sum.Problems, fmt.Sprintf(f, args...))
}

// check verifies the invariants over every fact.
func (s *streamSim) check(ctx context.Context, facts []*sfact) {
	recsOf := map[string][]*srec{}
	for _, sh := range s.shards {
		for _, r := range sh.recs {
			recsOf[r.fact.id] = append(recsOf[r.fact.id], r)
		}
	}
	for _, f := range facts {
		n := s.applied[f.id]
		switch {
		case n > 1:
			s.problem("double effect: fact %s ran %d times", f.id, n)
		case f.poison:
			s.sum.Poison++
			if n != 0 {
				s.problem("poison fact %s ran", f.id)
			}
			for _, r := range recsOf[f.id] {
				if r.state != "destination" {
					s.problem("lost: poison record %s of %s is %q, not in the on-failure destination", r.seq, f.id, r.state)
				}
			}
		case n == 0:
			s.problem("lost: fact %s never ran (its records: %s)", f.id, states(recsOf[f.id]))
		}
		if !f.poison {
			for _, r := range recsOf[f.id] {
				if r.state != "completed" {
					s.problem("lost: record %s of %s ended %q, neither completed, a duplicate, nor in the destination", r.seq, f.id, r.state)
				}
			}
			rec, err := s.store.inner.Get(ctx, "ship#"+f.id)
			if s.cfg.Sabotage != "transport-key" && (err != nil || rec == nil || rec.Status != idempotency.StatusCompleted) {
				s.problem("stuck: the record of %s is %s (%v)", f.id, describeRec(rec), err)
			}
		}
	}
	for _, sh := range s.shards {
		if sh.ckpt != len(sh.recs) {
			s.problem("stuck: shard %d checkpointed at %d of %d records", sh.id, sh.ckpt, len(sh.recs))
		}
	}
	for key, ns := range s.order {
		for i := 1; i < len(ns); i++ {
			if ns[i] <= ns[i-1] {
				s.problem("order: key %s ran fact %d after fact %d", key, ns[i], ns[i-1])
				break
			}
		}
	}
	s.sum.Replayed = s.sum.Deliveries - s.sum.Records
}

func describeRec(r *idempotency.Record) string {
	if r == nil {
		return "absent"
	}
	return string(r.Status)
}

func states(recs []*srec) string {
	var out []string
	for _, r := range recs {
		out = append(out, r.seq+"="+r.state)
	}
	return strings.Join(out, " ")
}

func cmpSeq(a, b string) int {
	x, _ := new(big.Int).SetString(a, 10)
	y, _ := new(big.Int).SetString(b, 10)
	return x.Cmp(y)
}

// effect is the business effect: a shipment per fact, not idempotent
// downstream, so that a second run is a double effect.
func (s *streamSim) effect(ctx context.Context, o sorder, r idempotency.Reservation) (string, error) {
	s.invocationRecords++
	if s.invocationFails && s.invocationRecords > 1 {
		// The invocation fails as a whole after its first record
		// completed (an environment killed, an effect that ignored its
		// context): a function error, which the event source bisects.
		return "", fmt.Errorf("%w: the invocation died", outcome.ErrMisconfigured)
	}
	if s.faulty && s.failMode[o.Fact] > 0 {
		s.failMode[o.Fact]--
		return "", errors.New("the carrier refused the shipment (transient)")
	}
	s.applied[o.Fact]++
	if s.replay {
		s.sum.Recovered++
	} else {
		var n int
		fmt.Sscanf(o.Fact[strings.LastIndexByte(o.Fact, '/')+1:], "%d", &n)
		s.order[o.ID] = append(s.order[o.ID], n)
	}
	return "shipped", nil
}

// lineCapture collects the handler's record lines: outcome by sequence
// number.
type lineCapture struct{ sim *streamSim }

func (l *lineCapture) Enabled(context.Context, slog.Level) bool { return true }
func (l *lineCapture) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "record" {
		return nil
	}
	var seq, outcome string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "sequence_number":
			seq = a.Value.String()
		case "outcome":
			outcome = a.Value.String()
		}
		return true
	})
	l.sim.lastLine[seq] = append(l.sim.lastLine[seq], outcome)
	return nil
}
func (l *lineCapture) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *lineCapture) WithGroup(string) slog.Handler      { return l }

// faultyStore injects the store's faults: throttling (nothing applied) and
// ambiguous writes (applied, the answer lost).
type faultyStore struct {
	inner *storetest.MemoryStore
	sim   *streamSim
}

var errStreamThrottled = errors.New("ProvisionedThroughputExceededException (simulated)")

func (f *faultyStore) fault() (throttle, ambiguous bool) {
	if !f.sim.faulty {
		return false, false
	}
	x := f.sim.rng.IntN(1000)
	return x < 8, x >= 8 && x < 10
}

func (f *faultyStore) Reserve(ctx context.Context, rec idempotency.Record, now time.Time) error {
	throttle, ambiguous := f.fault()
	if throttle {
		return errStreamThrottled
	}
	err := f.inner.Reserve(ctx, rec, now)
	if ambiguous && err == nil {
		return errors.New("connection reset after the write (simulated)")
	}
	return err
}

func (f *faultyStore) Get(ctx context.Context, key string) (*idempotency.Record, error) {
	if throttle, _ := f.fault(); throttle {
		return nil, errStreamThrottled
	}
	return f.inner.Get(ctx, key)
}

func (f *faultyStore) Complete(ctx context.Context, rec idempotency.Record) error {
	// Never throttled: a complete that did not apply after the effect ran
	// leaves the fact to a takeover that runs the effect again, the gap
	// only a downstream that honours Reservation.Key closes (the queue
	// mode's provider); here the effect is not idempotent downstream.
	_, ambiguous := f.fault()
	err := f.inner.Complete(ctx, rec)
	if ambiguous && err == nil {
		return errors.New("connection reset after the write (simulated)")
	}
	return err
}

func (f *faultyStore) Release(ctx context.Context, key, owner string) error {
	if throttle, _ := f.fault(); throttle {
		return errStreamThrottled
	}
	return f.inner.Release(ctx, key, owner)
}
