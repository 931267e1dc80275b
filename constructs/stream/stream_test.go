package stream_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskinesis"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/stream"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/testkit/consumertest"
)

// handlerDir is a stream handler's main package, written by TestMain.
var handlerDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "stream-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	handlerDir = filepath.Join(dir, "outbox")
	if err := WriteStreamHandler(handlerDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := cdktest.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// WriteStreamHandler writes a module whose main links the stream adapter.
func WriteStreamHandler(dir string) error {
	const lib = "github.com/idempotent-consumer/idempotent-consumer"
	return consumertest.WriteLibraryModule(dir, "package main\n\nimport _ \""+lib+"/lambda/kinesis\"\n\nfunc main() {}\n")
}

func newStack(t *testing.T) awscdk.Stack {
	t.Helper()
	var app awscdk.App
	cdktest.Must(t, func() {
		var err error
		app, err = cdktest.NewApp(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
	})
	return awscdk.NewStack(app, jsii.String("Outbox"), nil)
}

func ordersTable(s awscdk.Stack, view awsdynamodb.StreamViewType) awsdynamodb.Table {
	return awsdynamodb.NewTable(s, jsii.String("Orders"), &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("orderId"), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		Stream:       view,
	})
}

// globalOrders is a global table of orders in a stack of us-east-1 of its
// own (the consumer's stack has no Region), replicated to us-east-2 (and
// the witness us-west-2 when strong), with a stream of view if given.
func globalOrders(s awscdk.Stack, consistency awsdynamodb.MultiRegionConsistency, view awsdynamodb.StreamViewType) awsdynamodb.TableV2 {
	east := awscdk.NewStack(s.Node().Root().(constructs.Construct), jsii.String("Outbox"+string(consistency)), &awscdk.StackProps{Env: &awscdk.Environment{Region: jsii.String("us-east-1")}})
	props := &awsdynamodb.TablePropsV2{
		PartitionKey:           &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING},
		MultiRegionConsistency: consistency,
		Replicas:               &[]*awsdynamodb.ReplicaTableProps{{Region: jsii.String("us-east-2")}},
		DynamoStream:           view,
	}
	if consistency == awsdynamodb.MultiRegionConsistency_STRONG {
		props.WitnessRegion = jsii.String("us-west-2")
	}
	return awsdynamodb.NewTableV2(east, jsii.String("Orders"), props)
}

// TestKinesisDefaults snapshots a Kinesis consumer with its defaults.
func TestKinesisDefaults(t *testing.T) {
	s := newStack(t)
	cdktest.Must(t, func() {
		orders := awskinesis.NewStream(s, jsii.String("Events"), &awskinesis.StreamProps{Encryption: awskinesis.StreamEncryption_MANAGED})
		stream.NewIdempotentStreamConsumer(s, jsii.String("Ship"), &stream.IdempotentStreamConsumerProps{Props: core.Props{Entry: jsii.String(handlerDir)}, Stream: orders})
	})
	tmpl := cdktest.Template(t, s)
	cdktest.Snapshot(t, tmpl, "testdata/Kinesis.template.json")
	esm := only(t, tmpl, "AWS::Lambda::EventSourceMapping")
	for k, want := range map[string]any{
		"StartingPosition": "TRIM_HORIZON", "BatchSize": 100.0, "BisectBatchOnFunctionError": true,
		"MaximumRetryAttempts": 10.0, "MaximumRecordAgeInSeconds": 21600.0, "ParallelizationFactor": 1.0,
	} {
		if got := esm[k]; got != want {
			t.Errorf("event source %s = %v, want %v", k, got, want)
		}
	}
	if fmt.Sprint(esm["FunctionResponseTypes"]) != "[ReportBatchItemFailures]" {
		t.Errorf("FunctionResponseTypes %v", esm["FunctionResponseTypes"])
	}
	dest := fmt.Sprint(esm["DestinationConfig"])
	if !strings.Contains(dest, "FailureBucket") {
		t.Errorf("the on-failure destination is not the failure bucket: %s", dest)
	}
	env := fmt.Sprint(only(t, tmpl, "AWS::Lambda::Function")["Environment"])
	if !strings.Contains(env, "CONSUMER_SOURCE:kinesis") || strings.Contains(env, "MESSAGE_DELIVERY") || strings.Contains(env, "QUEUE_") {
		t.Errorf("environment %s: want the Kinesis source and no queue setting", env)
	}
}

