package kinesis_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/kinesis"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

func kinesisContract() contract.Settings {
	s := settings()
	s.Source = contract.SourceKinesis
	return s
}

func noEffect(context.Context, order, idempotency.Reservation) (string, error) { return "", nil }

// TestEntryPointsRefuseAnotherSource: an entry point refuses at init a
// contract of another source, in one line naming the variable and the entry
// point to use: a queue entry point on a Kinesis contract is told to use
// kinesis.Start, and kinesis.FromEnv on a queue or DynamoDB stream contract
// the entry point of that source.
func TestEntryPointsRefuseAnotherSource(t *testing.T) {
	quiet := handler.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	store := handler.WithStore(storetest.NewMemoryStore())
	fromEnv := func(env map[string]string) error {
		_, err := kinesis.FromEnv(orderKey, noEffect, getenv(env), store, quiet)
		return err
	}
	dynamoDB := settings()
	dynamoDB.Source, dynamoDB.StreamRemoves = contract.SourceDynamoDBStreams, contract.RemoveSkip
	queue := settings()
	queue.Source = contract.SourceQueue
	for _, c := range []struct {
		name  string
		build func(env map[string]string) error
		s     contract.Settings
		fix   string
	}{
		{"sqsbatch.FromEnv on a Kinesis contract", func(env map[string]string) error {
			_, err := sqsbatch.FromEnv(orderKey, noEffect, getenv(env), store, quiet)
			return err
		}, kinesisContract(), "kinesis.Start"},
		{"FromEnv on a queue contract", fromEnv, queue, "sqsbatch.Start"},
		{"FromEnv on a DynamoDB stream contract", fromEnv, dynamoDB, "dynamodbstream.Start"},
	} {
		err := c.build(c.s.Encode())
		if !errors.Is(err, contract.ErrSource) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), c.fix) || !strings.Contains(err.Error(), contract.SourceVar) {
			t.Errorf("%s: %v; want one line naming %s and %s", c.name, err, contract.SourceVar, c.fix)
		}
	}
}

// TestFromEnvRunsTheContractsSettings: the handler built from a contract
// runs a fact once, under the contract's namespace and consumer; a
// checkpoint replay is a duplicate.
func TestFromEnvRunsTheContractsSettings(t *testing.T) {
	memory := storetest.NewMemoryStore()
	var logs, metrics bytes.Buffer
	runs := 0
	h, err := kinesis.FromEnv(orderKey, func(context.Context, order, idempotency.Reservation) (string, error) { runs++; return "", nil },
		getenv(kinesisContract().Encode()), handler.WithStore(memory),
		handler.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))), handler.WithMetrics(&metrics))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(order{ID: "o-1", Seq: 5})
	ev := events.KinesisEvent{Records: []events.KinesisEventRecord{{Kinesis: events.KinesisRecord{
		SequenceNumber: "1", PartitionKey: "o-1", Data: data, ApproximateArrivalTimestamp: events.SecondsEpochTime{Time: time.Now()},
	}}}}
	for range 2 {
		if resp, err := h.Handle(context.Background(), ev); err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("%+v, %v", resp, err)
		}
	}
	rec, _ := memory.Get(context.Background(), "charge#o-1/5")
	if runs != 1 || rec == nil || rec.Status != idempotency.StatusCompleted {
		t.Fatalf("ran %d times, record %+v", runs, rec)
	}
	if !strings.Contains(logs.String(), `"consumer":"ChargeOrder"`) || !strings.Contains(logs.String(), `"outcome":"duplicate"`) || !strings.Contains(metrics.String(), `"Consumer":"ChargeOrder"`) {
		t.Errorf("logs or metrics do not follow the contract:\n%s\n%s", logs.String(), metrics.String())
	}
}

// TestFromEnvTxChecksTheWrites: a transactional handler checks the store's
// writes at init, as sqsbatch's does.
func TestFromEnvTxChecksTheWrites(t *testing.T) {
	_, err := kinesis.FromEnvTx(orderKey, func(context.Context, order, idempotency.Reservation) (int, string, error) { return 0, "", nil },
		getenv(kinesisContract().Encode()), handler.WithStore(storetest.NewMemoryStore()), handler.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if !errors.Is(err, idempotency.ErrTxInvalid) {
		t.Errorf("FromEnvTx with int writes: %v; want the writes refused at init", err)
	}
	_, err = kinesis.FromEnvTx(orderKey, func(context.Context, order, idempotency.Reservation) (storetest.MemoryWrites, string, error) {
		return nil, "", nil
	},
		getenv(kinesisContract().Encode()), handler.WithStore(storetest.NewMemoryStore()), handler.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatalf("FromEnvTx: %v", err)
	}
}
