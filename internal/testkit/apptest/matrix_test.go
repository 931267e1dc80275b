package apptest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskinesis"
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/endpoint"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/step"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/stream"
	pub "github.com/idempotent-consumer/idempotent-consumer/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/dynalite"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	lambdaendpoint "github.com/idempotent-consumer/idempotent-consumer/lambda/endpoint"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/kinesis"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
	lambdastep "github.com/idempotent-consumer/idempotent-consumer/lambda/step"
)

// setting is a column of the matrix: shared props set on a construct,
// what the synthesized function must show of them, and the table its
// handler writes (its design).
type setting struct {
	name string
	// props sets the shared props of the construct with the id id in st.
	props func(st *matrixStack, id string) core.Props
	// shows checks the synthesized function (its environment and
	// properties) and the construct's warnings; "" when they show the
	// setting.
	shows func(fn map[string]any, env map[string]any, warnings []string) string
	// partition and sort are the key schema of the table the handler
	// writes in the DynamoDB-compatible server.
	partition, sort string
}

// matrixStack is the stack of one construct's row: its shared resources.
type matrixStack struct {
	stack  awscdk.Stack
	single awsdynamodb.TableV2
	ledger awsdynamodb.Table
	vpc    awsec2.Vpc
}

// reserved is the reserved concurrency of the matrix's column.
const reserved = 3

var matrixSettings = []setting{
	{name: "own table", partition: "pk",
		props: func(st *matrixStack, id string) core.Props { return core.Props{} },
		shows: func(fn, env map[string]any, _ []string) string {
			return want(env[contract.PartitionKeyVar] == nil, "own table writes design variables: %v", env[contract.PartitionKeyVar])
		}},
	{name: "single-table PK/SK, fixed value", partition: "PK", sort: "SK",
		props: func(st *matrixStack, id string) core.Props {
			return core.Props{Table: st.single, Namespace: jsii.String(strings.ToLower(id)), TableFixedKeyValue: jsii.String("IDEMPOTENCY")}
		},
		shows: func(fn, env map[string]any, _ []string) string {
			return want(env[contract.PartitionKeyVar] == "PK" && env[contract.SortKeyVar] == "SK" && env[contract.FixedKeyValueVar] == "IDEMPOTENCY" && env[contract.TTLAttributeVar] == "expiresAt",
				"design variables %v %v %v %v", env[contract.PartitionKeyVar], env[contract.SortKeyVar], env[contract.FixedKeyValueVar], env[contract.TTLAttributeVar])
		}},
	{name: "imported table (warning)", partition: "pk",
		props: func(st *matrixStack, id string) core.Props {
			return core.Props{Table: awsdynamodb.Table_FromTableName(st.stack, jsii.String(id+"Imported"), jsii.String("imported")), Namespace: jsii.String(strings.ToLower(id))}
		},
		shows: func(fn, env map[string]any, warnings []string) string {
			for _, w := range warnings {
				if strings.Contains(w, "cannot read its key schema") && strings.Contains(w, "[HASH pk (S)]") && strings.Contains(w, core.WarnTableImported) {
					return ""
				}
			}
			return fmt.Sprintf("no warning naming the key schema: %q", warnings)
		}},
	{name: "GlobalTable (MRSC)", partition: "pk",
		props: func(st *matrixStack, id string) core.Props {
			return core.Props{GlobalTable: &core.GlobalTable{
				Regions: jsii.Strings(matrixRegion, "us-east-2"), WitnessRegion: jsii.String("us-west-2"),
				TableName: jsii.String(strings.ToLower(*st.stack.StackName() + "-" + id)),
			}}
		},
		shows: func(fn, env map[string]any, _ []string) string {
			ref, _ := env[contract.TableVar].(map[string]any)
			return want(ref != nil && strings.Contains(fmt.Sprint(ref["Ref"]), "GlobalTable"), "the function's table is %v, not the MRSC table", env[contract.TableVar])
		}},
	{name: "HashKeys", partition: "pk",
		props: func(st *matrixStack, id string) core.Props { return core.Props{HashKeys: jsii.Bool(true)} },
		shows: func(fn, env map[string]any, _ []string) string {
			return want(env[contract.KeySecretVar] != nil, "no %s", contract.KeySecretVar)
		}},
	{name: "TransactionalTables", partition: "pk",
		props: func(st *matrixStack, id string) core.Props {
			return core.Props{TransactionalTables: &[]awsdynamodb.ITable{st.ledger}}
		},
		shows: func(fn, env map[string]any, _ []string) string {
			return want(env[contract.TxTablesVar] != nil, "no %s", contract.TxTablesVar)
		}},
	{name: "Vpc", partition: "pk",
		props: func(st *matrixStack, id string) core.Props { return core.Props{Vpc: st.vpc} },
		shows: func(fn, env map[string]any, _ []string) string {
			return want(fn["VpcConfig"] != nil, "no VpcConfig")
		}},
	{name: "Environment", partition: "pk",
		props: func(st *matrixStack, id string) core.Props {
			return core.Props{Environment: &map[string]*string{"LEDGER_URL": jsii.String("https://ledger.example")}}
		},
		shows: func(fn, env map[string]any, _ []string) string {
			return want(env["LEDGER_URL"] == "https://ledger.example", "LEDGER_URL is %v", env["LEDGER_URL"])
		}},
	{name: "EphemeralStorageSize", partition: "pk",
		props: func(st *matrixStack, id string) core.Props {
			return core.Props{EphemeralStorageSize: jsii.Number(1024)}
		},
		shows: func(fn, env map[string]any, _ []string) string {
			e, _ := fn["EphemeralStorage"].(map[string]any)
			return want(e != nil && e["Size"] == float64(1024), "EphemeralStorage %v", fn["EphemeralStorage"])
		}},
	{name: "reserved concurrency", partition: "pk",
		props: func(st *matrixStack, id string) core.Props {
			return core.Props{ReservedConcurrentExecutions: jsii.Number(reserved)}
		},
		shows: func(fn, env map[string]any, _ []string) string {
			return want(fn["ReservedConcurrentExecutions"] == float64(reserved), "ReservedConcurrentExecutions %v", fn["ReservedConcurrentExecutions"])
		}},
}

