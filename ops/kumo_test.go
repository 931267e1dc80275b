package ops_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/sivchari/kumo"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/ops"
)

// order is the test consumer's message; its key is the order id.
type order struct {
	OrderID string `json:"orderId"`
	Amount  int    `json:"amount"`
}

func orderKey(o order) (string, error) {
	if strings.HasPrefix(o.OrderID, "bad") {
		return "", fmt.Errorf("order id %q is refused", o.OrderID)
	}
	return o.OrderID, nil
}

// world is kumo, started in process on a loopback port, with a consumer's
// table, queue and dead-letter queue.
type world struct {
	t        *testing.T
	endpoint string
	cfg      aws.Config
	ddb      *dynamodb.Client
	sqs      *sqs.Client
	table    string
	ns       string
	queue    string // URL
	dlq      string // URL
	guard    *idempotency.Guard
	store    *dynamostore.Store
}

// names numbers the resources of the process: kumo servers of one process
// share their state.
var names atomic.Int64

func awsConfig(endpoint string) aws.Config {
	return aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test", Source: "test"}, nil
		})}
}

func newWorld(t *testing.T, fifo bool) *world {
	t.Helper()
	srv := kumo.NewServer()
	t.Cleanup(srv.Close)
	ctx := context.Background()
	n := names.Add(1)
	w := &world{t: t, endpoint: srv.URL, cfg: awsConfig(srv.URL), table: fmt.Sprintf("idempotency-%d", n), ns: "charge"}
	w.ddb, w.sqs = dynamodb.NewFromConfig(w.cfg), sqs.NewFromConfig(w.cfg)
	if _, err := w.ddb.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(w.table),
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash}},
		BillingMode:          ddbtypes.BillingModePayPerRequest,
	}); err != nil {
		t.Fatal(err)
	}
	suffix, attrs := "", map[string]string{}
	if fifo {
		suffix, attrs = ".fifo", map[string]string{"FifoQueue": "true"}
	}
	dlq, err := w.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("charge-dlq-%d%s", n, suffix)), Attributes: attrs})
	if err != nil {
		t.Fatal(err)
	}
	w.dlq = aws.ToString(dlq.QueueUrl)
	dlqARN := w.queueARN(w.dlq)
	qattrs := map[string]string{"RedrivePolicy": fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"5"}`, dlqARN)}
	for k, v := range attrs {
		qattrs[k] = v
	}
	q, err := w.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("charge-%d%s", n, suffix)), Attributes: qattrs})
	if err != nil {
		t.Fatal(err)
	}
	w.queue = aws.ToString(q.QueueUrl)
	w.store = dynamostore.New(w.ddb, w.table)
	if w.guard, err = idempotency.NewGuard(w.store, idempotency.Config{Namespace: w.ns}); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) queueARN(url string) string {
	out, err := w.sqs.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		w.t.Fatal(err)
	}
	return out.Attributes["QueueArn"]
}

// complete runs the fact of order id to completion with result.
func (w *world) complete(id, result string) {
	w.t.Helper()
	body := fmt.Sprintf(`{"orderId":%q,"amount":5}`, id)
	if _, err := w.guard.Do(context.Background(), id, []byte(body), func(context.Context, idempotency.Reservation) (string, error) { return result, nil }); err != nil {
		w.t.Fatal(err)
	}
}

// hold reserves the fact of order id under a lease that ends at until, as
// a running worker would.
func (w *world) hold(id string, until time.Time) {
	w.t.Helper()
	f, err := w.guard.Fact(id, fmt.Appendf(nil, `{"orderId":%q,"amount":5}`, id))
	if err != nil {
		w.t.Fatal(err)
	}
	now := time.Now()
	rec := idempotency.Record{Key: f.Key, Status: idempotency.StatusInProgress, Owner: "worker-1", LeaseUntil: until, ExpiresAt: now.Add(time.Hour), TTL: now.Add(2 * time.Hour), PayloadHash: f.Hash}
	if err := w.store.Reserve(context.Background(), rec, now); err != nil {
		w.t.Fatal(err)
	}
}

// run runs the command with the consumer's flags and key function.
func (w *world) run(args ...string) (status int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	full := append([]string{args[0], "--endpoint-url", w.endpoint, "--table", w.table, "--namespace", w.ns, "--consumer", "Shop/Charge", "--env", "MESSAGE_DELIVERY=raw"}, args[1:]...)
	status = ops.Main(full, ops.WithAWSConfig(w.cfg), ops.WithOutput(&out, &errOut), ops.WithKey(orderKey))
	w.t.Logf("$ idemctl %s\n%s%s(exit %d)", strings.Join(args, " "), out.String(), errOut.String(), status)
	return status, out.String(), errOut.String()
}

func (w *world) record(id string) *idempotency.Record {
	w.t.Helper()
	key, _ := w.guard.Key(id)
	rec, err := w.store.Get(context.Background(), key)
	if err != nil {
		w.t.Fatal(err)
	}
	return rec
}

func TestShowSaysWhatTheGuardWillDo(t *testing.T) {
	w := newWorld(t, false)
	w.complete("o-1", "receipt-1")
	w.hold("o-2", time.Now().Add(time.Minute))

	status, out, _ := w.run("show", "o-1")
	for _, want := range []string{"charge#o-1", "COMPLETED", "9 bytes", "duplicate: completed", "v2:"} {
		if status != ops.ExitOK || !strings.Contains(out, want) {
			t.Errorf("show o-1 (exit %d) lacks %q", status, want)
		}
	}
	status, out, _ = w.run("show", "--json", "o-2")
	var v ops.RecordView
	if err := json.Unmarshal([]byte(out), &v); err != nil || status != ops.ExitOK {
		t.Fatalf("show --json: exit %d, %v: %s", status, err, out)
	}
	if v.Status != "IN_PROGRESS" || v.Owner != "worker-1" || v.LeaseUntil == nil || v.Verdict.Outcome != "in_progress" || v.WindowEnd == nil || v.TTL == nil {
		t.Errorf("show --json o-2 = %+v", v)
	}
	// A message, through the consumer's key function: the same record.
	status, out, _ = w.run("show", "--json", "--body", `{"orderId":"o-1","amount":5}`)
	if err := json.Unmarshal([]byte(out), &v); err != nil || status != ops.ExitOK || v.Key != "charge#o-1" || v.Verdict.Outcome != "duplicate" {
		t.Errorf("show --body: exit %d, %+v", status, v)
	}
	// Another payload under the key: a mismatch.
	status, out, _ = w.run("show", "--json", "--body", `{"orderId":"o-1","amount":6}`)
	if err := json.Unmarshal([]byte(out), &v); err != nil || status != ops.ExitOK || v.Verdict.Outcome != "mismatch" {
		t.Errorf("show --body with another payload: exit %d, %+v", status, v)
	}
	status, out, _ = w.run("show", "o-404")
	if status != ops.ExitOK || !strings.Contains(out, "none") || !strings.Contains(out, "processed: no record") {
		t.Errorf("show of a fact with no record: exit %d\n%s", status, out)
	}
}

// TestBadInputChangesNothing: an unknown consumer, a table without the
// layout, a key or a message the consumer's rules refuse: a clear error,
// exit status 2, and the table as it was.
func TestBadInputChangesNothing(t *testing.T) {
	w := newWorld(t, false)
	w.complete("o-1", "r")
	other := fmt.Sprintf("business-%d", names.Add(1))
	if _, err := w.ddb.CreateTable(context.Background(), &dynamodb.CreateTableInput{
		TableName:            aws.String(other),
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: ddbtypes.KeyTypeHash}},
		BillingMode:          ddbtypes.BillingModePayPerRequest,
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown table", []string{"forget", "--reason", "x", "--table", "nope", "o-1"}, `unknown table "nope"`},
		{"a table without the layout", []string{"forget", "--reason", "x", "--table", other, "o-1"}, "no idempotency records of the consumer's layout"},
		{"unknown function", []string{"show", "--function", "nope", "o-1"}, `unknown consumer: no function "nope"`},
		{"a key with a control character", []string{"forget", "--reason", "x", "o-\x01"}, "the consumer's rules refuse this key"},
		{"a message the key function refuses", []string{"forget", "--reason", "x", "--body", `{"orderId":"bad-1"}`}, "the consumer refuses this message"},
		{"a message that is not JSON", []string{"show", "--body", `{"orderId":`}, "the consumer refuses this message"},
		{"no reason", []string{"forget", "o-1"}, "give --reason"},
		{"two keys", []string{"show", "o-1", "o-2"}, "give one business key"},
		{"an unknown command", []string{"erase", "o-1"}, `unknown command "erase"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, _, errOut := w.run(c.args...)
			if status != ops.ExitUsage || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d, %q; want exit %d and %q", status, errOut, ops.ExitUsage, c.want)
			}
			if w.record("o-1") == nil {
				t.Fatal("the record was deleted")
			}
		})
	}
	// Without the key function, a message cannot be read: say how to build
	// the command with one.
	var out, errOut bytes.Buffer
	status := ops.Main([]string{"show", "--endpoint-url", w.endpoint, "--table", w.table, "--namespace", w.ns, "--env", "MESSAGE_DELIVERY=raw", "--body", `{"orderId":"o-1"}`}, ops.WithAWSConfig(w.cfg), ops.WithOutput(&out, &errOut))
	if status != ops.ExitUsage || !strings.Contains(errOut.String(), "ops.WithKey") {
		t.Errorf("show --body without a key function: exit %d, %q", status, errOut.String())
	}
}

