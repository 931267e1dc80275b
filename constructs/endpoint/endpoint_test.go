package endpoint_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/endpoint"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/family"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/testkit/consumertest"
)

var handlerDir string

func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "endpoint-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	h, err := consumertest.WriteHandlers(tmp)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	handlerDir = h.Handler
	code := cdktest.Main(m)
	os.RemoveAll(tmp)
	os.Exit(code)
}

// stack builds one endpoint in a stack of its own; grant, when set, is a
// role given GrantInvokeUrl.
func stack(t *testing.T, props *endpoint.IdempotentEndpointProps, grant bool) (awscdk.Stack, endpoint.IdempotentEndpoint) {
	t.Helper()
	app, err := cdktest.NewApp(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := awscdk.NewStack(app, jsii.String("Hooks"), nil)
	props.Entry = jsii.String(handlerDir)
	if props.Webhook != nil && props.WebhookSecret == nil {
		props.WebhookSecret = awssecretsmanager.NewSecret(st, jsii.String("StripeSecret"), &awssecretsmanager.SecretProps{Description: jsii.String("Stripe's signing secret")})
	}
	var e endpoint.IdempotentEndpoint
	cdktest.Must(t, func() {
		e = endpoint.NewIdempotentEndpoint(st, jsii.String("StripeHooks"), props)
		if grant {
			caller := awsiam.NewRole(st, jsii.String("Caller"), &awsiam.RoleProps{AssumedBy: awsiam.NewAccountRootPrincipal()})
			e.GrantInvokeUrl(caller)
		}
	})
	return st, e
}

func resources(tpl map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, r := range tpl["Resources"].(map[string]any) {
		r := r.(map[string]any)
		if r["Type"] == typ {
			out = append(out, r["Properties"].(map[string]any))
		}
	}
	return out
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

// A webhook receiver: a public URL (auth NONE, both permissions new function
// URLs need), the provider and its secret's ARN (never its value) in the
// contract, the right to read that one secret, the reserved concurrency,
// and the alarms on the handler's own counts.
func TestWebhookEndpoint(t *testing.T) {
	st, e := stack(t, &endpoint.IdempotentEndpointProps{Props: core.Props{Dashboard: jsii.Bool(true)}, Webhook: jsii.String("stripe")}, false)
	tpl := cdktest.Template(t, st)
	if d := js(resources(tpl, "AWS::CloudWatch::Dashboard")); !strings.Contains(d, "Answers of the adapter") || !strings.Contains(d, "RequestDuration") {
		t.Errorf("dashboard: %s", d)
	}
	urls := resources(tpl, "AWS::Lambda::Url")
	if len(urls) != 1 || urls[0]["AuthType"] != "NONE" {
		t.Fatalf("function URLs: %v", js(urls))
	}
	perms := js(resources(tpl, "AWS::Lambda::Permission"))
	for _, want := range []string{`"Action":"lambda:InvokeFunctionUrl"`, `"FunctionUrlAuthType":"NONE"`, `"Action":"lambda:InvokeFunction"`, `"InvokedViaFunctionUrl":true`} {
		if !strings.Contains(perms, want) {
			t.Errorf("the permissions lack %s: %s", want, perms)
		}
	}
	fns := resources(tpl, "AWS::Lambda::Function")
	if len(fns) != 1 {
		t.Fatalf("functions: %d", len(fns))
	}
	fn := fns[0]
	if fn["ReservedConcurrentExecutions"] != float64(family.DefaultEndpointReservedConcurrency) {
		t.Errorf("ReservedConcurrentExecutions = %v", fn["ReservedConcurrentExecutions"])
	}
	env := fn["Environment"].(map[string]any)["Variables"].(map[string]any)
	if env[contract.SourceVar] != "http" || env[contract.WebhookProviderVar] != "stripe" || !strings.Contains(js(env[contract.WebhookSecretVar]), `"Ref":"StripeSecret`) {
		t.Errorf("environment: %s", js(env))
	}
	if env[contract.WindowVar] != "72h" { // Stripe retries for 3 days: the default window covers it
		t.Errorf("%s = %v, want Stripe's redelivery period, 72h", contract.WindowVar, env[contract.WindowVar])
	}
	policies := js(resources(tpl, "AWS::IAM::Policy"))
	if !strings.Contains(policies, "secretsmanager:GetSecretValue") {
		t.Errorf("the role cannot read the secret: %s", policies)
	}
	alarms := js(resources(tpl, "AWS::CloudWatch::Alarm"))
	for _, m := range []string{`"MetricName":"ServerErrors"`, `"MetricName":"Unauthorized"`, `"MetricName":"InProgress"`, `"MetricName":"Errors"`, `"MetricName":"Throttles"`} {
		if !strings.Contains(alarms, m) {
			t.Errorf("no alarm on %s", m)
		}
	}
	if len(e.Alarms().All()) != 5 || *e.Namespace() != "stripehooks" {
		t.Errorf("alarms %d, namespace %q", len(e.Alarms().All()), *e.Namespace())
	}
	cdktest.Snapshot(t, tpl, filepath.Join("testdata", "webhook.template.json"))
}

// An Idempotency-Key endpoint without a verifier is behind IAM, and
// GrantInvokeUrl grants both actions a new function URL requires.
func TestIAMEndpoint(t *testing.T) {
	st, _ := stack(t, &endpoint.IdempotentEndpointProps{Props: core.Props{Environment: &map[string]*string{"PAYMENTS_URL": jsii.String("https://pay.example.com")}}, ClientAttribute: jsii.String("iam")}, true)
	tpl := cdktest.Template(t, st)
	if urls := resources(tpl, "AWS::Lambda::Url"); len(urls) != 1 || urls[0]["AuthType"] != "AWS_IAM" {
		t.Fatalf("function URLs: %v", js(urls))
	}
	if perms := js(resources(tpl, "AWS::Lambda::Permission")); strings.Contains(perms, `"Principal":"*"`) {
		t.Errorf("a public permission behind IAM: %s", perms)
	}
	policies := js(resources(tpl, "AWS::IAM::Policy"))
	if !strings.Contains(policies, "lambda:InvokeFunctionUrl") || !strings.Contains(policies, `"lambda:InvokeFunction"`) {
		t.Errorf("GrantInvokeUrl: %s", policies)
	}
	vars := env(t, tpl)
	if settings(t, vars).ClientAttribute != "iam" || vars[contract.WebhookProviderVar] != "" || vars["PAYMENTS_URL"] != "https://pay.example.com" {
		t.Errorf("environment: %s", js(vars))
	}
}

// On an HTTP API route: a webhook's route without an authorizer (the
// verifier authenticates), another behind IAM (GrantInvokeUrl:
// execute-api:Invoke on the route), the stage throttled and logged, no
// function URL.
func TestRouteEndpoint(t *testing.T) {
	st, e := stack(t, &endpoint.IdempotentEndpointProps{Webhook: jsii.String("stripe"), Route: jsii.String("/hooks/stripe"), ThrottlingRateLimit: jsii.Number(20)}, false)
	tpl := cdktest.Template(t, st)
	if n := len(resources(tpl, "AWS::Lambda::Url")); n != 0 || e.FunctionUrl() != nil || e.HttpApi() == nil {
		t.Fatalf("function URLs %d with Route", n)
	}
	routes := resources(tpl, "AWS::ApiGatewayV2::Route")
	if len(routes) != 1 || routes[0]["RouteKey"] != "POST /hooks/stripe" || routes[0]["AuthorizationType"] != "NONE" {
		t.Fatalf("routes: %s", js(routes))
	}
	stages := js(resources(tpl, "AWS::ApiGatewayV2::Stage"))
	for _, want := range []string{`"ThrottlingRateLimit":20`, `"ThrottlingBurstLimit":100`, `"DestinationArn"`, `"StageName":"$default"`} {
		if !strings.Contains(stages, want) {
			t.Errorf("the stage lacks %s: %s", want, stages)
		}
	}
	st2, _ := stack(t, &endpoint.IdempotentEndpointProps{Route: jsii.String("/charges")}, true)
	tpl2 := cdktest.Template(t, st2)
	cdktest.Snapshot(t, tpl2, filepath.Join("testdata", "route.template.json"))
	if r := resources(tpl2, "AWS::ApiGatewayV2::Route"); len(r) != 1 || r[0]["AuthorizationType"] != "AWS_IAM" {
		t.Fatalf("IAM route: %s", js(r))
	}
	if p := js(resources(tpl2, "AWS::IAM::Policy")); !strings.Contains(p, "execute-api:Invoke") || !strings.Contains(p, "/POST/charges") {
		t.Errorf("GrantInvokeUrl on the route: %s", p)
	}
}

// Every problem at once, each naming the construct, the value and the fix;
// nothing is built.
func TestRefusals(t *testing.T) {
	app, err := cdktest.NewApp(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := awscdk.NewStack(app, jsii.String("Bad"), nil)
	secret := awssecretsmanager.NewSecret(st, jsii.String("S"), nil)
	for _, tc := range []struct {
		name  string
		props endpoint.IdempotentEndpointProps
		want  []string
	}{
		{"no entry, a webhook without its secret, no concurrency", endpoint.IdempotentEndpointProps{Props: core.Props{ReservedConcurrentExecutions: jsii.Number(0)}, Webhook: jsii.String("stripe")},
			[]string{`IdempotentEndpoint "E": invalid props`, "Entry is required", `Webhook "stripe" needs WebhookSecret`, "ReservedConcurrentExecutions 0"}},
		{"a secret without a webhook, an unknown provider header", endpoint.IdempotentEndpointProps{Props: core.Props{Entry: jsii.String(handlerDir)}, WebhookSecret: secret, HashHeaders: &[]*string{jsii.String("X Bad")}},
			[]string{"WebhookSecret is given without Webhook", `"X Bad"`}},
		{"a contract variable in Environment", endpoint.IdempotentEndpointProps{Props: core.Props{Entry: jsii.String(handlerDir), Environment: &map[string]*string{"HTTP_WEBHOOK_PROVIDER": jsii.String("stripe"), "PAYMENTS_URL": jsii.String("https://pay.example.com")}}},
			[]string{"Environment sets HTTP_WEBHOOK_PROVIDER"}},
		{"a throttle without a route, a route that is no path", endpoint.IdempotentEndpointProps{Props: core.Props{Entry: jsii.String(handlerDir)}, ThrottlingRateLimit: jsii.Number(5)},
			[]string{"ThrottlingRateLimit and ThrottlingBurstLimit throttle an HTTP API stage"}},
		{"a route that is no path", endpoint.IdempotentEndpointProps{Props: core.Props{Entry: jsii.String(handlerDir)}, Route: jsii.String("hooks/{id}")},
			[]string{`Route "hooks/{id}" is not a literal path`}},
		{"an unknown provider", endpoint.IdempotentEndpointProps{Props: core.Props{Entry: jsii.String(handlerDir)}, Webhook: jsii.String("paypal"), WebhookSecret: secret},
			[]string{`WebhookProvider "paypal" is not one of`}},
		{"a window shorter than the lease, a client attribute the handler does not read", endpoint.IdempotentEndpointProps{Props: core.Props{Entry: jsii.String(handlerDir), Window: awscdk.Duration_Seconds(jsii.Number(1))}, ClientAttribute: jsii.String("jwt")},
			[]string{"Window", "ClientAttribute"}},
		{"a window that Stripe's retries outlive", endpoint.IdempotentEndpointProps{Props: core.Props{Entry: jsii.String(handlerDir), Window: awscdk.Duration_Hours(jsii.Number(24))}, Webhook: jsii.String("stripe"), WebhookSecret: secret},
			[]string{"Window 24h is shorter than stripe's redelivery period, 72h", "give a Window of at least 72h"}},
		{"a webhook's client scope chosen by a header", endpoint.IdempotentEndpointProps{Props: core.Props{Entry: jsii.String(handlerDir)}, Webhook: jsii.String("stripe"), WebhookSecret: secret, ClientAttribute: jsii.String("header:X-Tenant")},
			[]string{`ClientAttribute "header:X-Tenant" is refused with WebhookProvider "stripe"`, "leave ClientAttribute out"}},
		{"a JWT authorizer without a route", endpoint.IdempotentEndpointProps{Props: core.Props{Entry: jsii.String(handlerDir)}, JwtIssuer: jsii.String("https://issuer.example.com"), JwtAudience: jsii.Strings("a")},
			[]string{"there is none without Route", "give a Route, or leave them out"}},
		{"a JWT authorizer with a webhook", endpoint.IdempotentEndpointProps{Props: core.Props{Entry: jsii.String(handlerDir)}, Webhook: jsii.String("stripe"), WebhookSecret: secret, Route: jsii.String("/hooks"), JwtIssuer: jsii.String("https://issuer.example.com"), JwtAudience: jsii.Strings("a")},
			[]string{`JwtIssuer and JwtAudience are given with Webhook "stripe"`, "leave JwtIssuer and JwtAudience out"}},
		{"an issuer without an audience", endpoint.IdempotentEndpointProps{Props: core.Props{Entry: jsii.String(handlerDir)}, Route: jsii.String("/orders"), JwtIssuer: jsii.String("https://issuer.example.com")},
			[]string{`JwtIssuer "https://issuer.example.com" is given without JwtAudience`}},
		{"an audience without an issuer", endpoint.IdempotentEndpointProps{Props: core.Props{Entry: jsii.String(handlerDir)}, Route: jsii.String("/orders"), JwtAudience: jsii.Strings("a")},
			[]string{"JwtAudience is given without JwtIssuer"}},
		{"iam behind a JWT authorizer", endpoint.IdempotentEndpointProps{Props: core.Props{Entry: jsii.String(handlerDir)}, Route: jsii.String("/orders"), JwtIssuer: jsii.String("https://issuer.example.com"), JwtAudience: jsii.Strings("a"), ClientAttribute: jsii.String("iam")},
			[]string{`ClientAttribute "iam" is refused with JwtIssuer`, `leave ClientAttribute out for "claim:sub"`}},
		{"a claim without a JWT authorizer", endpoint.IdempotentEndpointProps{Props: core.Props{Entry: jsii.String(handlerDir)}, Route: jsii.String("/orders"), ClientAttribute: jsii.String("claim:sub")},
			[]string{`ClientAttribute "claim:sub" reads a claim`, "give JwtIssuer"}},
		{"an MRSC table and a transactional effect", endpoint.IdempotentEndpointProps{Props: core.Props{Entry: jsii.String(handlerDir),
			GlobalTable:         &core.GlobalTable{Regions: jsii.Strings("eu-west-1", "eu-west-2"), WitnessRegion: jsii.String("eu-west-3"), TableName: jsii.String("orders")},
			TransactionalTables: &[]awsdynamodb.ITable{awsdynamodb.Table_FromTableName(st, jsii.String("Ledger"), jsii.String("ledger"))}}},
			[]string{"TransactionalTables is set, but the idempotency table is in multi-Region strong consistency (MRSC), which supports no transaction operations"}},
		{"an MRSC table across Region sets", endpoint.IdempotentEndpointProps{Props: core.Props{Entry: jsii.String(handlerDir),
			GlobalTable: &core.GlobalTable{Regions: jsii.Strings("eu-west-1", "us-east-1", "ap-northeast-1"), TableName: jsii.String("orders")}}},
			[]string{"span the Region sets AP and EU and US, but an MRSC global table cannot span Region sets"}},
		{"a signature threshold without a webhook", endpoint.IdempotentEndpointProps{Props: core.Props{Entry: jsii.String(handlerDir)}, SignatureFailures: jsii.Number(3)},
			[]string{"SignatureFailures is the threshold of SignatureFailuresAlarm, which exists only with Webhook"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, panicked := cdktest.Panics(func() { endpoint.NewIdempotentEndpoint(st, jsii.String("E"), &tc.props) })
			if !panicked {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("the refusal lacks %q:\n%s", w, msg)
				}
			}
		})
	}
}
