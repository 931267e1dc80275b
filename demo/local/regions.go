package local

// The two-Region part of the demo (issue 43): the topic's consumers that
// may run on a table in multi-Region strong consistency (charge and
// receipt: MRSC has no transactions, so the wallet's transactional effect
// stays in one Region) run in two Regions, Region (the demo's) and
// RegionB, each with its own queues, pollers and execution environments
// (the same bootstraps, started with the Region's AWS_REGION), and every
// order is delivered to both Regions, as an EventBridge global endpoint
// with replication does. Both Regions' bootstraps use one table on kumo:
// the stand-in for the MRSC table.
//
// What kumo v0.33.1 cannot model here (its DynamoDB, read in its source and
// pinned by TestKumoHasNoGlobalTables): replicas, witnesses and
// MultiRegionConsistency (UpdateTable's ReplicaUpdates and
// GlobalTableWitnessUpdates are accepted and ignored; DescribeTable shows
// neither), the Region of a request (one table serves every Region's
// client), cross-Region latency, replication and its lag, and
// ReplicatedWriteConflictException. One table that both Regions write is
// what MRSC promises a conditional write sees; the rest is the simulation's
// (test/chaos, regions.go): the demo shows the deployed bootstraps of two
// Regions on one table, the simulation the faults. The eventual mode's
// double effects (the mrec sabotage) are the simulation's, run by the demo
// and labelled as such.

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/idempotent-consumer/idempotent-consumer/test/chaos"
)

// RegionB is the demo's second Region: with Region, two of the US Region
// set that MRSC supports.
const RegionB = "us-east-2"

// mrecFacts and mrecSeed are the simulation run the demo shows beside its
// regions: part (the mrec sabotage).
const (
	mrecFacts = 1000
	mrecSeed  = 1
)

// RegionsReport is the two-Region part of a run.
type RegionsReport struct {
	Regions []string
	// Orders are the orders published once (a fifth of them twice: a
	// producer's retry) and delivered to both Regions; Consumers the
	// functions that ran in both.
	Orders, Retries, Consumers int
	// Deliveries and Processed are per Region, in the order of Regions.
	Deliveries, Processed []int
	// Duplicates are the records absorbed as duplicates, both Regions;
	// InProgress those that found the fact's lease held (in the other
	// Region, mostly) and were retried.
	Duplicates, InProgress int
	// Effects are the effects seen downstream (charges, e-mails);
	// Doubles the orders with more than one per consumer; Lost those with
	// none that are not in a dead-letter queue.
	Effects, Doubles, Lost int
	// MrecDoubles is what the simulation counts for the guard on a global
	// table in eventual consistency (test/chaos, the mrec sabotage) over
	// MrecFacts facts: not measured on kumo, which cannot model it.
	MrecDoubles, MrecFacts int
	MrecSeed               int64
	// MrecLine is the simulation's own last line of that run.
	MrecLine string
}

// OK reports whether the two Regions kept the promise, and the eventual
// mode's sabotage broke it.
func (r *RegionsReport) OK() bool { return r.Doubles == 0 && r.Lost == 0 && r.MrecDoubles > 0 }

func (r *RegionsReport) line() string {
	return fmt.Sprintf("regions: %s+%s one_table(mrsc_stand_in) consumers=%d orders=%d deliveries=%d+%d processed=%d+%d duplicates_absorbed=%d in_progress=%d effects=%d double=%d lost=%d mrec_simulated: facts=%d double_effects=%d",
		r.Regions[0], r.Regions[1], r.Consumers, r.Orders, r.Deliveries[0], r.Deliveries[1], r.Processed[0], r.Processed[1], r.Duplicates, r.InProgress, r.Effects,
		r.Doubles, r.Lost, r.MrecFacts, r.MrecDoubles)
}

// inRegion is one consumer's queue, pollers and runtimes in one Region.
type inRegion struct {
	con      *consumer
	region   string
	queue    *Queue
	dlqURL   string
	runtimes []*runtime // RegionB's own; the Region's are the consumer's
	stats    pollerStats
	mu       sync.Mutex
	outcomes map[string]int
}

// regionsRun is what the two-Region part needs of the run.
type regionsRun struct {
	stack    *Stack
	dep      *deployment
	c        *clients
	opts     Options
	rie      string
	logDir   string
	extraEnv map[string]string
	faults   faults
	pay      *paymentProvider
	mail     *mailProvider
}

