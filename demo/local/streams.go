package local

// The outbox (app/platform/outbox.go): ChargeOrder writes each order it
// charges into the orders table, whose DynamoDB stream feeds NotifyCharge.
// Locally, kumo's DynamoDB keeps the table's stream, and the stream
// consumer's real bootstrap runs under the runtime interface emulator,
// driven by internal/streampoll: our own model of Lambda's stream event
// source (the checkpoint, the partial batch response's lowest sequence
// number, the replay of every record after it). The model leaves out
// bisection, the record age and the on-failure bucket, the batching window,
// parallelization, resharding, and the backoff between retries (see the
// package's documentation): the demo shows the replays the checkpoint
// causes, and that the guard absorbs them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"path"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/streampoll"
)

// StreamMapping is an AWS::Lambda::EventSourceMapping from a DynamoDB
// table's stream to a function.
type StreamMapping struct {
	ID, Table, Function     string
	BatchSize               int
	MaxRetries              int
	ReportBatchItemFailures bool
}

// isStreamMapping says whether an event-source mapping reads a table's
// stream ({"Fn::GetAtt": [table, "StreamArn"]}).
func isStreamMapping(r resource) bool {
	var p struct {
		EventSourceArn intrinsic `json:"EventSourceArn"`
	}
	return json.Unmarshal(r.Properties, &p) == nil && len(p.EventSourceArn.GetAtt) == 2 && p.EventSourceArn.GetAtt[1] == "StreamArn"
}

func (s *Stack) addStreamMapping(id string, r resource) error {
	var p struct {
		EventSourceArn        intrinsic `json:"EventSourceArn"`
		FunctionName          intrinsic `json:"FunctionName"`
		BatchSize             *int      `json:"BatchSize"`
		MaximumRetryAttempts  *int      `json:"MaximumRetryAttempts"`
		FunctionResponseTypes []string  `json:"FunctionResponseTypes"`
		StartingPosition      string    `json:"StartingPosition"`
	}
	if err := json.Unmarshal(r.Properties, &p); err != nil {
		return err
	}
	fn, err := p.FunctionName.target("")
	if err != nil {
		return err
	}
	if p.StartingPosition != "" && p.StartingPosition != "TRIM_HORIZON" {
		return fmt.Errorf("starting position %s: the local run reads a stream from TRIM_HORIZON only", p.StartingPosition)
	}
	m := &StreamMapping{ID: id, Table: p.EventSourceArn.GetAtt[0], Function: fn, BatchSize: 100, MaxRetries: 10}
	if p.BatchSize != nil {
		m.BatchSize = *p.BatchSize
	}
	if p.MaximumRetryAttempts != nil && *p.MaximumRetryAttempts >= 0 {
		m.MaxRetries = *p.MaximumRetryAttempts
	}
	for _, t := range p.FunctionResponseTypes {
		m.ReportBatchItemFailures = m.ReportBatchItemFailures || t == "ReportBatchItemFailures"
	}
	s.StreamMappings = append(s.StreamMappings, m)
	return nil
}

// streamSpec is the table's stream on kumo, if the template gives it one.
func (t *Table) streamSpec() *ddbtypes.StreamSpecification {
	if t.StreamView == "" {
		return nil
	}
	return &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewType(t.StreamView)}
}

// OutboxReport is what happened on the outbox: the orders table's stream
// and its consumer.
type OutboxReport struct {
	Name   string
	Orders int // valid orders, each charged once: each must be in the table
	// Changes are the stream's records: an order's INSERT, and a MODIFY
	// with the same image when a retried charge rewrote it.
	Changes int
	// Deliveries are the records handed to the function, Replayed those
	// delivered again from a checkpoint.
	Deliveries, Replayed int
	// PartialResponses and FunctionErrors are the batches answered with a
	// partial batch response, and those that failed whole.
	PartialResponses, FunctionErrors int
	Outcomes                         map[string]int // from the handler's metrics lines
	Effects                          int            // notices observed by the notices API
	Doubles                          int            // orders notified more than once
	Lost                             int            // orders charged and never notified, or not in the table
	Injected                         int            // notices API failures
}

