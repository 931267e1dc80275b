// Command demo runs the example platform's whole fan-out on this machine,
// with no AWS account: the synthesized OrdersPlatform template provisioned on
// kumo (SNS, SQS, DynamoDB), each consumer's handler under the Lambda runtime
// interface emulator, and pollers that act as Lambda's SQS event-source
// mapping. It publishes orders with the real causes of duplicates (producer
// retries, crashes before the delete, visibility timeouts that expire during
// a slow effect, an API that fails after charging) and poison messages; it
// calls the template's HTTP endpoints (Stripe's webhook on a function URL,
// the orders API on an HTTP API route) as Stripe and IAM clients do, with
// their retries; then the consumers that can run on a table in multi-Region
// strong consistency run in two Regions on one kumo table, every order
// delivered to both (local/regions.go); then it reports what the consumers
// and endpoints did, the two Regions' part with the simulation's figure for
// an eventual global table beside it. It exits 0 only when no order was
// charged twice, none was lost, every poison message is in a dead-letter
// queue, every Stripe event and every caller's order had exactly one effect,
// and the two Regions had no double effect and lost nothing.
//
// Usage, from the repository root: `make demo` (ORDERS=n for another number
// of orders), which synthesizes the app first; or, after `make synth`, from
// this folder (the demo is a module of its own):
//
//	cd demo && go run . -orders 200
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"

	"github.com/idempotent-consumer/idempotent-consumer/demo/local"
)

func main() {
	var opts local.Options
	flag.IntVar(&opts.Orders, "orders", 200, "valid orders to publish")
	flag.Float64Var(&opts.TimeScale, "timescale", 60, "divide the template's durations by this factor")
	flag.Uint64Var(&opts.Seed, "seed", 1, "seed of the injected faults")
	flag.DurationVar(&opts.Outage, "outage", local.DefaultOutage, "how long the payment API is down, at the template's time scale (0: no outage)")
	flag.IntVar(&opts.Environments, "environments", 2, "execution environments (and pollers) per function")
	flag.StringVar(&opts.SourceDir, "source", "..", "root of the Go module that holds the handlers")
	flag.StringVar(&opts.CDKOut, "cdk-out", "", "cloud assembly directory (default: <source>/cdk.out)")
	flag.StringVar(&opts.RIE, "rie", "", "path of aws-lambda-rie (default: on PATH or <source>/.tools/bin)")
	flag.StringVar(&opts.LogDir, "logs", "", "directory for the functions' logs (default: a temporary one)")
	flag.IntVar(&opts.Sagas, "sagas", 6, "orders that go through the template's saga on Step Functions (at least one per injected fault)")
	flag.Parse()
	opts.Progress = os.Stdout

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := local.Run(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(2)
	}
	print(rep) // its last line is the demo's
	if !rep.OK() {
		os.Exit(1)
	}
}

// columns are the report table's columns, each with its legend.
var columns = []struct{ name, legend string }{
	{"deliveries", "records handed to the consumer's function: one per receive of a message (a message received 5 times counts 5)"},
	{"processed", "records whose effect ran now"},
	{"duplicate", "records of a fact done before: absorbed, the effect did not run again"},
	{"in_progress", "records of a fact another worker holds the lease of: retried later"},
	{"bad_input", "records no retry can fix (not JSON, no key): one per receive, until the queue's redrive dead-letters the message"},
	{"mismatch", "records with a key already used for other content: one per receive, until dead-lettered"},
	{"failed", "records whose effect failed (the payment API's 502): retried"},
	{"effects", "effects seen downstream: charges made by the payment API, e-mails sent, wallet credits"},
	{"doubles", "orders whose effect happened more than once"},
	{"lost", "valid orders with no effect and not in the dead-letter queue"},
	{"dlq", "messages in the consumer's dead-letter queue (the poison ones)"},
}