// auditLine is forget's JSON line.
type auditLine struct {
	Level, Msg, Consumer, Key, Reason, Refused, Result string
	DryRun                                             bool `json:"dry_run"`
	Timestamp                                          string
	Record                                             *struct {
		Status, Owner string
		LeaseUntil    string `json:"lease_until"`
		ResultBytes   int    `json:"result_bytes"`
	}
}

func parseAudit(t *testing.T, out string) auditLine {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("forget wrote %d lines, want one audit line: %q", len(lines), out)
	}
	var a auditLine
	if err := json.Unmarshal([]byte(lines[0]), &a); err != nil {
		t.Fatalf("the audit line is not JSON: %v: %s", err, lines[0])
	}
	return a
}

func TestForgetRefusesALiveLeaseAndAuditsWhatItRemoves(t *testing.T) {
	w := newWorld(t, false)
	w.complete("o-1", "receipt-1")
	w.hold("o-2", time.Now().Add(time.Minute))
	w.hold("o-3", time.Now().Add(-time.Minute))

	status, out, errOut := w.run("forget", "--reason", "INC-7: worker stuck", "o-2")
	a := parseAudit(t, out)
	if status != ops.ExitRefused || !strings.Contains(errOut, "lease has not ended") || a.Level != "WARN" || a.Refused == "" || a.Record == nil || a.Record.Status != "IN_PROGRESS" {
		t.Errorf("forget of a live lease: exit %d, %q, %+v", status, errOut, a)
	}
	if rec := w.record("o-2"); rec == nil || rec.Owner != "worker-1" {
		t.Fatalf("the live lease was deleted or changed: %+v", rec)
	}

	status, out, _ = w.run("forget", "--dry-run", "--reason", "bug #12 fixed", "o-1")
	a = parseAudit(t, out)
	if status != ops.ExitOK || !a.DryRun || a.Record == nil || w.record("o-1") == nil {
		t.Errorf("forget --dry-run: exit %d, %+v, the record is %v", status, a, w.record("o-1"))
	}

	status, out, _ = w.run("forget", "--reason", "bug #12 fixed", "o-1")
	a = parseAudit(t, out)
	if status != ops.ExitOK || a.Level != "INFO" || a.Msg != "forget" || a.Reason != "bug #12 fixed" || a.Key != "charge#o-1" || a.Consumer != "Shop/Charge" ||
		a.Timestamp == "" || a.Record == nil || a.Record.Status != "COMPLETED" || a.Record.ResultBytes != len("receipt-1") {
		t.Errorf("forget of a completed fact: exit %d, %+v", status, a)
	}
	if rec := w.record("o-1"); rec != nil {
		t.Errorf("the completed record is still there: %+v", rec)
	}
	// A lapsed lease, through its message.
	status, _, _ = w.run("forget", "--reason", "crashed worker", "--body", `{"orderId":"o-3","amount":5}`)
	if status != ops.ExitOK || w.record("o-3") != nil {
		t.Errorf("forget of a lapsed lease: exit %d, record %v", status, w.record("o-3"))
	}
	status, _, errOut = w.run("forget", "--reason", "again", "o-1")
	if status != ops.ExitRefused || !strings.Contains(errOut, "no record holds the key") {
		t.Errorf("forget of a forgotten fact: exit %d, %q", status, errOut)
	}
}