// TestDynamoDBStreamCustom snapshots an outbox consumer with its settings
// away from the defaults.
func TestDynamoDBStreamCustom(t *testing.T) {
	s := newStack(t)
	cdktest.Must(t, func() {
		stream.NewIdempotentStreamConsumer(s, jsii.String("Confirm"), &stream.IdempotentStreamConsumerProps{
			Props:                 core.Props{Entry: jsii.String(handlerDir), Namespace: jsii.String("confirm"), Dashboard: jsii.Bool(true)},
			SourceTable:           ordersTable(s, awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES),
			OldImage:              jsii.Bool(true),
			Removes:               contract.RemoveSkip,
			BatchSize:             jsii.Number(50),
			MaxBatchingWindow:     awscdk.Duration_Seconds(jsii.Number(2)),
			RetryAttempts:         jsii.Number(3),
			MaxRecordAge:          awscdk.Duration_Hours(jsii.Number(1)),
			ParallelizationFactor: jsii.Number(4),
		})
	})
	tmpl := cdktest.Template(t, s)
	cdktest.Snapshot(t, tmpl, "testdata/DynamoDB.template.json")
	env := fmt.Sprint(only(t, tmpl, "AWS::Lambda::Function")["Environment"])
	for _, want := range []string{"CONSUMER_SOURCE:dynamodb-streams", "STREAM_IMAGES:new-and-old", "STREAM_REMOVES:skip", "IDEMPOTENCY_NAMESPACE:confirm"} {
		if !strings.Contains(env, want) {
			t.Errorf("environment %s: want %s", env, want)
		}
	}
}

// TestRemovesSkipExpired: the choice to skip only TTL deletes reaches the
// function's environment as the contract names it.
func TestRemovesSkipExpired(t *testing.T) {
	s := newStack(t)
	cdktest.Must(t, func() {
		stream.NewIdempotentStreamConsumer(s, jsii.String("Confirm"), &stream.IdempotentStreamConsumerProps{
			Props:       core.Props{Entry: jsii.String(handlerDir)},
			SourceTable: ordersTable(s, awsdynamodb.StreamViewType_NEW_IMAGE),
			Removes:     contract.RemoveSkipExpired,
		})
	})
	env := fmt.Sprint(only(t, cdktest.Template(t, s), "AWS::Lambda::Function")["Environment"])
	if !strings.Contains(env, "STREAM_REMOVES:skip-expired") {
		t.Errorf("environment %s: want STREAM_REMOVES:skip-expired", env)
	}
}