func print(rep *local.Report) {
	fmt.Printf("\n%-13s", "consumer")
	for _, c := range columns {
		fmt.Printf(" %*s", max(len(c.name), 6), c.name)
	}
	fmt.Println()
	row := func(name string, values ...int) {
		fmt.Printf("%-13s", name)
		for i, v := range values {
			fmt.Printf(" %*d", max(len(columns[i].name), 6), v)
		}
		fmt.Println()
	}
	total := make([]int, len(columns))
	for _, c := range rep.Consumers {
		values := []int{int(c.Deliveries), c.Outcomes["Processed"], c.Outcomes["Duplicate"], c.Outcomes["InProgress"], c.Outcomes["BadInput"],
			c.Outcomes["Mismatch"], c.Outcomes["Failed"], c.Effects, c.Doubles, c.Missing, c.DLQ}
		row(c.Name, values...)
		for i, v := range values {
			total[i] += v
		}
		if c.PoisonLost > 0 || c.DLQValid > 0 || c.BatchErrors > 0 {
			fmt.Printf("  %s: poison_not_in_dlq=%d valid_orders_in_dlq=%d batches_left_whole=%d\n", c.Name, c.PoisonLost, c.DLQValid, c.BatchErrors)
		}
	}
	row("total", total...)
	if len(rep.Sources) > 0 {
		fmt.Printf("\n%-13s %-11s %6s %6s %7s %10s %9s %9s %7s %6s %4s\n", "consumer", "source", "facts", "sent", "retries", "deliveries", "duplicate", "effects", "doubles", "lost", "dlq")
		for _, s := range rep.Sources {
			fmt.Printf("%-13s %-11s %6d %6d %7d %10d %9d %9d %7d %6d %4d\n", s.Name, s.Source, s.Facts, s.Sent, s.Retries, s.Deliveries, s.Duplicates, s.Effects, s.Doubles, s.Lost, s.DLQ)
		}
		fmt.Println("  the other sources: eventbridge puts an OrderPlaced event per order on the bus, and again for some (a producer's retry: a new event id);")
		fmt.Println("  direct sends each order to the queue, and again for some (a new message id); uploads PUTs invoices to presigned URLs, rewrites one")
		fmt.Println("  key with new content (a fact of its own), repeats one notification and sends S3's s3:TestEvent (acknowledged)")
	}
	printOutbox(rep.Outbox) // outbox.go
	fmt.Println()
	for _, c := range columns {
		fmt.Printf("  %-11s %s\n", c.name+":", c.legend)
	}
	fmt.Printf("  %d messages published to the topic (%d orders, %d producer retries, %d poison), each delivered to the %d consumers' queues; elapsed %.1fs\n",
		rep.Published, rep.Orders, rep.Injected["producer retry"], rep.Injected["poison messages"], len(rep.Consumers), rep.Elapsed.Seconds())
	var injected []string
	for k, v := range rep.Injected {
		injected = append(injected, fmt.Sprintf("%s=%d", strings.ReplaceAll(k, " ", "_"), v))
	}
	sort.Strings(injected)
	fmt.Printf("injected: %s\n", strings.Join(injected, " "))
	if s := rep.Saga; s != nil {
		fmt.Printf("  saga: %s on kumo's Step Functions (each Lambda task through the demo's bridge: kumo takes a function error as a result); executions counts the\n", s.Machine)
		fmt.Println("  duplicated start and the redrive; steps every invocation; retries the attempts after a timeout or a retried error; compensations their effects;")
		injected = injected[:0]
		for k, v := range s.Injected {
			injected = append(injected, fmt.Sprintf("%s=%d", k, v))
		}
		sort.Strings(injected)
		fmt.Printf("  saga injected: %s\n", strings.Join(injected, " "))
	}
	if r := rep.Regions; r != nil {
		fmt.Printf("  regions: %d orders to the topic's consumers that can run on an MRSC table (no transactions: not the wallet), each delivered in %s and %s,\n", r.Orders, r.Regions[0], r.Regions[1])
		fmt.Println("  whose bootstraps (AWS_REGION of their Region) share one kumo table: the stand-in for the MRSC table. kumo has no replicas, witness,")
		fmt.Println("  replication, cross-Region latency or ReplicatedWriteConflictException; the simulation has them (make chaos-regions).")
		fmt.Printf("  beside it, the guard on an eventual (MREC) global table, simulated, not run on kumo (cd test && go run ./cmd/chaos -sabotage mrec -seed %d -facts %d):\n", r.MrecSeed, r.MrecFacts)
		fmt.Printf("  %s\n", r.MrecLine)
	}
	fmt.Println(rep.Line())
}
