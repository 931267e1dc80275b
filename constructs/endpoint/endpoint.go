// Package endpoint is the IdempotentEndpoint construct: an HTTP endpoint or
// webhook receiver on a Lambda function URL, or on an API Gateway HTTP API
// route (Route), whose handler (endpoint.Start, over package httpkey) runs
// once per Idempotency-Key or per webhook event.
//
// It is a member of the consumer family, composed of the same building
// blocks (constructs/internal): the idempotency table (created or shared,
// the namespace claimed and IAM-scoped), the function (role, log group,
// bundled bootstrap, the runtime contract in its environment), the alarms'
// shape. What is its own: the function URL (auth NONE only behind a webhook
// verifier, AWS_IAM otherwise) or the route (IAM, or a JWT authorizer with
// JwtIssuer), keys scoped to the caller by default (its IAM identity, or
// its token's subject), the webhook's secret (a Secrets Manager secret the
// function reads at init, never its value in the environment), the
// reserved concurrency that bounds it (and a route's stage throttle), and
// the alarms on 5xx answers, a webhook's signature failures and 409 storms.
package endpoint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2authorizers"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/family"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/monitor"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/nag"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Defaults of the props, in one place (each prop's doc states its value).
const (
	// defaultSignatureFailures is the signature failures in five minutes
	// above which SignatureFailuresAlarm fires.
	defaultSignatureFailures = 10
	// defaultInProgress is the 409 answers in five minutes above which
	// InProgressAlarm fires.
	defaultInProgress = 50
	// defaultRateLimit and defaultBurstLimit are the HTTP API stage's
	// throttle (requests per second, and the burst), with Route.
	defaultRateLimit  = 50
	defaultBurstLimit = 100
)

// IdempotentEndpointProps configure an IdempotentEndpoint.
type IdempotentEndpointProps struct {
	// Props are the settings every construct of the family shares (see
	// core.Props): Entry (its main calls endpoint.Start), the table and
	// its design (the handler gets the key schema's variables as every
	// construct's does), Namespace, Window (with Webhook at least the
	// provider's redelivery period, contract.RetryPeriod: a shorter one is
	// refused, since a late delivery of a completed event would run again),
	// the function (ReservedConcurrentExecutions bounds it, and so the URL:
	// Lambda answers 429 beyond it, and beyond 10 requests a second for
	// each unit, its invoke rate quota; a webhook's forged requests share
	// both: the verifier refuses them before any store request, in tens of
	// microseconds, but each is an invocation: DESIGN.md, "A webhook under
	// an unsigned flood"), its logs and alarms.
	core.Props
	// Webhook is the provider whose signature every request must carry:
	// "stripe", "github", "shopify", "standard-webhooks" (Svix and the
	// senders of the Standard Webhooks scheme) or "slack". With it the URL's
	// auth is NONE (the signature authenticates); without it, AWS_IAM.
	// Default: none, the client's Idempotency-Key behind IAM.
	Webhook *string
	// WebhookSecret holds the provider's signing secret (or a JSON array of
	// them during a rotation); the function may read it and reads it at
	// init. Required with Webhook.
	WebhookSecret awssecretsmanager.ISecret
	// ClientAttribute scopes every key to the client, so that no caller
	// ever receives another's stored response: "iam" (the caller's account
	// and role or user, never its session), "claim:<name>" (a claim of the
	// token that JwtIssuer's authorizer verified; refused without
	// JwtIssuer), "header:<name>" (a header that a trusted gateway in front
	// sets), or "none" to share keys among every caller, by name. Refused
	// with Webhook other than "none" (the provider is the one client), and
	// "iam" with JwtIssuer (a JWT route's requests carry no IAM identity).
	// Default: by the endpoint's auth: "iam" behind AWS_IAM (a function URL
	// or a Route), "claim:sub" with JwtIssuer (the token's subject), "none"
	// with Webhook.
	ClientAttribute *string
	// ReplayHeaders are the response headers stored and replayed beside
	// the representation headers (Content-Type, Content-Encoding,
	// Content-Language, Location, Content-Location), which always are. Default: none.
	ReplayHeaders *[]*string
	// HashHeaders are the request headers in the payload hash. Default:
	// none.
	HashHeaders *[]*string
	// MaxRequestBytes bounds a request's body. Default: 1 MiB.
	MaxRequestBytes *float64
	// Route, when set, serves the endpoint on an API Gateway HTTP API route
	// (POST <Route>, payload format 2.0) instead of a function URL: IAM
	// authorization (a JWT authorizer with JwtIssuer) unless Webhook, the
	// stage throttled (ThrottlingRateLimit,
	// ThrottlingBurstLimit) and its access logs kept. The handler's main is
	// the same (endpoint.Start serves both). Default: a function URL.
	Route *string
	// JwtIssuer, with Route, authorizes the route with a JWT authorizer
	// instead of IAM: the issuer's URL (an OpenID Connect provider's, such
	// as a Cognito user pool's https://cognito-idp.<region>.amazonaws.com/<pool
	// id>), whose tokens API Gateway verifies before the function runs.
	// Keys are then scoped to the token's subject (ClientAttribute
	// "claim:sub"). Requires JwtAudience; refused without Route (a function
	// URL has no JWT authorizer) and with Webhook (a provider sends no
	// token). Default: IAM authorization.
	JwtIssuer *string
	// JwtAudience is the audiences (client ids) a token must be issued to,
	// one at least, with JwtIssuer. Default: none; required with JwtIssuer.
	JwtAudience *[]*string
	// ThrottlingRateLimit and ThrottlingBurstLimit throttle the HTTP API's
	// stage (with Route). Default: 50 requests per second, and a burst of
	// 100.
	ThrottlingRateLimit, ThrottlingBurstLimit *float64
	// SignatureFailures is the threshold of SignatureFailuresAlarm, with
	// Webhook (refused without it: there is no such alarm). Default: 10
	// signature failures in five minutes.
	SignatureFailures *float64
	// InProgress is the threshold of InProgressAlarm (409 storms).
	// Default: 50 answers 409 in five minutes.
	InProgress *float64
}

// Alarms are the endpoint's alarms.
type Alarms struct {
	// ServerErrors: an answer of status 500 or above (the handler's 5xx, a
	// store failure, a lost lease), > 0 in five minutes.
	ServerErrors awscloudwatch.Alarm
	// SignatureFailures: requests the webhook's verifier refused (401).
	// Nil without Webhook: behind IAM or a JWT authorizer, a request that
	// fails authentication never reaches the function, so it could never
	// fire.
	SignatureFailures awscloudwatch.Alarm
	// InProgress: 409 answers, a storm of retries against running requests.
	InProgress awscloudwatch.Alarm
	// Errors and Throttles: the function's invocations that failed or were
	// throttled (429 to the caller).
	Errors, Throttles awscloudwatch.Alarm
}

// All returns every alarm the endpoint has (SignatureFailures only with
// Webhook).
func (a Alarms) All() []awscloudwatch.Alarm {
	return slices.DeleteFunc([]awscloudwatch.Alarm{a.ServerErrors, a.SignatureFailures, a.InProgress, a.Errors, a.Throttles},
		func(a awscloudwatch.Alarm) bool { return a == nil })
}

// IdempotentEndpoint is an idempotent HTTP endpoint on a function URL.
type IdempotentEndpoint interface {
	constructs.Construct
	awsiam.IGrantable
	// Url is the function URL, or the HTTP API route's URL with Route.
	Url() *string
	// FunctionUrl is the function URL; nil with Route.
	FunctionUrl() awslambda.FunctionUrl
	// HttpApi is the HTTP API with Route; nil otherwise.
	HttpApi() awsapigatewayv2.HttpApi
	Function() awslambda.Function
	Role() awsiam.IRole
	Table() awsdynamodb.ITable
	Namespace() *string
	Alarms() Alarms
	// Widgets is the endpoint's dashboard, row by row, for a dashboard of
	// the app's own.
	Widgets() [][]awscloudwatch.IWidget
	// GrantInvokeUrl lets grantee call the URL (AWS_IAM auth): both
	// lambda:InvokeFunctionUrl and lambda:InvokeFunction, which new function
	// URLs require since October 2025
	// (https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html); with
	// Route, execute-api:Invoke on the route.
	GrantInvokeUrl(grantee awsiam.IGrantable) awsiam.Grant
}

type idempotentEndpoint struct {
	constructs.Construct
	function  awslambda.Function
	role      awsiam.IRole
	url       awslambda.FunctionUrl
	api       awsapigatewayv2.HttpApi
	stage     awsapigatewayv2.HttpStage
	route     string
	table     awsdynamodb.ITable
	namespace string
	alarms    Alarms
	handler   monitor.Handler
	mns       string // the metrics namespace
}

func (e *idempotentEndpoint) Url() *string {
	if e.api != nil {
		return awscdk.Fn_Join(jsii.String(""), &[]*string{e.stage.Url(), jsii.String(strings.TrimPrefix(e.route, "/"))})
	}
	return e.url.Url()
}
func (e *idempotentEndpoint) FunctionUrl() awslambda.FunctionUrl { return e.url }
func (e *idempotentEndpoint) HttpApi() awsapigatewayv2.HttpApi   { return e.api }
func (e *idempotentEndpoint) Function() awslambda.Function       { return e.function }
func (e *idempotentEndpoint) Role() awsiam.IRole                 { return e.role }
func (e *idempotentEndpoint) Table() awsdynamodb.ITable          { return e.table }
func (e *idempotentEndpoint) Namespace() *string                 { return jsii.String(e.namespace) }
func (e *idempotentEndpoint) Alarms() Alarms                     { return e.alarms }
func (e *idempotentEndpoint) GrantPrincipal() awsiam.IPrincipal  { return e.role.GrantPrincipal() }
func (e *idempotentEndpoint) GrantInvokeUrl(grantee awsiam.IGrantable) awsiam.Grant {
	if e.api != nil {
		return awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
			Grantee:      grantee,
			Actions:      jsii.Strings("execute-api:Invoke"),
			ResourceArns: jsii.Strings(*e.api.ArnForExecuteApi(jsii.String("POST"), jsii.String(e.route), jsii.String("$default"))),
		})
	}
	return e.url.GrantInvokeUrl(grantee)
}

