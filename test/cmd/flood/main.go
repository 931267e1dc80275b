// Command flood measures what a flood of unsigned (or forged) requests does
// to a webhook's signed deliveries at the endpoint construct's defaults. The
// webhook is a Stripe endpoint built as deployed (endpoint.FromEnv from the
// contract: WebhookProvider "stripe", ClientAttribute "none", the provider's
// window, the secret read at init, the default JSON logger), its store on
// kumo's DynamoDB started in process. In front of it stands a model of
// Lambda's reserved concurrency: -slots slots (the construct's default, 10);
// a request that finds every slot busy is answered 429 at once, as Lambda
// answers beyond reserved concurrency; an invocation holds its slot for the
// handler's real time here plus -overhead, Lambda's own per-invocation time
// (the runtime API's round trips, the function URL's work), which cannot be
// measured here, so each run is repeated for every value of -overheads.
//
// An open-loop generator sends Poisson arrivals: N refused requests a second
// for each N of -rates, and -signed signed deliveries a second (each a new
// event), for -duration (at most -max refused requests a run). For each
// (overhead, N) it prints the flood's requests sent; the signed deliveries
// sent, delivered and refused 429; the share of all requests refused 429 (the same probability as a
// signed delivery's under Poisson arrivals, from many more samples) beside
// Erlang's B formula for the slots' measured mean hold time and the rate of
// the requests that reached them (what the slots alone refuse on a machine
// whose stalls do not bunch the arrivals); the handler
// time of a refusal (median and 99th percentile); the mean slots held; and
// the generator's 99th percentile lag behind its schedule (a lag near the
// mean gap between arrivals says that the machine, not the model, set the
// rate). With -envrps, Lambda's invoke rate quota stands before the slots
// (a token bucket: its documented rate, a burst of our choosing). Everything
// runs in this process or on loopback:
//
//	go run ./cmd/flood -rates 100,500,1000,2000,5000 -overheads 0,1ms,5ms
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/endpoint"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook/webhooktest"
	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

// secret is the webhook's signing secret; secretARN names it in the
// contract.
const (
	secret    = "whsec_flood"
	secretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:stripe-AbCdEf"
)

func main() {
	var c config
	rates := flag.String("rates", "100,500,1000,2000,5000", "refused requests a second, one run each (comma-separated)")
	overheads := flag.String("overheads", "0,1ms,5ms", "Lambda's per-invocation overhead added to each slot's hold, one run each (comma-separated durations)")
	flag.IntVar(&c.slots, "slots", 10, "reserved concurrency: the slots; a request finding none free is answered 429")
	flag.Float64Var(&c.signed, "signed", 5, "signed deliveries a second, each a new event")
	flag.DurationVar(&c.duration, "duration", 4*time.Second, "how long each run sends")
	flag.IntVar(&c.max, "max", 25000, "at most this many refused requests a run")
	flag.StringVar(&c.forge, "forge", "wrong", `what the flood sends: "none" (no Stripe-Signature) or "wrong" (signed with a wrong secret, a fresh timestamp: the HMAC runs)`)
	flag.IntVar(&c.body, "body", 0, "the flood's body size in bytes (0: a Stripe event's, about 1 KB; at most 1 MiB − 1)")
	flag.Float64Var(&c.envRPS, "envrps", 0, "Lambda's invoke rate quota per execution environment (10: \"each instance of your execution environment can serve up to 10 requests per second\"), a token bucket of -slots × envrps a second holding one second's worth; 0 models reserved concurrency alone")
	seed := flag.Uint64("seed", 1, "the arrivals' random seed")
	flag.Parse()
	c.rng = rand.New(rand.NewPCG(*seed, 0))
	if err := run(c, *rates, *overheads, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "flood:", err)
		os.Exit(1)
	}
}

type config struct {
	slots    int
	signed   float64
	duration time.Duration
	max      int
	forge    string
	body     int
	envRPS   float64
	rng      *rand.Rand
}

