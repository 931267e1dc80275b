package kumo_test

// The stream consumers on kumo's Kinesis and DynamoDB Streams (v0.33.1:
// Kinesis CreateStream, PutRecord(s), ListShards, GetShardIterator and
// GetRecords; DynamoDB tables with a StreamSpecification, and the DynamoDB
// Streams DescribeStream, GetShardIterator and GetRecords; no resharding:
// splits and merges are the simulation's, test/chaos). The real handler
// (handler.NewKinesis, handler.NewDynamoDBStream, from an encoded contract,
// on the DynamoDB store over kumo) consumes them through poller, our own
// model of Lambda's stream event source: per shard, a batch from the
// checkpoint, the event as Lambda writes it (JSON, Kinesis data base64),
// the partial batch response's sequence number as the next checkpoint
// (read again from it, AT_SEQUENCE_NUMBER), bounded retries. It leaves out
// bisection, the record age, the on-failure destination, parallelization,
// and the runtime: Handle is called in process, not under the runtime
// interface emulator.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/sivchari/kumo"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/streambatch"
	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

// jsonAPI calls one of kumo's AWS JSON protocol services.
type jsonAPI struct {
	url, target string
}

func (a jsonAPI) call(op string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, a.url+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", a.target+"."+op)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", a.target, op, resp.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// poller is our model of Lambda's stream event source, for one stream: it
// reads each shard from its checkpoint and invokes the handler.
type poller struct {
	api         jsonAPI
	shards      []string
	read        func(shard, iterator string) (records []json.RawMessage, next string, err error)
	iterator    func(shard, at string) (string, error) // at "": TRIM_HORIZON; else AT_SEQUENCE_NUMBER at
	invoke      func(records []json.RawMessage) (reported string, err error)
	seqOf       func(json.RawMessage) string
	batchSize   int
	maxRetries  int
	deliveries  int
	checkpoints int // partial batch responses: the shard resumed from a reported record
}

// drain polls every shard until each is read to its end: a batch from the
// checkpoint; on success the checkpoint moves past it, on a partial batch
// response to the reported record, on a function error it stays.
func (p *poller) drain(t *testing.T) {
	t.Helper()
	for _, shard := range p.shards {
		at, retries := "", 0
		for {
			it, err := p.iterator(shard, at)
			if err != nil {
				t.Fatal(err)
			}
			recs, _, err := p.read(shard, it)
			if err != nil {
				t.Fatal(err)
			}
			// kumo's DynamoDB Streams take only TRIM_HORIZON and LATEST (an
			// AT_ or AFTER_SEQUENCE_NUMBER iterator starts at the shard's
			// first record): the records before the checkpoint are skipped
			// here, by sequence number, compared as numbers.
			for len(recs) > 0 && before(p.seqOf(recs[0]), at) {
				recs = recs[1:]
			}
			if len(recs) == 0 {
				break
			}
			if at != "" && !strings.HasPrefix(at, "after:") && p.seqOf(recs[0]) != at {
				t.Fatalf("AT_SEQUENCE_NUMBER %s returned %s first", at, p.seqOf(recs[0]))
			}
			batch := recs[:min(len(recs), p.batchSize)]
			p.deliveries += len(batch)
			reported, err := p.invoke(batch)
			switch {
			case err != nil:
				retries++
			case reported == "":
				retries, at = 0, "after:"+p.seqOf(batch[len(batch)-1])
			default:
				p.checkpoints++
				if reported == p.seqOf(batch[0]) {
					retries++
				} else {
					retries = 0
				}
				at = reported
			}
			if retries > p.maxRetries {
				t.Fatalf("shard %s: gave up at %q after %d retries", shard, at, p.maxRetries)
			}
		}
	}
}

// before reports whether seq comes before the checkpoint at ("": the
// shard's start; "after:<n>": after record n; "<n>": at record n).
func before(seq, at string) bool {
	if at == "" {
		return false
	}
	after, isAfter := strings.CutPrefix(at, "after:")
	x, _ := new(big.Int).SetString(seq, 10)
	y, _ := new(big.Int).SetString(after, 10)
	if isAfter {
		return x.Cmp(y) <= 0
	}
	return x.Cmp(y) < 0
}

type shipment struct {
	Order string `json:"order"`
	Step  int    `json:"step"`
}

// TestKinesisOnKumo: records of 40 partition keys on 2 shards, producer
// retries among them, a downstream that refuses some facts twice; every
// fact's effect runs once, in per-key order, the replays absorbed.
func TestKinesisOnKumo(t *testing.T) {
	srv := kumo.NewServer()
	defer srv.Close()
	ctx := context.Background()
	ddb := dynamodb.New(dynamodb.Options{BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"}, nil
	})})
	table, err := kumotest.NewTable(ctx, ddb, "stream")
	if err != nil {
		t.Fatal(err)
	}
	kin := jsonAPI{url: srv.URL, target: "Kinesis_20131202"}
	name := fmt.Sprintf("shipments-%d", time.Now().UnixNano())
	if err := kin.call("CreateStream", map[string]any{"StreamName": name, "ShardCount": 2}, nil); err != nil {
		t.Fatal(err)
	}
	const keys, steps = 40, 5
	puts := 0
	for step := range steps {
		for k := range keys {
			data, _ := json.Marshal(shipment{Order: fmt.Sprintf("o%d", k), Step: step})
			copies := 1
			if (k+step)%7 == 0 {
				copies = 2 // a producer retry: the same fact, a new record
			}
			for range copies {
				if err := kin.call("PutRecord", map[string]any{"StreamName": name, "PartitionKey": fmt.Sprintf("o%d", k), "Data": data}, nil); err != nil {
					t.Fatal(err)
				}
				puts++
			}
		}
	}
	var shards struct{ Shards []struct{ ShardId string } }
	if err := kin.call("ListShards", map[string]any{"StreamName": name}, &shards); err != nil {
		t.Fatal(err)
	}

	s := contract.Defaults(time.Minute)
	s.Table, s.Namespace, s.Consumer, s.Source = table, "ship", "Ship", contract.SourceKinesis
	store, err := handler.NewStore(ddb, s)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	ran := map[string]int{}
	order := map[string][]int{}
	refusals := map[string]int{}
	var logs bytes.Buffer
	h, err := handler.NewKinesis(func(m shipment) (string, error) { return fmt.Sprintf("%s/%d", m.Order, m.Step), nil },
		func(ctx context.Context, m shipment, r idempotency.Reservation) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			id := fmt.Sprintf("%s/%d", m.Order, m.Step)
			if (len(m.Order)+m.Step)%5 == 0 && refusals[id] < 2 {
				refusals[id]++
				return "", errors.New("the carrier is down")
			}
			ran[id]++
			order[m.Order] = append(order[m.Order], m.Step)
			return "", nil
		},
		handler.WithGetenv(func(k string) string { return s.Encode()[k] }), handler.WithStore(store),
		handler.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))), handler.WithMetrics(io.Discard))
	if err != nil {
		t.Fatal(err)
	}

	p := &poller{api: kin, batchSize: 25, maxRetries: 5}
	for _, sh := range shards.Shards {
		p.shards = append(p.shards, sh.ShardId)
	}
	p.iterator = func(shard, at string) (string, error) {
		in := map[string]any{"StreamName": name, "ShardId": shard, "ShardIteratorType": "TRIM_HORIZON"}
		if after, ok := strings.CutPrefix(at, "after:"); ok {
			in["ShardIteratorType"], in["StartingSequenceNumber"] = "AFTER_SEQUENCE_NUMBER", after
		} else if at != "" {
			in["ShardIteratorType"], in["StartingSequenceNumber"] = "AT_SEQUENCE_NUMBER", at
		}
		var out struct{ ShardIterator string }
		err := kin.call("GetShardIterator", in, &out)
		return out.ShardIterator, err
	}
	p.read = func(shard, it string) ([]json.RawMessage, string, error) {
		var out struct {
			Records           []json.RawMessage
			NextShardIterator string
		}
		err := kin.call("GetRecords", map[string]any{"ShardIterator": it, "Limit": 1000}, &out)
		return out.Records, out.NextShardIterator, err
	}
	p.seqOf = func(r json.RawMessage) string {
		var v struct{ SequenceNumber string }
		_ = json.Unmarshal(r, &v)
		return v.SequenceNumber
	}
	p.invoke = func(recs []json.RawMessage) (string, error) {
		// The event as Lambda writes it, read back as the runtime reads it.
		var lambdaRecs []map[string]any
		for _, raw := range recs {
			var r struct {
				Data, PartitionKey, SequenceNumber string
				ApproximateArrivalTimestamp        float64
			}
			if err := json.Unmarshal(raw, &r); err != nil {
				return "", err
			}
			if _, err := base64.StdEncoding.DecodeString(r.Data); err != nil {
				return "", fmt.Errorf("kumo's data is not base64: %v", err)
			}
			lambdaRecs = append(lambdaRecs, map[string]any{
				"eventSource": "aws:kinesis", "eventID": "shardId:" + r.SequenceNumber, "eventName": "aws:kinesis:record",
				"kinesis": map[string]any{"partitionKey": r.PartitionKey, "sequenceNumber": r.SequenceNumber, "data": r.Data, "approximateArrivalTimestamp": r.ApproximateArrivalTimestamp},
			})
		}
		payload, _ := json.Marshal(map[string]any{"Records": lambdaRecs})
		var ev events.KinesisEvent
		if err := json.Unmarshal(payload, &ev); err != nil {
			return "", err
		}
		resp, err := h.Handle(ctx, ev)
		if err != nil || len(resp.BatchItemFailures) == 0 {
			return "", err
		}
		return resp.BatchItemFailures[0].ItemIdentifier, nil
	}
	p.drain(t)

	for k := range keys {
		o := fmt.Sprintf("o%d", k)
		if got := order[o]; !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
			t.Errorf("%s's effects ran as %v, want steps 0 to 4 once each, in order", o, got)
		}
	}
	for id, n := range ran {
		if n != 1 {
			t.Errorf("%s ran %d times", id, n)
		}
	}
	dups := strings.Count(logs.String(), `"outcome":"duplicate"`)
	t.Logf("kinesis on kumo: %d facts, %d records put (%d producer retries), %d deliveries by the poller (%d replayed), %d partial batch responses, %d duplicates absorbed, %d effects", keys*steps, puts, puts-keys*steps, p.deliveries, p.deliveries-puts, p.checkpoints, dups, len(ran))
	if p.checkpoints == 0 || dups == 0 {
		t.Errorf("the run had no partial batch response (%d) or no duplicate (%d): it proves nothing of replays", p.checkpoints, dups)
	}
}