// kind is the endpoint, to the family's core.
var kind = family.Kind{
	Name:                "IdempotentEndpoint",
	Noun:                "idempotent endpoint",
	FunctionID:          ids.EndpointFunction,
	Timeout:             family.DefaultEndpointTimeout,
	ReservedConcurrency: family.DefaultEndpointReservedConcurrency,
	ReservedMin:         1,
	ReservedWhy:         " (default 10): it is the URL's throttle, and 0 would stop the endpoint",
}

// settings are the props resolved: every default applied once.
type settings struct {
	*family.Settings
	p                       *IdempotentEndpointProps
	secret                  awssecretsmanager.ISecret
	signatureFail, inFlight float64
	route                   string
	jwtIssuer               string
	jwtAudience             []string
	rate, burst             float64
}

// secretPlaceholder stands for the secret's ARN while the settings are
// checked: it is a token, known once the secret exists.
const secretPlaceholder = "arn:aws:secretsmanager:region:account:secret:(the webhook's secret)"

// resolve computes the settings and checks them: every problem at once,
// each naming the construct, the value, the rule and the fix.
func (p *IdempotentEndpointProps) resolve(id string) (*settings, error) {
	s := p.compute(id)
	own, _ := family.Evaluate(s, rules)
	if err := family.Fail(kind, id, append(s.Problems(), own...)); err != nil {
		return nil, err
	}
	return s, nil
}

