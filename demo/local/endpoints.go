package local

// The example app's HTTP endpoints (app/platform/endpoints.go), run from
// the template: the functions that a function URL (AWS::Lambda::Url) or an
// HTTP API route (AWS::ApiGatewayV2::Route, through its AWS_PROXY
// integration) serves, each under the runtime interface emulator with the
// template's environment. The webhook's signing secret is the template's
// AWS::SecretsManager::Secret, created on kumo with a value the demo holds
// (as the operator puts Stripe's in), which the handler reads at init with
// GetSecretValue. The demo plays the callers: Stripe, which signs each
// delivery and retries an event with a new timestamp; a client that sends
// three identical requests at once under one Idempotency-Key and retries
// after a 409 as Retry-After says; and a second IAM identity that happens
// to use the same key. A downstream API counts the effects per fact.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
)

// Endpoint is a function the template serves over HTTP: a function URL's
// (Route empty) or an HTTP API route's.
type Endpoint struct {
	Function string // logical id
	// AuthType is the URL's (NONE or AWS_IAM) or the route's
	// AuthorizationType (AWS_IAM, NONE, JWT, CUSTOM).
	AuthType string
	// RouteKey is the route's ("POST /orders"); empty for a function URL.
	RouteKey string
}

func (s *Stack) addFunctionURL(id string, r resource) error {
	var p struct {
		AuthType          string    `json:"AuthType"`
		TargetFunctionArn intrinsic `json:"TargetFunctionArn"`
	}
	if err := json.Unmarshal(r.Properties, &p); err != nil {
		return err
	}
	fn, err := p.TargetFunctionArn.target("Arn")
	if err != nil {
		return err
	}
	s.Endpoints = append(s.Endpoints, &Endpoint{Function: fn, AuthType: p.AuthType})
	return nil
}

// addRoute reads a route and its integration (the target
// "integrations/<id>"), which names the function.
func (s *Stack) addRoute(id string, r resource, all map[string]resource) error {
	var p struct {
		AuthorizationType string `json:"AuthorizationType"`
		RouteKey          string `json:"RouteKey"`
		Target            struct {
			Join []any `json:"Fn::Join"`
		} `json:"Target"`
	}
	if err := json.Unmarshal(r.Properties, &p); err != nil {
		return err
	}
	integration := ""
	if len(p.Target.Join) == 2 {
		if parts, ok := p.Target.Join[1].([]any); ok && len(parts) == 2 && parts[0] == "integrations/" {
			if ref, ok := parts[1].(map[string]any); ok {
				integration, _ = ref["Ref"].(string)
			}
		}
	}
	in, ok := all[integration]
	if !ok || in.Type != "AWS::ApiGatewayV2::Integration" {
		return fmt.Errorf("route %s: its target is not an integration of the template", p.RouteKey)
	}
	var ip struct {
		IntegrationType      string    `json:"IntegrationType"`
		IntegrationUri       intrinsic `json:"IntegrationUri"`
		PayloadFormatVersion string    `json:"PayloadFormatVersion"`
	}
	if err := json.Unmarshal(in.Properties, &ip); err != nil {
		return err
	}
	if ip.IntegrationType != "AWS_PROXY" || ip.PayloadFormatVersion != "2.0" {
		return fmt.Errorf("route %s: integration %s %s: the local run serves Lambda proxy integrations of payload format 2.0", p.RouteKey, ip.IntegrationType, ip.PayloadFormatVersion)
	}
	fn, err := ip.IntegrationUri.target("Arn")
	if err != nil {
		return err
	}
	auth := p.AuthorizationType
	if auth == "" {
		auth = "NONE"
	}
	s.Endpoints = append(s.Endpoints, &Endpoint{Function: fn, AuthType: auth, RouteKey: p.RouteKey})
	return nil
}

// provisionSecrets creates each secret of the template on kumo, with the
// value the demo holds for it: the signing secret the provider (played by
// the demo) issued.
func (d *deployment) provisionSecrets(ctx context.Context, c *clients) error {
	for _, id := range d.stack.Secrets {
		value := "whsec_local_" + strings.ToLower(id)
		out, err := c.secrets.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String(id), SecretString: aws.String(value)})
		if err != nil {
			return fmt.Errorf("secret %s: %w", id, err)
		}
		d.secretARN[id], d.secretValue[aws.ToString(out.ARN)] = aws.ToString(out.ARN), value
	}
	return nil
}

