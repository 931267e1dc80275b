package local

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// TestDemoEndToEnd is the short version of `make demo`: the synthesized
// OrdersPlatform stack on kumo, its three handlers under the Lambda runtime
// interface emulator, orders with every injected cause of duplicates, and
// poison messages. It needs `make synth` (cdk.out) and `make tools` (the
// emulator), which `make test` runs first.
func TestDemoEndToEnd(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cdk.out", "OrdersPlatform.template.json")); err != nil {
		t.Fatalf("no synthesized template (%v): run `make synth` first", err)
	}
	var progress strings.Builder
	rep, err := Run(context.Background(), Options{SourceDir: root, Orders: 60, Seed: 7, Timeout: 3 * time.Minute, Progress: &progress})
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	t.Log(rep.Line())
	if !rep.OK() {
		t.Fatalf("double_effects=%d lost=%d poison_not_in_dlq=%d\n%+v", rep.DoubleEffects, rep.Lost, rep.PoisonLost, rep.Consumers)
	}
	if len(rep.Consumers) != 3 {
		t.Fatalf("%d consumers ran, want the stack's 3", len(rep.Consumers))
	}
	for _, c := range rep.Consumers {
		// Each order is processed once, except that an invocation that ends
		// in a function error or a timeout after completing records (a slow
		// machine) reports nothing, and those records come back as
		// duplicates: at most a batch (10, the app's batch size) each.
		processed := c.Outcomes["Processed"]
		if c.Effects != rep.Orders || processed > rep.Orders || processed < rep.Orders-appBatchSize*int(c.BatchErrors) {
			t.Errorf("%s: effects=%d processed=%d (%d batches ended in an error), want %d effects and as many processed, less at most %d per failed batch",
				c.Name, c.Effects, processed, c.BatchErrors, rep.Orders, appBatchSize)
		}
		if c.DLQ != 3 || c.DLQValid != 0 {
			t.Errorf("%s: %d messages dead-lettered (%d valid orders), want exactly the 3 poison messages", c.Name, c.DLQ, c.DLQValid)
		}
	}
	if rep.DuplicatesAbsorbed == 0 || rep.Deliveries <= 3*rep.Orders {
		t.Errorf("duplicates_absorbed=%d deliveries=%d: the injected causes produced no duplicates", rep.DuplicatesAbsorbed, rep.Deliveries)
	}
	if rep.Injected["producer retry"] == 0 {
		t.Errorf("no producer retry injected: %v", rep.Injected)
	}
	// The totals are across the consumers, and the last line says them.
	if rep.Effects != len(rep.Consumers)*rep.Orders || rep.Published != rep.Orders+rep.Injected["producer retry"]+rep.Injected["poison messages"] {
		t.Errorf("effects=%d published=%d, want %d effects (every consumer's) and the orders, retries and poison published", rep.Effects, rep.Published, 3*rep.Orders)
	}
	if line := rep.Line(); !strings.Contains(line, "consumers=3 ") || !strings.Contains(line, fmt.Sprintf(" effects=%d ", 3*rep.Orders)) ||
		!strings.Contains(line, " double_effects=0 lost=0 ") {
		t.Errorf("last line %q: want the totals across consumers and double_effects=0 lost=0", line)
	}
	checkSources(t, rep) // sources_test.go
	checkOutbox(t, rep)  // streams_test.go
	checkHTTP(t, rep)    // endpoints_test.go
	checkSaga(t, root, rep)
	checkRegions(t, rep) // regions_test.go
	// A newcomer sees what the demo does from its first second: the
	// template read before anything slow, each handler's build, publishing,
	// and what the drain waits for (the poison messages' receives).
	lines := strings.Split(progress.String(), "\n")
	if !strings.HasPrefix(lines[0], "demo: read ") {
		t.Errorf("first progress line %q, want the template read, before provisioning and builds", lines[0])
	}
	for _, want := range []string{"building its handler", "execution environments started", "waiting until every consumer has made its effect",
		"draining: waiting until every queue is empty", "poison: ", " at receive ", " of 5", "drained: "} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress does not say %q:\n%s", want, progress.String())
		}
	}
}