// compute applies the defaults: the shared props by the family's core,
// the endpoint's own over them.
func (p *IdempotentEndpointProps) compute(id string) *settings {
	s := &settings{p: p, secret: p.WebhookSecret, route: family.Str(p.Route, "")}
	s.Settings = family.Resolve(kind, id, &p.Props, func(f contract.Field) (any, bool) {
		v, ok := p.runtimeValues()[f.Var]
		return v, ok
	})
	r := &s.Runtime
	s.jwtIssuer, s.jwtAudience = family.Str(p.JwtIssuer, ""), list(p.JwtAudience)
	if r.ClientAttribute == "" {
		r.ClientAttribute = defaultClientAttribute(*r, s.jwtIssuer != "")
	}
	s.rate, s.burst = family.Num(p.ThrottlingRateLimit, defaultRateLimit), family.Num(p.ThrottlingBurstLimit, defaultBurstLimit)
	s.signatureFail = family.Num(p.SignatureFailures, defaultSignatureFailures)
	s.inFlight = family.Num(p.InProgress, defaultInProgress)
	return s
}

// runtimeValues are the runtime settings the endpoint's own props set, by
// the contract's variable; the Window's default is the provider's
// redelivery period when longer than the contract's.
func (p *IdempotentEndpointProps) runtimeValues() map[string]any {
	values := map[string]any{
		contract.SourceVar:          contract.SourceHTTP,
		contract.WindowVar:          contract.ProviderWindow(family.Str(p.Webhook, "")),
		contract.WebhookProviderVar: family.Str(p.Webhook, ""),
		contract.ClientAttributeVar: family.Str(p.ClientAttribute, ""),
		contract.HashHeadersVar:     list(p.HashHeaders),
	}
	if v := list(p.ReplayHeaders); v != nil {
		values[contract.ReplayHeadersVar] = v
	}
	if p.MaxRequestBytes != nil {
		values[contract.MaxRequestBytesVar] = int(*p.MaxRequestBytes)
	}
	if p.WebhookSecret != nil {
		values[contract.WebhookSecretVar] = secretPlaceholder
	}
	return values
}