func want(ok bool, format string, args ...any) string {
	if ok {
		return ""
	}
	return fmt.Sprintf(format, args...)
}

// family is a row of the matrix: a construct of the family, built with the
// shared props, and its handler run on the synthesized environment.
type familyRow struct {
	name  string
	build func(st *matrixStack, id string, p core.Props)
	// run runs one fact twice through the construct's handler (built by
	// today's entry points with env, against the server at cfg): the
	// effect's runs, and whether the second was absorbed.
	run func(t *testing.T, env func(string) string, cfg aws.Config) (runs int, absorbed bool)
	// refuses are the columns the construct refuses at synth, with what
	// its refusal says: a setting that does not apply to its source.
	refuses map[string]string
	// commit says where the TransactionalTables column's commit is proven
	// (dynalite has no transactions), or why it is not.
	commit string
}

var matrixRows = []familyRow{
	{name: "IdempotentConsumer (SQS)",
		build: func(st *matrixStack, id string, p core.Props) {
			p.Entry = jsii.String(fixtures.Entry)
			consumer.NewIdempotentConsumer(st.stack, jsii.String(id), &consumer.IdempotentConsumerProps{Props: p})
		},
		run: runQueue, commit: txmatrix},
	{name: "IdempotentStreamConsumer (Kinesis)",
		build: func(st *matrixStack, id string, p core.Props) {
			p.Entry = jsii.String(fixtures.Entry)
			stream.NewIdempotentStreamConsumer(st.stack, jsii.String(id), &stream.IdempotentStreamConsumerProps{Props: p,
				Stream: awskinesis.NewStream(st.stack, jsii.String(id+"Stream"), &awskinesis.StreamProps{Encryption: awskinesis.StreamEncryption_MANAGED})})
		},
		run: runKinesis, commit: txmatrix},
	{name: "IdempotentEndpoint (function URL)",
		build: func(st *matrixStack, id string, p core.Props) {
			p.Entry = jsii.String(fixtures.Entry)
			endpoint.NewIdempotentEndpoint(st.stack, jsii.String(id), &endpoint.IdempotentEndpointProps{Props: p, ClientAttribute: jsii.String("none")})
		},
		run: runEndpoint, commit: "no commit: the HTTP runtime has no transactional entry point"},
	{name: "IdempotentStep (Step Functions)",
		build: func(st *matrixStack, id string, p core.Props) {
			p.Entry = jsii.String(fixtures.Entry)
			step.NewIdempotentStep(st.stack, jsii.String(id), &step.IdempotentStepProps{Props: p, StepName: jsii.String("pay")})
		},
		run:     runStep,
		refuses: map[string]string{"TransactionalTables": "a step's effect is not transactional"}},
}

