package endpoint_test

import (
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/endpoint"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// env is the function's environment in tpl (its one function), the
// tokens the handler would receive as values replaced by stand-ins.
func env(t *testing.T, tpl map[string]any) map[string]string {
	t.Helper()
	fns := resources(tpl, "AWS::Lambda::Function")
	if len(fns) != 1 {
		t.Fatalf("functions: %d", len(fns))
	}
	out := map[string]string{}
	for k, v := range fns[0]["Environment"].(map[string]any)["Variables"].(map[string]any) {
		switch v := v.(type) {
		case string:
			out[k] = v
		default:
			switch k {
			case contract.TableVar:
				out[k] = "table"
			case contract.WebhookSecretVar:
				out[k] = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:stripe-AbCdEf"
			default:
				t.Fatalf("%s is not a literal: %s", k, js(v))
			}
		}
	}
	return out
}

// settings decodes the environment as the handler does at init.
func settings(t *testing.T, env map[string]string) contract.Settings {
	t.Helper()
	s, err := contract.Decode(func(k string) string { return env[k] }, "fallback")
	if err != nil {
		t.Fatalf("the handler cannot decode the environment: %v", err)
	}
	return s
}

// Caller isolation by default, read from the outside (the environment the
// handler decodes): an endpoint without Webhook, on a function URL or a
// Route, scopes its keys to the caller's IAM identity; a webhook shares
// them (the provider is the one client); "none" is accepted by name.
func TestCallerIsolationByDefault(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props endpoint.IdempotentEndpointProps
		want  string
	}{
		{"function URL", endpoint.IdempotentEndpointProps{}, "iam"},
		{"route", endpoint.IdempotentEndpointProps{Route: jsii.String("/charges")}, "iam"},
		{"webhook", endpoint.IdempotentEndpointProps{Webhook: jsii.String("stripe")}, contract.ClientNone},
		{"webhook on a route", endpoint.IdempotentEndpointProps{Webhook: jsii.String("stripe"), Route: jsii.String("/hooks")}, contract.ClientNone},
		{"none by name", endpoint.IdempotentEndpointProps{ClientAttribute: jsii.String("none")}, contract.ClientNone},
		{"none by name with a webhook", endpoint.IdempotentEndpointProps{Webhook: jsii.String("stripe"), ClientAttribute: jsii.String("none")}, contract.ClientNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := stack(t, &tc.props, false)
			e := env(t, cdktest.Template(t, st))
			if v, ok := e[contract.ClientAttributeVar]; ok && v != tc.want {
				t.Errorf("%s=%q", contract.ClientAttributeVar, v)
			}
			if got := settings(t, e).ClientAttribute; got != tc.want {
				t.Errorf("ClientAttribute %q, want %q", got, tc.want)
			}
		})
	}
}

// A JWT route: the route's authorizer is a JWT authorizer of the issuer
// and audience given (not IAM), and the keys are scoped to the token's
// subject (HTTP_CLIENT_ATTRIBUTE=claim:sub). That the handler built from
// this environment reads the subject is internal/testkit/apptest's
// TestJWTRouteRunsTheHandler (the AWS SDK stays out of this package's
// graph: TestTheConstructsLinkNoSDKAndNoCDKNag).
func TestJWTRoute(t *testing.T) {
	const issuer = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf"
	st, e := stack(t, &endpoint.IdempotentEndpointProps{Route: jsii.String("/orders"), JwtIssuer: jsii.String(issuer), JwtAudience: jsii.Strings("client-a")}, false)
	tpl := cdktest.Template(t, st)
	routes := resources(tpl, "AWS::ApiGatewayV2::Route")
	if len(routes) != 1 || routes[0]["AuthorizationType"] != "JWT" {
		t.Fatalf("routes: %s", js(routes))
	}
	auths := resources(tpl, "AWS::ApiGatewayV2::Authorizer")
	if len(auths) != 1 || auths[0]["AuthorizerType"] != "JWT" || !strings.Contains(js(auths[0]), `"Issuer":"`+issuer+`"`) || !strings.Contains(js(auths[0]), `"Audience":["client-a"]`) {
		t.Fatalf("authorizers: %s", js(auths))
	}
	if e.Alarms().SignatureFailures != nil || len(resources(tpl, "AWS::Lambda::Url")) != 0 {
		t.Errorf("a signature alarm or a function URL on a JWT route")
	}
	vars := env(t, tpl)
	if v := vars[contract.ClientAttributeVar]; v != "claim:sub" {
		t.Fatalf("%s=%q, want claim:sub", contract.ClientAttributeVar, v)
	}
}

