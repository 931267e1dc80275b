package local

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/sivchari/kumo"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	consumercdk "github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// sampleSeed chooses the drawn props; the sample is the same on every run.
const sampleSeed = 10

// sampleSize is how many props the test synthesizes and starts.
const sampleSize = 8

// TestBootstrapStartsWithSynthesizedSettings proves, for a sample of valid
// props, that what the construct writes is what the handler starts with:
// each props value is synthesized into a stack with NewIdempotentConsumer
// around the example handler app/cmd/charge; the template is provisioned
// on kumo as the local run does (its table becomes a real table); the
// handler, built for this machine as the local run builds it, starts under
// the Lambda runtime interface emulator with exactly the function's
// synthesized environment and Timeout; and one valid order, published to the
// stack's topic and received from its queue (raw or in an SNS envelope, as
// the subscription says), is processed: no function error, a partial batch
// response that names no failure, the record COMPLETED in the table.
//
// A last case starts the same handler with one variable of a valid
// environment made invalid, and checks that the init fails: the emulator
// reports a function error and the handler's one JSON line names the rule.
func TestBootstrapStartsWithSynthesizedSettings(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	rie, err := findRIE("", root)
	if err != nil {
		t.Fatal(err)
	}
	cdkContext, err := readCDKContext(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := kumo.NewServer()
	defer srv.Close()
	c := newClients(srv.URL)
	outDir, binDir := t.TempDir(), t.TempDir()
	entry := filepath.Join(root, "app", "cmd", "charge")

	var (
		bin      string       // the handler built for this machine, once
		baseline *startedCase // the case with every default, for the invalid one
	)
	t.Log(sampleHeader)
	for i, props := range sampleProps(sampleSize, sampleSeed) {
		id := fmt.Sprintf("Sample%d", i)
		t.Run(id, func(t *testing.T) {
			props.Entry = jsii.String(entry)
			sc, err := deployCase(ctx, c, cdkContext, filepath.Join(outDir, id), id, props)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(sc.row())
			if i == 1 {
				if same := sc.sameAsDefault(); len(same) > 0 {
					t.Fatalf("the generator left %s at the default in the case meant to change every runtime setting", strings.Join(same, ", "))
				}
			}
			if bin == "" {
				if bin, err = buildHandler(ctx, root, sc.fn.Package, binDir); err != nil {
					t.Fatal(err)
				}
			}
			o := sampleOrder(id)
			event, err := sc.deliver(ctx, c, o)
			if err != nil {
				t.Fatal(err)
			}
			inv, lines, err := invokeOnce(ctx, rie, bin, sc.fn, handlerEnv(c.endpoint, sc.env), event)
			if err != nil {
				t.Fatal(err)
			}
			if inv.funcErr != "" || inv.timedOut {
				t.Fatalf("the handler did not start with the synthesized environment: function error %q, timed out %v\n%s", inv.funcErr, inv.timedOut, strings.Join(lines, "\n"))
			}
			if err := checkBatchResponse(inv.body); err != nil {
				t.Fatalf("%v\n%s", err, strings.Join(lines, "\n"))
			}
			pk, err := sc.recordKey(o.OrderID)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkCompleted(ctx, c, sc.env[contract.TableVar], pk); err != nil {
				t.Fatalf("%v\n%s", err, strings.Join(lines, "\n"))
			}
			if !slices.ContainsFunc(lines, func(l string) bool { return isRecordLine(l, pk, "processed") }) {
				t.Fatalf("no line with outcome processed for %s:\n%s", pk, strings.Join(lines, "\n"))
			}
			if i == 0 {
				baseline = sc
			}
		})
	}

	t.Run("InvalidMinRemaining", func(t *testing.T) {
		if baseline == nil || bin == "" {
			t.Fatal("Sample0, whose valid environment this case breaks, did not run")
		}
		env := make(map[string]string, len(baseline.env))
		for k, v := range baseline.env {
			env[k] = v
		}
		// The default finishing budget is 2s; a record must start with
		// more than that left.
		if env[contract.FinishBudgetVar] != "2s" {
			t.Fatalf("Sample0 has %s=%q, want the default 2s", contract.FinishBudgetVar, env[contract.FinishBudgetVar])
		}
		env[contract.MinRemainingVar] = "1s"
		o := sampleOrder("invalid")
		event, err := baseline.deliver(ctx, c, o)
		if err != nil {
			t.Fatal(err)
		}
		inv, lines, err := invokeOnce(ctx, rie, bin, baseline.fn, handlerEnv(c.endpoint, env), event)
		if err != nil {
			t.Fatal(err)
		}
		// This emulator answers an init failure with HTTP 502 and logs the
		// errorType it gives it; a function error is a 200 with errorType.
		exitError := strings.Contains(inv.funcErr, "Runtime.ExitError") ||
			slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "Runtime.ExitError") })
		if inv.funcErr == "" || !exitError {
			t.Fatalf("the handler started with %s=1s and %s=2s, or failed otherwise; want an init error (Runtime.ExitError)\nanswer: %q %s\n%s",
				contract.MinRemainingVar, contract.FinishBudgetVar, inv.funcErr, inv.body, strings.Join(lines, "\n"))
		}
		// The handler's output is one JSON line (the emulator's are text).
		var logged []string
		for _, l := range lines {
			if json.Valid([]byte(l)) {
				logged = append(logged, l)
			}
		}
		if len(logged) != 1 {
			t.Fatalf("the handler printed %d JSON lines, want one:\n%s", len(logged), strings.Join(lines, "\n"))
		}
		var line struct{ Level, Msg, Reason string }
		if err := json.Unmarshal([]byte(logged[0]), &line); err != nil || line.Level != "FATAL" || line.Msg != "init" ||
			!strings.Contains(line.Reason, "MinRemaining 1s is not more than FinishBudget 2s") {
			t.Fatalf("the handler's line is not a FATAL init line (kept at every LogLevel) that names the rule: %s", logged[0])
		}
		pk, err := baseline.recordKey(o.OrderID)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkCompleted(ctx, c, env[contract.TableVar], pk); err == nil {
			t.Fatalf("the record %s was completed by a handler that must not have started", pk)
		}
		t.Logf("emulator: %s (Runtime.ExitError in its log)", inv.funcErr)
		t.Logf("handler:  %s", logged[0])
	})
}