// rules are the endpoint's own rules, after the family's.
var rules = []family.Rule[*settings]{
	{Reads: []string{"Webhook", "WebhookSecret"}, Check: family.Problem(webhookProblems)},
	{Reads: []string{"Route", "JwtIssuer", "JwtAudience", "Webhook"}, Check: family.Problem(jwtProblems)},
	{Reads: []string{"ClientAttribute", "JwtIssuer", "Webhook"}, Check: family.Problem(clientProblems)},
	{Reads: []string{"Route", "ThrottlingRateLimit", "ThrottlingBurstLimit"}, Check: family.Problem(routeProblems)},
	{Reads: []string{"SignatureFailures", "InProgress", "Webhook"}, Check: family.Problem(alarmProblems)},
}

func webhookProblems(s *settings) []string {
	switch provider := s.Runtime.WebhookProvider; {
	case provider != "" && s.p.WebhookSecret == nil:
		return []string{fmt.Sprintf("Webhook %q needs WebhookSecret, the Secrets Manager secret that holds its signing secret; give one (the function reads it at init)", provider)}
	case provider == "" && s.p.WebhookSecret != nil:
		return []string{fmt.Sprintf("WebhookSecret is given without Webhook; name the provider (%s), or leave the secret out", strings.Join(contract.Providers, ", "))}
	}
	return nil
}

// jwtProblems are the rules of the route's JWT authorizer.
func jwtProblems(s *settings) []string {
	p, jwt := s.p, s.jwtIssuer != ""
	var msg string
	switch {
	case (jwt || p.JwtAudience != nil) && s.route == "":
		msg = "JwtIssuer and JwtAudience configure an HTTP API route's JWT authorizer, and there is none without Route: a function URL authenticates by IAM alone; give a Route, or leave them out"
	case (jwt || p.JwtAudience != nil) && s.Runtime.WebhookProvider != "":
		msg = fmt.Sprintf("JwtIssuer and JwtAudience are given with Webhook %q: a provider signs its deliveries and sends no token; leave JwtIssuer and JwtAudience out (the verifier authenticates), or Webhook", s.Runtime.WebhookProvider)
	case jwt && len(s.jwtAudience) == 0:
		msg = fmt.Sprintf("JwtIssuer %q is given without JwtAudience; give the audiences (client ids) its tokens must be issued to", s.jwtIssuer)
	case !jwt && p.JwtAudience != nil:
		msg = "JwtAudience is given without JwtIssuer; give the issuer's URL too, or leave JwtAudience out"
	case jwt && slices.Contains(s.jwtAudience, ""):
		msg = "JwtAudience holds an empty audience; give client ids"
	default:
		return nil
	}
	return []string{msg}
}

