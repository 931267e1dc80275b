// Package txmatrix_test is the TransactionalTables column of issue 33's
// settings matrix (internal/testkit/apptest, TestEverySharedSettingWorksOnEveryConstruct)
// run to a commit: dynalite, the matrix's server, has no
// TransactWriteItems, kumo has. Each construct whose runtime has a
// transactional entry point is synthesized with TransactionalTables = a
// business table; its function's environment, as synthesized, starts the
// transactional handler against kumo's DynamoDB, with a table created for
// each table of the template (a Ref is the name of the table created for
// that resource).
package txmatrix_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskinesis"
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/stream"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/modroot"
	"github.com/idempotent-consumer/idempotent-consumer/internal/testkit/consumertest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/kinesis"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

// repoRoot is the library's module root (cdk.json, the constructs' code);
// entry is the handler's main package the constructs bundle; outRoot
// holds the cloud assemblies.
var repoRoot, entry, outRoot string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "txmatrix-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	testRoot, err := modroot.OfWorkingDirectory()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	repoRoot, entry, outRoot = filepath.Dir(testRoot), filepath.Join(tmp, "handler"), filepath.Join(tmp, "out")
	const lib = "github.com/idempotent-consumer/idempotent-consumer"
	err = consumertest.WriteModule(entry, "require "+lib+" v0.0.0-00010101000000-000000000000\n\nreplace "+lib+" => "+repoRoot+"\n",
		"package main\n\nimport _ \""+lib+"/lambda/idempotency\"\n\nfunc main() {}\n")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return cdktest.Main(m)
}

// fact is the column's fact: one payment.
type fact struct {
	ID     string `json:"id"`
	Amount int    `json:"amount"`
}

// deliverFunc delivers the fact with the given id as one record of a batch
// (its delivery n, a new message or sequence number each time) to a
// handler started from the synthesized environment, and returns the
// batch's failed records and its error.
type deliverFunc func(n int, id string) (failures int, err error)

// txRow is a construct whose runtime has a transactional entry point.
type txRow struct {
	name string
	// build adds the construct, with TransactionalTables = tables, to
	// stack under id.
	build func(stack awscdk.Stack, id string, tables []awsdynamodb.ITable)
	// start starts the construct's transactional handler, with env and
	// cfg, on effect.
	start func(t *testing.T, env func(string) string, cfg aws.Config, effect func(fact) []types.TransactWriteItem) deliverFunc
}

var txRows = []txRow{
	{name: "IdempotentConsumer (SQS)",
		build: func(stack awscdk.Stack, id string, tables []awsdynamodb.ITable) {
			consumer.NewIdempotentConsumer(stack, jsii.String(id), &consumer.IdempotentConsumerProps{Props: core.Props{
				Entry: jsii.String(entry), TransactionalTables: &tables}})
		},
		start: startQueue},
	{name: "IdempotentStreamConsumer (Kinesis)",
		build: func(stack awscdk.Stack, id string, tables []awsdynamodb.ITable) {
			stream.NewIdempotentStreamConsumer(stack, jsii.String(id), &stream.IdempotentStreamConsumerProps{
				Props:  core.Props{Entry: jsii.String(entry), TransactionalTables: &tables},
				Stream: awskinesis.NewStream(stack, jsii.String(id+"Stream"), &awskinesis.StreamProps{Encryption: awskinesis.StreamEncryption_MANAGED})})
		},
		start: startKinesis},
}

// TestTransactionalTablesCommit: for each construct of txRows, the
// function synthesized with TransactionalTables = the Ledger table starts
// the transactional handler from its environment against kumo; a fact
// whose effect puts a Ledger item commits it with the fact's record in one
// transaction, and the fact's duplicate is absorbed: its writes commit
// once (the Ledger credited once), the idempotency table holds one record. A fact
// whose effect writes a table the environment does not declare fails the
// batch as a misconfiguration, and writes neither that table nor a record.
// (The HTTP endpoint's runtime has no transactional entry point, and the
// step refuses TransactionalTables at synth: see the matrix.)
func TestTransactionalTablesCommit(t *testing.T) {
	kumo, stop := kumotest.Start()
	defer stop()
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(kumo.URL),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	resources := synth(t)
	for i, row := range txRows {
		t.Run(row.name, func(t *testing.T) {
			path := fmt.Sprintf("TxMatrix/C%d", i)
			vars := environmentOf(resources, path)
			if vars == nil {
				t.Fatalf("no function with %s %s", contract.ConsumerVar, path)
			}
			tables := deploy(t, kumo.DynamoDB, resources)
			env := resolve(t, vars, tables)
			ledger, own := tables[logicalID(t, resources, "Ledger")], env[contract.TableVar]
			if env[contract.TxTablesVar] != ledger {
				t.Fatalf("%s = %q, want the Ledger table %q", contract.TxTablesVar, env[contract.TxTablesVar], ledger)
			}
			commitsOnce(t, kumo.DynamoDB, row, env, cfg, ledger, own)
			refusesUndeclared(t, kumo.DynamoDB, row, env, cfg, own)
		})
	}
}