func run(c config, rates, overheads string, out io.Writer) error {
	var ns []float64
	for _, f := range strings.Split(rates, ",") {
		n, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || n < 0 {
			return fmt.Errorf("-rates: %q is not a rate", f)
		}
		ns = append(ns, n)
	}
	var ohs []time.Duration
	for _, f := range strings.Split(overheads, ",") {
		f = strings.TrimSpace(f)
		if f == "0" {
			f = "0s"
		}
		d, err := time.ParseDuration(f)
		if err != nil || d < 0 {
			return fmt.Errorf("-overheads: %q is not a duration", f)
		}
		ohs = append(ohs, d)
	}
	if c.slots < 1 || c.signed <= 0 || c.duration <= 0 || c.max < 1 {
		return fmt.Errorf("-slots, -signed, -duration and -max must be positive")
	}
	flood, err := floodEvent(c.forge, c.body)
	if err != nil {
		return err
	}
	w, err := newWebhook()
	if err != nil {
		return err
	}
	defer w.stop()
	if err := w.warm(flood); err != nil {
		return err
	}
	limit := "reserved concurrency alone"
	if c.envRPS > 0 {
		limit = fmt.Sprintf("and an invoke rate quota of %.0f/s", c.envRPS*float64(c.slots))
	}
	fmt.Fprintf(out, "flood: Stripe webhook as deployed (endpoint.FromEnv, kumo DynamoDB in process); %d slots %s; flood %q of %d bytes; %.0f signed/s; %s a run; Poisson arrivals\n",
		c.slots, limit, c.forge, len(flood.Body), c.signed, c.duration)
	const row = "%8s %6s %8s %7s %9s %8s %7s %7s %9s %9s %6s %9s\n"
	fmt.Fprintf(out, row, "overhead", "N/s", "flood", "signed", "signed", "signed", "all", "Erlang", "refusal", "refusal", "slots", "gen lag")
	fmt.Fprintf(out, row, "", "", "sent", "sent", "delivered", "429 %", "429 %", "B %", "p50", "p99", "held", "p99")
	for _, oh := range ohs {
		for _, n := range ns {
			r, err := w.run(c, n, oh, flood)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, row, oh, fmt.Sprintf("%.0f", n), strconv.Itoa(r.refusedSent), strconv.Itoa(r.signedSent), strconv.Itoa(r.signedOK),
				fmt.Sprintf("%.1f", pct(r.signed429, r.signedSent)), fmt.Sprintf("%.1f", pct(r.all429, r.refusedSent+r.signedSent)),
				fmt.Sprintf("%.1f", 100*erlangB(r.offered, c.slots)), r.refusalP50.Round(time.Microsecond), r.refusalP99.Round(time.Microsecond),
				fmt.Sprintf("%.2f", r.busy), r.lagP99.Round(time.Microsecond))
		}
	}
	return nil
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// erlangB is the share of Poisson arrivals refused by c servers under the
// offered load a (arrival rate × mean hold time), nothing queued: Lambda's
// reserved concurrency answers 429 at once.
func erlangB(a float64, c int) float64 {
	b := 1.0
	for k := 1; k <= c; k++ {
		b = a * b / (float64(k) + a*b)
	}
	return b
}

// webhook is the endpoint under test and what stops its store.
type webhook struct {
	h       *httpkey.Handler
	effects atomic.Int64
	events  atomic.Int64
	stop    func()
}

func newWebhook() (*webhook, error) {
	cl, stop := kumotest.Start()
	table, err := kumotest.NewTable(context.Background(), cl.DynamoDB, "flood")
	if err != nil {
		stop()
		return nil, err
	}
	s := contract.Defaults(30 * time.Second)
	s.Table, s.Namespace, s.Consumer, s.Source = table, "stripe", "StripeHooks", contract.SourceHTTP
	s.WebhookProvider, s.WebhookSecret, s.ClientAttribute = "stripe", secretARN, contract.ClientNone
	s.Window = contract.ProviderWindow("stripe")
	env := s.Encode()
	w := &webhook{stop: stop}
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(cl.URL),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test", Source: "flood"}, nil
		})}
	w.h, err = endpoint.FromEnv(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		w.effects.Add(1)
		rw.WriteHeader(http.StatusOK)
	}),
		handler.WithGetenv(func(k string) string { return env[k] }),
		handler.WithAWSConfig(cfg),
		endpoint.WithSecrets(func(_ context.Context, arn string) (string, error) {
			if arn != secretARN {
				return "", fmt.Errorf("no secret %s", arn)
			}
			return secret, nil
		}),
		// The default logger's JSON lines, written nowhere: their cost
		// counts, their bytes would drown the table.
		handler.WithLogger(outcome.NewLogger(io.Discard, slog.LevelInfo)),
		handler.WithMetrics(io.Discard))
	if err != nil {
		stop()
		return nil, err
	}
	return w, nil
}