// startedCase is one props value synthesized and provisioned on kumo: the
// function of its stack and that function's environment, resolved.
type startedCase struct {
	id    string
	stack *Stack
	dep   *deployment
	fn    *Function
	env   map[string]string
}

// deployCase synthesizes props into a stack of its own under outDir (with
// the context of the repository's cdk.json, as `cdk synth` would), loads
// the template as the local run does, provisions it on kumo and resolves
// the function's environment.
func deployCase(ctx context.Context, c *clients, cdkContext map[string]any, outDir, id string, props *consumercdk.IdempotentConsumerProps) (*startedCase, error) {
	stackName := id + "Stack"
	if err := synth(outDir, stackName, id, cdkContext, props); err != nil {
		return nil, fmt.Errorf("the construct refused props the generator drew as valid: %w", err)
	}
	stack, err := LoadStack(outDir, stackName)
	if err != nil {
		return nil, err
	}
	if len(stack.Functions) != 1 || len(stack.Topics) != 1 || len(stack.Tables) != 1 {
		return nil, fmt.Errorf("stack %s: %d functions, %d topics, %d tables; want one of each", stackName, len(stack.Functions), len(stack.Topics), len(stack.Tables))
	}
	dep, err := provision(ctx, c, stack, 1)
	if err != nil {
		return nil, err
	}
	sc := &startedCase{id: id, stack: stack, dep: dep}
	for _, fn := range stack.Functions {
		sc.fn = fn
	}
	if sc.env, err = synthesizedEnvironment(dep, sc.fn); err != nil {
		return nil, err
	}
	s, err := sc.settings()
	if err != nil {
		return nil, fmt.Errorf("the synthesized environment: %w", err)
	}
	if s.Timeout != sc.fn.Timeout {
		return nil, fmt.Errorf("%s=%s, but the function's Timeout is %s", contract.TimeoutVar, contract.Format(s.Timeout), contract.Format(sc.fn.Timeout))
	}
	for table := range stack.Tables {
		if sc.env[contract.TableVar] != dep.tableName[table] {
			return nil, fmt.Errorf("%s=%q, want the stack's table %s", contract.TableVar, sc.env[contract.TableVar], dep.tableName[table])
		}
	}
	return sc, nil
}

