package paymentsapp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest/nagtest"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/dynalite"
	"github.com/idempotent-consumer/idempotent-consumer/internal/testkit/consumertest"
	"github.com/idempotent-consumer/idempotent-consumer/internal/testkit/paymentsapp"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/endpoint"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/kinesis"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook/webhooktest"
)

// app is the platform, synthesized once with both cdk-nag packs.
var app struct {
	platform *paymentsapp.Platform
	template map[string]any
	nag      assertions.Annotations
	err      string
	out      string
}

func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "paymentsapp-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	h, err := consumertest.WriteHandlers(tmp)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	app.out = tmp
	app.err, _ = cdktest.Panics(func() {
		a, err := cdktest.NewApp(filepath.Join(tmp, "out"))
		if err != nil {
			panic(err)
		}
		// One stand-in main for every handler: the tests run the handlers
		// in process, by today's entry points, on the synthesized
		// environment.
		app.platform = paymentsapp.New(a, "Payments", paymentsapp.Entries{Webhook: h.Handler, API: h.Handler, Ledger: h.Handler, Events: h.Handler, Receipts: h.Handler})
		nagtest.AddPacks(a)
		app.template = *assertions.Template_FromStack(app.platform.Stack, nil).ToJSON()
		app.nag = assertions.Annotations_FromStack(app.platform.Stack)
	})
	code := cdktest.Main(m)
	os.RemoveAll(tmp)
	os.Exit(code)
}

func load(t *testing.T) {
	t.Helper()
	if app.err != "" {
		t.Fatal(app.err)
	}
}

// TestSnapshot compares the platform with its golden template; `go test
// ./internal/paymentsapp -run Snapshot -update` rewrites it.
func TestSnapshot(t *testing.T) {
	load(t)
	cdktest.Snapshot(t, app.template, "testdata/Payments.template.json")
}

// TestCDKNag: both packs find nothing unsuppressed, in the app and over
// its template read back (CDK's helpers included).
func TestCDKNag(t *testing.T) {
	load(t)
	for _, pack := range []string{"AwsSolutions", "Serverless"} {
		var got nagtest.Findings
		cdktest.Must(t, func() { got = nagtest.FindingsOf(app.nag, pack) })
		if n := len(got.Errors) + len(got.Warnings); n > 0 {
			t.Errorf("%s: %d findings:\n%s", pack, n, strings.Join(append(got.Errors, got.Warnings...), "\n"))
		}
	}
	findings, err := nagtest.CheckTemplate(app.template, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for pack, got := range findings {
		if n := len(got.Errors) + len(got.Warnings); n > 0 {
			t.Errorf("%s over the template: %d findings:\n%s", pack, n, strings.Join(append(got.Errors, got.Warnings...), "\n"))
		}
	}
}

// env is the environment of the function whose CONSUMER_NAME is
// Payments/<id>, as the handler reads it: the table's name, a token in the
// template, is table; the webhook secret's ARN a stand-in.
func env(t *testing.T, id, table string) func(string) string {
	t.Helper()
	for _, r := range app.template["Resources"].(map[string]any) {
		r := r.(map[string]any)
		props, _ := r["Properties"].(map[string]any)
		if r["Type"] != "AWS::Lambda::Function" || props["Environment"] == nil {
			continue
		}
		vars := props["Environment"].(map[string]any)["Variables"].(map[string]any)
		if vars[contract.ConsumerVar] != "Payments/"+id {
			continue
		}
		out := map[string]string{}
		for k, v := range vars {
			switch s, ok := v.(string); {
			case k == contract.TableVar:
				out[k] = table
			case k == contract.WebhookSecretVar:
				out[k] = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:StripeSecret-AbCdEf"
			case ok:
				out[k] = s
			default:
				t.Fatalf("%s of %s is not a literal: %v", k, id, v)
			}
		}
		return func(k string) string { return out[k] }
	}
	t.Fatalf("no function of Payments/%s", id)
	return nil
}

// TestEveryConstructWritesTheSharedDesign: the five functions are told the
// table's design, each its namespace in the sort key.
func TestEveryConstructWritesTheSharedDesign(t *testing.T) {
	load(t)
	for id, ns := range map[string]string{"StripeHooks": "stripe", "PaymentsApi": "payments", "Ledger": "ledger", "Refunds": "refunds", "ReceiptsImport": "receipts"} {
		get := env(t, id, "t")
		if get(contract.PartitionKeyVar) != "PK" || get(contract.SortKeyVar) != "SK" || get(contract.FixedKeyValueVar) != ns || get(contract.TTLAttributeVar) != "expiresAt" || get(contract.NamespaceVar) != ns {
			t.Errorf("%s: design %q %q %q %q, namespace %q", id, get(contract.PartitionKeyVar), get(contract.SortKeyVar), get(contract.FixedKeyValueVar), get(contract.TTLAttributeVar), get(contract.NamespaceVar))
		}
	}
}

// shared is the app's one table in dynalite, of its design, and the
// handlers' options on it.
func shared(t *testing.T) (string, aws.Config, *dynamodb.Client) {
	db := dynalite.Start(t)
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(db.URL), Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}
	return db.NewTableKeyed(t, "PK", "SK"), cfg, db.Client()
}