// sendDLQ puts body in the dead-letter queue with a message attribute.
func (w *world) sendDLQ(body, group string) {
	w.t.Helper()
	in := &sqs.SendMessageInput{QueueUrl: aws.String(w.dlq), MessageBody: aws.String(body),
		MessageAttributes: map[string]sqstypes.MessageAttributeValue{"tenant": {DataType: aws.String("String"), StringValue: aws.String("acme")}}}
	if group != "" {
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(group), aws.String("dedup-"+body)
	}
	if _, err := w.sqs.SendMessage(context.Background(), in); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) drain(url string) []sqstypes.Message {
	w.t.Helper()
	var all []sqstypes.Message
	for {
		out, err := w.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, VisibilityTimeout: 60,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}, MessageAttributeNames: []string{"All"}})
		if err != nil {
			w.t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return all
		}
		all = append(all, out.Messages...)
	}
}

func TestRedriveDryRunThenCopy(t *testing.T) {
	// A standard queue: kumo returns no MessageGroupId nor
	// MessageDeduplicationId attribute on receive, which SQS does, so the
	// copy of a FIFO queue's messages is tested on recorded responses
	// (TestRedriveCopyKeepsTheFIFOGroup).
	w := newWorld(t, false)
	w.complete("o-1", "r")
	w.hold("o-2", time.Now().Add(time.Minute))
	bodies := []string{`{"orderId":"o-1","amount":5}`, `{"orderId":"o-2","amount":5}`, `{"orderId":"o-3","amount":5}`, `{"orderId":"bad-4"}`}
	for _, b := range bodies {
		w.sendDLQ(b, "")
	}
	status, out, _ := w.run("redrive", "--dry-run", "--queue-url", w.queue)
	for _, want := range []string{"charge#o-1  duplicate", "charge#o-2  in_progress", "charge#o-3  processed", "bad_input", "total: 4 (1 processed, 1 duplicate, 1 in_progress, 1 bad_input); nothing moved"} {
		if status != ops.ExitOK || !strings.Contains(out, want) {
			t.Errorf("dry run (exit %d) lacks %q", status, want)
		}
	}
	status, out, errOut := w.run("redrive", "--method", "copy", "--rate", "1000", "--queue-url", w.queue)
	if status != ops.ExitOK || !strings.Contains(out, "redriven: 4 messages copied") || !strings.Contains(errOut, "4/4 copied (100%)") {
		t.Errorf("copy: exit %d, %q, %q", status, out, errOut)
	}
	if left := w.drain(w.dlq); len(left) != 0 {
		t.Errorf("%d messages left in the dead-letter queue", len(left))
	}
	want := map[string]bool{}
	for _, b := range bodies {
		want[b] = true
	}
	got := w.drain(w.queue)
	for _, m := range got {
		if !want[aws.ToString(m.Body)] {
			t.Errorf("message %s is not one redriven, or came twice", aws.ToString(m.Body))
		}
		delete(want, aws.ToString(m.Body))
		if a := m.MessageAttributes["tenant"]; aws.ToString(a.StringValue) != "acme" {
			t.Errorf("message %s lost its attribute: %+v", aws.ToString(m.MessageId), m.MessageAttributes)
		}
	}
	if len(want) > 0 {
		t.Errorf("not in the queue: %v", want)
	}
}