// clientProblems are the rules of ClientAttribute against the endpoint's
// auth.
func clientProblems(s *settings) []string {
	r, jwt := s.Runtime, s.jwtIssuer != ""
	switch kind, _, _ := strings.Cut(r.ClientAttribute, ":"); {
	case jwt && r.ClientAttribute == "iam":
		return []string{"ClientAttribute \"iam\" is refused with JwtIssuer: a JWT route's requests carry no IAM identity, so every request would be refused (401); leave ClientAttribute out for \"claim:sub\" (the token's subject), or give \"claim:<name>\" or \"none\""}
	case !jwt && r.WebhookProvider == "" && kind == "claim":
		return []string{fmt.Sprintf("ClientAttribute %q reads a claim of the token that an HTTP API's JWT authorizer verified, and there is none without JwtIssuer: every request would be refused (401); give JwtIssuer, JwtAudience and a Route, or another ClientAttribute", r.ClientAttribute)}
	}
	return nil
}

// routeProblems are the rules of the route and its stage's throttle.
func routeProblems(s *settings) []string {
	var out []string
	switch p := s.p; {
	case s.route != "" && (!strings.HasPrefix(s.route, "/") || strings.ContainsAny(s.route, " ?#{}")):
		out = append(out, fmt.Sprintf("Route %q is not a literal path of an HTTP API route; give one such as \"/hooks/stripe\"", s.route))
	case s.route == "" && (p.ThrottlingRateLimit != nil || p.ThrottlingBurstLimit != nil):
		out = append(out, "ThrottlingRateLimit and ThrottlingBurstLimit throttle an HTTP API stage, and there is none without Route: a function URL is throttled by ReservedConcurrentExecutions alone; give a Route, or leave them out")
	}
	if s.rate <= 0 || s.burst < 1 {
		out = append(out, fmt.Sprintf("ThrottlingRateLimit %v and ThrottlingBurstLimit %v would stop the route; give a positive rate and a burst of at least 1", s.rate, s.burst))
	}
	return out
}

// alarmProblems are the rules of the alarms' thresholds.
func alarmProblems(s *settings) []string {
	var out []string
	if s.p.SignatureFailures != nil && s.Runtime.WebhookProvider == "" {
		out = append(out, "SignatureFailures is the threshold of SignatureFailuresAlarm, which exists only with Webhook (behind IAM or a JWT authorizer an unauthenticated request never reaches the function); leave it out, or give Webhook")
	}
	if s.signatureFail < 0 || s.inFlight < 0 {
		out = append(out, fmt.Sprintf("SignatureFailures %v and InProgress %v are alarm thresholds; give numbers of at least 0", s.signatureFail, s.inFlight))
	}
	return out
}

// list reads an optional list prop: nil when it is nil.
func list(v *[]*string) []string {
	if v == nil {
		return nil
	}
	out := make([]string, 0, len(*v))
	for _, x := range *v {
		out = append(out, family.Str(x, ""))
	}
	return out
}

// defaultClientAttribute is ClientAttribute's default by the endpoint's
// auth: the contract's (iam, none with a webhook provider), and with a JWT
// authorizer the token's subject, the one identity its requests carry.
func defaultClientAttribute(r contract.Settings, jwt bool) string {
	if jwt && r.WebhookProvider == "" {
		return "claim:sub"
	}
	return contract.DefaultClientAttribute(r)
}