// TestRefusals: every problem at once, each naming the prop, the value and
// the fix.
func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		name  string
		props func(s awscdk.Stack) *stream.IdempotentStreamConsumerProps
		want  []string
	}{
		{"no source", func(awscdk.Stack) *stream.IdempotentStreamConsumerProps {
			return &stream.IdempotentStreamConsumerProps{Props: core.Props{Entry: jsii.String(handlerDir)}}
		}, []string{"neither Stream nor SourceTable"}},
		{"a table without a stream", func(s awscdk.Stack) *stream.IdempotentStreamConsumerProps {
			return &stream.IdempotentStreamConsumerProps{Props: core.Props{Entry: jsii.String(handlerDir)}, SourceTable: ordersTable(s, ""), Removes: contract.RemoveRun}
		}, []string{"has no stream"}},
		{"a view type without the images", func(s awscdk.Stack) *stream.IdempotentStreamConsumerProps {
			return &stream.IdempotentStreamConsumerProps{Props: core.Props{Entry: jsii.String(handlerDir)}, SourceTable: ordersTable(s, awsdynamodb.StreamViewType_NEW_IMAGE), OldImage: jsii.Bool(true), Removes: contract.RemoveRun}
		}, []string{"view type NEW_IMAGE, but OldImage asks for the old image"}},
		{"keys only", func(s awscdk.Stack) *stream.IdempotentStreamConsumerProps {
			return &stream.IdempotentStreamConsumerProps{Props: core.Props{Entry: jsii.String(handlerDir)}, SourceTable: ordersTable(s, awsdynamodb.StreamViewType_KEYS_ONLY), Removes: contract.RemoveRun}
		}, []string{"view type KEYS_ONLY"}},
		{"no REMOVE choice", func(s awscdk.Stack) *stream.IdempotentStreamConsumerProps {
			return &stream.IdempotentStreamConsumerProps{Props: core.Props{Entry: jsii.String(handlerDir)}, SourceTable: ordersTable(s, awsdynamodb.StreamViewType_NEW_IMAGE)}
		}, []string{"StreamRemoves is not set"}},
		{"stream limits", func(s awscdk.Stack) *stream.IdempotentStreamConsumerProps {
			return &stream.IdempotentStreamConsumerProps{
				Props:                 core.Props{Entry: jsii.String(handlerDir)},
				Stream:                awskinesis.NewStream(s, jsii.String("E"), nil),
				Removes:               contract.RemoveRun,
				OldImage:              jsii.Bool(true),
				BatchSize:             jsii.Number(10001),
				RetryAttempts:         jsii.Number(-1),
				ParallelizationFactor: jsii.Number(11),
				MaxRecordAge:          awscdk.Duration_Hours(jsii.Number(24)),
				MaxBatchingWindow:     awscdk.Duration_Minutes(jsii.Number(6)),
			}
		}, []string{"OldImage is set, but the source is a Kinesis stream", `Removes is "run", but the source is a Kinesis stream`,
			"BatchSize 10001 is out of range", "RetryAttempts -1 is out of range", "ParallelizationFactor 11 is out of range",
			"MaxRecordAge 24h is not less than Window 24h", "MaxBatchingWindow 6m is out of range"}},
		{"tokens and a table the store cannot write", func(s awscdk.Stack) *stream.IdempotentStreamConsumerProps {
			// A table of the app's own design is accepted (TestStreamOnSingleTableDesign);
			// one with a numeric key is not: the store writes strings.
			other := awsdynamodb.NewTable(s, jsii.String("Other"), &awsdynamodb.TableProps{
				PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("id"), Type: awsdynamodb.AttributeType_NUMBER},
				BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
			})
			return &stream.IdempotentStreamConsumerProps{
				Props:        core.Props{Entry: jsii.String(handlerDir), Table: other},
				Stream:       awskinesis.NewStream(s, jsii.String("E"), nil),
				BatchSize:    awscdk.Token_AsNumber(awscdk.Fn_ImportValue(jsii.String("Size"))),
				MaxRecordAge: awscdk.Duration_Seconds(awscdk.Token_AsNumber(awscdk.Fn_ImportValue(jsii.String("Age")))),
			}
		}, []string{"BatchSize is a token", "MaxRecordAge is a token", `Table's key schema is [HASH id (N)]`, "Namespace is required"}},
		{"an MRSC outbox whose stream lacks the old image", func(s awscdk.Stack) *stream.IdempotentStreamConsumerProps {
			return &stream.IdempotentStreamConsumerProps{Props: core.Props{Entry: jsii.String(handlerDir)}, SourceTable: globalOrders(s, awsdynamodb.MultiRegionConsistency_STRONG, awsdynamodb.StreamViewType_NEW_IMAGE), OldImage: jsii.Bool(true), Removes: contract.RemoveRun}
		}, []string{"SourceTable OutboxSTRONG/Orders has a stream of view type NEW_IMAGE, but OldImage asks for the old image of a MODIFY too: give it the view type NEW_AND_OLD_IMAGES"}},
		{"an MRSC table and a transactional effect", func(s awscdk.Stack) *stream.IdempotentStreamConsumerProps {
			ledger := awsdynamodb.Table_FromTableName(s, jsii.String("Ledger"), jsii.String("ledger"))
			return &stream.IdempotentStreamConsumerProps{
				Props:  core.Props{Entry: jsii.String(handlerDir), Table: globalOrders(s, awsdynamodb.MultiRegionConsistency_STRONG, ""), Namespace: jsii.String("ship"), TransactionalTables: &[]awsdynamodb.ITable{ledger}},
				Stream: awskinesis.NewStream(s, jsii.String("E"), nil),
			}
		}, []string{"TransactionalTables is set, but the idempotency table is in multi-Region strong consistency (MRSC), which supports no transaction operations"}},
		{"an eventual global table", func(s awscdk.Stack) *stream.IdempotentStreamConsumerProps {
			return &stream.IdempotentStreamConsumerProps{
				Props:  core.Props{Entry: jsii.String(handlerDir), Table: globalOrders(s, awsdynamodb.MultiRegionConsistency_EVENTUAL, ""), Namespace: jsii.String("ship")},
				Stream: awskinesis.NewStream(s, jsii.String("E"), nil),
			}
		}, []string{"Table OutboxEVENTUAL/Orders is a global table in multi-Region eventual consistency (MREC) across 2 Regions (us-east-1, us-east-2)", "or set SingleWritingRegion"}},
		{"the contract's rules", func(s awscdk.Stack) *stream.IdempotentStreamConsumerProps {
			return &stream.IdempotentStreamConsumerProps{
				Props:  core.Props{Entry: jsii.String(handlerDir), Timeout: awscdk.Duration_Seconds(jsii.Number(2)), Namespace: jsii.String("a#b")},
				Stream: awskinesis.NewStream(s, jsii.String("E"), nil),
			}
		}, []string{"Timeout 2s is too short", `Namespace "a#b"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStack(t)
			var props *stream.IdempotentStreamConsumerProps
			cdktest.Must(t, func() { props = c.props(s) })
			msg, panicked := cdktest.Panics(func() { stream.NewIdempotentStreamConsumer(s, jsii.String("Bad"), props) })
			if !panicked {
				t.Fatal("not refused")
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("the refusal does not say %q:\n%s", w, msg)
				}
			}
			if !strings.Contains(msg, `IdempotentStreamConsumer "Bad"`) {
				t.Errorf("the refusal does not name the construct:\n%s", msg)
			}
		})
	}
}

// TestRecordAgeWithinTheStreamsRetention: MaxRecordAge must be shorter
// than the time the stream keeps a record (a DynamoDB stream's 24 hours, a
// Kinesis stream's retention, 24 hours by default), or a record that keeps
// failing leaves the stream before Lambda gives up on it, and the batch
// never reaches the on-failure bucket; the neighbour within the retention
// deploys. Before, each was accepted (Window alone bounded MaxRecordAge).
func TestRecordAgeWithinTheStreamsRetention(t *testing.T) {
	hours := func(n float64) awscdk.Duration { return awscdk.Duration_Hours(jsii.Number(n)) }
	kinesis := func(retention awscdk.Duration, age float64) func(s awscdk.Stack) *stream.IdempotentStreamConsumerProps {
		return func(s awscdk.Stack) *stream.IdempotentStreamConsumerProps {
			return &stream.IdempotentStreamConsumerProps{
				Props:        core.Props{Entry: jsii.String(handlerDir), Window: hours(7 * 24)},
				Stream:       awskinesis.NewStream(s, jsii.String("E"), &awskinesis.StreamProps{RetentionPeriod: retention}),
				MaxRecordAge: hours(age),
			}
		}
	}
	table := func(age float64) func(s awscdk.Stack) *stream.IdempotentStreamConsumerProps {
		return func(s awscdk.Stack) *stream.IdempotentStreamConsumerProps {
			return &stream.IdempotentStreamConsumerProps{
				Props:       core.Props{Entry: jsii.String(handlerDir), Window: hours(7 * 24)},
				SourceTable: ordersTable(s, awsdynamodb.StreamViewType_NEW_IMAGE), Removes: contract.RemoveRun,
				MaxRecordAge: hours(age),
			}
		}
	}
	for _, c := range []struct {
		name  string
		props func(s awscdk.Stack) *stream.IdempotentStreamConsumerProps
		want  []string // none when accepted
	}{
		{"a Kinesis stream's default retention", kinesis(nil, 48), []string{"MaxRecordAge 48h is not shorter than the retention of the stream Outbox/E, 24h: ", "give a MaxRecordAge below 24h (default 6h), or the stream a longer retention (StreamProps.RetentionPeriod, up to 8760h)"}},
		{"a Kinesis stream's own retention", kinesis(hours(72), 72), []string{"MaxRecordAge 72h is not shorter than the retention of the stream Outbox/E, 72h: a record that keeps failing leaves the stream before Lambda gives up on it, so its batch never reaches the on-failure bucket"}},
		{"within a Kinesis stream's retention", kinesis(hours(72), 48), nil},
		{"a DynamoDB stream's 24 hours", table(30), []string{"MaxRecordAge 30h is not shorter than the retention of the stream of Outbox/Orders, 24h (a DynamoDB stream's)", "give a MaxRecordAge below 24h (default 6h)\n"}},
		{"within a DynamoDB stream's 24 hours", table(23), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStack(t)
			var props *stream.IdempotentStreamConsumerProps
			cdktest.Must(t, func() { props = c.props(s) })
			msg, panicked := cdktest.Panics(func() { stream.NewIdempotentStreamConsumer(s, jsii.String("C"), props) })
			switch {
			case c.want == nil && panicked:
				t.Fatalf("refused: %s", msg)
			case c.want != nil && !panicked:
				t.Fatal("not refused")
			}
			for _, w := range c.want {
				if !strings.Contains(msg+"\n", w) {
					t.Errorf("the refusal does not say %q:\n%s", w, msg)
				}
			}
		})
	}
}

func only(t *testing.T, tmpl map[string]any, typ string) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, r := range tmpl["Resources"].(map[string]any) {
		r := r.(map[string]any)
		if r["Type"] == typ {
			found = append(found, r["Properties"].(map[string]any))
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d resources of type %s, want 1", len(found), typ)
	}
	return found[0]
}

// TestATransactionalHandlerDeclaresItsTables: a stream handler whose
// bootstrap links a transactional effect (kinesis.NewTx, dynamodbstream.NewTx)
// is refused with no TransactionalTables, as the queue consumer's is (it
// was accepted before, and every write denied in AWS); with its tables
// declared, it synthesizes. The refusal on an MRSC table is the same rule's
// (family's TestTxValidationRefusesWhatCannotRun).
func TestATransactionalHandlerDeclaresItsTables(t *testing.T) {
	for _, source := range []string{"kinesis", "dynamodbstream"} {
		entry := filepath.Join(filepath.Dir(handlerDir), "tx-"+source)
		if err := consumertest.WriteLibraryModule(entry, consumertest.TxSources[source]); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name     string
			declared bool
			want     string
		}{
			{"undeclared", false, `IdempotentStreamConsumer "Ship": the handler makes transactional writes`},
			{"declared", true, ""},
		} {
			t.Run(source+"/"+tc.name, func(t *testing.T) {
				msg, _ := cdktest.Panics(func() {
					app, err := cdktest.NewApp(t.TempDir())
					if err != nil {
						panic(err)
					}
					s := awscdk.NewStack(app, jsii.String("Outbox"), nil)
					props := &stream.IdempotentStreamConsumerProps{Props: core.Props{Entry: jsii.String(entry)},
						Stream: awskinesis.NewStream(s, jsii.String("Events"), &awskinesis.StreamProps{Encryption: awskinesis.StreamEncryption_MANAGED})}
					if tc.declared {
						props.TransactionalTables = &[]awsdynamodb.ITable{ordersTable(s, "")}
					}
					stream.NewIdempotentStreamConsumer(s, jsii.String("Ship"), props)
					app.Synth(nil)
				})
				switch {
				case tc.want == "" && msg != "":
					t.Fatalf("refused: %s", msg)
				case !strings.Contains(msg, tc.want):
					t.Errorf("refusal does not say %q:\n%s", tc.want, msg)
				case tc.want != "" && strings.Contains(msg, "GrantTransactionalWrites"):
					t.Errorf("refusal names the queue consumer's GrantTransactionalWrites:\n%s", msg)
				}
			})
		}
	}
}