// warm opens the store's connections and runs each path once, as a warm
// function has, before the runs measure it.
func (w *webhook) warm(flood events.LambdaFunctionURLRequest) error {
	for range 3 {
		if res, err := w.h.FunctionURL(context.Background(), event(stripeBody("evt_warm_"+strconv.FormatInt(w.events.Add(1), 10)), secret)); err != nil || res.StatusCode != http.StatusOK {
			return fmt.Errorf("warming: a signed delivery: %d %s %v", res.StatusCode, res.Body, err)
		}
		if res, err := w.h.FunctionURL(context.Background(), flood); err != nil || res.StatusCode != http.StatusUnauthorized {
			return fmt.Errorf("warming: the flood's request: %d %s %v", res.StatusCode, res.Body, err)
		}
	}
	return nil
}

// stripeBody is a Stripe event of about 1 KB, id its event id.
func stripeBody(id string) string {
	return `{"id":"` + id + `","object":"event","api_version":"2024-06-20","created":1764590400,"data":{"object":{"id":"pi_3NG8Du2eZvKYlo2C0kdlB2Vq","object":"payment_intent","amount":5000,"amount_capturable":0,"amount_received":5000,"capture_method":"automatic","client_secret":"pi_3NG8Du2eZvKYlo2C0kdlB2Vq_secret_redacted","confirmation_method":"automatic","created":1764590390,"currency":"eur","customer":"cus_42","description":"Order 42","latest_charge":"ch_3NG8Du2eZvKYlo2C0V1yMfBn","livemode":false,"metadata":{"orderId":"o-42"},"payment_method":"pm_1NG8Dt2eZvKYlo2CtrU6v7ZS","payment_method_types":["card"],"receipt_email":"a@example.com","status":"succeeded"}},"livemode":false,"pending_webhooks":1,"request":{"id":"req_8Xq3Lf1o2Pj9Ab","idempotency_key":"5b1f6c2e-0d9a-4e43-9c61-2f4a7d1e8b90"},"type":"payment_intent.succeeded"}`
}

