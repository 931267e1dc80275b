package ops_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/aws/smithy-go/encoding/cbor"

	"github.com/idempotent-consumer/idempotent-consumer/ops"
)

// replay is an AWS endpoint that answers each operation with recorded
// responses, in order (the last one again once they run out), and keeps
// the requests: for what kumo does not have (SQS's message move task,
// CloudWatch's metrics, the FIFO attributes of a received message).
type replay struct {
	t         *testing.T
	mu        sync.Mutex
	responses map[string][]string // by operation: JSON bodies (CBOR for CloudWatch, as JSON to encode)
	requests  map[string][]string
	// answer, when set, answers an operation from its request body (a
	// service's rule simulated) before the recorded responses; "" passes.
	answer func(op string, body []byte) string
}

const (
	queueURL = "https://sqs.us-east-1.amazonaws.com/123456789012/orders"
	queueARN = "arn:aws:sqs:us-east-1:123456789012:orders"
	dlqURL   = "https://sqs.us-east-1.amazonaws.com/123456789012/orders-dlq"
	dlqARN   = "arn:aws:sqs:us-east-1:123456789012:orders-dlq"
)

func newReplay(t *testing.T, responses map[string][]string) *replay {
	r := &replay{t: t, responses: map[string][]string{
		"DescribeTable": {`{"Table":{"TableName":"orders-idempotency","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]}}`},
		"GetQueueAttributes": {
			`{"Attributes":{"QueueArn":"` + queueARN + `","RedrivePolicy":"{\"deadLetterTargetArn\":\"` + dlqARN + `\",\"maxReceiveCount\":5}"}}`,
			`{"Attributes":{"QueueArn":"` + dlqARN + `","ApproximateNumberOfMessages":"2"}}`,
		},
	}, requests: map[string][]string{}}
	for k, v := range responses {
		r.responses[k] = v
	}
	return r
}

