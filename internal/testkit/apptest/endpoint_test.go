package apptest_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest/nagtest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/endpoint"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	lambdaendpoint "github.com/idempotent-consumer/idempotent-consumer/lambda/endpoint"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// endpointStack is a webhook receiver and an IAM endpoint in one stack.
func endpointStack(t *testing.T, nag bool) awscdk.Stack {
	t.Helper()
	app, err := cdktest.NewApp(filepath.Join(fixtures.OutRoot, "endpoint", t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	if nag {
		nagtest.AddPacks(app)
	}
	st := awscdk.NewStack(app, jsii.String("Endpoints"), nil)
	cdktest.Must(t, func() {
		key := awskms.NewKey(st, jsii.String("SecretKey"), &awskms.KeyProps{EnableKeyRotation: jsii.Bool(true)})
		secret := awssecretsmanager.NewSecret(st, jsii.String("GitHubSecret"), &awssecretsmanager.SecretProps{EncryptionKey: key})
		// A webhook's signing secret is the provider's: it rotates it, and
		// the function is given the new one beside the old (a JSON array).
		cdknag.NagSuppressions_AddResourceSuppressions(secret, &[]*cdknag.NagPackSuppression{{Id: jsii.String("AwsSolutions-SMG4"),
			Reason: jsii.String("The webhook's signing secret is issued by the provider (GitHub): it is rotated there, and both secrets are listed here during the rotation.")}}, jsii.Bool(true))
		endpoint.NewIdempotentEndpoint(st, jsii.String("GitHubHooks"), &endpoint.IdempotentEndpointProps{
			Props:         core.Props{Entry: jsii.String(fixtures.Entry)},
			Webhook:       jsii.String("github"),
			WebhookSecret: secret,
		})
		api := endpoint.NewIdempotentEndpoint(st, jsii.String("Orders"), &endpoint.IdempotentEndpointProps{
			Props:           core.Props{Entry: jsii.String(fixtures.Entry)},
			ClientAttribute: jsii.String("iam"),
		})
		api.GrantInvokeUrl(awsiam.NewRole(st, jsii.String("Client"), &awsiam.RoleProps{AssumedBy: awsiam.NewAccountRootPrincipal()}))
		// The same two on HTTP API routes.
		endpoint.NewIdempotentEndpoint(st, jsii.String("GitHubRoute"), &endpoint.IdempotentEndpointProps{
			Props:         core.Props{Entry: jsii.String(fixtures.Entry), Namespace: jsii.String("githubroute")},
			Webhook:       jsii.String("github"),
			WebhookSecret: secret,
			Route:         jsii.String("/hooks/github"),
		})
		route := endpoint.NewIdempotentEndpoint(st, jsii.String("OrdersRoute"), &endpoint.IdempotentEndpointProps{
			Props: core.Props{Entry: jsii.String(fixtures.Entry)},
			Route: jsii.String("/orders"),
		})
		route.GrantInvokeUrl(awsiam.NewRole(st, jsii.String("RouteClient"), &awsiam.RoleProps{AssumedBy: awsiam.NewAccountRootPrincipal()}))
		// A route behind a JWT authorizer: keys scoped to the token's subject.
		endpoint.NewIdempotentEndpoint(st, jsii.String("OrdersJwt"), &endpoint.IdempotentEndpointProps{
			Props:       core.Props{Entry: jsii.String(fixtures.Entry)},
			Route:       jsii.String("/orders"),
			JwtIssuer:   jsii.String(jwtIssuer),
			JwtAudience: jsii.Strings("client-a"),
		})
	})
	return st
}

// jwtIssuer is the issuer of the JWT route's authorizer.
const jwtIssuer = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf"

// TestEndpointIsNagClean: the endpoints (function URLs, HTTP API routes behind IAM or a JWT authorizer) pass the AwsSolutions and
// Serverless packs with only the suppressions the construct explains.
func TestEndpointIsNagClean(t *testing.T) {
	nagtest.NoFindings(t, endpointStack(t, true))
}

// TestEndpointContractRunsTheHandler: the environment the construct writes
// is one the HTTP handler starts with, and the handler it builds verifies
// GitHub's published test vector.
func TestEndpointContractRunsTheHandler(t *testing.T) {
	tpl := cdktest.Template(t, endpointStack(t, false))
	env := functionEnv(t, tpl, func(vars map[string]any) bool { return vars[contract.WebhookProviderVar] == "github" })
	read := func(_ context.Context, arn string) (string, error) { return "It's a Secret to Everybody", nil }
	h, err := lambdaendpoint.FromEnv(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }),
		handler.WithGetenv(func(k string) string { return env[k] }), handler.WithStore(storetest.NewMemoryStore()),
		lambdaendpoint.WithSecrets(read), handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard))
	if err != nil {
		t.Fatalf("the construct's environment does not start the handler: %v", err)
	}
	e := events.LambdaFunctionURLRequest{Body: "Hello, World!",
		Headers:        map[string]string{"x-hub-signature-256": "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"},
		RequestContext: events.LambdaFunctionURLRequestContext{HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST"}}}
	for _, want := range []string{"", "true"} {
		res, _ := h.FunctionURL(context.Background(), e)
		if res.StatusCode != 204 || res.Headers[httpkey.HeaderReplayed] != want {
			t.Fatalf("delivery: %+v", res)
		}
	}
}

// functionEnv is the environment of the function of tpl that match
// accepts, as the handler reads it: the table's and the secret's tokens
// replaced by stand-ins.
func functionEnv(t *testing.T, tpl map[string]any, match func(vars map[string]any) bool) map[string]string {
	t.Helper()
	for _, r := range tpl["Resources"].(map[string]any) {
		r := r.(map[string]any)
		if r["Type"] != "AWS::Lambda::Function" {
			continue
		}
		vars := r["Properties"].(map[string]any)["Environment"].(map[string]any)["Variables"].(map[string]any)
		if !match(vars) {
			continue
		}
		env := map[string]string{}
		for k, v := range vars {
			if s, ok := v.(string); ok {
				env[k] = s
				continue
			}
			b, _ := json.Marshal(v)
			switch k {
			case contract.TableVar:
				env[k] = "table"
			case contract.WebhookSecretVar:
				if !strings.Contains(string(b), "GitHubSecret") {
					t.Fatalf("%s is %s, not the secret's ARN", k, b)
				}
				env[k] = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:GitHubSecret-AbCdEf"
			default:
				t.Fatalf("%s is not a literal: %s", k, b)
			}
		}
		return env
	}
	t.Fatal("no such function in the template")
	return nil
}

// TestJWTRouteRunsTheHandler: the handler built from the environment of a
// route behind a JWT authorizer reads the token's subject from an HTTP API
// JWT event: another subject's same key runs again, the same subject's is a
// replay, a request without the claim is 401.
func TestJWTRouteRunsTheHandler(t *testing.T) {
	tpl := cdktest.Template(t, endpointStack(t, false))
	env := functionEnv(t, tpl, func(vars map[string]any) bool { return vars[contract.ClientAttributeVar] == "claim:sub" })
	runs := 0
	h, err := lambdaendpoint.FromEnv(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { runs++; w.WriteHeader(201) }),
		handler.WithGetenv(func(k string) string { return env[k] }), handler.WithStore(storetest.NewMemoryStore()),
		handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard))
	if err != nil {
		t.Fatalf("the construct's environment does not start the handler: %v", err)
	}
	for _, step := range []struct {
		sub      string
		status   int
		replayed string
		runs     int
	}{
		{"alice", 201, "", 1},
		{"bob", 201, "", 2}, // the same key, another subject: its own record
		{"alice", 201, "true", 2},
		{"", 401, "", 2}, // no verified claim
	} {
		ev := events.APIGatewayV2HTTPRequest{RawPath: "/orders", Body: `{"amount":5}`, Headers: map[string]string{"idempotency-key": "order-1", "content-type": "application/json"},
			RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/orders"}}}
		if step.sub != "" {
			ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
				JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"sub": step.sub, "aud": "client-a"}}}
		}
		res, err := h.HTTPAPI(context.Background(), ev)
		if err != nil || res.StatusCode != step.status || res.Headers[httpkey.HeaderReplayed] != step.replayed || runs != step.runs {
			t.Fatalf("sub %q: %+v, %v, runs %d; want %d, replayed %q, runs %d", step.sub, res, err, runs, step.status, step.replayed, step.runs)
		}
	}
}
