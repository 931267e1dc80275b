package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/sivchari/kumo"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Options configure a local run.
type Options struct {
	// CDKOut is the cloud assembly directory. Default: "cdk.out" under
	// SourceDir.
	CDKOut string
	// Stack is the stack to run. Default: "OrdersPlatform".
	Stack string
	// SourceDir is the root of the Go module holding the handlers.
	// Default: the current directory.
	SourceDir string
	// RIE is the path of aws-lambda-rie. Default: found on PATH or in
	// SourceDir/.tools/bin.
	RIE string
	// Orders is how many valid orders are published. Default: 200.
	Orders int
	// TimeScale divides every duration of the template (visibility
	// timeouts, function timeouts, leases, windows), so that redeliveries
	// happen in seconds. Default: 60.
	TimeScale float64
	// Environments is the number of execution environments (and pollers)
	// per function, at most the mapping's maximum concurrency. Default: 2.
	Environments int
	// Seed chooses the orders, the producer retries and the faults. Which
	// message meets a fault also depends on timing: runs differ in their
	// counts (make chaos is the deterministic, replayable simulation).
	// Default: 1.
	Seed uint64
	// Outage is how long the payment API is down, at the template's time
	// scale, from the first order's completion: every charge in it fails
	// (503), and the failed records come back on the consumers' backoff
	// rather than dead-lettered. Default: none (make demo gives
	// DefaultOutage).
	Outage time.Duration
	// Timeout bounds the whole run. Default: 10 minutes.
	Timeout time.Duration
	// Progress receives a progress line every second and the report.
	// Default: io.Discard.
	Progress io.Writer
	// LogDir receives each function's output. Default: a temporary
	// directory, removed after the run.
	LogDir string
	// Sagas is how many orders go through the template's saga (saga.go),
	// at least one per injected fault. Default: 6.
	Sagas int
}