// HTTPReport is what happened on the endpoints.
type HTTPReport struct {
	Endpoints int
	// Requests are the requests the callers sent (each invocation,
	// retries after a 409 included); Effects the effects the downstream
	// APIs saw.
	Requests, Effects int
	// Replays are answers replayed from the stored response, Conflicts the
	// 409s (a request while the same key's first one runs), Unauthorized
	// the forged deliveries refused.
	Replays, Conflicts, Unauthorized int
	// Mismatches are the keys reused for another order, answered 422.
	Mismatches int
	// CallersIsolated are the keys that two IAM identities each used for
	// an order of their own, each booked with its own answer.
	CallersIsolated, Pairs int
	// Facts are the facts sent (Stripe events, orders); Doubles those with
	// more than one effect; Lost those with none.
	Facts, Doubles, Lost int
	// Unexpected are answers no caller should get (a 5xx, a 422 of an
	// identical retry, a replay of another caller's order).
	Unexpected int
}

// OK says whether every fact had its one effect and each caller its own.
func (h *HTTPReport) OK() bool {
	return h.Doubles == 0 && h.Lost == 0 && h.Unexpected == 0 && h.CallersIsolated == h.Pairs
}

// line is the endpoints' part of the last line.
func (h *HTTPReport) line() string {
	return fmt.Sprintf("http: requests=%d effects=%d replays=%d conflicts=%d mismatches=%d unauthorized=%d callers_isolated=%d double_effects=%d lost=%d",
		h.Requests, h.Effects, h.Replays, h.Conflicts, h.Mismatches, h.Unauthorized, h.CallersIsolated, h.Doubles, h.Lost)
}

// count fills Effects, Doubles and Lost from the effects seen per fact.
func (h *HTTPReport) count(facts []string, effects map[string]int) {
	h.Facts = len(facts)
	for _, f := range facts {
		switch n := effects[f]; {
		case n == 0:
			h.Lost++
		case n > 1:
			h.Doubles++
		}
	}
	for _, n := range effects {
		h.Effects += n
	}
}

// httpFunction is an endpoint's function: its execution environments, a
// pool that hands each invocation a free one (the emulator runs one
// invocation at a time).
type httpFunction struct {
	ep   *Endpoint
	fn   *Function
	env  map[string]string
	pool chan *runtime
	all  []*runtime
}

func (f *httpFunction) stop() {
	for _, rt := range f.all {
		rt.stop()
	}
}

// startEndpoints builds and starts the template's endpoint functions.
func startEndpoints(ctx context.Context, stack *Stack, dep *deployment, c *clients, srcDir, rie, binDir, logDir string, opts Options, extraEnv map[string]string) ([]*httpFunction, error) {
	var out []*httpFunction
	for _, ep := range stack.Endpoints {
		fn := stack.Functions[ep.Function]
		if fn == nil {
			return out, fmt.Errorf("endpoint of %s: the function is not in the template", ep.Function)
		}
		if src, _ := fn.Env[contract.SourceVar].(string); src != string(contract.SourceHTTP) {
			return out, fmt.Errorf("endpoint of %s: its contract's %s is %q, want %q", fn.ID, contract.SourceVar, src, contract.SourceHTTP)
		}
		fmt.Fprintf(opts.Progress, "demo: %s: building its handler %s for this machine (go build)\n", fn.Name, fn.Package)
		bin, err := buildHandler(ctx, srcDir, fn.Package, binDir)
		if err != nil {
			return out, err
		}
		vars, err := dep.environment(fn)
		if err != nil {
			return out, fmt.Errorf("function %s: %w", fn.ID, err)
		}
		f := &httpFunction{ep: ep, fn: fn, env: vars, pool: make(chan *runtime, 4)}
		out = append(out, f)
		line, err := functionLog(logDir, fn, nil)
		if err != nil {
			return out, err
		}
		env := handlerEnv(c.endpoint, extraEnv, vars)
		for i := range cap(f.pool) {
			rt, err := startRuntime(ctx, rie, bin, fmt.Sprintf("%s-%d", fn.Name, i), env, time.Duration(dep.seconds(fn.Timeout))*time.Second, line)
			if err != nil {
				return out, err
			}
			f.all = append(f.all, rt)
			f.pool <- rt
		}
		where := "a function URL, auth " + ep.AuthType
		if ep.RouteKey != "" {
			where = "the HTTP API route " + ep.RouteKey + ", authorization " + ep.AuthType
		}
		fmt.Fprintf(opts.Progress, "demo: %s: %d execution environments started under the Lambda runtime interface emulator, served by %s\n", fn.Name, cap(f.pool), where)
	}
	return out, nil
}