// txmatrix is where the TransactionalTables column's commit is proven.
const txmatrix = "the commit: TestTransactionalTablesCommit, test/txmatrix, on kumo"

// fact is the matrix's fact: one payment.
type fact struct {
	ID     string `json:"id"`
	Amount int    `json:"amount"`
}

// TestEverySharedSettingWorksOnEveryConstruct is the matrix of issue 33:
// each construct of the family × each shared setting synthesizes, shows the
// setting in its function (its environment, its properties, its warning),
// and its handler, built by the runtime's entry point from the synthesized
// environment, against dynalite with a table of the synthesized design,
// processes one fact and absorbs its duplicate. It logs the matrix.
func TestEverySharedSettingWorksOnEveryConstruct(t *testing.T) {
	db := dynalite.Start(t)
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(db.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}
	results := map[string]map[string]string{}
	for r, row := range matrixRows {
		results[row.name] = map[string]string{}
		st, template, warnings := synthRow(t, r, row)
		for c, col := range matrixSettings {
			id := fmt.Sprintf("C%d", c)
			var result string
			if refusal, ok := row.refuses[col.name]; ok {
				result = refusedCell(t, r, row, col, id, refusal)
			} else {
				result = cell(t, db, cfg, row, col, template, warnings["/"+*st.stack.StackName()+"/"+id], *st.stack.StackName()+"/"+id)
			}
			results[row.name][col.name] = result
			if !strings.HasPrefix(result, "ok") {
				t.Errorf("%s × %s: %s", row.name, col.name, result)
			}
		}
	}
	var b strings.Builder
	for _, row := range matrixRows {
		for _, col := range matrixSettings {
			fmt.Fprintf(&b, "\n%-36s | %-34s | %s", row.name, col.name, results[row.name][col.name])
		}
	}
	t.Logf("the matrix (construct | setting | synthesized, shown, one fact processed and its duplicate absorbed):%s", b.String())
}

// synthRow builds one construct per setting in a stack of its own and
// returns the stack, its template's resources and the warnings by
// construct path.
func synthRow(t *testing.T, r int, row familyRow) (*matrixStack, map[string]any, map[string][]string) {
	t.Helper()
	var st *matrixStack
	var template map[string]any
	warnings := map[string][]string{}
	cdktest.Must(t, func() {
		app, err := cdktest.NewApp(filepath.Join(fixtures.OutRoot, "matrix", fmt.Sprint(r)))
		if err != nil {
			panic(err)
		}
		st = newMatrixStack(app, fmt.Sprintf("Matrix%d", r))
		for c, col := range matrixSettings {
			if _, refused := row.refuses[col.name]; refused {
				continue
			}
			id := fmt.Sprintf("C%d", c)
			row.build(st, id, col.props(st, id))
		}
		stack := st.stack
		template = (*assertions.Template_FromStack(stack, nil).ToJSON())["Resources"].(map[string]any)
		for _, m := range *assertions.Annotations_FromStack(stack).FindWarning(jsii.String("*"), assertions.Match_AnyValue()) {
			//lint:ignore SA1019 the message's path and data, as cdktest/nagtest reads them: their replacement has no Go binding yet.
			warnings[*m.Id] = append(warnings[*m.Id], fmt.Sprint(m.Entry.Data))
		}
	})
	return st, template, warnings
}

// matrixRegion is the Region of the matrix's stacks: the GlobalTable
// column needs one, the table's first.
const matrixRegion = "us-east-1"

// newMatrixStack is a row's stack, with the resources the settings name.
func newMatrixStack(app awscdk.App, name string) *matrixStack {
	stack := awscdk.NewStack(app, jsii.String(name), &awscdk.StackProps{Env: &awscdk.Environment{Region: jsii.String(matrixRegion)}})
	str := func(n string) *awsdynamodb.Attribute {
		return &awsdynamodb.Attribute{Name: jsii.String(n), Type: awsdynamodb.AttributeType_STRING}
	}
	return &matrixStack{stack: stack,
		single: awsdynamodb.NewTableV2(stack, jsii.String("Single"), &awsdynamodb.TablePropsV2{PartitionKey: str("PK"), SortKey: str("SK"), TimeToLiveAttribute: jsii.String("expiresAt")}),
		ledger: awsdynamodb.NewTable(stack, jsii.String("Ledger"), &awsdynamodb.TableProps{PartitionKey: str("id")}),
		vpc:    awsec2.NewVpc(stack, jsii.String("Vpc"), &awsec2.VpcProps{MaxAzs: jsii.Number(2)}),
	}
}

