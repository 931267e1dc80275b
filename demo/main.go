// Command demo runs the example platform's whole fan-out on this machine,
// with no AWS account: the synthesized OrdersPlatform template provisioned on
// kumo (SNS, SQS, DynamoDB), each consumer's handler under the Lambda runtime
// interface emulator, and pollers that act as Lambda's SQS event-source
// mapping. It publishes orders with the real causes of duplicates (producer
// retries, crashes before the delete, visibility timeouts that expire during
// a slow effect, an API that fails after charging) and poison messages, then
// reports what the consumers did. It exits 0 only when no order was charged
// twice, none was lost and every poison message is in a dead-letter queue.
//
// Usage (from the repository root, after `make synth`):
//
//	go run ./demo -orders 200
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
	flag.IntVar(&opts.Environments, "environments", 2, "execution environments (and pollers) per function")
	flag.StringVar(&opts.SourceDir, "source", "..", "root of the Go module that holds the handlers")
	flag.StringVar(&opts.CDKOut, "cdk-out", "", "cloud assembly directory (default: <source>/cdk.out)")
	flag.StringVar(&opts.RIE, "rie", "", "path of aws-lambda-rie (default: on PATH or <source>/.tools/bin)")
	flag.StringVar(&opts.LogDir, "logs", "", "directory for the functions' logs (default: a temporary one)")
	flag.Parse()
	opts.Progress = os.Stdout

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := local.Run(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(2)
	}
	print(rep)
	if !rep.OK() {
		os.Exit(1)
	}
}

func print(rep *local.Report) {
	fmt.Printf("\n%-13s %10s %9s %9s %11s %9s %8s %6s %8s %8s %4s\n", "consumer", "deliveries", "processed", "duplicate", "in_progress", "bad_input", "mismatch", "failed", "effects", "doubles", "dlq")
	for _, c := range rep.Consumers {
		fmt.Printf("%-13s %10d %9d %9d %11d %9d %8d %6d %8d %8d %4d\n", c.Name, c.Deliveries, c.Outcomes["Processed"], c.Outcomes["Duplicate"],
			c.Outcomes["InProgress"], c.Outcomes["BadInput"], c.Outcomes["Mismatch"], c.Outcomes["Failed"], c.Effects, c.Doubles, c.DLQ)
		if c.Missing > 0 || c.PoisonLost > 0 || c.DLQValid > 0 || c.BatchErrors > 0 {
			fmt.Printf("  %s: lost=%d poison_not_in_dlq=%d valid_orders_in_dlq=%d batches_left_whole=%d\n", c.Name, c.Missing, c.PoisonLost, c.DLQValid, c.BatchErrors)
		}
	}
	var injected []string
	for k, v := range rep.Injected {
		injected = append(injected, fmt.Sprintf("%s=%d", strings.ReplaceAll(k, " ", "_"), v))
	}
	sort.Strings(injected)
	fmt.Printf("injected: %s\n", strings.Join(injected, " "))
	fmt.Printf("effects: charges made by the payment API; double_effects: orders charged, e-mailed or credited more than once; elapsed %.1fs\n", rep.Elapsed.Seconds())
	fmt.Println(rep.Line())
}
