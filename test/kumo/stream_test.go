package kumo_test

// The stream consumers on kumo's Kinesis and DynamoDB Streams (v0.33.1:
// Kinesis CreateStream, PutRecord(s), ListShards, GetShardIterator and
// GetRecords; DynamoDB tables with a StreamSpecification, and the DynamoDB
// Streams DescribeStream, GetShardIterator and GetRecords; no resharding:
// splits and merges are the simulation's, test/chaos). The real handler
// (kinesis.FromEnv, dynamodbstream.FromEnv, from an encoded contract,
// on the DynamoDB store over kumo) consumes them through internal/streampoll,
// our own model of Lambda's stream event source, shared with the demo
// (demo/local/streams.go): per shard, a batch from the checkpoint, the event
// as Lambda writes it (JSON, Kinesis data base64), the lowest sequence
// number of the partial batch response as the next checkpoint (read again
// from it, AT_SEQUENCE_NUMBER), bounded retries. It leaves out bisection,
// the record age, the on-failure destination, parallelization and
// resharding (the package says all it leaves out); here Handle is called in
// process (the demo runs the bootstrap under the runtime interface
// emulator).

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
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

	pub "github.com/idempotent-consumer/idempotent-consumer/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/streampoll"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamodbstream"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/kinesis"
	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

// failures are the item identifiers of a Kinesis partial batch response.
func failures(fs []events.KinesisBatchItemFailure) []string {
	ids := make([]string, 0, len(fs))
	for _, f := range fs {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
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
	kin := streampoll.API{URL: srv.URL, Target: "Kinesis_20131202"}
	name := fmt.Sprintf("shipments-%d", time.Now().UnixNano())
	if err := kin.Call(ctx, "CreateStream", map[string]any{"StreamName": name, "ShardCount": 2}, nil); err != nil {
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
				if err := kin.Call(ctx, "PutRecord", map[string]any{"StreamName": name, "PartitionKey": fmt.Sprintf("o%d", k), "Data": data}, nil); err != nil {
					t.Fatal(err)
				}
				puts++
			}
		}
	}
	stream, err := streampoll.Kinesis(ctx, srv.URL, name)
	if err != nil {
		t.Fatal(err)
	}
	s := contract.Defaults(time.Minute)
	s.Table, s.Namespace, s.Consumer, s.Source = table, "ship", "Ship", contract.SourceKinesis
	store, err := dynamostore.FromEnv(ddb, pub.Env(s.Encode()).Getenv)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	ran := map[string]int{}
	order := map[string][]int{}
	refusals := map[string]int{}
	var logs bytes.Buffer
	h, err := kinesis.FromEnv(func(m shipment) (string, error) { return fmt.Sprintf("%s/%d", m.Order, m.Step), nil },
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

	p := &streampoll.Poller{Stream: stream, BatchSize: 25, MaxRetries: 5}
	p.Invoke = func(ctx context.Context, recs []json.RawMessage) ([]string, error) {
		// The event as Lambda writes it, read back as the runtime reads it.
		for _, raw := range recs {
			var r struct{ Data string }
			if err := json.Unmarshal(raw, &r); err != nil {
				return nil, err
			}
			if _, err := base64.StdEncoding.DecodeString(r.Data); err != nil {
				return nil, fmt.Errorf("kumo's data is not base64: %v", err)
			}
		}
		payload, err := streampoll.KinesisEvent("shardId-000000000000", recs)
		if err != nil {
			return nil, err
		}
		var ev events.KinesisEvent
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, err
		}
		resp, err := h.Handle(ctx, ev)
		return failures(resp.BatchItemFailures), err
	}
	if err := p.Drain(ctx); err != nil {
		t.Fatal(err)
	}

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
	t.Logf("kinesis on kumo: %d facts, %d records put (%d producer retries), %d deliveries by the poller (%d replayed), %d partial batch responses, %d duplicates absorbed, %d effects", keys*steps, puts, puts-keys*steps, p.Deliveries, p.Deliveries-puts, p.PartialResponses, dups, len(ran))
	if p.PartialResponses == 0 || dups == 0 {
		t.Errorf("the run had no partial batch response (%d) or no duplicate (%d): it proves nothing of replays", p.PartialResponses, dups)
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
	stream, err := streampoll.DynamoDBStreams(ctx, srv.URL, arn)
	if err != nil {
		t.Fatal(err)
	}
	s := contract.Defaults(time.Minute)
	s.Table, s.Namespace, s.Consumer = idem, "confirm", "Confirm"
	s.Source, s.StreamImages, s.StreamRemoves = contract.SourceDynamoDBStreams, contract.ImagesNewAndOld, contract.RemoveRun
	store, err := dynamostore.FromEnv(ddb, pub.Env(s.Encode()).Getenv)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	ran := map[string]int{}
	seen := map[string][]string{}
	refused := map[string]bool{}
	var logs bytes.Buffer
	key := func(c dynamodbstream.Change[orderRow]) (string, error) {
		if c.Event == dynamodbstream.Remove {
			return c.Keys.OrderID + "/removed", nil
		}
		return c.New.OrderID + "/" + c.New.Status, nil
	}
	h, err := dynamodbstream.FromEnv(key, func(ctx context.Context, c dynamodbstream.Change[orderRow], r idempotency.Reservation) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		k, _ := key(c)
		if strings.HasSuffix(k, "/PAID") && !refused[k] && len(k)%2 == 0 {
			refused[k] = true
			return "", errors.New("the mailer is down")
		}
		if c.Event == dynamodbstream.Modify && (c.Old == nil || c.Old.Status == c.New.Status) {
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
	p := &streampoll.Poller{Stream: stream, BatchSize: 20, MaxRetries: 5}
	p.Invoke = func(ctx context.Context, recs []json.RawMessage) ([]string, error) {
		payload, err := streampoll.DynamoDBEvent(recs)
		if err != nil {
			return nil, err
		}
		var ev events.DynamoDBEvent
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, err
		}
		resp, err := h.Handle(ctx, ev)
		ids := make([]string, 0, len(resp.BatchItemFailures))
		for _, f := range resp.BatchItemFailures {
			ids = append(ids, f.ItemIdentifier)
		}
		return ids, err
	}
	if err := p.Drain(ctx); err != nil {
		t.Fatal(err)
	}

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
	t.Logf("dynamodb streams on kumo: %d changes (%d orders, %d removed), %d deliveries by the poller (%d replayed), %d partial batch responses, %d duplicates absorbed, %d effects", 3*n+n/10, n, n/10, p.Deliveries, p.Deliveries-(3*n+n/10), p.PartialResponses, dups, len(ran))
	if p.PartialResponses == 0 || dups == 0 {
		t.Errorf("the run had no partial batch response (%d) or no duplicate (%d)", p.PartialResponses, dups)
	}
}