// response is what the callers read of an answer.
type response struct {
	status   int
	replayed bool
	retry    time.Duration
	body     string
}

// invoke sends a payload 2.0 event to a free execution environment.
func (f *httpFunction) invoke(ctx context.Context, event any) (response, error) {
	payload, err := json.Marshal(event)
	if err != nil {
		return response{}, err
	}
	var rt *runtime
	select {
	case rt = <-f.pool:
	case <-ctx.Done():
		return response{}, ctx.Err()
	}
	inv, err := rt.invoke(ctx, payload)
	f.pool <- rt
	if err != nil {
		return response{}, err
	}
	if inv.funcErr != "" || inv.timedOut {
		return response{}, fmt.Errorf("%s: function error %q (timed out: %v)", f.fn.Name, inv.funcErr, inv.timedOut)
	}
	var res events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(inv.body, &res); err != nil || res.StatusCode == 0 {
		return response{}, fmt.Errorf("%s: answer %s: %v", f.fn.Name, inv.body, err)
	}
	out := response{status: res.StatusCode, body: res.Body}
	for k, v := range res.Headers {
		switch {
		case strings.EqualFold(k, httpkey.HeaderReplayed):
			out.replayed = v == "true"
		case strings.EqualFold(k, "Retry-After"):
			secs, _ := strconv.Atoi(v)
			out.retry = time.Duration(max(secs, 1)) * time.Second
		}
	}
	return out, nil
}

// httpRun is the callers' side of the endpoints' demo.
type httpRun struct {
	requests, replays, conflicts, unauthorized, unexpected, isolated, mismatches atomic.Int64
	effects                                                                      *effectsAPI
	secretValue                                                                  func(arn string) string
	logf                                                                         func(string, ...any)
}

// Paths of the endpoints' downstream APIs, which count effects by the
// fact each request names (orderId).
const (
	fulfilmentPath = "/fulfilments"
	bookingPath    = "/bookings"
)

// newHTTPEffects is the endpoints' downstream API: it counts every call
// (it honours no idempotency key: only the guard keeps effects single),
// after a delay so that concurrent requests meet the first one running.
func newHTTPEffects(delay time.Duration) (*effectsAPI, *httptest.Server) {
	api := newEffectsAPI()
	return api, httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		api.ServeHTTP(w, r)
	}))
}

// send invokes f with event until it gets an answer that is not a 409,
// waiting as Retry-After says: a client's retries. want is the status a
// first or replayed answer should have.
func (h *httpRun) send(ctx context.Context, f *httpFunction, event func() any, want int) (response, error) {
	for attempt := 0; ; attempt++ {
		h.requests.Add(1)
		res, err := f.invoke(ctx, event())
		if err != nil {
			return res, err
		}
		switch {
		case res.status == http.StatusConflict && attempt < 20:
			h.conflicts.Add(1)
			select {
			case <-time.After(res.retry):
			case <-ctx.Done():
				return res, ctx.Err()
			}
			continue
		case res.status == want && res.replayed:
			h.replays.Add(1)
		case res.status == http.StatusUnauthorized:
			h.unauthorized.Add(1)
		case res.status != want:
			h.unexpected.Add(1)
			h.logf("%s: unexpected answer %d %s", f.fn.Name, res.status, strings.TrimSpace(res.body))
		}
		return res, nil
	}
}