// refusedCell builds the construct with a setting its source refuses, in a
// stack of its own, and checks that the refusal says why.
func refusedCell(t *testing.T, r int, row familyRow, col setting, id, refusal string) string {
	app, err := cdktest.NewApp(filepath.Join(fixtures.OutRoot, "matrix", fmt.Sprint(r), "refused"))
	if err != nil {
		t.Fatal(err)
	}
	var st *matrixStack
	cdktest.Must(t, func() { st = newMatrixStack(app, fmt.Sprintf("Refused%d", r)) })
	msg, panicked := cdktest.Panics(func() { row.build(st, id, col.props(st, id)) })
	if !panicked || !strings.Contains(msg, refusal) {
		return fmt.Sprintf("not refused with %q: %s", refusal, msg)
	}
	return "ok (refused at synth: " + refusal + ")"
}

// cell synthesizes nothing more: it reads the function of the construct
// at path in template, checks it shows the setting, and runs its handler.
func cell(t *testing.T, db *dynalite.Server, cfg aws.Config, row familyRow, col setting, template map[string]any, warnings []string, path string) string {
	fn, vars := functionOf(template, path)
	if fn == nil {
		return "no function with " + contract.ConsumerVar + " " + path
	}
	if why := col.shows(fn, vars, warnings); why != "" {
		return "synthesized, but " + why
	}
	table := db.NewTableKeyed(t, col.partition, col.sort)
	ledger := db.NewTableKeyed(t, "id", "")
	env := map[string]string{}
	for k, v := range vars {
		switch s, ok := v.(string); {
		case k == contract.TableVar:
			env[k] = table // a Ref, or an imported table's name: the server's table of that design
		case ok:
			env[k] = s
		case k == contract.KeySecretVar:
			env[k] = strings.Repeat("k", 64) // a dynamic reference to the secret
		case k == contract.TxTablesVar:
			env[k] = ledger // the names of the declared tables, joined
		default:
			b, _ := json.Marshal(v)
			return fmt.Sprintf("%s is not a literal: %s", k, b)
		}
	}
	// dynalite has no TransactWriteItems: here the handler starts from the
	// environment that declares the tables, and runs a plain effect; the
	// row's commit says where the column's commit is proven (the queue and
	// Kinesis consumers, from this environment, on kumo), or why not (the
	// endpoint: no transactional entry point). The step refuses the setting.
	runs, absorbed := row.run(t, func(k string) string { return env[k] }, cfg)
	if runs != 1 || !absorbed {
		return fmt.Sprintf("the effect ran %d times (duplicate absorbed: %t)", runs, absorbed)
	}
	if env[contract.TxTablesVar] != "" {
		return "ok (" + contract.TxTablesVar + " declared; plain effect on dynalite; " + row.commit + ")"
	}
	return "ok"
}

// functionOf is the function whose CONSUMER_NAME is path: its properties
// and its environment's variables.
func functionOf(template map[string]any, path string) (map[string]any, map[string]any) {
	for _, r := range template {
		r := r.(map[string]any)
		if r["Type"] != "AWS::Lambda::Function" {
			continue
		}
		props := r["Properties"].(map[string]any)
		env, _ := props["Environment"].(map[string]any)
		if env == nil {
			continue
		}
		vars := env["Variables"].(map[string]any)
		if vars[contract.ConsumerVar] == path {
			return props, vars
		}
	}
	return nil, nil
}

// options are the handler's options for the matrix: the synthesized
// environment, the server, no logs.
func options(env func(string) string, cfg aws.Config) []handler.Option {
	return []handler.Option{handler.WithGetenv(env), handler.WithAWSConfig(cfg),
		handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard)}
}

