package streambatch_test

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
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/streambatch"
)

func streamContract(src contract.Source) contract.Settings {
	s := settings()
	s.Source = src
	if src == contract.SourceDynamoDBStreams {
		s.StreamRemoves, s.StreamImages = contract.RemoveSkip, contract.ImagesNewAndOld
	}
	return s
}

type row struct {
	OrderID string `json:"orderId"`
	Status  string `json:"status"`
}

func rowKey(c streambatch.Change[row]) (string, error) {
	return c.New.OrderID + "/" + c.New.Status, nil
}

func noEffect[M any](context.Context, M, idempotency.Reservation) (string, error) { return "", nil }

// TestEntryPointsRefuseAnotherSource: each entry point refuses at init a
// contract of another source, in one line naming the variable and the entry
// point to use.
func TestEntryPointsRefuseAnotherSource(t *testing.T) {
	quiet := handler.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	store := handler.WithStore(storetest.NewMemoryStore())
	for _, c := range []struct {
		name  string
		build func(env map[string]string) error
		src   contract.Source
		fix   string
	}{
		{"New on a Kinesis contract", func(env map[string]string) error {
			_, err := sqsbatch.FromEnv(orderKey, noEffect[order], getenv(env), store, quiet)
			return err
		}, contract.SourceKinesis, "streambatch.StartKinesis"},
		{"NewTx on a DynamoDB stream contract", func(env map[string]string) error {
			_, err := sqsbatch.FromEnvTx(orderKey, func(context.Context, order, idempotency.Reservation) (any, string, error) { return nil, "", nil }, getenv(env), store, quiet)
			return err
		}, contract.SourceDynamoDBStreams, "streambatch.StartDynamoDB"},
		{"NewKinesis on a queue contract", func(env map[string]string) error {
			_, err := streambatch.KinesisFromEnv(orderKey, noEffect[order], getenv(env), store, quiet)
			return err
		}, contract.SourceQueue, "sqsbatch.Start"},
		{"NewDynamoDBStream on a Kinesis contract", func(env map[string]string) error {
			_, err := streambatch.DynamoDBFromEnv(rowKey, noEffect[streambatch.Change[row]], getenv(env), store, quiet)
			return err
		}, contract.SourceKinesis, "streambatch.StartKinesis"},
	} {
		err := c.build(streamContract(c.src).Encode())
		if !errors.Is(err, contract.ErrSource) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), c.fix) || !strings.Contains(err.Error(), contract.SourceVar) {
			t.Errorf("%s: %v; want one line naming %s and %s", c.name, err, contract.SourceVar, c.fix)
		}
	}
}

// TestNewKinesisRunsTheContractsSettings: the Kinesis handler built from a
// contract runs a fact once, under the contract's namespace and consumer;
// a checkpoint replay is a duplicate.
func TestNewKinesisRunsTheContractsSettings(t *testing.T) {
	memory := storetest.NewMemoryStore()
	var logs, metrics bytes.Buffer
	runs := 0
	h, err := streambatch.KinesisFromEnv(orderKey, func(context.Context, order, idempotency.Reservation) (string, error) { runs++; return "", nil },
		getenv(streamContract(contract.SourceKinesis).Encode()), handler.WithStore(memory),
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

// TestNewDynamoDBStreamRunsTheContractsSettings: the images and the REMOVE
// choice come from the contract.
func TestNewDynamoDBStreamRunsTheContractsSettings(t *testing.T) {
	var got []streambatch.Change[row]
	var logs bytes.Buffer
	h, err := streambatch.DynamoDBFromEnv(rowKey, func(ctx context.Context, c streambatch.Change[row], r idempotency.Reservation) (string, error) {
		got = append(got, c)
		return "", nil
	}, getenv(streamContract(contract.SourceDynamoDBStreams).Encode()), handler.WithStore(storetest.NewMemoryStore()),
		handler.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))), handler.WithMetrics(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	img := func(status string) map[string]events.DynamoDBAttributeValue {
		return map[string]events.DynamoDBAttributeValue{"orderId": events.NewStringAttribute("o-1"), "status": events.NewStringAttribute(status)}
	}
	keys := map[string]events.DynamoDBAttributeValue{"orderId": events.NewStringAttribute("o-1")}
	resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		{EventName: "MODIFY", Change: events.DynamoDBStreamRecord{SequenceNumber: "10", Keys: keys, NewImage: img("PAID"), OldImage: img("NEW")}},
		{EventName: "REMOVE", Change: events.DynamoDBStreamRecord{SequenceNumber: "11", Keys: keys, OldImage: img("PAID")}},
	}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%+v, %v", resp, err)
	}
	if len(got) != 1 || got[0].Old == nil || got[0].Old.Status != "NEW" || got[0].New.Status != "PAID" {
		t.Fatalf("changes %+v: want the MODIFY with both images, the REMOVE skipped", got)
	}
	if !strings.Contains(logs.String(), `"outcome":"skipped"`) {
		t.Errorf("the REMOVE's line:\n%s", logs.String())
	}
}

// TestNewKinesisTxChecksTheWrites: a transactional stream handler checks
// the store's writes at init, as NewTx does.
func TestNewKinesisTxChecksTheWrites(t *testing.T) {
	_, err := streambatch.KinesisFromEnvTx(orderKey, func(context.Context, order, idempotency.Reservation) (int, string, error) { return 0, "", nil },
		getenv(streamContract(contract.SourceKinesis).Encode()), handler.WithStore(storetest.NewMemoryStore()), handler.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if !errors.Is(err, idempotency.ErrTxInvalid) {
		t.Errorf("NewKinesisTx with int writes: %v; want the writes refused at init", err)
	}
	_, err = streambatch.KinesisFromEnvTx(orderKey, func(context.Context, order, idempotency.Reservation) (storetest.MemoryWrites, string, error) {
		return nil, "", nil
	},
		getenv(streamContract(contract.SourceKinesis).Encode()), handler.WithStore(storetest.NewMemoryStore()), handler.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatalf("NewKinesisTx: %v", err)
	}
}