// line is the outbox's part of the last line.
func (o *OutboxReport) line() string {
	return fmt.Sprintf("outbox: changes=%d deliveries=%d replayed=%d partial_responses=%d effects=%d duplicates_absorbed=%d double_effects=%d lost=%d",
		o.Changes, o.Deliveries, o.Replayed, o.PartialResponses, o.Effects, o.Outcomes["Duplicate"], o.Doubles, o.Lost)
}

// noticesAPI is the notices API of NotifyCharge: it counts the notices by
// order, and fails the first attempt of some orders (before doing
// anything), so that the handler reports a partial batch response and the
// stream replays the records after the failed one.
type noticesAPI struct {
	mu       sync.Mutex
	seed     uint64
	perOrder map[string]int
	failed   map[string]bool
	injected int
}

func (n *noticesAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		OrderID string `json:"orderId"`
	}
	if r.Method != http.MethodPost || r.URL.Path != "/notices" || json.NewDecoder(r.Body).Decode(&req) != nil || req.OrderID == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", n.seed, req.OrderID)
	if h.Sum64()%8 == 0 && !n.failed[req.OrderID] {
		n.failed[req.OrderID] = true
		n.injected++
		http.Error(w, "notices unavailable", http.StatusServiceUnavailable)
		return
	}
	n.perOrder[req.OrderID]++
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"id": fmt.Sprintf("n_%s_%d", req.OrderID, n.perOrder[req.OrderID])})
}

// outbox is the stream consumer's run: its execution environment, the
// notices API and the poller.
type outbox struct {
	con    *consumer
	m      *StreamMapping
	api    *noticesAPI
	srv    *httptest.Server
	table  string
	poller *streampoll.Poller
	done   chan struct{}
	err    error
}

// startOutbox starts the stream consumer of the stack, if it has one: its
// handler built for this machine, one execution environment (one shard,
// a parallelization factor of 1: one batch at a time), the poller of the
// table's stream. Poll runs the poller until the run stops it.
func startOutbox(ctx context.Context, stack *Stack, dep *deployment, c *clients, srcDir, rie, binDir, logDir string, opts Options) (*outbox, error) {
	if len(stack.StreamMappings) == 0 {
		return nil, nil
	}
	if len(stack.StreamMappings) > 1 {
		return nil, fmt.Errorf("%d stream event-source mappings: the local run drives one", len(stack.StreamMappings))
	}
	m := stack.StreamMappings[0]
	fn := stack.Functions[m.Function]
	if fn == nil || stack.Tables[m.Table] == nil {
		return nil, fmt.Errorf("stream event-source mapping %s: %s or %s is not in the template", m.ID, m.Function, m.Table)
	}
	ob := &outbox{m: m, table: dep.tableName[m.Table], api: &noticesAPI{seed: opts.Seed, perOrder: map[string]int{}, failed: map[string]bool{}}, done: make(chan struct{})}
	ob.srv = httptest.NewServer(ob.api)
	fmt.Fprintf(opts.Progress, "demo: %s: building its handler %s for this machine (go build)\n", fn.Name, fn.Package)
	bin, err := buildHandler(ctx, srcDir, fn.Package, binDir)
	if err != nil {
		return ob, err
	}
	vars, err := dep.environment(fn)
	if err != nil {
		return ob, fmt.Errorf("function %s: %w", fn.ID, err)
	}
	ob.con = &consumer{fn: fn, kind: path.Base(fn.Package), env: vars, outcomes: map[string]int{}, poisonReceives: map[string]int{}}
	line, err := functionLog(logDir, fn, ob.con.metricsLine)
	if err != nil {
		return ob, err
	}
	rt, err := startRuntime(ctx, rie, bin, fn.Name+"-0", handlerEnv(c.endpoint, map[string]string{"NOTICE_API_URL": ob.srv.URL}, vars),
		time.Duration(dep.seconds(fn.Timeout))*time.Second, line)
	if err != nil {
		return ob, err
	}
	ob.con.runtimes = append(ob.con.runtimes, rt)

	desc, err := c.ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(ob.table)})
	if err != nil {
		return ob, fmt.Errorf("table %s: %w", ob.table, err)
	}
	if desc.Table.LatestStreamArn == nil {
		return ob, fmt.Errorf("table %s has no stream on kumo", ob.table)
	}
	stream, err := streampoll.DynamoDBStreams(ctx, c.endpoint, aws.ToString(desc.Table.LatestStreamArn))
	if err != nil {
		return ob, err
	}
	ob.poller = &streampoll.Poller{Stream: stream, BatchSize: m.BatchSize, MaxRetries: m.MaxRetries, Invoke: func(ctx context.Context, batch []json.RawMessage) ([]string, error) {
		return ob.invoke(ctx, rt, batch)
	}}
	fmt.Fprintf(opts.Progress, "demo: %s: 1 execution environment started under the Lambda runtime interface emulator, with a poller of %s's stream (%d shard(s))\n",
		fn.Name, m.Table, len(stream.Shards))
	return ob, nil
}