type orderRow struct {
	OrderID string `json:"orderId"`
	Status  string `json:"status"`
}

// TestDynamoDBStreamOnKumo: an orders table's stream (the outbox) feeds the
// real handler: each status change of each order runs once, in order per
// order, REMOVE records handed over, replays absorbed.
func TestDynamoDBStreamOnKumo(t *testing.T) {
	srv := kumo.NewServer()
	defer srv.Close()
	ctx := context.Background()
	ddb := dynamodb.New(dynamodb.Options{BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"}, nil
	})})
	idem, err := kumotest.NewTable(ctx, ddb, "outbox-idem")
	if err != nil {
		t.Fatal(err)
	}
	orders := fmt.Sprintf("orders-%d", time.Now().UnixNano())
	if _, err := ddb.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(orders),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("orderId"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("orderId"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
		StreamSpecification:  &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
	}); err != nil {
		t.Fatal(err)
	}
	statuses := []string{"PLACED", "PAID", "SHIPPED"}
	const n = 30
	for i := range n {
		for _, st := range statuses {
			if _, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(orders), Item: map[string]types.AttributeValue{
				"orderId": &types.AttributeValueMemberS{Value: fmt.Sprintf("o%d", i)}, "status": &types.AttributeValueMemberS{Value: st},
			}}); err != nil {
				t.Fatal(err)
			}
		}
		if i%10 == 0 {
			if _, err := ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(orders), Key: map[string]types.AttributeValue{"orderId": &types.AttributeValueMemberS{Value: fmt.Sprintf("o%d", i)}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	desc, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(orders)})
	if err != nil || desc.Table.LatestStreamArn == nil {
		t.Fatalf("the table has no stream on kumo: %v", err)
	}
	arn := *desc.Table.LatestStreamArn
	st := jsonAPI{url: srv.URL, target: "DynamoDBStreams_20120810"}
	var sd struct {
		StreamDescription struct{ Shards []struct{ ShardId string } }
	}
	if err := st.call("DescribeStream", map[string]any{"StreamArn": arn}, &sd); err != nil {
		t.Fatal(err)
	}

	s := contract.Defaults(time.Minute)
	s.Table, s.Namespace, s.Consumer = idem, "confirm", "Confirm"
	s.Source, s.StreamImages, s.StreamRemoves = contract.SourceDynamoDBStreams, contract.ImagesNewAndOld, streambatch.RemoveRun
	store, err := handler.NewStore(ddb, s)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	ran := map[string]int{}
	seen := map[string][]string{}
	refused := map[string]bool{}
	var logs bytes.Buffer
	key := func(c streambatch.Change[orderRow]) (string, error) {
		if c.Event == streambatch.Remove {
			return c.Keys.OrderID + "/removed", nil
		}
		return c.New.OrderID + "/" + c.New.Status, nil
	}
	h, err := handler.NewDynamoDBStream(key, func(ctx context.Context, c streambatch.Change[orderRow], r idempotency.Reservation) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		k, _ := key(c)
		if strings.HasSuffix(k, "/PAID") && !refused[k] && len(k)%2 == 0 {
			refused[k] = true
			return "", errors.New("the mailer is down")
		}
		if c.Event == streambatch.Modify && (c.Old == nil || c.Old.Status == c.New.Status) {
			return "", fmt.Errorf("MODIFY %s without its old image", k)
		}
		ran[k]++
		seen[c.Keys.OrderID] = append(seen[c.Keys.OrderID], strings.TrimPrefix(k, c.Keys.OrderID+"/"))
		return "", nil
	}, handler.WithGetenv(func(k string) string { return s.Encode()[k] }), handler.WithStore(store),
		handler.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))), handler.WithMetrics(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	p := &poller{api: st, batchSize: 20, maxRetries: 5}
	for _, sh := range sd.StreamDescription.Shards {
		p.shards = append(p.shards, sh.ShardId)
	}
	p.iterator = func(shard, at string) (string, error) {
		in := map[string]any{"StreamArn": arn, "ShardId": shard, "ShardIteratorType": "TRIM_HORIZON"}
		if after, ok := strings.CutPrefix(at, "after:"); ok {
			in["ShardIteratorType"], in["SequenceNumber"] = "AFTER_SEQUENCE_NUMBER", after
		} else if at != "" {
			in["ShardIteratorType"], in["SequenceNumber"] = "AT_SEQUENCE_NUMBER", at
		}
		var out struct{ ShardIterator string }
		err := st.call("GetShardIterator", in, &out)
		return out.ShardIterator, err
	}
	p.read = func(shard, it string) ([]json.RawMessage, string, error) {
		var out struct{ Records []json.RawMessage }
		err := st.call("GetRecords", map[string]any{"ShardIterator": it, "Limit": 1000}, &out)
		return out.Records, "", err
	}
	p.seqOf = func(r json.RawMessage) string {
		var v struct {
			Dynamodb struct{ SequenceNumber string }
		}
		_ = json.Unmarshal(r, &v)
		return v.Dynamodb.SequenceNumber
	}
	p.invoke = func(recs []json.RawMessage) (string, error) {
		payload, _ := json.Marshal(map[string]any{"Records": recs}) // DynamoDB Streams' records are Lambda's, field for field
		var ev events.DynamoDBEvent
		if err := json.Unmarshal(payload, &ev); err != nil {
			return "", err
		}
		resp, err := h.Handle(ctx, ev)
		if err != nil || len(resp.BatchItemFailures) == 0 {
			return "", err
		}
		return resp.BatchItemFailures[0].ItemIdentifier, nil
	}
	p.drain(t)

	for i := range n {
		o := fmt.Sprintf("o%d", i)
		want := []string{"PLACED", "PAID", "SHIPPED"}
		if i%10 == 0 {
			want = append(want, "removed")
		}
		if got := seen[o]; !slices.Equal(got, want) {
			t.Errorf("%s's effects ran as %v, want %v", o, got, want)
		}
	}
	for k, c := range ran {
		if c != 1 {
			t.Errorf("%s ran %d times", k, c)
		}
	}
	dups := strings.Count(logs.String(), `"outcome":"duplicate"`)
	t.Logf("dynamodb streams on kumo: %d changes (%d orders, %d removed), %d deliveries by the poller (%d replayed), %d partial batch responses, %d duplicates absorbed, %d effects", 3*n+n/10, n, n/10, p.deliveries, p.deliveries-(3*n+n/10), p.checkpoints, dups, len(ran))
	if p.checkpoints == 0 || dups == 0 {
		t.Errorf("the run had no partial batch response (%d) or no duplicate (%d)", p.checkpoints, dups)
	}
}