func (r *replay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	op := req.Header.Get("X-Amz-Target")
	if i := strings.LastIndex(op, "."); i >= 0 {
		op = op[i+1:]
	}
	cborReply := strings.Contains(req.URL.Path, "/operation/")
	if cborReply {
		op = req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
	}
	if rest, ok := strings.CutPrefix(req.URL.Path, "/2015-03-31/functions/"); ok { // Lambda's REST API
		op = "GetFunctionConfiguration/" + strings.TrimSuffix(rest, "/configuration")
	}
	if form, err := url.ParseQuery(string(body)); op == "" && err == nil && form.Get("Action") != "" {
		op = form.Get("Action") // the query protocol (CloudFormation, STS)
	}
	r.mu.Lock()
	r.requests[op] = append(r.requests[op], string(body))
	answers := r.responses[op]
	var answer string
	if r.answer != nil {
		answer = r.answer(op, body)
	}
	if answer == "" && len(answers) > 0 {
		answer = answers[0]
		if len(answers) > 1 {
			r.responses[op] = answers[1:]
		}
	}
	r.mu.Unlock()
	if answer == "" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"UnknownOperationException","message":"not recorded: ` + op + `"}`))
		return
	}
	if cborReply {
		var v any
		if err := json.Unmarshal([]byte(answer), &v); err != nil {
			r.t.Fatal(err)
		}
		w.Header().Set("Smithy-Protocol", "rpc-v2-cbor")
		w.Header().Set("Content-Type", "application/cbor")
		_, _ = w.Write(cbor.Encode(toCBOR(v)))
		return
	}
	if strings.HasPrefix(answer, "<") {
		w.Header().Set("Content-Type", "text/xml")
	} else {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	}
	_, _ = w.Write([]byte(answer))
}

// toCBOR is a decoded JSON value as CBOR.
func toCBOR(v any) cbor.Value {
	switch v := v.(type) {
	case map[string]any:
		m := cbor.Map{}
		for k, e := range v {
			m[k] = toCBOR(e)
		}
		return m
	case []any:
		l := cbor.List{}
		for _, e := range v {
			l = append(l, toCBOR(e))
		}
		return l
	case string:
		return cbor.String(v)
	case float64:
		return cbor.Float64(v)
	case bool:
		return cbor.Bool(v)
	}
	return &cbor.Nil{}
}

func (r *replay) run(args ...string) (int, string, string) {
	srv := httptest.NewServer(r)
	defer srv.Close()
	var out, errOut bytes.Buffer
	full := append([]string{args[0], "--endpoint-url", srv.URL, "--table", "orders-idempotency", "--namespace", "charge", "--consumer", "Shop/Charge", "--queue-url", queueURL, "--dlq-url", dlqURL}, args[1:]...)
	status := ops.Main(full, ops.WithAWSConfig(awsConfig(srv.URL)), ops.WithOutput(&out, &errOut), ops.WithKey(orderKey))
	r.t.Logf("$ idemctl %s\n%s%s(exit %d)", strings.Join(args, " "), out.String(), errOut.String(), status)
	return status, out.String(), errOut.String()
}

func TestRedriveMovesWithAMessageMoveTask(t *testing.T) {
	r := newReplay(t, map[string][]string{
		"ListMessageMoveTasks": {
			`{"Results":[{"Status":"COMPLETED","SourceArn":"` + dlqARN + `","ApproximateNumberOfMessagesMoved":7}]}`,
			`{"Results":[{"Status":"RUNNING","TaskHandle":"h-1","SourceArn":"` + dlqARN + `","ApproximateNumberOfMessagesMoved":1,"ApproximateNumberOfMessagesToMove":3}]}`,
			`{"Results":[{"Status":"COMPLETED","SourceArn":"` + dlqARN + `","ApproximateNumberOfMessagesMoved":3,"ApproximateNumberOfMessagesToMove":3}]}`,
		},
		"StartMessageMoveTask": {`{"TaskHandle":"h-1"}`},
	})
	status, out, errOut := r.run("redrive", "--rate", "20", "--poll", "0")
	if status != ops.ExitOK || !strings.Contains(out, "redriven: 3 messages moved") || !strings.Contains(errOut, "1/3 moved (33%)") || !strings.Contains(errOut, "3/3 moved (100%)") {
		t.Errorf("redrive: exit %d, %q, %q", status, out, errOut)
	}
	var start struct {
		SourceArn, DestinationArn    string
		MaxNumberOfMessagesPerSecond int
	}
	if len(r.requests["StartMessageMoveTask"]) != 1 {
		t.Fatalf("StartMessageMoveTask requests: %q", r.requests["StartMessageMoveTask"])
	}
	if err := json.Unmarshal([]byte(r.requests["StartMessageMoveTask"][0]), &start); err != nil || start.SourceArn != dlqARN || start.DestinationArn != queueARN || start.MaxNumberOfMessagesPerSecond != 20 {
		t.Errorf("StartMessageMoveTask %+v (%v)", start, err)
	}
}

func TestRedriveRefusesWhileATaskRuns(t *testing.T) {
	r := newReplay(t, map[string][]string{
		"ListMessageMoveTasks": {`{"Results":[{"Status":"RUNNING","TaskHandle":"h-0","SourceArn":"` + dlqARN + `","ApproximateNumberOfMessagesMoved":2,"ApproximateNumberOfMessagesToMove":9}]}`},
		"StartMessageMoveTask": {`{"TaskHandle":"h-1"}`},
	})
	status, _, errOut := r.run("redrive")
	if status != ops.ExitRefused || !strings.Contains(errOut, "one task per queue at a time") || !strings.Contains(errOut, "h-0") {
		t.Errorf("redrive while a task runs: exit %d, %q", status, errOut)
	}
	if n := len(r.requests["StartMessageMoveTask"]); n != 0 {
		t.Errorf("%d tasks started beside the running one", n)
	}
}

func TestRedriveReportsAFailedTask(t *testing.T) {
	r := newReplay(t, map[string][]string{
		"ListMessageMoveTasks": {`{"Results":[]}`, `{"Results":[{"Status":"FAILED","SourceArn":"` + dlqARN + `","ApproximateNumberOfMessagesMoved":1,"FailureReason":"AWS.SimpleQueueService.NonExistentQueue"}]}`},
		"StartMessageMoveTask": {`{"TaskHandle":"h-1"}`},
	})
	status, _, errOut := r.run("redrive", "--poll", "0")
	if status == ops.ExitOK || !strings.Contains(errOut, "ended FAILED after 1 messages: AWS.SimpleQueueService.NonExistentQueue") {
		t.Errorf("a failed task: exit %d, %q", status, errOut)
	}
}

// TestRedriveCopyKeepsTheFIFOGroup: the copy sends each message of a FIFO
// dead-letter queue with its group and deduplication ids, attributes and
// trace header, and deletes it only once sent.
func TestRedriveCopyKeepsTheFIFOGroup(t *testing.T) {
	r := newReplay(t, map[string][]string{
		"GetQueueAttributes": {
			`{"Attributes":{"QueueArn":"` + queueARN + `.fifo"}}`,
			`{"Attributes":{"QueueArn":"` + dlqARN + `.fifo","ApproximateNumberOfMessages":"1"}}`,
			`{"Attributes":{"QueueArn":"` + dlqARN + `.fifo","ApproximateNumberOfMessages":"1"}}`,
		},
		"ReceiveMessage": {
			`{"Messages":[{"MessageId":"m-1","ReceiptHandle":"rh-1","Body":"{\"orderId\":\"o-1\"}","Attributes":{"MessageGroupId":"customer-9","MessageDeduplicationId":"d-1","AWSTraceHeader":"Root=1-abc"},"MessageAttributes":{"tenant":{"DataType":"String","StringValue":"acme"}}}]}`,
			`{"Messages":[]}`,
		},
		"SendMessage":   {`{"MessageId":"new-1"}`},
		"DeleteMessage": {`{}`},
	})
	srv := httptest.NewServer(r)
	defer srv.Close()
	var out, errOut bytes.Buffer
	status := ops.Main([]string{"redrive", "--method", "copy", "--endpoint-url", srv.URL, "--table", "orders-idempotency", "--namespace", "charge",
		"--queue-url", queueURL + ".fifo", "--dlq-url", dlqURL + ".fifo"}, ops.WithAWSConfig(awsConfig(srv.URL)), ops.WithOutput(&out, &errOut))
	if status != ops.ExitOK || !strings.Contains(out.String(), "1 messages copied") {
		t.Fatalf("copy: exit %d, %s%s", status, out.String(), errOut.String())
	}
	var sent struct {
		MessageGroupId, MessageDeduplicationId, MessageBody string
		MessageAttributes                                   map[string]struct{ StringValue string }
		MessageSystemAttributes                             map[string]struct{ StringValue string }
	}
	if err := json.Unmarshal([]byte(r.requests["SendMessage"][0]), &sent); err != nil {
		t.Fatal(err)
	}
	if sent.MessageGroupId != "customer-9" || sent.MessageDeduplicationId != "d-1" || sent.MessageBody != `{"orderId":"o-1"}` ||
		sent.MessageAttributes["tenant"].StringValue != "acme" || sent.MessageSystemAttributes["AWSTraceHeader"].StringValue != "Root=1-abc" {
		t.Errorf("sent %+v", sent)
	}
	if len(r.requests["DeleteMessage"]) != 1 || !strings.Contains(r.requests["DeleteMessage"][0], "rh-1") {
		t.Errorf("deletes: %q", r.requests["DeleteMessage"])
	}
}

func TestStatsSumsTheOutcomeMetrics(t *testing.T) {
	r := newReplay(t, map[string][]string{
		"GetMetricData": {`{"MetricDataResults":[{"Id":"m0","Values":[120,3],"StatusCode":"Complete"},{"Id":"m1","Values":[7],"StatusCode":"Complete"},{"Id":"m9","Values":[2],"StatusCode":"Complete"}]}`},
	})
	status, out, _ := r.run("stats", "--json", "--since", "6h")
	var st ops.Stats
	if err := json.Unmarshal([]byte(out), &st); err != nil || status != ops.ExitOK {
		t.Fatalf("stats: exit %d, %v", status, err)
	}
	if st.Counts["Processed"] != 123 || st.Counts["Duplicate"] != 7 || st.Counts["DeadLetteredUnstarted"] != 2 || st.Counts["Mismatch"] != 0 || st.Consumer != "Shop/Charge" || st.To.Sub(st.From).Hours() != 6 {
		t.Errorf("stats = %+v", st)
	}
	if len(r.requests["GetMetricData"]) != 1 {
		t.Fatalf("GetMetricData requests: %d", len(r.requests["GetMetricData"]))
	}
	status, out, _ = newReplay(t, map[string][]string{"GetMetricData": {`{"MetricDataResults":[{"Id":"m2","Values":[4]}]}`}}).run("stats")
	if status != ops.ExitOK || !strings.Contains(out, "InProgress") || !strings.Contains(out, "4") {
		t.Errorf("stats in words: exit %d\n%s", status, out)
	}
}

// stackResources is CloudFormation's ListStackResources answer for a stack
// of two consumers' functions and a table.
const stackResources = `<ListStackResourcesResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><ListStackResourcesResult><StackResourceSummaries>
<member><LogicalResourceId>ChargeOrderFunction</LogicalResourceId><PhysicalResourceId>orders-charge</PhysicalResourceId><ResourceType>AWS::Lambda::Function</ResourceType><ResourceStatus>CREATE_COMPLETE</ResourceStatus><LastUpdatedTimestamp>2026-11-30T10:00:00Z</LastUpdatedTimestamp></member>
<member><LogicalResourceId>SendReceiptFunction</LogicalResourceId><PhysicalResourceId>orders-receipt</PhysicalResourceId><ResourceType>AWS::Lambda::Function</ResourceType><ResourceStatus>CREATE_COMPLETE</ResourceStatus><LastUpdatedTimestamp>2026-11-30T10:00:00Z</LastUpdatedTimestamp></member>
<member><LogicalResourceId>Table</LogicalResourceId><PhysicalResourceId>orders-idempotency</PhysicalResourceId><ResourceType>AWS::DynamoDB::Table</ResourceType><ResourceStatus>CREATE_COMPLETE</ResourceStatus><LastUpdatedTimestamp>2026-11-30T10:00:00Z</LastUpdatedTimestamp></member>
</StackResourceSummaries></ListStackResourcesResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></ListStackResourcesResponse>`

func functionConfig(name, consumer string) string {
	return `{"FunctionName":"` + name + `","Environment":{"Variables":{"IDEMPOTENT_CONSUMER_CONTRACT":"1","IDEMPOTENCY_TABLE":"orders-idempotency","IDEMPOTENCY_NAMESPACE":"` + name + `","CONSUMER_NAME":"` + consumer + `"}}}`
}

// TestLocateFromTheStack finds a consumer among the functions of its stack.
func TestLocateFromTheStack(t *testing.T) {
	recorded := func() *replay {
		return newReplay(t, map[string][]string{
			"ListStackResources":                      {stackResources},
			"GetFunctionConfiguration/orders-charge":  {functionConfig("orders-charge", "OrdersPlatform/ChargeOrder")},
			"GetFunctionConfiguration/orders-receipt": {functionConfig("orders-receipt", "OrdersPlatform/SendReceipt")},
			"GetItem": {`{}`},
		})
	}
	run := func(args ...string) (int, string, string) {
		r := recorded()
		srv := httptest.NewServer(r)
		defer srv.Close()
		var out, errOut bytes.Buffer
		status := ops.Main(append([]string{args[0], "--endpoint-url", srv.URL}, args[1:]...), ops.WithAWSConfig(awsConfig(srv.URL)), ops.WithOutput(&out, &errOut))
		return status, out.String(), errOut.String()
	}
	status, out, errOut := run("show", "--json", "--stack", "OrdersPlatform", "--consumer", "ChargeOrder", "o-1")
	var v ops.RecordView
	if err := json.Unmarshal([]byte(out), &v); err != nil || status != ops.ExitOK || v.Consumer != "OrdersPlatform/ChargeOrder" || v.Key != "orders-charge#o-1" || v.Found {
		t.Errorf("show --stack --consumer: exit %d, %v, %+v, %s", status, err, v, errOut)
	}
	status, _, errOut = run("show", "--stack", "OrdersPlatform", "o-1")
	if status != ops.ExitUsage || !strings.Contains(errOut, "has 2 consumers; give --consumer, one of: OrdersPlatform/ChargeOrder, OrdersPlatform/SendReceipt") {
		t.Errorf("show --stack with two consumers: exit %d, %q", status, errOut)
	}
	status, _, errOut = run("show", "--stack", "OrdersPlatform", "--consumer", "Nope", "o-1")
	if status != ops.ExitUsage || !strings.Contains(errOut, `no consumer "Nope"`) {
		t.Errorf("show --stack --consumer Nope: exit %d, %q", status, errOut)
	}
}
