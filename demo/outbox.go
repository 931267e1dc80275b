package main

import (
	"fmt"

	"github.com/idempotent-consumer/idempotent-consumer/demo/local"
)

// printOutbox prints the outbox's row: the orders table's stream and its
// consumer (demo/local/streams.go).
func printOutbox(o *local.OutboxReport) {
	if o == nil {
		return
	}
	fmt.Printf("\n%-13s %7s %10s %8s %9s %9s %9s %6s %7s %6s\n", "consumer", "changes", "deliveries", "replayed", "partial", "processed", "duplicate", "failed", "doubles", "lost")
	fmt.Printf("%-13s %7d %10d %8d %9d %9d %9d %6d %7d %6d\n", o.Name, o.Changes, o.Deliveries, o.Replayed, o.PartialResponses,
		o.Outcomes["Processed"], o.Outcomes["Duplicate"], o.Outcomes["Failed"], o.Doubles, o.Lost)
	fmt.Println("  the outbox: ChargeOrder writes each order it charges into the orders table; its stream feeds NotifyCharge, driven by our model of")
	fmt.Println("  Lambda's stream event source (internal/streampoll: checkpoint, lowest failed sequence number, replay of every later record; no")
	fmt.Printf("  bisection, record age, on-failure bucket or resharding). The notices API failed %d first attempts: each partial batch response\n", o.Injected)
	fmt.Println("  replayed the records after the failed one, absorbed as duplicates (replayed = duplicates + the failed records' retries)")
}