func options(get func(string) string, cfg aws.Config) []handler.Option {
	return []handler.Option{handler.WithGetenv(get), handler.WithAWSConfig(cfg),
		handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard),
		endpoint.WithSecrets(func(context.Context, string) (string, error) { return "whsec_test", nil })}
}

// TestEndpointsAndLedgerProcessOnTheSharedTable: on one table of the app's
// design, with each function's synthesized environment, the Stripe webhook,
// the Idempotency-Key API and the Kinesis ledger each run their effect once
// and absorb the duplicate, and their records sit in the table under
// PK "<namespace>#<key>", SK "<namespace>".
func TestEndpointsAndLedgerProcessOnTheSharedTable(t *testing.T) {
	load(t)
	table, cfg, client := shared(t)
	runs := map[string]int{}
	count := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { runs[name]++; w.WriteHeader(200) })
	}

	stripe, err := endpoint.FromEnv(count("stripe"), options(env(t, "StripeHooks", table), cfg)...)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1"}}}`)
	headers := map[string]string{"content-type": "application/json"}
	for k, v := range webhooktest.Stripe(body, time.Now(), "whsec_test") {
		headers[strings.ToLower(k)] = v[0]
	}
	for i := range 2 {
		res, err := stripe.FunctionURL(context.Background(), events.LambdaFunctionURLRequest{RawPath: "/", Body: string(body), Headers: headers,
			RequestContext: events.LambdaFunctionURLRequestContext{HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/"}}})
		if err != nil || res.StatusCode != 200 || (i == 1) != (res.Headers[httpkey.HeaderReplayed] == "true") {
			t.Fatalf("stripe delivery %d: %v %+v", i, err, res)
		}
	}

	api, err := endpoint.FromEnv(count("payments"), options(env(t, "PaymentsApi", table), cfg)...)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		res, err := api.HTTPAPI(context.Background(), events.APIGatewayV2HTTPRequest{RawPath: "/payments", Body: `{"amount":5}`,
			Headers: map[string]string{"idempotency-key": "pay-1", "content-type": "application/json"},
			RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/payments"},
				Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{
					AccountID: "123456789012", UserARN: "arn:aws:iam::123456789012:role/checkout"}}}})
		if err != nil || res.StatusCode != 200 || (i == 1) != (res.Headers[httpkey.HeaderReplayed] == "true") {
			t.Fatalf("API request %d: %v %+v", i, err, res)
		}
	}

	ledger, err := kinesis.FromEnv(func(p struct{ ID string }) (string, error) { return p.ID, nil },
		func(context.Context, struct{ ID string }, idempotency.Reservation) (string, error) {
			runs["ledger"]++
			return "booked", nil
		},
		options(env(t, "Ledger", table), cfg)...)
	if err != nil {
		t.Fatal(err)
	}
	for i, seq := range []string{"49590000000000000000000000000000000000000000000000000001", "49590000000000000000000000000000000000000000000000000002"} {
		res, err := ledger.Handle(context.Background(), events.KinesisEvent{Records: []events.KinesisEventRecord{{EventID: "shardId-000000000000:" + seq,
			Kinesis: events.KinesisRecord{SequenceNumber: seq, PartitionKey: "pay-1", Data: []byte(`{"ID":"pay-1"}`), ApproximateArrivalTimestamp: events.SecondsEpochTime{Time: time.Now()}}}}})
		if err != nil || len(res.BatchItemFailures) > 0 {
			t.Fatalf("ledger delivery %d: %v %+v", i, err, res)
		}
	}
	if runs["stripe"] != 1 || runs["payments"] != 1 || runs["ledger"] != 1 {
		t.Errorf("effects ran %v, want each once", runs)
	}

	out, err := client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, item := range out.Items {
		pk, sk := item["PK"].(*types.AttributeValueMemberS).Value, item["SK"].(*types.AttributeValueMemberS).Value
		if !strings.HasPrefix(pk, sk+"#") {
			t.Errorf("record PK %q SK %q: not the namespace's", pk, sk)
		}
		seen[sk] = true
	}
	if b, _ := json.Marshal(seen); !seen["stripe"] || !seen["payments"] || !seen["ledger"] {
		t.Errorf("records by namespace: %s", b)
	}
	t.Logf("on the shared table %s: effects %v, %d records (namespaces %v)", table, runs, len(out.Items), seen)
}