func (o *Options) defaults() {
	if o.SourceDir == "" {
		o.SourceDir = "."
	}
	if o.CDKOut == "" {
		o.CDKOut = filepath.Join(o.SourceDir, "cdk.out")
	}
	if o.Stack == "" {
		o.Stack = "OrdersPlatform"
	}
	if o.Orders <= 0 {
		o.Orders = 200
	}
	if o.TimeScale <= 0 {
		o.TimeScale = 60
	}
	if o.Environments <= 0 {
		o.Environments = 2
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Sagas <= 0 {
		o.Sagas = 6
	}
}

// DefaultOutage is the payment API's outage of make demo (the demo
// command's -outage), at the template's time scale: half an hour, which the default backoff (a message that fails
// every receive waits 65 to 130 minutes before the dead-letter queue) rides
// out with nothing dead-lettered.
const DefaultOutage = 30 * time.Minute

// OutageReport is the payment API's outage in a run and what it cost.
type OutageReport struct {
	Down    time.Duration // at the template's time scale
	Refused int           // charge requests answered 503
	// DeadLettered are the valid orders in the topic's consumers'
	// dead-letter queues: the outage's losses, 0 when the backoff rode it
	// out.
	DeadLettered int
}

func (o *OutageReport) line() string {
	return fmt.Sprintf("outage: payment_api_down=%s refused=%d dead_lettered=%d", o.Down, o.Refused, o.DeadLettered)
}

// ConsumerReport is what happened in one consumer.
type ConsumerReport struct {
	Name        string
	Deliveries  int64          // records handed to the function: one per receive of a message
	Outcomes    map[string]int // from the handler's Embedded Metric Format lines
	Effects     int            // effects observed downstream
	Doubles     int            // orders whose effect happened more than once
	Missing     int            // valid orders with no effect and not dead-lettered
	DLQ         int            // messages in its dead-letter queue
	DLQValid    int            // valid orders among them
	PoisonLost  int            // poison messages not in its dead-letter queue
	BatchErrors int64          // batches left whole: function error, timeout or invalid response
}

// Report is the outcome of a run. Its counts are totals across the
// consumers, but Orders and Published.
type Report struct {
	Orders    int // valid orders
	Published int // messages published to the topic: orders, producer retries, poison
	// Deliveries are the records handed to the functions, one per receive
	// of a message by a consumer.
	Deliveries int
	Processed  int // records whose effect ran
	// Effects are the effects observed downstream: charges, e-mails and
	// wallet credits.
	Effects, DuplicatesAbsorbed, DoubleEffects, Lost, DLQ int
	PoisonLost                                            int
	Consumers                                             []ConsumerReport
	Injected                                              map[string]int
	Elapsed                                               time.Duration
	// Sources are the consumers of the other sources (sources.go): the
	// EventBridge rule, direct producers, the uploads bucket.
	Sources []SourceReport
	// Outbox is the orders table's stream and its consumer (streams.go).
	Outbox *OutboxReport
	// HTTP is the endpoints' run (endpoints.go): Stripe's webhook and the
	// orders API, from the template.
	HTTP *HTTPReport
	// Outage is the payment API's outage; nil without one.
	Outage *OutageReport
	// Saga is the template's saga on Step Functions (saga.go); nil when the
	// template has no state machine.
	Saga *SagaReport
	// Regions is the two-Region part (regions.go); nil when the template
	// has no consumer that can run on an MRSC table.
	Regions *RegionsReport
}

// OK reports whether the run proved the point: no double effect, nothing
// lost, every poison message dead-lettered.
func (r *Report) OK() bool {
	for _, s := range r.Sources {
		if s.Doubles > 0 || s.Lost > 0 || s.DLQ > 0 {
			return false
		}
	}
	if r.Outbox != nil && (r.Outbox.Doubles > 0 || r.Outbox.Lost > 0) {
		return false
	}
	if r.HTTP != nil && !r.HTTP.OK() {
		return false
	}
	if r.Outage != nil && r.Outage.DeadLettered > 0 {
		return false
	}
	if r.Saga != nil && !r.Saga.OK() {
		return false
	}
	if r.Regions != nil && !r.Regions.OK() {
		return false
	}
	return r.DoubleEffects == 0 && r.Lost == 0 && r.PoisonLost == 0
}

// Line is the report's last line: totals across the consumers.
func (r *Report) Line() string {
	line := fmt.Sprintf("demo: orders=%d consumers=%d published=%d deliveries=%d processed=%d effects=%d duplicates_absorbed=%d double_effects=%d lost=%d dlq=%d",
		r.Orders, len(r.Consumers), r.Published, r.Deliveries, r.Processed, r.Effects, r.DuplicatesAbsorbed, r.DoubleEffects, r.Lost, r.DLQ)
	if r.Outage != nil { // the topic's consumers' outage, beside their totals
		line += " " + r.Outage.line()
	}
	if len(r.Sources) > 0 {
		line += " " + sourcesLine(r.Sources)
	}
	if r.Outbox != nil {
		line += " " + r.Outbox.line()
	}
	if r.HTTP != nil {
		line += " " + r.HTTP.line()
	}
	if r.Regions != nil {
		line += " " + r.Regions.line()
	}
	if r.Saga != nil {
		line += " " + r.Saga.line()
	}
	return line
}

// order is the business event, as the example handlers read it.
type order struct {
	OrderID    string `json:"orderId,omitempty"`
	CustomerID string `json:"customerId"`
	Amount     int64  `json:"amount"`
	Currency   string `json:"currency"`
	Email      string `json:"email"`
	PlacedAt   string `json:"placedAt"`
}

// consumer is a function of the stack with its runtimes and pollers.
type consumer struct {
	fn       *Function
	kind     string // "charge", "receipt" or "wallet": the handler package's name
	bin      string // its bootstrap, built for this machine
	queue    string // logical id of its queue
	dlqURL   string
	env      map[string]string
	runtimes []*runtime
	stats    pollerStats
	mu       sync.Mutex
	outcomes map[string]int
	// poisonReceives is the highest receive count seen of each poison
	// message (by body), for the progress lines.
	poisonReceives map[string]int
}

// Run provisions the stack on kumo, runs its consumers, publishes the
// orders with the real causes of duplicates, waits for the queues to drain
// and reports.
func Run(ctx context.Context, opts Options) (*Report, error) {
	opts.defaults()
	opts.Progress = &lockedWriter{w: opts.Progress} // the publishing ticker writes beside the run's own lines
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	stack, err := LoadStack(opts.CDKOut, opts.Stack)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(opts.Progress, "demo: read %s: %d functions, each behind an SQS queue; %d HTTP endpoints\n", filepath.Join(opts.CDKOut, opts.Stack+".template.json"), len(stack.Mappings), len(stack.Endpoints))
	srcDir, err := filepath.Abs(opts.SourceDir)
	if err != nil {
		return nil, err
	}
	rie, err := findRIE(opts.RIE, srcDir)
	if err != nil {
		return nil, err
	}
	logDir := opts.LogDir
	if logDir == "" {
		if logDir, err = os.MkdirTemp("", "demo-logs-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(logDir)
	}
	binDir, err := os.MkdirTemp("", "demo-bin-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(binDir)

	srv := kumo.NewServer()
	defer srv.Close()
	restore, err := redirectEventDeliveries(srv.URL) // events.go
	if err != nil {
		return nil, err
	}
	defer restore()
	c := newClients(srv.URL)
	dep, err := provision(ctx, c, stack, opts.TimeScale)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(opts.Progress, "demo: %s provisioned on kumo (%s): %d topic(s), %d queues, %d tables, %d functions; times divided by %g\n",
		opts.Stack, srv.URL, len(stack.Topics), len(stack.Queues), len(stack.Tables), len(stack.Functions), opts.TimeScale)

	sc := newScenario(opts)
	payments := newPaymentProvider(sc.isSlow, sc.failOnce, 300*time.Millisecond)
	mail := &mailProvider{perOrder: map[string]int{}}
	paySrv, mailSrv := httptest.NewServer(payments), httptest.NewServer(mail)
	defer paySrv.Close()
	defer mailSrv.Close()
	src := &sources{api: newEffectsAPI(), orders: opts.Orders}
	fxSrv := httptest.NewServer(src.api)
	defer fxSrv.Close()

	consumers, err := startConsumers(ctx, stack, dep, c, srcDir, rie, binDir, logDir, opts, map[string]string{
		"PAYMENT_API_URL": paySrv.URL, "RECEIPT_API_URL": mailSrv.URL,
		"SHIPPING_API_URL": fxSrv.URL, "SETTLEMENT_API_URL": fxSrv.URL, "INVOICE_API_URL": fxSrv.URL,
	})
	defer func() {
		for _, con := range consumers {
			for _, rt := range con.runtimes {
				rt.stop()
			}
		}
	}()
	if err != nil {
		return nil, err
	}
	ob, err := startOutbox(ctx, stack, dep, c, srcDir, rie, binDir, logDir, opts) // streams.go
	defer ob.stop()
	if err != nil {
		return nil, err
	}
	// The endpoints (endpoints.go): their callers run once the queues are
	// drained, so that their load does not slow the consumers' invocations
	// past the scaled deadlines.
	httpFx, httpFxSrv := newHTTPEffects(200 * time.Millisecond)
	defer httpFxSrv.Close()
	secretsSrv, err := oneAtATime(srv.URL)
	if err != nil {
		return nil, err
	}
	defer secretsSrv.Close()
	endpoints, err := startEndpoints(ctx, stack, dep, c, srcDir, rie, binDir, logDir, opts, map[string]string{
		"FULFILMENT_API_URL": httpFxSrv.URL, "BOOKING_API_URL": httpFxSrv.URL,
		"AWS_ENDPOINT_URL_SECRETS_MANAGER": secretsSrv.URL,
	})
	defer func() {
		for _, f := range endpoints {
			f.stop()
		}
	}()
	if err != nil {
		return nil, err
	}
	// The saga's functions (saga.go); its scenario begins with the drain.
	beginSaga, sagaReport, stopSaga, err := prepareSaga(ctx, stack, dep, c, srcDir, rie, binDir, logDir, opts)
	defer stopSaga()
	if err != nil {
		return nil, err
	}
	pollCtx, stopPolling := context.WithCancel(ctx)
	var pollers sync.WaitGroup
	if ob != nil {
		pollers.Go(func() { ob.poll(ctx, pollCtx.Done()) })
	}
	for _, con := range consumers {
		m := mappingOf(stack, con.fn.ID)
		for _, rt := range con.runtimes {
			p := &poller{m: m, sqs: c.sqs, queueURL: dep.queueURL[m.Queue], queueARN: dep.queueARN[m.Queue], rt: rt,
				wait: dep.scaled(m.BatchingWindow), faults: sc, stats: &con.stats, observe: func(body string, receives int) { con.received(sc, body, receives) },
				logf: func(f string, a ...any) { fmt.Fprintf(os.Stderr, "demo: "+f+"\n", a...) }}
			pollers.Go(func() { p.run(pollCtx) })
		}
	}
	defer func() {
		stopPolling()
		pollers.Wait()
	}()

	totals := func() string {
		var d, dup int64
		for _, con := range consumers {
			d += con.stats.records.Load()
			con.mu.Lock()
			dup += int64(con.outcomes["Duplicate"])
			con.mu.Unlock()
		}
		return fmt.Sprintf("published=%d deliveries=%d duplicates_absorbed=%d", sc.published(), d, dup)
	}
	elapsed := func() string { return fmt.Sprintf("%5.1fs", time.Since(start).Seconds()) }

	// The other sources' producers, beside the topic's (sources.go).
	if err := src.send(ctx, c, stack, dep, consumers); err != nil {
		return nil, err
	}
	topic := dep.topicARN[stack.Topics[0]]
	outage := time.Duration(float64(opts.Outage) / opts.TimeScale)
	first := func() bool {
		done := sc.completedEverywhere(ctx, c, consumers, payments, mail, sc.orders[0])
		if done { // the payment API goes down once the first order is charged
			payments.startOutage(outage)
		}
		return done
	}
	publishing := make(chan struct{})
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-publishing:
				return
			case <-tick.C:
				fmt.Fprintf(opts.Progress, "demo: %s publishing: %s; %s\n", elapsed(), sc.publishState(), totals())
			}
		}
	}()
	err = sc.publishOrders(ctx, c, topic, first, func(f string, a ...any) {
		fmt.Fprintf(opts.Progress, "demo: %s "+f+"\n", append([]any{elapsed()}, a...)...)
	})
	close(publishing)
	if err != nil {
		return nil, err
	}
	beginSaga()
	fmt.Fprintf(opts.Progress, "demo: %s published %d messages; draining: waiting until every queue is empty, which takes each poison message's %d receives before its redrive to the DLQ\n",
		elapsed(), sc.published(), maxReceives(stack, consumers))
	if err := drain(ctx, c, dep, consumers, func(status string) {
		fmt.Fprintf(opts.Progress, "demo: %s draining: %s; %s\n", elapsed(), status, totals())
	}, func(con *consumer) string { return con.poisonState(sc, stack.Queues[con.queue].MaxReceiveCount) }); err != nil {
		return nil, err
	}
	fmt.Fprintf(opts.Progress, "demo: %s drained: %s\n", elapsed(), totals())
	stopPolling()
	pollers.Wait()
	var httpRep *HTTPReport
	if len(endpoints) > 0 {
		fmt.Fprintf(opts.Progress, "demo: %s calling the endpoints: Stripe's deliveries and retries, the orders API's clients (%d each)\n", elapsed(), opts.Orders)
		h := &httpRun{effects: httpFx, secretValue: func(arn string) string { return dep.secretValue[arn] },
			logf: func(f string, a ...any) { fmt.Fprintf(os.Stderr, "demo: "+f+"\n", a...) }}
		if httpRep, err = runEndpoints(ctx, endpoints, h, opts.Orders); err != nil {
			return nil, fmt.Errorf("endpoints: %w", err)
		}
		fmt.Fprintf(opts.Progress, "demo: %s endpoints done: %s\n", elapsed(), httpRep.line())
	}

	rep := &Report{Orders: opts.Orders, Injected: map[string]int{}}
	if rep.Saga, err = sagaReport(); err != nil {
		return nil, err
	}
	for _, con := range consumers {
		if isSourceKind(con.kind) {
			sr, err := src.check(ctx, c, con)
			if err != nil {
				return nil, err
			}
			rep.Sources = append(rep.Sources, sr)
			continue
		}
		cr, err := sc.check(ctx, c, con, payments, mail)
		if err != nil {
			return nil, err
		}
		rep.Consumers = append(rep.Consumers, cr)
		rep.Deliveries += int(cr.Deliveries)
		rep.Processed += cr.Outcomes["Processed"]
		rep.Effects += cr.Effects
		rep.DuplicatesAbsorbed += cr.Outcomes["Duplicate"]
		rep.DoubleEffects += cr.Doubles
		rep.Lost += cr.Missing
		rep.DLQ += cr.DLQ
		rep.PoisonLost += cr.PoisonLost
		rep.Injected["crash before delete"] += int(con.stats.crashesInjected.Load())
		rep.Injected["visibility expired during the effect"] += int(con.stats.expiredInjected.Load())
	}
	if ob != nil {
		if rep.Outbox, err = ob.finish(ctx, c, sc.orders); err != nil {
			return nil, err
		}
	}
	rep.HTTP = httpRep
	rep.Published = sc.published()
	rep.Injected["producer retry"] = sc.retries
	rep.Injected["payment answered 502 after charging"] = payments.injected
	if outage > 0 {
		payments.mu.Lock()
		rep.Outage = &OutageReport{Down: opts.Outage, Refused: payments.refused}
		payments.mu.Unlock()
		for _, cr := range rep.Consumers {
			rep.Outage.DeadLettered += cr.DLQValid
		}
	}
	rep.Injected["poison messages"] = sc.poisonCount()
	fmt.Fprintf(opts.Progress, "demo: %s two Regions: the consumers that can run on an MRSC table, in %s and %s on one table (kumo's: the stand-in for the MRSC table)\n", elapsed(), Region, RegionB)
	if rep.Regions, err = runRegions(ctx, regionsRun{stack: stack, dep: dep, c: c, opts: opts, rie: rie, logDir: logDir, faults: sc, pay: payments, mail: mail,
		extraEnv: map[string]string{"PAYMENT_API_URL": paySrv.URL, "RECEIPT_API_URL": mailSrv.URL}}, consumers); err != nil {
		return nil, err
	}
	if rep.Regions != nil {
		fmt.Fprintf(opts.Progress, "demo: %s %s\n", elapsed(), rep.Regions.line())
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// lockedWriter serializes the writes of the goroutines that report
// progress.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// startConsumers builds each handler for this machine and starts its
// execution environments.
func startConsumers(ctx context.Context, stack *Stack, dep *deployment, c *clients, srcDir, rie, binDir, logDir string, opts Options, extraEnv map[string]string) ([]*consumer, error) {
	built := map[string]string{}
	var out []*consumer
	ids := make([]string, 0, len(stack.Functions))
	for id := range stack.Functions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fn := stack.Functions[id]
		m := mappingOf(stack, id)
		if m == nil {
			continue
		}
		bin, ok := built[fn.Package]
		if !ok {
			fmt.Fprintf(opts.Progress, "demo: %s: building its handler %s for this machine (go build)\n", fn.Name, fn.Package)
			t0 := time.Now()
			var err error
			if bin, err = buildHandler(ctx, srcDir, fn.Package, binDir); err != nil {
				return out, err
			}
			built[fn.Package] = bin
			fmt.Fprintf(opts.Progress, "demo: %s: built in %.1fs\n", fn.Name, time.Since(t0).Seconds())
		}
		vars, err := dep.environment(fn)
		if err != nil {
			return out, fmt.Errorf("function %s: %w", id, err)
		}
		con := &consumer{fn: fn, kind: path.Base(fn.Package), bin: bin, queue: m.Queue, env: vars, outcomes: map[string]int{}, poisonReceives: map[string]int{}}
		if q := stack.Queues[m.Queue]; q.DeadLetter != "" {
			con.dlqURL = dep.queueURL[q.DeadLetter]
		}
		out = append(out, con)
		env := handlerEnv(c.endpoint, extraEnv, vars)
		line, err := functionLog(logDir, fn, con.metricsLine)
		if err != nil {
			return out, err
		}
		envs := opts.Environments
		if m.MaxConcurrency > 0 {
			envs = min(envs, m.MaxConcurrency)
		}
		for i := range envs {
			rt, err := startRuntime(ctx, rie, bin, fmt.Sprintf("%s-%d", fn.Name, i), env, time.Duration(dep.seconds(fn.Timeout))*time.Second, line)
			if err != nil {
				return out, err
			}
			con.runtimes = append(con.runtimes, rt)
		}
		fmt.Fprintf(opts.Progress, "demo: %s: %d execution environments started under the Lambda runtime interface emulator, each with a poller of its queue\n", fn.Name, envs)
	}
	return out, nil
}

// received records a receive of a poison message, for the progress lines.
func (con *consumer) received(sc *scenario, body string, receives int) {
	if !sc.isPoison(unwrap(body)) {
		return
	}
	con.mu.Lock()
	con.poisonReceives[body] = max(con.poisonReceives[body], receives)
	con.mu.Unlock()
}

// poisonState says where the consumer's poison messages are on their way to
// the dead-letter queue, such as "poison: 3 at receive 4 of 5" (a message
// received maxReceives times moves on its next receive).
func (con *consumer) poisonState(sc *scenario, maxReceives int) string {
	con.mu.Lock()
	defer con.mu.Unlock()
	at := map[int]int{} // receive count → poison messages
	for _, n := range con.poisonReceives {
		at[n]++
	}
	var parts []string
	if n := sc.poisonCount() - len(con.poisonReceives); n > 0 {
		parts = append(parts, fmt.Sprintf("%d not received yet", n))
	}
	for r := 1; r <= maxReceives; r++ {
		if at[r] > 0 {
			parts = append(parts, fmt.Sprintf("%d at receive %d of %d", at[r], r, maxReceives))
		}
	}
	return "poison: " + strings.Join(parts, ", ")
}

// maxReceives is the largest redrive count of the consumers' queues.
func maxReceives(s *Stack, consumers []*consumer) int {
	n := 0
	for _, con := range consumers {
		n = max(n, s.Queues[con.queue].MaxReceiveCount)
	}
	return n
}

// handlerEnv is the environment of a handler's bootstrap on this machine:
// the AWS SDK pointed at the emulator at endpoint, with its region and
// dummy credentials and no shared configuration, then the variables of each
// map in turn.
func handlerEnv(endpoint string, vars ...map[string]string) []string {
	env := []string{
		"AWS_REGION=" + Region, "AWS_DEFAULT_REGION=" + Region, "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local",
		"AWS_ENDPOINT_URL=" + endpoint, "AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"PATH=" + os.Getenv("PATH"),
	}
	for _, m := range vars {
		for k, v := range m {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// metricsLine adds the counts of an Embedded Metric Format line.
func (con *consumer) metricsLine(l string) {
	con.mu.Lock()
	defer con.mu.Unlock()
	addMetrics(con.outcomes, l)
}

// addMetrics adds the outcome counts of an Embedded Metric Format line to
// outcomes.
func addMetrics(outcomes map[string]int, l string) {
	if !strings.Contains(l, `"_aws"`) {
		return
	}
	var m map[string]any
	if json.Unmarshal([]byte(l), &m) != nil {
		return
	}
	for _, name := range []string{"Processed", "Duplicate", "InProgress", "Mismatch", "BadInput", "Failed", "LeaseLost", "NotStarted"} {
		if v, ok := m[name].(float64); ok {
			outcomes[name] += int(v)
		}
	}
}

func mappingOf(s *Stack, fn string) *Mapping {
	for _, m := range s.Mappings {
		if m.Function == fn {
			return m
		}
	}
	return nil
}

// drain waits until every consumer queue is empty (nothing visible, in
// flight or delayed) twice in a row. Every second it hands status what it
// waits for: per consumer, the messages in its queue and where its poison
// messages are (poison).
func drain(ctx context.Context, c *clients, dep *deployment, consumers []*consumer, status func(string), poison func(*consumer) string) error {
	last := time.Now()
	empty := 0
	for empty < 2 {
		total := 0
		var parts []string
		for _, con := range consumers {
			visible, inFlight, err := queueCounts(ctx, c, dep.queueURL[con.queue])
			if err != nil {
				return err
			}
			total += visible + inFlight
			parts = append(parts, fmt.Sprintf("%s %d queued, %d in flight, %s", con.fn.Name, visible, inFlight, poison(con)))
		}
		if total == 0 {
			empty++
		} else {
			empty = 0
		}
		if time.Since(last) >= time.Second {
			status(strings.Join(parts, "; "))
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("queues not drained: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

// scenario is the orders and the faults of a run.
type scenario struct {
	rng      *rand.Rand // the orders and producer retries: one goroutine, so one seed gives the same ones
	crashes  *rand.Rand // crashes before the delete, drawn by the pollers under mu
	mu       sync.Mutex
	orders   []order
	slow     map[string]bool
	expired  map[string]bool // queue/order of the slow orders whose visibility was expired once
	failOnce map[string]bool
	retries  int
	poison   []string        // bodies, under mu
	valid    map[string]bool // bodies of valid orders, retries included
	count    int             // messages published, under mu
	next     int             // orders published, under mu
}

func newScenario(opts Options) *scenario {
	sc := &scenario{rng: rand.New(rand.NewPCG(opts.Seed, 0x1de)), crashes: rand.New(rand.NewPCG(opts.Seed, 0xc4a5)), slow: map[string]bool{}, expired: map[string]bool{}, failOnce: map[string]bool{}, valid: map[string]bool{}}
	placed := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	for i := 1; i <= opts.Orders; i++ {
		o := order{
			OrderID: fmt.Sprintf("o-%05d", i), CustomerID: fmt.Sprintf("c-%05d", i), Amount: int64(1000 + sc.rng.IntN(9000)),
			Currency: "EUR", Email: fmt.Sprintf("customer%d@example.com", i), PlacedAt: placed.Add(time.Duration(i) * time.Second).Format(time.RFC3339),
		}
		sc.orders = append(sc.orders, o)
		switch r := sc.rng.Float64(); {
		case r < 0.03:
			sc.slow[o.OrderID] = true
		case r < 0.06:
			sc.failOnce[o.OrderID] = true
		}
	}
	return sc
}

func (sc *scenario) isSlow(id string) bool { return sc.slow[id] }

// isPoison reports whether msg (a business message) is one of the poison
// messages published so far.
func (sc *scenario) isPoison(msg string) bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return slices.Contains(sc.poison, msg)
}

// poisonCount is the number of poison messages published so far.
func (sc *scenario) poisonCount() int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return len(sc.poison)
}

// publishState says how far publishing is: "order 120 of 200 (13 producer
// retries so far)".
func (sc *scenario) publishState() string {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return fmt.Sprintf("order %d of %d, %d producer retries and %d poison messages so far", sc.next, len(sc.orders), sc.retries, len(sc.poison))
}

// expireVisibility: the first delivery of a slow order to each queue has its
// visibility timeout run out while the consumer works on it (the payment API
// makes the charge consumer wait).
func (sc *scenario) expireVisibility(queue, body string) bool {
	msg, err := sqsbatch.Parse([]byte(body), contract.Auto)
	if err != nil {
		return false
	}
	var o order
	if json.Unmarshal(msg, &o) != nil || !sc.slow[o.OrderID] {
		return false
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	key := queue + "/" + o.OrderID
	if sc.expired[key] {
		return false
	}
	sc.expired[key] = true
	return true
}

func (sc *scenario) crashBeforeDelete() bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.crashes.Float64() < 0.03
}

func (sc *scenario) published() int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.count
}

func (sc *scenario) publish(ctx context.Context, c *clients, topic, body string) error {
	_, err := c.sns.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(body)})
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	sc.mu.Lock()
	sc.count++
	sc.mu.Unlock()
	return nil
}

// publishOrders publishes every order once, a tenth of them twice (a
// producer that retried Publish, with a fresh timestamp), and the poison
// messages that no retry can fix. The first order goes alone; once every
// consumer completed it (firstDone), the same key is published again with a
// different amount: a payload mismatch, that must end in the DLQs.
func (sc *scenario) publishOrders(ctx context.Context, c *clients, topic string, firstDone func() bool, logf func(string, ...any)) error {
	poison := []string{
		`{"orderId":"o-malformed","amount":`,                                      // not JSON
		`{"customerId":"c-nokey","amount":1500,"currency":"EUR","email":"x@y.z"}`, // no key
	}
	sc.mu.Lock()
	sc.poison = append(sc.poison, poison...)
	sc.mu.Unlock()
	for _, p := range poison {
		if err := sc.publish(ctx, c, topic, p); err != nil {
			return err
		}
	}
	for i, o := range sc.orders {
		if i == 1 {
			logf("published 2 poison messages (not JSON; no key) and order %s; waiting until every consumer has made its effect, "+
				"to publish it again with another amount (the third poison message: same key, other content)", sc.orders[0].OrderID)
			t0 := time.Now()
			if err := sc.publishMismatch(ctx, c, topic, firstDone); err != nil {
				return err
			}
			logf("order %s done by every consumer in %.1fs; publishing the other %d orders, a tenth of them twice (a producer's retry of Publish)",
				sc.orders[0].OrderID, time.Since(t0).Seconds(), len(sc.orders)-1)
		}
		body, _ := json.Marshal(o)
		sc.valid[string(body)] = true
		if err := sc.publish(ctx, c, topic, string(body)); err != nil {
			return err
		}
		retry := sc.rng.Float64() < 0.10
		sc.mu.Lock()
		sc.next = i + 1
		if retry {
			sc.retries++
		}
		sc.mu.Unlock()
		if retry {
			o.PlacedAt = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC).Format(time.RFC3339) // the retry's timestamp differs
			body, _ := json.Marshal(o)
			sc.valid[string(body)] = true
			if err := sc.publish(ctx, c, topic, string(body)); err != nil {
				return err
			}
		}
	}
	return nil
}

// publishMismatch waits until the first order is done everywhere, then
// publishes it again with the same key and a different amount.
func (sc *scenario) publishMismatch(ctx context.Context, c *clients, topic string, firstDone func() bool) error {
	for !firstDone() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("the first order was never completed: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	o := sc.orders[0]
	o.Amount++
	body, _ := json.Marshal(o)
	sc.mu.Lock()
	sc.poison = append(sc.poison, string(body))
	sc.mu.Unlock()
	return sc.publish(ctx, c, topic, string(body))
}

// completedEverywhere reports whether every consumer has made o's effect.
func (sc *scenario) completedEverywhere(ctx context.Context, c *clients, consumers []*consumer, pay *paymentProvider, mail *mailProvider, o order) bool {
	for _, con := range consumers {
		switch con.kind {
		case "charge":
			if _, per := pay.charges(); per[o.OrderID] == 0 {
				return false
			}
		case "receipt":
			if mail.sends()[o.OrderID] == 0 {
				return false
			}
		case "wallet":
			credits, err := sc.credits(ctx, c, con.env[contract.TableVar], []order{o})
			if err != nil || credits[o.OrderID] == 0 {
				return false
			}
		}
	}
	return true
}

// check reads a consumer's effects and dead-letter queue.
func (sc *scenario) check(ctx context.Context, c *clients, con *consumer, pay *paymentProvider, mail *mailProvider) (ConsumerReport, error) {
	cr := ConsumerReport{Name: con.fn.Name, Deliveries: con.stats.records.Load(), BatchErrors: con.stats.failedBatches.Load()}
	con.mu.Lock()
	cr.Outcomes = map[string]int{}
	for k, v := range con.outcomes {
		cr.Outcomes[k] = v
	}
	con.mu.Unlock()

	var effects map[string]int
	switch con.kind {
	case "charge":
		cr.Effects, effects = pay.charges()
	case "receipt":
		effects = mail.sends()
	case "wallet":
		var err error
		if effects, err = sc.credits(ctx, c, con.env[contract.TableVar], sc.orders); err != nil {
			return cr, err
		}
	default:
		return cr, fmt.Errorf("consumer %s: unknown handler %q", con.fn.Name, con.kind)
	}
	if con.kind != "charge" {
		for _, n := range effects {
			cr.Effects += n
		}
	}
	dead, err := dlqBodies(ctx, c, con.dlqURL)
	if err != nil {
		return cr, err
	}
	cr.DLQ = len(dead)
	inDLQ := map[string]bool{}
	for _, b := range dead {
		msg := unwrap(b)
		inDLQ[string(msg)] = true
		if sc.valid[msg] {
			cr.DLQValid++
		}
	}
	for _, p := range sc.poison {
		if !inDLQ[p] {
			cr.PoisonLost++
		}
	}
	for _, o := range sc.orders {
		switch n := effects[o.OrderID]; {
		case n > 1:
			cr.Doubles++
		case n == 0:
			body, _ := json.Marshal(o)
			if !inDLQ[string(body)] {
				cr.Missing++
			}
		}
	}
	return cr, nil
}

// unwrap returns the message an SNS envelope carries, or body itself. It
// does not validate: a dead-lettered message may be anything.
func unwrap(body string) string {
	var env struct {
		Type    string
		Message *string
	}
	if json.Unmarshal([]byte(body), &env) == nil && env.Type == "Notification" && env.Message != nil {
		return *env.Message
	}
	return body
}

// credits returns, per order, how many times its cashback was credited:
// each order has its own customer, so the balance says it.
func (sc *scenario) credits(ctx context.Context, c *clients, table string, orders []order) (map[string]int, error) {
	out := map[string]int{}
	for _, o := range orders {
		got, err := c.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
			Key: map[string]ddbtypes.AttributeValue{schema.Key: &ddbtypes.AttributeValueMemberS{Value: "balance#" + o.CustomerID}}})
		if err != nil {
			return nil, fmt.Errorf("wallet %s: %w", o.CustomerID, err)
		}
		n, ok := got.Item["balance"].(*ddbtypes.AttributeValueMemberN)
		if !ok {
			continue
		}
		balance, err := strconv.ParseInt(n.Value, 10, 64)
		if err != nil {
			return nil, err
		}
		out[o.OrderID] = int(balance / max(o.Amount/100, 1))
	}
	return out, nil
}

// dlqBodies reads every message of a dead-letter queue, leaving them there.
func dlqBodies(ctx context.Context, c *clients, url string) ([]string, error) {
	if url == "" {
		return nil, errors.New("the consumer's queue has no dead-letter queue")
	}
	var bodies []string
	for {
		out, err := c.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, VisibilityTimeout: 600})
		if err != nil {
			return nil, err
		}
		if len(out.Messages) == 0 {
			return bodies, nil
		}
		for _, m := range out.Messages {
			bodies = append(bodies, aws.ToString(m.Body))
		}
	}
}