// TestLocateFromTheFunction finds the consumer from its function: the
// contract in its environment (with the key secret as the construct writes
// it, a dynamic reference to Secrets Manager), the queue from its event
// source, the dead-letter queue from the queue's redrive policy.
func TestLocateFromTheFunction(t *testing.T) {
	w := newWorld(t, false)
	ctx := context.Background()
	secret := strings.Repeat("k", 32)
	sm := secretsmanager.NewFromConfig(w.cfg)
	created, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String(fmt.Sprintf("charge-key-%d", names.Add(1))), SecretString: aws.String(secret)})
	if err != nil {
		t.Fatal(err)
	}
	hashed, err := idempotency.NewGuard(w.store, idempotency.Config{Namespace: w.ns, KeySecret: []byte(secret)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hashed.Do(ctx, "alice@example.com", []byte(`{"orderId":"alice@example.com"}`), func(context.Context, idempotency.Reservation) (string, error) { return "", nil }); err != nil {
		t.Fatal(err)
	}
	s := contract.Defaults(30 * time.Second)
	s.Table, s.Namespace, s.Consumer = w.table, w.ns, "Shop/Charge"
	env := s.Encode()
	env[contract.KeySecretVar] = "{{resolve:secretsmanager:" + aws.ToString(created.ARN) + ":SecretString:::}}"
	lc := lambda.NewFromConfig(w.cfg)
	fn := fmt.Sprintf("charge-%d", names.Add(1))
	if _, err := lc.CreateFunction(ctx, &lambda.CreateFunctionInput{FunctionName: aws.String(fn), Role: aws.String("arn:aws:iam::000000000000:role/charge"),
		Runtime: lambdatypes.RuntimeProvidedal2023, Handler: aws.String("bootstrap"), Code: &lambdatypes.FunctionCode{ZipFile: []byte("PK")},
		Environment: &lambdatypes.Environment{Variables: env}}); err != nil {
		t.Fatal(err)
	}
	if _, err := lc.CreateEventSourceMapping(ctx, &lambda.CreateEventSourceMappingInput{FunctionName: aws.String(fn), EventSourceArn: aws.String(w.queueARN(w.queue))}); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	status := ops.Main([]string{"show", "--json", "--endpoint-url", w.endpoint, "--function", fn, "alice@example.com"}, ops.WithAWSConfig(w.cfg), ops.WithOutput(&out, &errOut))
	var v ops.RecordView
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || status != ops.ExitOK {
		t.Fatalf("show --function: exit %d, %v, %s", status, err, errOut.String())
	}
	want, _ := hashed.Key("alice@example.com")
	if v.Key != want || !v.Hashed || !v.Found || v.Consumer != "Shop/Charge" || strings.Contains(out.String(), "alice") {
		t.Errorf("show --function = %+v, want the record of the hashed key %s", v, want)
	}
	w.sendDLQ(`{"Type":"Notification","MessageId":"sns-1","TopicArn":"arn:aws:sns:us-east-1:000000000000:orders","Timestamp":"`+time.Now().UTC().Format(time.RFC3339)+`","Message":"{\"orderId\":\"o-9\",\"amount\":1}"}`, "")
	out.Reset()
	status = ops.Main([]string{"redrive", "--dry-run", "--endpoint-url", w.endpoint, "--function", fn}, ops.WithAWSConfig(w.cfg), ops.WithOutput(&out, &errOut), ops.WithKey(orderKey))
	if status != ops.ExitOK || !strings.Contains(out.String(), w.dlq) || !strings.Contains(out.String(), "redriven to "+w.queue) || !strings.Contains(out.String(), "1 processed") {
		t.Errorf("redrive --dry-run --function: exit %d, %s%s", status, out.String(), errOut.String())
	}
}