// NewIdempotentEndpoint creates an idempotent endpoint in scope. It panics,
// as CDK constructs do, when the props are invalid (every problem at once),
// when the handler does not build, or when it is built on another version
// of the library.
func NewIdempotentEndpoint(scope constructs.Construct, id *string, props *IdempotentEndpointProps) IdempotentEndpoint {
	if props == nil {
		props = &IdempotentEndpointProps{}
	}
	s, err := props.resolve(*id)
	if err != nil {
		panic(err)
	}
	assetDir := s.Bundle()
	e := &idempotentEndpoint{namespace: s.Runtime.Namespace}
	constructs.NewConstruct_Override(e, scope, id)
	s.Runtime.Consumer = *e.Node().Path()
	e.table = s.NewTable(e)
	if s.secret != nil {
		s.Runtime.WebhookSecret = *s.secret.SecretArn()
	}
	s.Kind.InvokedBy = dlqReason(s.route != "")
	f := s.NewFunction(e, assetDir, e.table)
	family.Warn(e, s.Warnings())
	e.function, e.role = f.Function, f.Role
	if s.secret != nil {
		s.secret.GrantRead(e.role, nil)
	}
	if s.route != "" {
		e.addRoute(s)
	} else {
		auth := awslambda.FunctionUrlAuthType_AWS_IAM
		if s.Runtime.WebhookProvider != "" {
			// The verifier authenticates every request (its signature) before
			// any store request; IAM cannot, since the provider signs no SigV4.
			auth = awslambda.FunctionUrlAuthType_NONE
		}
		e.url = awslambda.NewFunctionUrl(e, jsii.String(ids.FunctionURL), &awslambda.FunctionUrlProps{
			Function: e.function,
			AuthType: auth,
		})
	}
	s.SuppressWildcards(f)
	e.addAlarms(s)
	if s.Dashboard {
		e.addDashboard()
	}
	return e
}

// dlqReason is why the function has no dead-letter queue, by what invokes
// it: a function URL or an HTTP API route.
func dlqReason(route bool) string {
	by := "its function URL"
	if route {
		by = "its HTTP API route (a synchronous Lambda proxy integration)"
	}
	return "The function is only invoked synchronously, through " + by + ": the caller gets every failure as an HTTP status and retries; there is no asynchronous event to dead-letter."
}

// addRoute serves the function on POST <Route> of a new HTTP API: IAM
// authorization, or JWT with JwtIssuer, unless a webhook verifier
// authenticates; a $default stage
// throttled and with JSON access logs.
func (e *idempotentEndpoint) addRoute(s *settings) {
	e.route = s.route
	e.api = awsapigatewayv2.NewHttpApi(e, jsii.String(ids.HTTPAPI), &awsapigatewayv2.HttpApiProps{
		Description:        jsii.String(fmt.Sprintf("Idempotent endpoint %s", s.Runtime.Consumer)),
		CreateDefaultStage: jsii.Bool(false),
	})
	logs := awslogs.NewLogGroup(e, jsii.String(ids.AccessLogs), &awslogs.LogGroupProps{Retention: s.LogRetention})
	e.stage = awsapigatewayv2.NewHttpStage(e, jsii.String(ids.Stage), &awsapigatewayv2.HttpStageProps{
		HttpApi:    e.api,
		StageName:  jsii.String("$default"),
		AutoDeploy: jsii.Bool(true),
		Throttle:   &awsapigatewayv2.ThrottleSettings{RateLimit: jsii.Number(s.rate), BurstLimit: jsii.Number(s.burst)},
	})
	e.stage.Node().DefaultChild().(awsapigatewayv2.CfnStage).SetAccessLogSettings(&awsapigatewayv2.CfnStage_AccessLogSettingsProperty{
		DestinationArn: logs.LogGroupArn(),
		Format:         jsii.String(`{"requestId":"$context.requestId","ip":"$context.identity.sourceIp","requestTime":"$context.requestTime","routeKey":"$context.routeKey","status":"$context.status","responseLength":"$context.responseLength","integrationError":"$context.integrationErrorMessage"}`),
	})
	route := &awsapigatewayv2.AddRoutesOptions{
		Path:        jsii.String(s.route),
		Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_POST},
		Integration: awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("Integration"), e.function, nil),
	}
	switch {
	case s.jwtIssuer != "":
		route.Authorizer = awsapigatewayv2authorizers.NewHttpJwtAuthorizer(jsii.String(ids.JwtAuthorizer), jsii.String(s.jwtIssuer), &awsapigatewayv2authorizers.HttpJwtAuthorizerProps{
			JwtAudience: jsii.Strings(s.jwtAudience...),
		})
	case s.Runtime.WebhookProvider == "":
		route.Authorizer = awsapigatewayv2authorizers.NewHttpIamAuthorizer()
	}
	for _, r := range *e.api.AddRoutes(route) {
		if s.Runtime.WebhookProvider != "" {
			nag.Suppress(r, true, nag.Rule{ID: "AwsSolutions-APIG4", Reason: "A webhook route: the provider signs its deliveries (no SigV4, no token), and the handler's verifier authenticates every request before any store request, answering 401 otherwise."})
		}
	}
}

