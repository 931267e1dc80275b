package local

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkHTTP checks the endpoints' part of TestDemoEndToEnd: both endpoints
// of the template ran, each Stripe event and each caller's order had one
// effect through the retries, the concurrent requests and the shared keys.
func checkHTTP(t *testing.T, rep *Report) {
	t.Helper()
	h := rep.HTTP
	if h == nil {
		t.Fatal("the run has no HTTP part: the template's endpoints did not run")
	}
	t.Logf("http: %+v", *h)
	n := rep.Orders
	if h.Endpoints != 2 || h.Facts != 3*n || h.Effects != 3*n || h.Doubles != 0 || h.Lost != 0 || h.Unexpected != 0 {
		t.Errorf("http: %d endpoints, %d facts, %d effects (%d doubles, %d lost, %d unexpected answers), want 2 endpoints and one effect for each of %d facts",
			h.Endpoints, h.Facts, h.Effects, h.Doubles, h.Lost, h.Unexpected, 3*n)
	}
	// Stripe's retry of each event, and the checkout's two identical
	// requests and its retry from a new session, each replayed (or first
	// answered 409, then replayed).
	if h.Replays != 4*n || h.Conflicts == 0 || h.Unauthorized != 1 || h.Mismatches != n || h.CallersIsolated != n || h.Pairs != n {
		t.Errorf("http: %d replays (want %d), %d conflicts (want some), %d unauthorized (want the forged delivery), %d mismatches, %d of %d callers isolated (want %d)",
			h.Replays, 4*n, h.Conflicts, h.Unauthorized, h.Mismatches, h.CallersIsolated, h.Pairs, n)
	}
	if line := rep.Line(); !strings.Contains(line, " http: requests=") || !strings.Contains(line, fmt.Sprintf(" callers_isolated=%d double_effects=0 lost=0", n)) {
		t.Errorf("last line %q: want the http part", line)
	}
}

// TestHTTPCheckCanFail: the endpoints' check sees a double effect (the guard
// bypassed: a retry ran the effect again), a lost fact, and a caller given
// another's answer, and each fails the run and shows in the last line.
func TestHTTPCheckCanFail(t *testing.T) {
	facts := []string{"hook-0", "api-0-checkout", "api-0-partner"}
	ok := &HTTPReport{Pairs: 1, CallersIsolated: 1}
	ok.count(facts, map[string]int{"hook-0": 1, "api-0-checkout": 1, "api-0-partner": 1})
	if !ok.OK() || !(&Report{HTTP: ok}).OK() || !strings.HasSuffix(ok.line(), "double_effects=0 lost=0") {
		t.Fatalf("a clean run fails: %+v %s", ok, ok.line())
	}
	bypassed := &HTTPReport{Pairs: 1, CallersIsolated: 1}
	bypassed.count(facts, map[string]int{"hook-0": 2, "api-0-checkout": 1, "api-0-partner": 1})
	lost := &HTTPReport{Pairs: 1, CallersIsolated: 1}
	lost.count(facts, map[string]int{"hook-0": 1, "api-0-checkout": 1})
	shared := &HTTPReport{Pairs: 1, CallersIsolated: 0, Unexpected: 1}
	shared.count(facts, map[string]int{"hook-0": 1, "api-0-checkout": 1, "api-0-partner": 1})
	for name, c := range map[string]struct {
		rep  *HTTPReport
		want string
	}{
		"double effect": {bypassed, "double_effects=1 lost=0"},
		"lost":          {lost, "double_effects=0 lost=1"},
		"shared key":    {shared, "callers_isolated=0 "},
	} {
		if c.rep.OK() || (&Report{HTTP: c.rep}).OK() || !strings.Contains(c.rep.line(), c.want) {
			t.Errorf("%s: OK %v, line %q (want %q)", name, c.rep.OK(), c.rep.line(), c.want)
		}
	}
}

// TestLoadStackReadsTheEndpoints: the app's golden template's function URL
// and HTTP API route are read as the demo runs them: Stripe's webhook on a
// URL with auth NONE, the orders API on POST /orders behind IAM, each
// naming its function; the webhook's secret is a secret of the template.
func TestLoadStackReadsTheEndpoints(t *testing.T) {
	dir := filepath.Join("..", "..", "cdk.out")
	if _, err := os.Stat(filepath.Join(dir, "OrdersPlatform.template.json")); err != nil {
		t.Fatalf("no synthesized template (%v): run `make synth` first", err)
	}
	s, err := LoadStack(dir, "OrdersPlatform")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ep := range s.Endpoints {
		got[s.Functions[ep.Function].Name] = ep.AuthType + " " + ep.RouteKey
	}
	if fmt.Sprint(got) != "map[OrdersApi:AWS_IAM POST /orders StripeHooks:NONE ]" {
		t.Errorf("endpoints %v", got)
	}
	if len(s.Secrets) != 1 {
		t.Errorf("secrets %v, want the Stripe signing secret", s.Secrets)
	}
}