// commitsOnce delivers one fact twice to the handler whose effect credits
// the fact's amount to its Ledger item: both deliveries succeed, and the
// Ledger holds one item, credited once, and the idempotency table one
// record. The duplicate's writes are built (a transactional effect returns
// its writes before the commit that checks the record) but not committed.
func commitsOnce(t *testing.T, ddb *dynamodb.Client, row txRow, env map[string]string, cfg aws.Config, ledger, own string) {
	t.Helper()
	deliver := row.start(t, getenv(env), cfg, func(f fact) []types.TransactWriteItem {
		return []types.TransactWriteItem{credit(ledger, f)}
	})
	for n := range 2 {
		if failures, err := deliver(n, "pay-1"); failures != 0 || err != nil {
			t.Fatalf("delivery %d: %d failed records, %v", n, failures, err)
		}
	}
	if items := ledgerItems(t, ddb, ledger); len(items) != 1 || items["pay-1"] != "5" {
		t.Errorf("the Ledger holds %v, want pay-1 credited once (5)", items)
	}
	if n := count(t, ddb, own); n != 1 {
		t.Errorf("the idempotency table holds %d records, want 1", n)
	}
}

// refusesUndeclared delivers a fact whose effect writes a table that the
// environment does not declare: the batch fails as misconfigured, and
// nothing is written.
func refusesUndeclared(t *testing.T, ddb *dynamodb.Client, row txRow, env map[string]string, cfg aws.Config, own string) {
	t.Helper()
	undeclared, err := kumotest.NewTableKeyed(context.Background(), ddb, "Undeclared", "id", "")
	if err != nil {
		t.Fatal(err)
	}
	deliver := row.start(t, getenv(env), cfg, func(f fact) []types.TransactWriteItem {
		return []types.TransactWriteItem{credit(undeclared, f)}
	})
	_, err = deliver(0, "pay-2")
	if !errors.Is(err, outcome.ErrMisconfigured) || !strings.Contains(err.Error(), undeclared) || !strings.Contains(err.Error(), contract.TxTablesVar) {
		t.Errorf("a write to an undeclared table: %v; want the batch failed as misconfigured, naming the table and %s", err, contract.TxTablesVar)
	}
	if n := count(t, ddb, undeclared); n != 0 {
		t.Errorf("the undeclared table holds %d items, want 0", n)
	}
	if n := count(t, ddb, own); n != 1 {
		t.Errorf("the idempotency table holds %d records after the refused fact, want 1 (the first fact's)", n)
	}
}

// synth builds one construct per row, with TransactionalTables = the
// Ledger table, and returns the template's resources.
func synth(t *testing.T) map[string]any {
	t.Helper()
	var resources map[string]any
	cdktest.Must(t, func() {
		ctx, err := cdktest.ContextIn(repoRoot)
		if err != nil {
			panic(err)
		}
		app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx, Outdir: jsii.String(outRoot)})
		stack := awscdk.NewStack(app, jsii.String("TxMatrix"), nil)
		ledger := awsdynamodb.NewTable(stack, jsii.String("Ledger"), &awsdynamodb.TableProps{
			PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("id"), Type: awsdynamodb.AttributeType_STRING}})
		for i, row := range txRows {
			row.build(stack, fmt.Sprintf("C%d", i), []awsdynamodb.ITable{ledger})
		}
		resources = (*assertions.Template_FromStack(stack, nil).ToJSON())["Resources"].(map[string]any)
	})
	return resources
}

// environmentOf is the environment of the function whose CONSUMER_NAME is
// path.
func environmentOf(resources map[string]any, path string) map[string]any {
	for _, r := range resources {
		r := r.(map[string]any)
		if r["Type"] != "AWS::Lambda::Function" {
			continue
		}
		env, _ := r["Properties"].(map[string]any)["Environment"].(map[string]any)
		if vars, _ := env["Variables"].(map[string]any); vars != nil && vars[contract.ConsumerVar] == path {
			return vars
		}
	}
	return nil
}

// logicalID is the logical id of the table whose construct id starts with
// prefix.
func logicalID(t *testing.T, resources map[string]any, prefix string) string {
	t.Helper()
	for id, r := range resources {
		if strings.HasPrefix(id, prefix) && r.(map[string]any)["Type"] == "AWS::DynamoDB::Table" {
			return id
		}
	}
	t.Fatalf("no table %s… in the template", prefix)
	return ""
}

// deploy creates on kumo a table of each table of the template, with its
// key schema, and returns their names by logical id.
func deploy(t *testing.T, ddb *dynamodb.Client, resources map[string]any) map[string]string {
	t.Helper()
	names := map[string]string{}
	for id, r := range resources {
		r := r.(map[string]any)
		if r["Type"] != "AWS::DynamoDB::Table" && r["Type"] != "AWS::DynamoDB::GlobalTable" {
			continue
		}
		var partition, sort string
		for _, k := range r["Properties"].(map[string]any)["KeySchema"].([]any) {
			k := k.(map[string]any)
			if k["KeyType"] == "HASH" {
				partition = k["AttributeName"].(string)
			} else {
				sort = k["AttributeName"].(string)
			}
		}
		name, err := kumotest.NewTableKeyed(context.Background(), ddb, id, partition, sort)
		if err != nil {
			t.Fatal(err)
		}
		names[id] = name
	}
	return names
}

