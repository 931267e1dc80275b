package local

import (
	"encoding/json"
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

// TestLoadStackReadsAStreamMapping: a mapping from a table's stream is the
// outbox's (its batch size and retries read, the table's view type kept),
// not a queue's; a starting position the local run cannot honour is
// refused by name.
func TestLoadStackReadsAStreamMapping(t *testing.T) {
	tpl := func(start string) string {
		return `{"Resources":{
"Q":{"Type":"AWS::SQS::Queue","Properties":{}},
"F":{"Type":"AWS::Lambda::Function","Properties":{},"Metadata":{}},
"M":{"Type":"AWS::Lambda::EventSourceMapping","Properties":{"EventSourceArn":{"Fn::GetAtt":["Q","Arn"]},"FunctionName":{"Ref":"G"}}},
"T":{"Type":"AWS::DynamoDB::Table","Properties":{"KeySchema":[{"AttributeName":"orderId","KeyType":"HASH"}],"StreamSpecification":{"StreamViewType":"NEW_IMAGE"}}},
"S":{"Type":"AWS::Lambda::EventSourceMapping","Properties":{"EventSourceArn":{"Fn::GetAtt":["T","StreamArn"]},"FunctionName":{"Ref":"G"},
  "BatchSize":25,"MaximumRetryAttempts":3,"FunctionResponseTypes":["ReportBatchItemFailures"],"StartingPosition":"` + start + `"}}}}`
	}
	for _, c := range []struct{ start, err string }{{"TRIM_HORIZON", ""}, {"LATEST", "TRIM_HORIZON only"}} {
		var s Stack
		s.Tables = map[string]*Table{}
		var res struct{ Resources map[string]resource }
		if err := json.Unmarshal([]byte(tpl(c.start)), &res); err != nil {
			t.Fatal(err)
		}
		if !isStreamMapping(res.Resources["S"]) || isStreamMapping(res.Resources["M"]) {
			t.Fatal("the stream mapping and the queue's are told apart wrongly")
		}
		if err := s.addTable("T", res.Resources["T"]); err != nil || s.Tables["T"].StreamView != "NEW_IMAGE" || s.Tables["T"].streamSpec() == nil {
			t.Fatalf("table: %v %+v", err, s.Tables["T"])
		}
		err := s.addStreamMapping("S", res.Resources["S"])
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.start, err, c.err)
			}
			continue
		}
		if err != nil || len(s.StreamMappings) != 1 {
			t.Fatalf("%s: %v", c.start, err)
		}
		if m := s.StreamMappings[0]; m.Table != "T" || m.Function != "G" || m.BatchSize != 25 || m.MaxRetries != 3 || !m.ReportBatchItemFailures {
			t.Errorf("mapping %+v", m)
		}
	}
}