// synth synthesizes a stack holding one IdempotentConsumer into outDir,
// turning the construct's panic (how CDK constructs refuse props) into an
// error.
func synth(outDir, stackName, id string, cdkContext map[string]any, props *consumercdk.IdempotentConsumerProps) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(outDir), Context: &cdkContext})
	stack := awscdk.NewStack(app, jsii.String(stackName), nil)
	consumercdk.NewIdempotentConsumer(stack, jsii.String(id), props)
	app.Synth(nil)
	return nil
}

// readCDKContext returns the context `cdk synth` synthesizes with: the
// feature flags of the repository's cdk.json, and the asset metadata the CLI
// turns on, through which LoadStack finds a function's bootstrap.
func readCDKContext(root string) (map[string]any, error) {
	ctx, err := cdktest.ContextIn(root)
	if err != nil {
		return nil, err
	}
	ctx["aws:cdk:enable-asset-metadata"] = true // cx-api's ASSET_RESOURCE_METADATA_ENABLED_CONTEXT
	return ctx, nil
}

// synthesizedEnvironment returns fn's variables exactly as the template
// gives them, with references resolved to what provision created. Unlike
// deployment.environment it rescales nothing. The key secret's dynamic
// reference to Secrets Manager, which CloudFormation resolves at
// deployment, becomes a local secret of the same form (64 letters and
// digits).
func synthesizedEnvironment(dep *deployment, fn *Function) (map[string]string, error) {
	env := make(map[string]string, len(fn.Env))
	for k, v := range fn.Env {
		switch v := v.(type) {
		case string:
			env[k] = v
		case map[string]any:
			raw, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			if k == contract.KeySecretVar && bytes.Contains(raw, []byte("{{resolve:secretsmanager:")) {
				env[k] = strings.Repeat("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 2)[:64]
				continue
			}
			var ref intrinsic
			if err := json.Unmarshal(raw, &ref); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			if env[k], err = dep.resolve(ref); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
		default:
			return nil, fmt.Errorf("%s: unsupported value %v", k, v)
		}
	}
	return env, nil
}

// settings decodes the case's environment as the handler does.
func (sc *startedCase) settings() (contract.Settings, error) {
	return contract.Decode(func(k string) string { return sc.env[k] }, "")
}

// deliver publishes o to the stack's topic and returns the event that
// Lambda's event-source mapping would hand the function for it, received
// from the function's queue: its body is raw or an SNS envelope as the
// subscription says, which must be what the environment tells the handler.
func (sc *startedCase) deliver(ctx context.Context, c *clients, o order) (events.SQSEvent, error) {
	m := mappingOf(sc.stack, sc.fn.ID)
	if m == nil {
		return events.SQSEvent{}, fmt.Errorf("function %s has no event-source mapping", sc.fn.ID)
	}
	msg, _ := json.Marshal(o)
	in := &sns.PublishInput{TopicArn: aws.String(sc.dep.topicARN[sc.stack.Topics[0]]), Message: aws.String(string(msg))}
	if sc.stack.FIFOTopics[sc.stack.Topics[0]] {
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(o.CustomerID), aws.String(o.OrderID)
	}
	if _, err := c.sns.Publish(ctx, in); err != nil {
		return events.SQSEvent{}, fmt.Errorf("publish: %w", err)
	}
	out, err := c.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(sc.dep.queueURL[m.Queue]), MaxNumberOfMessages: 10, WaitTimeSeconds: 5})
	if err != nil {
		return events.SQSEvent{}, fmt.Errorf("receive: %w", err)
	}
	if len(out.Messages) != 1 {
		return events.SQSEvent{}, fmt.Errorf("received %d messages from %s, want the one published", len(out.Messages), m.Queue)
	}
	event := sqsEvent(sc.dep.queueARN[m.Queue], Region, out.Messages)
	body := event.Records[0].Body
	raw := sc.env[contract.DeliveryVar] == string(contract.Raw)
	if unwrap(body) != string(msg) || raw != (body == string(msg)) {
		return events.SQSEvent{}, fmt.Errorf("%s=%q, but SNS delivered the body %.300s", contract.DeliveryVar, sc.env[contract.DeliveryVar], body)
	}
	return event, nil
}