// runRegions runs the two-Region part once the topic's own run is over (its
// pollers stopped, its runtimes idle).
func runRegions(ctx context.Context, rr regionsRun, consumers []*consumer) (*RegionsReport, error) {
	rep := &RegionsReport{Regions: []string{Region, RegionB}, Deliveries: make([]int, 2), Processed: make([]int, 2)}
	topics := make([]string, len(rep.Regions))
	for i, region := range rep.Regions {
		topic, err := rr.c.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("orders-" + region)})
		if err != nil {
			return nil, fmt.Errorf("regions: topic: %w", err)
		}
		topics[i] = aws.ToString(topic.TopicArn)
	}
	var parts []*inRegion
	defer func() {
		for _, p := range parts {
			for _, rt := range p.runtimes {
				rt.stop()
			}
		}
	}()
	for _, con := range consumers {
		if con.kind != "charge" && con.kind != "receipt" {
			continue
		}
		rep.Consumers++
		for i, region := range rep.Regions {
			p, err := rr.deploy(ctx, con, region, topics[i])
			if err != nil {
				return nil, err
			}
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return nil, nil
	}
	pollCtx, stop := context.WithCancel(ctx)
	var pollers sync.WaitGroup
	defer func() {
		stop()
		pollers.Wait()
	}()
	for _, p := range parts {
		m := mappingOf(rr.stack, p.con.fn.ID)
		rts := p.con.runtimes
		if p.region != Region {
			rts = p.runtimes
		}
		for _, rt := range rts {
			pl := &poller{m: m, sqs: rr.c.sqs, queueURL: rr.dep.queueURL[p.queue.ID], queueARN: rr.dep.queueARN[p.queue.ID], region: p.region, rt: rt,
				wait: rr.dep.scaled(m.BatchingWindow), faults: rr.faults, stats: &p.stats}
			pollers.Go(func() { pl.run(pollCtx) })
		}
	}
	before := map[*consumer]map[string]int{}
	for _, con := range consumers {
		before[con] = con.snapshot()
	}
	orders, err := rr.publish(ctx, topics, rep)
	if err != nil {
		return nil, err
	}
	if err := drainQueues(ctx, rr, parts); err != nil {
		return nil, err
	}
	stop()
	pollers.Wait()
	return rep, rr.check(ctx, rep, parts, before, orders)
}

// deploy makes con's queue (and its dead-letter queue) in region,
// subscribed to the Region's topic as the template subscribes con's, and in RegionB
// starts con's bootstrap with that Region's AWS_REGION.
func (rr regionsRun) deploy(ctx context.Context, con *consumer, region, topic string) (*inRegion, error) {
	tq := rr.stack.Queues[con.queue]
	dlq := &Queue{ID: tq.DeadLetter + "-" + region, VisibilityTimeout: rr.stack.Queues[tq.DeadLetter].VisibilityTimeout}
	q := &Queue{ID: con.queue + "-" + region, VisibilityTimeout: tq.VisibilityTimeout, DeadLetter: dlq.ID, MaxReceiveCount: tq.MaxReceiveCount}
	for _, x := range []*Queue{dlq, q} {
		if err := rr.dep.createQueue(ctx, rr.c, x); err != nil {
			return nil, fmt.Errorf("regions: %w", err)
		}
	}
	raw := false
	for _, sub := range rr.stack.Subscriptions {
		raw = raw || sub.Queue == con.queue && sub.Raw
	}
	if _, err := rr.c.sns.Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"), Endpoint: aws.String(rr.dep.queueARN[q.ID]),
		Attributes: map[string]string{"RawMessageDelivery": strconv.FormatBool(raw)}}); err != nil {
		return nil, fmt.Errorf("regions: subscription of %s: %w", q.ID, err)
	}
	p := &inRegion{con: con, region: region, queue: q, dlqURL: rr.dep.queueURL[dlq.ID], outcomes: map[string]int{}}
	if region == Region {
		return p, nil // the consumer's own execution environments
	}
	fn := *con.fn
	fn.Name += "-" + region
	line, err := functionLog(rr.logDir, &fn, p.metricsLine)
	if err != nil {
		return nil, err
	}
	env := handlerEnv(rr.c.endpoint, rr.extraEnv, con.env, map[string]string{"AWS_REGION": region, "AWS_DEFAULT_REGION": region})
	for i := range len(con.runtimes) {
		rt, err := startRuntime(ctx, rr.rie, con.bin, fmt.Sprintf("%s-%d", fn.Name, i), env, time.Duration(rr.dep.seconds(con.fn.Timeout))*time.Second, line)
		if err != nil {
			return p, err
		}
		p.runtimes = append(p.runtimes, rt)
	}
	fmt.Fprintf(rr.opts.Progress, "demo: regions: %s: %d execution environments started with AWS_REGION=%s, on the same table\n", con.fn.Name, len(p.runtimes), region)
	return p, nil
}

// metricsLine adds the counts of an Embedded Metric Format line of a
// RegionB runtime.
func (p *inRegion) metricsLine(l string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	addMetrics(p.outcomes, l)
}