// stripe delivers n events to the Stripe webhook, each twice: the delivery
// and Stripe's retry of it two minutes later (the same event, a new
// timestamp, signed again as Stripe signs: HMAC-SHA256 of "t.body" with
// the endpoint's secret), then one delivery signed with a guessed secret.
// Its facts are the orders the events pay.
func (h *httpRun) stripe(ctx context.Context, f *httpFunction, n int) ([]string, error) {
	arn := f.env[contract.WebhookSecretVar]
	secret := h.secretValue(arn)
	if secret == "" {
		return nil, fmt.Errorf("%s: %s %q is not a secret the demo provisioned", f.fn.Name, contract.WebhookSecretVar, arn)
	}
	sign := func(secret string, t int64, body string) string {
		m := hmac.New(sha256.New, []byte(secret))
		fmt.Fprintf(m, "%d.%s", t, body)
		return fmt.Sprintf("t=%d,v1=%s", t, hex.EncodeToString(m.Sum(nil)))
	}
	delivery := func(sig, body, requestID string) func() any {
		return func() any {
			return events.LambdaFunctionURLRequest{Version: "2.0", RawPath: "/", Body: body,
				Headers: map[string]string{"content-type": "application/json", "stripe-signature": sig, "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)"},
				RequestContext: events.LambdaFunctionURLRequestContext{RequestID: requestID, DomainName: "stripehooks.lambda-url." + Region + ".on.aws",
					HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: http.MethodPost, Path: "/"}}}
		}
	}
	facts := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	now := time.Now().Unix()
	for i := range n {
		facts[i] = fmt.Sprintf("hook-%d", i)
		body := fmt.Sprintf(`{"id":"evt_local_%d","object":"event","type":"payment_intent.succeeded","data":{"object":{"id":"pi_local_%d","object":"payment_intent","amount":%d,"currency":"eur","metadata":{"orderId":"%s"}}}}`,
			i, i, 1000+i, facts[i])
		wg.Go(func() {
			for j, t := range []int64{now - 120, now} {
				if _, err := h.send(ctx, f, delivery(sign(secret, t, body), body, fmt.Sprintf("stripe-%d-%d", i, j)), http.StatusOK); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return facts, err
	}
	forged := `{"id":"evt_forged","object":"event","type":"payment_intent.succeeded","data":{"object":{"id":"pi_forged","metadata":{"orderId":"forged"}}}}`
	_, err := h.send(ctx, f, delivery(sign("whsec_guessed", now, forged), forged, "stripe-forged"), http.StatusUnauthorized)
	return facts, err
}

// Callers of the orders API: two sessions of one role (one client: the
// role survives a refresh of its credentials) and another role.
const (
	checkoutSession1 = "arn:aws:sts::111122223333:assumed-role/Checkout/session-1"
	checkoutSession2 = "arn:aws:sts::111122223333:assumed-role/Checkout/session-2"
	partnerCaller    = "arn:aws:sts::444455556666:assumed-role/Partner/partner-session"
)

// orders places n orders on the orders API, each under its key "order-i":
// three identical requests at once from the checkout role, then a retry
// from a new session of that role (a replay), then the partner role's own
// order under the same key (its own booking, not the checkout's answer),
// then the checkout's reuse of the key for another order (422).
// Its facts are the orders: the checkout's and the partner's.
func (h *httpRun) orders(ctx context.Context, f *httpFunction, n int) ([]string, error) {
	method, path, ok := strings.Cut(f.ep.RouteKey, " ")
	if !ok || method != http.MethodPost {
		return nil, fmt.Errorf("%s: route %q: want POST <path>", f.fn.Name, f.ep.RouteKey)
	}
	request := func(caller, key, order, requestID string) func() any {
		body := fmt.Sprintf(`{"orderId":%q,"customerId":"c-%s","amount":2500,"currency":"EUR"}`, order, key)
		return func() any {
			return events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: f.ep.RouteKey, RawPath: path, Body: body,
				Headers: map[string]string{"content-type": "application/json", "idempotency-key": strconv.Quote(key)},
				RequestContext: events.APIGatewayV2HTTPRequestContext{RouteKey: f.ep.RouteKey, Stage: "$default", RequestID: requestID,
					DomainName: "orders.execute-api." + Region + ".amazonaws.com",
					Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{UserARN: caller}},
					HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path}}}
		}
	}
	var facts []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	sem := make(chan struct{}, 2*cap(f.pool)) // keys in flight at once: most of a key's time is the wait after its 409s
	for i := range n {
		key := fmt.Sprintf("order-%d", i)
		mine, theirs := fmt.Sprintf("api-%d-checkout", i), fmt.Sprintf("api-%d-partner", i)
		mu.Lock()
		facts = append(facts, mine, theirs)
		mu.Unlock()
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var group sync.WaitGroup
			for j := range 3 {
				group.Go(func() {
					if _, err := h.send(ctx, f, request(checkoutSession1, key, mine, fmt.Sprintf("%s-%d", key, j)), http.StatusCreated); err != nil {
						errs <- err
					}
				})
			}
			group.Wait()
			again, err := h.send(ctx, f, request(checkoutSession2, key, mine, key+"-refreshed"), http.StatusCreated)
			if err != nil {
				errs <- err
				return
			}
			if !again.replayed {
				h.unexpected.Add(1)
				h.logf("%s: a new session of the checkout role was not given its stored answer for %s", f.fn.Name, key)
			}
			other, err := h.send(ctx, f, request(partnerCaller, key, theirs, key+"-partner"), http.StatusCreated)
			if err != nil {
				errs <- err
				return
			}
			if !other.replayed && strings.Contains(other.body, theirs) && !strings.Contains(other.body, mine) {
				h.isolated.Add(1)
			} else {
				h.unexpected.Add(1)
				h.logf("%s: the partner's order under %s was answered %d %s", f.fn.Name, key, other.status, other.body)
			}
			// The checkout reuses its key for another order: 422, nothing
			// booked.
			if _, err := h.send(ctx, f, request(checkoutSession1, key, mine+"-other", key+"-reused"), http.StatusUnprocessableEntity); err != nil {
				errs <- err
				return
			}
			h.mismatches.Add(1)
		})
	}
	wg.Wait()
	close(errs)
	return facts, <-errs
}