// invoke hands a batch to the function as Lambda does and reads its
// partial batch response; with ReportBatchItemFailures off, any answer is a
// complete success.
func (ob *outbox) invoke(ctx context.Context, rt *runtime, batch []json.RawMessage) ([]string, error) {
	payload, err := streampoll.DynamoDBEvent(batch)
	if err != nil {
		return nil, err
	}
	inv, err := rt.invoke(ctx, payload)
	switch {
	case err != nil:
		return nil, err
	case inv.timedOut:
		return nil, errors.New("the function timed out")
	case inv.funcErr != "":
		return nil, fmt.Errorf("function error: %s", inv.funcErr)
	case !ob.m.ReportBatchItemFailures:
		return nil, nil
	}
	var resp events.DynamoDBEventResponse
	if err := json.Unmarshal(inv.body, &resp); err != nil {
		return nil, fmt.Errorf("the function's answer %q is not a batch response: %w", inv.body, err)
	}
	ids := make([]string, 0, len(resp.BatchItemFailures))
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids, nil
}

// poll reads the stream to its end, again and again, until stop is closed:
// Lambda polls a shard about four times a second. A stop never cuts an
// invocation short (it is seen between reads; ctx, the run's, bounds them),
// so the environment is idle for finish's last read.
func (ob *outbox) poll(ctx context.Context, stop <-chan struct{}) {
	defer close(ob.done)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := ob.poller.Drain(ctx); err != nil {
			ob.err = err
			return
		}
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// finish waits for poll to end, reads the stream to its end once more
// (the queues are drained: ChargeOrder writes nothing more) and checks every
// order: in the table, charged, notified once.
func (ob *outbox) finish(ctx context.Context, c *clients, orders []order) (*OutboxReport, error) {
	<-ob.done
	if ob.err != nil {
		return nil, fmt.Errorf("%s: %w", ob.con.fn.Name, ob.err)
	}
	if err := ob.poller.Drain(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", ob.con.fn.Name, err)
	}
	rep := &OutboxReport{Name: ob.con.fn.Name, Orders: len(orders), Changes: ob.poller.Records, Deliveries: ob.poller.Deliveries, Replayed: ob.poller.Replayed,
		PartialResponses: ob.poller.PartialResponses, FunctionErrors: ob.poller.FunctionErrors, Outcomes: map[string]int{}}
	ob.con.mu.Lock()
	for k, v := range ob.con.outcomes {
		rep.Outcomes[k] = v
	}
	ob.con.mu.Unlock()
	ob.api.mu.Lock()
	defer ob.api.mu.Unlock()
	rep.Injected = ob.api.injected
	for _, o := range orders {
		got, err := c.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(ob.table), ConsistentRead: aws.Bool(true),
			Key: map[string]ddbtypes.AttributeValue{"orderId": &ddbtypes.AttributeValueMemberS{Value: o.OrderID}}})
		if err != nil {
			return nil, fmt.Errorf("order %s in %s: %w", o.OrderID, ob.table, err)
		}
		status, _ := got.Item["status"].(*ddbtypes.AttributeValueMemberS)
		n := ob.api.perOrder[o.OrderID]
		rep.Effects += n
		switch {
		case status == nil || status.Value != "CHARGED" || n == 0:
			rep.Lost++
		case n > 1:
			rep.Doubles++
		}
	}
	return rep, nil
}

// stop ends the environment and the notices API.
func (ob *outbox) stop() {
	if ob == nil {
		return
	}
	if ob.con != nil {
		for _, rt := range ob.con.runtimes {
			rt.stop()
		}
	}
	if ob.srv != nil {
		ob.srv.Close()
	}
}