// metric is one of the handler's metrics (its EMF line's), summed unless
// props say otherwise.
func (e *idempotentEndpoint) metric(name string, props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace:     jsii.String(e.mns),
		MetricName:    jsii.String(name),
		DimensionsMap: monitor.Dimensions(e.function, e.handler.Consumer),
	}).With(monitor.WithStatistic(props, "Sum"))
}

func (e *idempotentEndpoint) addAlarms(s *settings) {
	e.mns = s.Runtime.MetricsNamespace
	e.handler = monitor.Handler{Namespace: s.Runtime.MetricsNamespace, Consumer: s.Runtime.Consumer, Function: e.function, Timeout: s.Runtime.Timeout}
	h := e.handler
	five := &awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Sum")}
	metric := func(name string) awscloudwatch.IMetric { return e.metric(name, five) }
	path := s.Runtime.Consumer
	e.alarms = Alarms{
		ServerErrors: monitor.NewAlarm(e, ids.ServerErrorsAlarm,
			fmt.Sprintf("Idempotent endpoint %s answered 5xx (the handler's, a store failure or a lost lease): its key was released or left to its lease; see the request lines with status >= 500", path),
			metric(outcome.MetricServerErrors), 0, s.AlarmAction),
		InProgress: monitor.NewAlarm(e, ids.InProgressAlarm,
			fmt.Sprintf("Idempotent endpoint %s answered 409 more than %v times in 5 minutes: clients retry against requests still running (a slow effect, or retries that ignore Retry-After)", path, s.inFlight),
			metric(outcome.InProgress.MetricName()), s.inFlight, s.AlarmAction),
		Errors: monitor.NewAlarm(e, ids.ErrorsAlarm,
			fmt.Sprintf("Idempotent endpoint %s: the function failed (an init error, a timeout, a crash)", path),
			h.Errors(five), 0, s.AlarmAction),
		Throttles: monitor.NewAlarm(e, ids.ThrottlesAlarm,
			fmt.Sprintf("Idempotent endpoint %s was throttled (429 to callers): more requests at once than ReservedConcurrentExecutions %v", path, *s.Reserved),
			h.Throttles(five), 0, s.AlarmAction),
	}
	if s.Runtime.WebhookProvider != "" {
		// Only a webhook's verifier refuses requests in the function: behind
		// IAM or a JWT authorizer, API Gateway or the function URL refuses
		// them before it runs, and the alarm could never fire.
		e.alarms.SignatureFailures = monitor.NewAlarm(e, ids.SignatureAlarm,
			fmt.Sprintf("Idempotent endpoint %s refused more than %v requests in 5 minutes with 401 (a signature, timestamp or header check failed): a rotated secret not listed, or forged deliveries; the lines of outcome unauthorized say which check", path, s.signatureFail),
			metric(outcome.MetricUnauthorized), s.signatureFail, s.AlarmAction)
	}
}