// TestOutage: the payment API refuses every charge in its outage (503, no
// charge made) and serves again after it; a valid order dead-lettered in a
// run with an outage fails the run, and the last line says the outage's
// figures beside the topic's totals. (make demo runs the outage end to end:
// DESIGN.md, "In the demo".)
func TestOutage(t *testing.T) {
	p := newPaymentProvider(func(string) bool { return false }, nil, 0)
	charge := func() int {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/charges", strings.NewReader(`{"orderId":"o-1","amount":5}`))
		r.Header.Set("Idempotency-Key", "k-1")
		p.ServeHTTP(w, r)
		return w.Code
	}
	p.startOutage(time.Hour)
	p.startOutage(time.Nanosecond) // a later call changes nothing
	if got := charge(); got != http.StatusServiceUnavailable {
		t.Fatalf("a charge in the outage: %d, want 503", got)
	}
	if n, _ := p.charges(); n != 0 || p.refused != 1 {
		t.Fatalf("charges %d, refused %d in the outage; want none made, one refused", n, p.refused)
	}
	p.up = time.Now() // the outage ends
	if got := charge(); got != http.StatusOK {
		t.Fatalf("a charge after the outage: %d, want 200", got)
	}
	rep := &Report{Outage: &OutageReport{Down: DefaultOutage, Refused: 1}}
	if !rep.OK() || !strings.Contains(rep.Line(), " dlq=0 outage: payment_api_down=30m0s refused=1 dead_lettered=0") {
		t.Fatalf("OK %t, line %q", rep.OK(), rep.Line())
	}
	rep.Outage.DeadLettered = 1
	if rep.OK() {
		t.Fatal("a valid order dead-lettered by the outage passed the run")
	}
}

func TestLoadStackRefusesWhatItCannotRun(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadStack(dir, "Missing"); err == nil || !strings.Contains(err.Error(), "make synth") {
		t.Fatalf("missing template: %v", err)
	}
	tpl := `{"Resources":{"Q":{"Type":"AWS::SQS::Queue","Properties":{}},"T":{"Type":"AWS::SNS::Topic"}}}`
	if err := os.WriteFile(filepath.Join(dir, "S.template.json"), []byte(tpl), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadStack(dir, "S"); err == nil || !strings.Contains(err.Error(), "no SQS event-source mapping") {
		t.Fatalf("template without a mapping: %v", err)
	}
}

// TestPartialBatchResponse: what the poller deletes and leaves, as Lambda's
// event-source mapping does.
func TestPartialBatchResponse(t *testing.T) {
	p := &poller{m: &Mapping{ReportBatchItemFailures: true}}
	event := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "a"}, {MessageId: "b"}}}
	failed, err := p.failures([]byte(`{"batchItemFailures":[{"itemIdentifier":"b"}]}`), event)
	if err != nil || !failed["b"] || failed["a"] {
		t.Fatalf("partial failure: %v, %v", failed, err)
	}
	for _, invalid := range []string{`not json`, `{"batchItemFailures":[{"itemIdentifier":"zzz"}]}`, `{"batchItemFailures":[{"itemIdentifier":""}]}`} {
		if _, err := p.failures([]byte(invalid), event); err == nil {
			t.Errorf("response %s accepted; an invalid response must leave the whole batch", invalid)
		}
	}
	if got := errorType([]byte(`{"errorType":"Runtime.ExitError","errorMessage":"exit status 2"}`)); got != "Runtime.ExitError: exit status 2" {
		t.Errorf("function error read as %q", got)
	}
	p.m.ReportBatchItemFailures = false
	if failed, err := p.failures([]byte(`null`), event); err != nil || len(failed) != 0 {
		t.Errorf("without ReportBatchItemFailures any answer is a success: %v, %v", failed, err)
	}
}

// appBatchSize is the batch size of the demo app's consumers (the
// construct's default).
const appBatchSize = 10