// resolve is the environment as deployed: literals as they are, a Ref to
// a table its name on kumo, an Fn::Join of such references joined. Any
// other value fails the test.
func resolve(t *testing.T, vars map[string]any, tables map[string]string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for k, v := range vars {
		s, err := value(v, tables)
		if err != nil {
			b, _ := json.Marshal(v)
			t.Fatalf("%s is %s: %v", k, b, err)
		}
		env[k] = s
	}
	return env
}

func value(v any, tables map[string]string) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case map[string]any:
		if ref, ok := v["Ref"].(string); ok && tables[ref] != "" {
			return tables[ref], nil
		}
		if join, ok := v["Fn::Join"].([]any); ok && len(join) == 2 {
			sep, _ := join[0].(string)
			parts, _ := join[1].([]any)
			var out []string
			for _, p := range parts {
				s, err := value(p, tables)
				if err != nil {
					return "", err
				}
				out = append(out, s)
			}
			return strings.Join(out, sep), nil
		}
	}
	return "", errors.New("not a literal, nor a reference to a table of the template")
}

func getenv(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// options are the handler's options: the synthesized environment, kumo,
// no logs.
func options(env func(string) string, cfg aws.Config) []handler.Option {
	return []handler.Option{handler.WithGetenv(env), handler.WithAWSConfig(cfg),
		handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard)}
}

// credit is the business write of fact f in table: it adds f's amount to
// the item f.ID, so that a second commit of f's writes would show.
func credit(table string, f fact) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{TableName: aws.String(table),
		Key:                       map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: f.ID}},
		UpdateExpression:          aws.String("ADD amount :a"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":a": &types.AttributeValueMemberN{Value: fmt.Sprint(f.Amount)}}}}
}

// ledgerItems returns the items of table: their amounts by id.
func ledgerItems(t *testing.T, ddb *dynamodb.Client, table string) map[string]string {
	t.Helper()
	out, err := ddb.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	items := map[string]string{}
	for _, it := range out.Items {
		id, _ := it["id"].(*types.AttributeValueMemberS)
		amount, _ := it["amount"].(*types.AttributeValueMemberN)
		if id != nil && amount != nil {
			items[id.Value] = amount.Value
		}
	}
	return items
}

func count(t *testing.T, ddb *dynamodb.Client, table string) int {
	t.Helper()
	out, err := ddb.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Items)
}

func startQueue(t *testing.T, env func(string) string, cfg aws.Config, effect func(fact) []types.TransactWriteItem) deliverFunc {
	t.Helper()
	h, err := sqsbatch.FromEnvTx(func(f fact) (string, error) { return f.ID, nil },
		func(_ context.Context, f fact, _ idempotency.Reservation) ([]types.TransactWriteItem, string, error) {
			return effect(f), "paid", nil
		}, options(env, cfg)...)
	if err != nil {
		t.Fatalf("the synthesized environment does not start the transactional queue handler: %v", err)
	}
	return func(n int, id string) (int, error) {
		// the construct's default delivery: an SNS topic's notification
		body, _ := json.Marshal(map[string]string{"Type": "Notification", "MessageId": id, "TopicArn": "arn:aws:sns:us-east-1:1:payments",
			"Message": fmt.Sprintf(`{"id":%q,"amount":5}`, id)})
		res, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: fmt.Sprintf("%s-%d", id, n),
			Body:       string(body),
			Attributes: map[string]string{"SentTimestamp": fmt.Sprint(time.Now().UnixMilli()), "ApproximateReceiveCount": "1"}}}})
		return len(res.BatchItemFailures), err
	}
}

func startKinesis(t *testing.T, env func(string) string, cfg aws.Config, effect func(fact) []types.TransactWriteItem) deliverFunc {
	t.Helper()
	h, err := kinesis.FromEnvTx(func(f fact) (string, error) { return f.ID, nil },
		func(_ context.Context, f fact, _ idempotency.Reservation) ([]types.TransactWriteItem, string, error) {
			return effect(f), "paid", nil
		}, options(env, cfg)...)
	if err != nil {
		t.Fatalf("the synthesized environment does not start the transactional Kinesis handler: %v", err)
	}
	return func(n int, id string) (int, error) {
		seq := fmt.Sprintf("4959%052d", n+1)
		res, err := h.Handle(context.Background(), events.KinesisEvent{Records: []events.KinesisEventRecord{{EventID: "shardId-000000000000:" + seq,
			Kinesis: events.KinesisRecord{SequenceNumber: seq, PartitionKey: id, Data: fmt.Appendf(nil, `{"id":%q,"amount":5}`, id),
				ApproximateArrivalTimestamp: events.SecondsEpochTime{Time: time.Now()}}}}})
		return len(res.BatchItemFailures), err
	}
}