// recordKey is the partition key of the record of the business key, with
// the case's namespace and key secret.
func (sc *startedCase) recordKey(key string) (string, error) {
	g, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{
		Namespace: sc.env[contract.NamespaceVar], KeySecret: []byte(sc.env[contract.KeySecretVar]),
	})
	if err != nil {
		return "", err
	}
	return g.Key(key)
}

// sampleHeader and row make the table of the sample in the test's log.
const sampleHeader = "case     timeout window ttl  lease budget minrem cache   batch/win  conc maxbytes delivery ignore               metrics            namespace hashed"

func (sc *startedCase) row() string {
	s, err := sc.settings()
	if err != nil {
		return fmt.Sprintf("%-8s %v", sc.id, err)
	}
	win := "-"
	if m := mappingOf(sc.stack, sc.fn.ID); m != nil && m.BatchingWindow > 0 {
		win = contract.Format(m.BatchingWindow)
	}
	ignore := "-"
	if len(s.PayloadIgnore) > 0 {
		ignore = strings.Join(s.PayloadIgnore, ",")
	}
	return fmt.Sprintf("%-8s %-7s %-6s %-4s %-5s %-6s %-6s %-7d %-10s %-4d %-8d %-8s %-20s %-18s %-9s %v",
		sc.id, contract.Format(s.Timeout), contract.Format(s.Window), contract.Format(s.TTLAfterWindow), contract.Format(s.LeaseMax),
		contract.Format(s.FinishBudget), contract.Format(s.MinRemaining), s.CacheSize, fmt.Sprintf("%d/%s", sc.batchSize(), win),
		s.BatchConcurrency, s.MaxMessageBytes, s.Delivery, ignore, s.MetricsNamespace, s.Namespace, s.KeySecret != "")
}

// batchSize is the batch size of the case's event-source mapping.
func (sc *startedCase) batchSize() int {
	if m := mappingOf(sc.stack, sc.fn.ID); m != nil {
		return m.BatchSize
	}
	return 0
}