// runEndpoints runs the callers against each endpoint and counts.
func runEndpoints(ctx context.Context, fns []*httpFunction, h *httpRun, n int) (*HTTPReport, error) {
	rep := &HTTPReport{Endpoints: len(fns)}
	var facts []string
	effects := map[string]int{}
	sort.Slice(fns, func(i, j int) bool { return fns[i].fn.ID < fns[j].fn.ID })
	for _, f := range fns {
		var got []string
		var err error
		var path string
		switch {
		case f.env[contract.WebhookProviderVar] == "stripe":
			got, err = h.stripe(ctx, f, n)
			path = fulfilmentPath
		case f.ep.RouteKey != "" && f.ep.AuthType == "AWS_IAM":
			got, err = h.orders(ctx, f, n)
			path = bookingPath
			rep.Pairs += n
		default:
			return nil, fmt.Errorf("%s: the demo has no callers for this endpoint (auth %s, route %q, webhook %q)", f.fn.Name, f.ep.AuthType, f.ep.RouteKey, f.env[contract.WebhookProviderVar])
		}
		if err != nil {
			return nil, err
		}
		facts = append(facts, got...)
		for k, v := range h.effects.effects(path) {
			effects[k] += v
		}
	}
	rep.count(facts, effects)
	rep.Requests, rep.Replays, rep.Conflicts = int(h.requests.Load()), int(h.replays.Load()), int(h.conflicts.Load())
	rep.Unauthorized, rep.Unexpected, rep.CallersIsolated = int(h.unauthorized.Load()), int(h.unexpected.Load()), int(h.isolated.Load())
	rep.Mismatches = int(h.mismatches.Load())
	return rep, nil
}

// oneAtATime is a proxy to kumo that passes one request at a time, the
// endpoints' Secrets Manager: kumo v0.33.1's GetSecretValue writes the
// secret's LastAccessedDate without a lock, a data race (one the race
// detector reports in kumo's own code) when the execution environments of
// an endpoint read its secret at init together.
func oneAtATime(target string) (*httptest.Server, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	var mu sync.Mutex
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		proxy.ServeHTTP(w, r)
	})), nil
}