func runQueue(t *testing.T, env func(string) string, cfg aws.Config) (int, bool) {
	runs := 0
	h, err := sqsbatch.FromEnv(func(f fact) (string, error) { return f.ID, nil },
		func(context.Context, fact, idempotency.Reservation) (string, error) { runs++; return "paid", nil }, options(env, cfg)...)
	if err != nil {
		t.Errorf("the synthesized environment does not start the queue handler: %v", err)
		return 0, false
	}
	body, _ := json.Marshal(map[string]string{"Type": "Notification", "MessageId": "m", "TopicArn": "arn:aws:sns:eu-west-1:1:t", "Message": `{"id":"pay-1","amount":5}`})
	absorbed := true
	for i, id := range []string{"1", "2"} {
		res, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: id, Body: string(body),
			Attributes: map[string]string{"SentTimestamp": fmt.Sprint(time.Now().UnixMilli()), "ApproximateReceiveCount": "1"}}}})
		if err != nil || len(res.BatchItemFailures) > 0 {
			t.Logf("queue delivery %d: %v %+v", i, err, res)
			absorbed = false
		}
	}
	return runs, absorbed
}

func runKinesis(t *testing.T, env func(string) string, cfg aws.Config) (int, bool) {
	runs := 0
	h, err := kinesis.FromEnv(func(f fact) (string, error) { return f.ID, nil },
		func(context.Context, fact, idempotency.Reservation) (string, error) { runs++; return "paid", nil }, options(env, cfg)...)
	if err != nil {
		t.Errorf("the synthesized environment does not start the Kinesis handler: %v", err)
		return 0, false
	}
	absorbed := true
	for i, seq := range []string{"49590000000000000000000000000000000000000000000000000001", "49590000000000000000000000000000000000000000000000000002"} {
		res, err := h.Handle(context.Background(), events.KinesisEvent{Records: []events.KinesisEventRecord{{EventID: "shardId-000000000000:" + seq,
			Kinesis: events.KinesisRecord{SequenceNumber: seq, PartitionKey: "pay-1", Data: []byte(`{"id":"pay-1","amount":5}`),
				ApproximateArrivalTimestamp: events.SecondsEpochTime{Time: time.Now()}}}}})
		if err != nil || len(res.BatchItemFailures) > 0 {
			t.Logf("kinesis delivery %d: %v %+v", i, err, res)
			absorbed = false
		}
	}
	return runs, absorbed
}

func runStep(t *testing.T, env func(string) string, cfg aws.Config) (int, bool) {
	runs := 0
	settings, err := contract.Decode(env, "")
	if err != nil {
		t.Errorf("the synthesized environment is not a contract: %v", err)
		return 0, false
	}
	store, err := dynamostore.FromEnv(dynamodb.NewFromConfig(cfg), pub.Env(settings.Encode()).Getenv)
	if err != nil {
		t.Errorf("the synthesized design gives no store: %v", err)
		return 0, false
	}
	h, err := lambdastep.FromEnv(lambdastep.Field("id"), func(context.Context, json.RawMessage, idempotency.Reservation) (json.RawMessage, error) {
		runs++
		return json.RawMessage(`{"chargeId":"ch_1"}`), nil
	}, handler.WithGetenv(env), handler.WithStore(store), handler.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Errorf("the synthesized environment does not start the step: %v", err)
		return 0, false
	}
	var outs []string
	for range 2 { // a Task's retry, or a second execution of the fact
		out, err := h(context.Background(), json.RawMessage(`{"id":"pay-1","amount":5}`))
		if err != nil {
			t.Logf("step: %v", err)
			return runs, false
		}
		outs = append(outs, string(out))
	}
	return runs, outs[0] == outs[1]
}

func runEndpoint(t *testing.T, env func(string) string, cfg aws.Config) (int, bool) {
	runs := 0
	h, err := lambdaendpoint.FromEnv(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { runs++; w.WriteHeader(201) }), options(env, cfg)...)
	if err != nil {
		t.Errorf("the synthesized environment does not start the HTTP handler: %v", err)
		return 0, false
	}
	var replays []string
	for range 2 {
		res, err := h.FunctionURL(context.Background(), events.LambdaFunctionURLRequest{RawPath: "/payments", Body: `{"amount":5}`,
			Headers:        map[string]string{"idempotency-key": "pay-1", "content-type": "application/json"},
			RequestContext: events.LambdaFunctionURLRequestContext{HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/payments"}}})
		if err != nil || res.StatusCode != 201 {
			t.Logf("request: %v %+v", err, res)
			return runs, false
		}
		replays = append(replays, res.Headers[httpkey.HeaderReplayed])
	}
	sort.Strings(replays)
	return runs, replays[0] == "" && replays[1] == "true"
}