// sameAsDefault names the runtime settings of the case that have the value
// the construct gives when the prop that sets it is nil. It covers every
// field of contract.Settings but Table and Consumer, which no prop of
// values sets (they name the table and the construct).
func (sc *startedCase) sameAsDefault() []string {
	s, err := sc.settings()
	if err != nil {
		return []string{err.Error()}
	}
	checks := []struct {
		name string
		same bool
	}{
		{"Namespace", s.Namespace == strings.ToLower(sc.id)},
		{"Window", s.Window == limits.DefaultWindow},
		{"TTLAfterWindow", s.TTLAfterWindow == limits.DefaultTTLAfterWindow},
		{"Timeout", s.Timeout == 30*time.Second}, // IdempotentConsumerProps.Timeout's default
		{"LeaseMax", s.LeaseMax == s.Timeout},
		{"FinishBudget", s.FinishBudget == limits.DefaultFinishBudget},
		{"CacheSize", s.CacheSize == 0},
		{"PayloadIgnore", len(s.PayloadIgnore) == 0},
		{"KeySecret", s.KeySecret == ""},
		{"BatchConcurrency", s.BatchConcurrency == contract.DefaultConcurrency(sc.batchSize())},
		{"MinRemaining", s.MinRemaining == contract.DefaultMinRemaining(s.FinishBudget)},
		{"MaxMessageBytes", s.MaxMessageBytes == contract.DefaultMaxMessageBytes},
		{"Delivery", s.Delivery == contract.Envelope},
		{"MetricsNamespace", s.MetricsNamespace == outcome.DefaultNamespace},
		{"FIFO", !s.FIFO},
		{"BackoffBase", s.BackoffBase == contract.DefaultBackoffBase},
		{"BackoffCap", s.BackoffCap == contract.DefaultBackoffCap},
		{"BackoffFIFOCap", s.BackoffFIFOCap == contract.DefaultBackoffFIFOCap},
	}
	var same []string
	// Table and Consumer name the table and the construct; the generator
	// draws neither TxTables (a transactional consumer's) nor
	// MaxReceiveCount (the queue's), nor the five settings of a shared
	// table's own design (TablePartitionKey, TableSortKey, TableRecordKeyIn,
	// TableFixedKeyValue, TableTTLAttribute: its consumers use the
	// construct's table; dynamostore's and the construct's tests cover them),
	// nor Source (an IdempotentConsumer's is always the queue's) and the
	// nine settings that only other sources read (a stream consumer's
	// StreamImages and StreamRemoves; an HTTP endpoint's WebhookProvider,
	// WebhookSecret, ClientAttribute, ReplayHeaders, HashHeaders and
	// MaxRequestBytes; a saga step's StepName).
	const undrawn = 4 + 5 + 10
	if n := reflect.TypeFor[contract.Settings]().NumField(); n != len(checks)+undrawn {
		same = append(same, fmt.Sprintf("(contract.Settings has %d fields, this check knows %d: add the new ones)", n, len(checks)+undrawn))
	}
	for _, c := range checks {
		if c.same {
			same = append(same, c.name)
		}
	}
	return same
}

// sampleProps draws n valid props (Entry left for the caller), the same
// for a seed: the first leaves every prop nil (the defaults), the second
// gives every prop that sets a runtime setting a value other than its
// default, and each of the others gives each such prop a value half of the
// time. Values are drawn in the order of the contract's rules (Timeout, the
// finishing budget, MinRemaining, LeaseMax, Window; the batch size before
// its concurrency; the delivery before the message size), so that every
// draw keeps them, edges included (a Window equal to LeaseMax, the largest
// batch and message).
func sampleProps(n int, seed uint64) []*consumercdk.IdempotentConsumerProps {
	rng := rand.New(rand.NewPCG(seed, 0x5e7))
	out := []*consumercdk.IdempotentConsumerProps{{}}
	for i := 1; i < n; i++ {
		out = append(out, drawProps(rng, i == 1))
	}
	return out
}