// event is the function URL event of a delivery of body (auth NONE, as a
// webhook's URL), signed now under key ("" for no signature).
func event(body, key string) events.LambdaFunctionURLRequest {
	headers := map[string]string{"content-type": "application/json; charset=utf-8", "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)"}
	if key != "" {
		headers["stripe-signature"] = webhooktest.Stripe([]byte(body), time.Now(), key).Get("Stripe-Signature")
	}
	return events.LambdaFunctionURLRequest{Version: "2.0", RawPath: "/hooks/stripe", Body: body, Headers: headers,
		RequestContext: events.LambdaFunctionURLRequestContext{RequestID: "r", HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/hooks/stripe"}}}
}

// floodEvent is the flood's one request: unsigned, or signed with a wrong
// secret (a timestamp of now, valid for Stripe's 5 minutes' tolerance, longer
// than any run), its body padded to size bytes.
func floodEvent(forge string, size int) (events.LambdaFunctionURLRequest, error) {
	body := stripeBody("evt_flood")
	switch {
	case size >= contract.DefaultMaxRequestBytes:
		return events.LambdaFunctionURLRequest{}, fmt.Errorf("-body %d: the handler answers 413 from %d bytes", size, contract.DefaultMaxRequestBytes)
	case size > len(body)+10:
		body = body[:len(body)-1] + `,"pad":"` + strings.Repeat("x", size-len(body)-9) + `"}`
	}
	switch forge {
	case "none":
		return event(body, ""), nil
	case "wrong":
		return event(body, "whsec_guessed"), nil
	}
	return events.LambdaFunctionURLRequest{}, fmt.Errorf(`-forge %q: give "none" or "wrong"`, forge)
}

// result is one run's figures.
type result struct {
	refusedSent, signedSent, signedOK, signed429, all429 int
	quota429                                             int // refused by the rate quota, before the slots
	refusalP50, refusalP99, lagP99                       time.Duration
	busy, offered                                        float64 // mean slots held; arrivals a second × mean hold
}

// run sends n flood requests a second and c.signed signed deliveries a
// second for c.duration through a fresh set of c.slots slots, each
// invocation holding its slot for the handler's time plus overhead.
func (w *webhook) run(c config, n float64, overhead time.Duration, flood events.LambdaFunctionURLRequest) (result, error) {
	var (
		r        result
		slots    = make(chan struct{}, c.slots)
		mu       sync.Mutex
		refusals []time.Duration
		holds    []time.Duration
		lags     []time.Duration
		odd      []string
		wg       sync.WaitGroup
	)
	invoke := func(ev events.LambdaFunctionURLRequest, signed bool) {
		defer wg.Done()
		t0 := time.Now()
		res, err := w.h.FunctionURL(context.Background(), ev)
		took := time.Since(t0)
		if overhead > 0 {
			time.Sleep(overhead)
		}
		hold := time.Since(t0)
		<-slots
		mu.Lock()
		defer mu.Unlock()
		holds = append(holds, hold)
		switch {
		case err != nil:
			odd = append(odd, err.Error())
		case signed && res.StatusCode == http.StatusOK:
			r.signedOK++
		case !signed && res.StatusCode == http.StatusUnauthorized:
			refusals = append(refusals, took)
		default:
			odd = append(odd, fmt.Sprintf("signed %v: %d %s", signed, res.StatusCode, res.Body))
		}
	}
	rate := c.envRPS * float64(c.slots)
	tokens, filled := rate, time.Now()
	send := func(ev events.LambdaFunctionURLRequest, signed bool) {
		if rate > 0 { // the invoke rate quota, before any slot
			now := time.Now()
			tokens, filled = min(rate, tokens+now.Sub(filled).Seconds()*rate), now
			if tokens < 1 {
				mu.Lock()
				r.all429++
				r.quota429++
				if signed {
					r.signed429++
				}
				mu.Unlock()
				return
			}
			tokens--
		}
		select {
		case slots <- struct{}{}:
			wg.Add(1)
			go invoke(ev, signed)
		default: // every slot busy: Lambda's 429, at once
			mu.Lock()
			r.all429++
			if signed {
				r.signed429++
			}
			mu.Unlock()
		}
	}
	gap := func(rate float64) time.Duration {
		if rate <= 0 {
			return time.Duration(math.MaxInt64)
		}
		return time.Duration(c.rng.ExpFloat64() / rate * float64(time.Second))
	}
	start := time.Now()
	nextFlood, nextSigned := gap(n), gap(c.signed)
	for {
		floodDone := nextFlood >= c.duration || r.refusedSent >= c.max
		signedDone := nextSigned >= c.duration
		if floodDone && signedDone {
			break
		}
		signed := floodDone || (!signedDone && nextSigned < nextFlood)
		at := nextFlood
		if signed {
			at = nextSigned
		}
		if d := time.Until(start.Add(at)); d > 0 {
			time.Sleep(d)
		}
		lags = append(lags, time.Since(start)-at)
		if signed {
			r.signedSent++
			send(event(stripeBody("evt_"+strconv.FormatInt(w.events.Add(1), 10)), secret), true)
			nextSigned += gap(c.signed)
		} else {
			r.refusedSent++
			send(flood, false)
			nextFlood += gap(n)
		}
	}
	elapsed := time.Since(start)
	wg.Wait()
	if len(odd) > 0 {
		return r, fmt.Errorf("N=%.0f, overhead %s: %d unexpected answers, the first: %s", n, overhead, len(odd), odd[0])
	}
	var held time.Duration
	for _, h := range holds {
		held += h
	}
	r.busy = held.Seconds() / elapsed.Seconds()
	if len(holds) > 0 {
		r.offered = float64(r.refusedSent+r.signedSent-r.quota429) / elapsed.Seconds() * held.Seconds() / float64(len(holds))
	}
	r.refusalP50, r.refusalP99 = quantile(refusals, 0.5), quantile(refusals, 0.99)
	r.lagP99 = quantile(lags, 0.99)
	return r, nil
}

func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[int(q*float64(len(ds)-1))]
}