// publish publishes the orders of the two-Region part, the producers
// alternating between the Regions: each order to its producer's Region's
// topic, then, replicaLag orders later, to the other Region's (the
// replication of an EventBridge global endpoint, a few hundred
// milliseconds behind); a fifth of them twice (a producer's retry, itself
// replicated).
func (rr regionsRun) publish(ctx context.Context, topics []string, rep *RegionsReport) ([]order, error) {
	const replicaLag, pace = 3, 100 * time.Millisecond
	n := max(rr.opts.Orders/4, 10)
	orders := make([]order, n)
	bodies := make([]string, n)
	for i := range orders {
		orders[i] = order{OrderID: fmt.Sprintf("g-%05d", i+1), CustomerID: fmt.Sprintf("g-%05d", i+1), Amount: int64(1000 + 7*i), Currency: "EUR",
			Email: fmt.Sprintf("global%d@example.com", i+1), PlacedAt: time.Now().UTC().Format(time.RFC3339)}
		b, _ := json.Marshal(orders[i])
		bodies[i] = string(b)
	}
	send := func(i, region int) error {
		copies := 1
		if i%5 == 4 {
			copies++
		}
		for range copies {
			if _, err := rr.c.sns.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topics[region]), Message: aws.String(bodies[i])}); err != nil {
				return fmt.Errorf("regions: publish: %w", err)
			}
		}
		return nil
	}
	for step := range n + replicaLag {
		if step < n {
			if err := send(step, step%2); err != nil {
				return nil, err
			}
		}
		if i := step - replicaLag; i >= 0 {
			if err := send(i, 1-i%2); err != nil {
				return nil, err
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pace):
		}
	}
	rep.Orders, rep.Retries = n, n/5
	fmt.Fprintf(rr.opts.Progress, "demo: regions: %d orders published (%d twice), each to its producer's Region, %s or %s, then to the other\n", n, rep.Retries, Region, RegionB)
	return orders, nil
}

// drainQueues waits until every queue of the two-Region part is empty twice
// in a row.
func drainQueues(ctx context.Context, rr regionsRun, parts []*inRegion) error {
	for empty := 0; empty < 2; {
		total := 0
		for _, p := range parts {
			visible, inFlight, err := queueCounts(ctx, rr.c, rr.dep.queueURL[p.queue.ID])
			if err != nil {
				return err
			}
			total += visible + inFlight
		}
		if total == 0 {
			empty++
		} else {
			empty = 0
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("regions: queues not drained: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

// check counts the two Regions' deliveries, outcomes and effects, then runs
// the simulation's mrec sabotage for the figure shown beside them.
func (rr regionsRun) check(ctx context.Context, rep *RegionsReport, parts []*inRegion, before map[*consumer]map[string]int, orders []order) error {
	for _, p := range parts {
		i := 0
		outcomes := p.snapshot()
		if p.region == Region {
			outcomes = diff(p.con.snapshot(), before[p.con])
		} else {
			i = 1
		}
		fmt.Fprintf(rr.opts.Progress, "demo: regions: %s in %s: %d deliveries, %d batches left whole, outcomes %v\n", p.con.fn.Name, p.region, p.stats.records.Load(), p.stats.failedBatches.Load(), outcomes)
		rep.Deliveries[i] += int(p.stats.records.Load())
		rep.Processed[i] += outcomes["Processed"]
		rep.Duplicates += outcomes["Duplicate"]
		rep.InProgress += outcomes["InProgress"]
	}
	_, charges := rr.pay.charges()
	mails := rr.mail.sends()
	for _, con := range uniqueConsumers(parts) {
		effects := mails
		if con.kind == "charge" {
			effects = charges
		}
		inDLQ := map[string]bool{}
		for _, p := range parts {
			if p.con != con {
				continue
			}
			dead, err := dlqBodies(ctx, rr.c, p.dlqURL)
			if err != nil {
				return err
			}
			for _, b := range dead {
				inDLQ[unwrap(b)] = true
			}
		}
		for _, o := range orders {
			body, _ := json.Marshal(o)
			switch n := effects[o.OrderID]; {
			case n > 1:
				rep.Doubles++
			case n == 0 && !inDLQ[string(body)]:
				rep.Lost++
			}
			rep.Effects += effects[o.OrderID]
		}
	}
	sum, err := chaos.Run(ctx, chaos.Config{Seed: mrecSeed, Facts: mrecFacts, Sabotage: "mrec"})
	if sum == nil {
		return fmt.Errorf("regions: the mrec simulation: %w", err)
	}
	rep.MrecDoubles, rep.MrecFacts, rep.MrecSeed, rep.MrecLine = sum.DoubleEffects, mrecFacts, mrecSeed, sum.Line()
	return nil
}

func (p *inRegion) snapshot() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return copyCounts(p.outcomes)
}

func (con *consumer) snapshot() map[string]int {
	con.mu.Lock()
	defer con.mu.Unlock()
	return copyCounts(con.outcomes)
}

func copyCounts(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// diff returns after − before, per count.
func diff(after, before map[string]int) map[string]int {
	out := copyCounts(after)
	for k, v := range before {
		out[k] -= v
	}
	return out
}

func uniqueConsumers(parts []*inRegion) []*consumer {
	var out []*consumer
	for _, p := range parts {
		if len(out) == 0 || out[len(out)-1] != p.con {
			out = append(out, p.con)
		}
	}
	return out
}