func drawProps(rng *rand.Rand, every bool) *consumercdk.IdempotentConsumerProps {
	p := &consumercdk.IdempotentConsumerProps{}
	given := func() bool { return every || rng.IntN(2) == 0 }
	const s, ms = time.Second, time.Millisecond

	timeout := 30 * s
	if given() {
		timeout = pick(rng, 5*s, 10*s, 20*s, 45*s, 60*s, 120*s, 900*s)
		p.Timeout = cdkDuration(timeout)
	}
	budget := limits.DefaultFinishBudget
	if given() {
		budget = pick(rng, 500*ms, 1*s, 1500*ms, 2500*ms)
		p.FinishBudget = cdkDuration(budget)
	}
	// More than the budget; a second less than Timeout at most, so that
	// the record starts in an invocation that began a moment ago.
	if given() {
		p.MinRemaining = cdkDuration(pick(rng, below(timeout-s, budget+250*ms, budget+500*ms, budget+2*s, budget+5*s)...))
	}
	// Above the budget, at least 1s, less than Timeout.
	lease := timeout
	if given() {
		lo := (budget + s).Truncate(s)
		lease = lo + time.Duration(rng.IntN(int((timeout-s-lo)/s)+1))*s
		p.LeaseMax = cdkDuration(lease)
	}
	window := limits.DefaultWindow
	if given() {
		window = pick(rng, atLeast(lease, lease, 90*s, 10*time.Minute, time.Hour, 7*24*time.Hour)...)
		p.Window = cdkDuration(window)
	}
	// A backoff whose retry horizon (MaxReceiveCount 5; the FIFO cap for
	// the FIFO case) is shorter than the window, or none (a base of 0):
	// drawn when given, and whenever the defaults' would not fit.
	type backoff struct{ base, cap, fifo time.Duration }
	fits := func(b backoff) bool {
		c := b.cap
		if every {
			c = min(c, b.fifo)
		}
		return contract.Backoff{Base: b.base, Cap: c}.Horizon(contract.DefaultMaxReceiveCount) < window-limits.ClockSkewMargin
	}
	if given() || !fits(backoff{contract.DefaultBackoffBase, contract.DefaultBackoffCap, contract.DefaultBackoffFIFOCap}) {
		b := backoff{0, s, s} // off
		if fit := slices.DeleteFunc([]backoff{{s, 10 * s, 5 * s}, {30 * s, 5 * time.Minute, 2 * time.Minute}, {2 * time.Minute, 10 * time.Minute, 5 * time.Minute}, {5 * time.Minute, 12 * time.Hour, time.Hour}},
			func(b backoff) bool { return !fits(b) }); len(fit) > 0 && (every || rng.IntN(4) > 0) {
			b = pick(rng, fit...)
		}
		p.BackoffBase, p.BackoffCap, p.BackoffFIFOCap = cdkDuration(b.base), cdkDuration(b.cap), cdkDuration(b.fifo)
	}
	if given() {
		p.TTLAfterWindow = cdkDuration(pick(rng, s, time.Minute, 6*time.Hour, 72*time.Hour))
	}
	if given() {
		p.CacheSize = jsii.Number(pick(rng, 1, 100, 10_000, limits.MaxCacheSize))
	}
	batch := 10 // IdempotentConsumerProps.BatchSize's default
	if every {
		// A FIFO topic, and so a FIFO queue: batches of at most 10, no
		// batching window.
		p.FifoTopic = jsii.Bool(true)
		batch = 1 + rng.IntN(9)
		p.BatchSize = jsii.Number(batch)
	} else if given() {
		if rng.IntN(2) == 0 {
			batch = pick(rng, 1, 50, 500, 10_000)
			p.MaxBatchingWindow = cdkDuration(pick(rng, s, 5*s, 20*s, 5*time.Minute))
		} else {
			batch = 1 + rng.IntN(9)
		}
		p.BatchSize = jsii.Number(batch)
	}
	if given() {
		def := contract.DefaultConcurrency(batch)
		p.BatchConcurrency = jsii.Number(pick(rng, slices.DeleteFunc([]int{1, 3, 64, contract.MaxBatchConcurrency}, func(c int) bool { return c == def })...))
	}
	raw := given()
	if raw {
		p.RawMessageDelivery = jsii.Bool(true)
	}
	if given() {
		sizes := []int{contract.MinMessageBytes, 65_536, contract.MaxEnvelopedMessageBytes}
		if raw {
			sizes = append(sizes, contract.MaxQueueBodyBytes)
		}
		p.MaxMessageBytes = jsii.Number(pick(rng, sizes...))
	}
	if given() {
		p.PayloadIgnore = jsii.Strings(pick(rng, []string{"placedAt"}, []string{"placedAt", "meta.sentAt"})...)
	}
	if given() {
		p.MetricsNamespace = jsii.String(pick(rng, "Orders/Charge", "TeamA-Consumers"))
	}
	if given() {
		p.Namespace = jsii.String(pick(rng, "orders-v2", "charge.eu", "ωmega", "a"))
	}
	if given() {
		p.HashKeys = jsii.Bool(true)
	}
	return p
}