// SignatureFailuresAlarm exists only with Webhook: behind IAM or a JWT
// authorizer an unauthenticated request never reaches the function, and
// an alarm on the function's 401s could never fire.
func TestSignatureAlarmOnlyWithWebhook(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props endpoint.IdempotentEndpointProps
		want  bool
	}{
		{"webhook", endpoint.IdempotentEndpointProps{Props: core.Props{Dashboard: jsii.Bool(true)}, Webhook: jsii.String("stripe")}, true},
		{"webhook on a route", endpoint.IdempotentEndpointProps{Webhook: jsii.String("stripe"), Route: jsii.String("/hooks")}, true},
		{"IAM function URL", endpoint.IdempotentEndpointProps{Props: core.Props{Dashboard: jsii.Bool(true)}}, false},
		{"IAM route", endpoint.IdempotentEndpointProps{Route: jsii.String("/charges")}, false},
		{"JWT route", endpoint.IdempotentEndpointProps{Route: jsii.String("/charges"), JwtIssuer: jsii.String("https://issuer.example.com"), JwtAudience: jsii.Strings("a")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, e := stack(t, &tc.props, false)
			tpl := cdktest.Template(t, st)
			var alarms []string
			for id, r := range tpl["Resources"].(map[string]any) {
				if r.(map[string]any)["Type"] == "AWS::CloudWatch::Alarm" && strings.Contains(id, ids.SignatureAlarm) {
					alarms = append(alarms, id)
				}
			}
			got := len(alarms) == 1 && e.Alarms().SignatureFailures != nil
			if got != tc.want || len(alarms) > 1 {
				t.Fatalf("signature alarms %v, Alarms().SignatureFailures %v; want one: %v", alarms, e.Alarms().SignatureFailures, tc.want)
			}
			want := 4
			if tc.want {
				want = 5
				// The construct id is the contract, its logical id follows it.
				if !strings.HasPrefix(alarms[0], "StripeHooks"+ids.SignatureAlarm) {
					t.Errorf("logical id %s", alarms[0])
				}
			}
			if n := len(e.Alarms().All()); n != want {
				t.Errorf("Alarms().All() has %d, want %d", n, want)
			}
			if tc.props.Dashboard != nil {
				d := js(resources(tpl, "AWS::CloudWatch::Dashboard"))
				if strings.Contains(d, ids.SignatureAlarm) != tc.want {
					t.Errorf("the dashboard's alarms (signature alarm %v): %s", tc.want, d)
				}
			}
		})
	}
}

// The function's cdk-nag Serverless-LambdaDLQ suppression names what
// invokes it: its function URL, or its HTTP API route.
func TestDLQSuppressionNamesTheInvoker(t *testing.T) {
	for _, tc := range []struct {
		name, want, not string
		props           endpoint.IdempotentEndpointProps
	}{
		{"function URL", "through its function URL", "HTTP API", endpoint.IdempotentEndpointProps{}},
		{"route", "through its HTTP API route", "function URL", endpoint.IdempotentEndpointProps{Route: jsii.String("/charges")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := stack(t, &tc.props, false)
			var reason string
			for _, r := range cdktest.Template(t, st)["Resources"].(map[string]any) {
				r := r.(map[string]any)
				if r["Type"] != "AWS::Lambda::Function" {
					continue
				}
				md, _ := r["Metadata"].(map[string]any)
				nag, _ := md["cdk_nag"].(map[string]any)
				rules, _ := nag["rules_to_suppress"].([]any)
				for _, rule := range rules {
					if rule := rule.(map[string]any); rule["id"] == "Serverless-LambdaDLQ" {
						reason, _ = rule["reason"].(string)
					}
				}
			}
			if !strings.Contains(reason, tc.want) || strings.Contains(reason, tc.not) {
				t.Errorf("the Serverless-LambdaDLQ reason %q: want %q, without %q", reason, tc.want, tc.not)
			}
		})
	}
}
