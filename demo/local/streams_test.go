package local

import (
	"strings"
	"testing"
)

// checkOutbox checks the outbox of a run (TestDemoEndToEnd): every order
// charged is in the orders table and notified once, the checkpoint's
// replays absorbed as duplicates, and the last line says so.
func checkOutbox(t *testing.T, rep *Report) {
	t.Helper()
	o := rep.Outbox
	if o == nil {
		t.Fatal("the run has no outbox: the stack's stream consumer did not run")
	}
	t.Logf("outbox: %+v", *o)
	if o.Effects != rep.Orders || o.Doubles != 0 || o.Lost != 0 || o.Changes < rep.Orders {
		t.Errorf("outbox: %d changes, %d notices (%d doubles, %d lost), want one notice for each of the %d orders", o.Changes, o.Effects, o.Doubles, o.Lost, rep.Orders)
	}
	if o.Injected == 0 || o.PartialResponses == 0 || o.Replayed == 0 || o.Outcomes["Duplicate"] == 0 {
		t.Errorf("outbox: %d failures injected, %d partial batch responses, %d replayed, %d duplicates absorbed: the run proves nothing of the checkpoint's replays",
			o.Injected, o.PartialResponses, o.Replayed, o.Outcomes["Duplicate"])
	}
	if p := o.Outcomes["Processed"]; p != rep.Orders {
		t.Errorf("outbox: %d changes processed, want one per order (%d): a rewrite of an order is a duplicate", p, rep.Orders)
	}
	if !strings.Contains(rep.Line(), " outbox: changes=") || !strings.HasSuffix(rep.Line(), " double_effects=0 lost=0") {
		t.Errorf("last line %q: want the outbox's part, last", rep.Line())
	}
}