// pick returns one of xs.
func pick[T any](rng *rand.Rand, xs ...T) T { return xs[rng.IntN(len(xs))] }

// below returns the durations of ds shorter than limit.
func below(limit time.Duration, ds ...time.Duration) []time.Duration {
	return slices.DeleteFunc(ds, func(d time.Duration) bool { return d >= limit })
}

// atLeast returns the durations of ds no shorter than limit.
func atLeast(limit time.Duration, ds ...time.Duration) []time.Duration {
	return slices.DeleteFunc(ds, func(d time.Duration) bool { return d < limit })
}

// cdkDuration is d as a CDK duration, in whole seconds when it has no
// fraction of one.
func cdkDuration(d time.Duration) awscdk.Duration {
	if d%time.Second == 0 {
		return awscdk.Duration_Seconds(jsii.Number(d.Seconds()))
	}
	return awscdk.Duration_Millis(jsii.Number(d.Milliseconds()))
}

// sampleOrder is a valid order for the example handlers.
func sampleOrder(id string) order {
	return order{OrderID: "o-" + strings.ToLower(id), CustomerID: "c-" + strings.ToLower(id), Amount: 4200, Currency: "EUR",
		Email: "customer@example.com", PlacedAt: "2026-11-29T09:00:00Z"}
}

// invokeOnce starts bin under the emulator with env and the function's
// Timeout, invokes it once with event and stops it; it returns the
// invocation and every line the emulator and the handler printed.
func invokeOnce(ctx context.Context, rie, bin string, fn *Function, env []string, event events.SQSEvent) (invocation, []string, error) {
	payload, err := json.Marshal(event)
	if err != nil {
		return invocation{}, nil, err
	}
	var (
		mu    sync.Mutex
		lines []string
	)
	rt, err := startRuntime(ctx, rie, bin, fn.Name, env, fn.Timeout, func(l string) {
		mu.Lock()
		lines = append(lines, l)
		mu.Unlock()
	})
	if err != nil {
		return invocation{}, nil, err
	}
	inv, err := rt.invoke(ctx, payload)
	rt.stop()
	mu.Lock()
	defer mu.Unlock()
	return inv, slices.Clone(lines), err
}

// checkBatchResponse returns an error unless body is an SQS partial batch
// response (a JSON object with no other field) that names no failure.
func checkBatchResponse(body []byte) error {
	var resp events.SQSEventResponse
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) || dec.Decode(&resp) != nil {
		return fmt.Errorf("the response %.300s is not an SQS batch response", body)
	}
	if len(resp.BatchItemFailures) > 0 {
		return fmt.Errorf("the response reports failed records: %s", body)
	}
	return nil
}

// checkCompleted returns an error unless table holds the record pk,
// COMPLETED.
func checkCompleted(ctx context.Context, c *clients, table, pk string) error {
	got, err := c.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: pk}}})
	if err != nil {
		return fmt.Errorf("read %s: %w", pk, err)
	}
	// "status" is the record's attribute in package dynamostore.
	status, _ := got.Item["status"].(*ddbtypes.AttributeValueMemberS)
	if status == nil || status.Value != string(idempotency.StatusCompleted) {
		return fmt.Errorf("record %s in %s: %v, want status %s", pk, table, got.Item, idempotency.StatusCompleted)
	}
	return nil
}

// isRecordLine reports whether l is the handler's log line of the record
// key with the given outcome.
func isRecordLine(l, key, outcome string) bool {
	var line struct{ Msg, Key, Outcome string }
	return json.Unmarshal([]byte(l), &line) == nil && line.Msg == "record" && line.Key == key && line.Outcome == outcome
}
