package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// TestSmallRun is the measurement in small: 300 records through the real
// bootstrap under aws-lambda-rie at 128 MB (in a memory cgroup where one
// can be made), as one batch and as batches of 10. Every record must be
// answered as done, its effect in the ledger once, the bootstrap must not
// have been restarted or killed, and its peak RSS must have been read.
func TestSmallRun(t *testing.T) {
	specs, err := plan(300, "128", "10000,10", "tuned", "envelope")
	if err != nil {
		t.Fatal(err)
	}
	g, err := newRig("", true)
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	t.Log(g.header())
	for i, sp := range specs {
		r, err := g.run(context.Background(), sp)
		if err != nil {
			t.Fatalf("run %+v: %v", sp, err)
		}
		t.Log(r.line())
		wantInvocations := []int{1, 30}[i]
		if !r.complete() || r.invocations != wantInvocations || r.restarts != 0 || r.oomKills != 0 {
			t.Errorf("batches of %d: %d invocations (want %d), %d answered and %d in the ledger of %d, errors %q, %d restarts, %d OOM kills",
				sp.batch, r.invocations, wantInvocations, r.answered, r.ledger, r.records, r.failed, r.restarts, r.oomKills)
		}
		if r.peakRSS <= 0 || g.enforce && r.cgroupPeak <= 0 {
			t.Errorf("batches of %d: peak RSS %d, cgroup peak %d: not measured", sp.batch, r.peakRSS, r.cgroupPeak)
		}
	}
}

// TestBatchesFitThePayloadLimit: a mapping of batch size 10,000 hands the
// run over in payloads of at most 6 MB, each as full as the limit allows,
// every record once and in order.
func TestBatchesFitThePayloadLimit(t *testing.T) {
	m := newMessages(1, "raw")
	next := m.batches(maxBatchRecords, maxBatchRecords)
	seen := 0
	for {
		payload, n, err := next()
		if err != nil {
			t.Fatal(err)
		}
		if payload == nil {
			break
		}
		var ev events.SQSEvent
		if err := json.Unmarshal(payload, &ev); err != nil || len(ev.Records) != n {
			t.Fatalf("payload of %d records decodes to %d (%v)", n, len(ev.Records), err)
		}
		if ev.Records[0].MessageId != m.record(seen).MessageId {
			t.Fatalf("batch starts with %s, want record %d", ev.Records[0].MessageId, seen)
		}
		seen += n
		rec, _ := json.Marshal(m.record(seen))
		if len(payload) > maxPayloadBytes || seen < maxBatchRecords && len(payload)+1+len(rec) <= maxPayloadBytes {
			t.Fatalf("payload of %d bytes, %d records: over the limit, or room left for the next record (%d bytes)", len(payload), n, len(rec))
		}
	}
	if seen != maxBatchRecords {
		t.Fatalf("%d records handed over, want %d", seen, maxBatchRecords)
	}
}

// TestPlanRefusesWhatAMappingCannotDo: a batch over 10,000 records, an
// unknown policy and a non-positive size are errors, not runs.
func TestPlanRefusesWhatAMappingCannotDo(t *testing.T) {
	for _, c := range []struct{ memory, batches, gc, delivery string }{
		{"128", "10001", "tuned", "raw"},
		{"128", "10", "gogc400", "raw"},
		{"0", "10", "tuned", "raw"},
		{"128", "10", "tuned", "eventbridge"},
	} {
		if _, err := plan(100, c.memory, c.batches, c.gc, c.delivery); err == nil {
			t.Errorf("plan(%q, %q, %q, %q) made runs", c.memory, c.batches, c.gc, c.delivery)
		}
	}
	specs, err := plan(100, "128,256", "10000,10", "tuned,nolimit", "envelope,raw")
	if err != nil || len(specs) != 16 {
		t.Fatalf("%d runs (%v), want 16", len(specs), err)
	}
}
