package dynamodbstream_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamodbstream"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
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

func rowKey(c dynamodbstream.Change[row]) (string, error) {
	return c.New.OrderID + "/" + c.New.Status, nil
}

func noEffect[M any](context.Context, M, idempotency.Reservation) (string, error) { return "", nil }

// TestEntryPointsRefuseAnotherSource: an entry point refuses at init a
// contract of another source, in one line naming the variable and the entry
// point to use: a queue entry point on a DynamoDB stream contract is told
// to use dynamodbstream.Start, and dynamodbstream.FromEnv on a Kinesis
// contract kinesis.Start.
func TestEntryPointsRefuseAnotherSource(t *testing.T) {
	quiet := handler.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	store := handler.WithStore(storetest.NewMemoryStore())
	for _, c := range []struct {
		name  string
		build func(env map[string]string) error
		src   contract.Source
		fix   string
	}{
		{"sqsbatch.FromEnvTx on a DynamoDB stream contract", func(env map[string]string) error {
			_, err := sqsbatch.FromEnvTx(rowKey, func(context.Context, dynamodbstream.Change[row], idempotency.Reservation) (any, string, error) {
				return nil, "", nil
			}, getenv(env), store, quiet)
			return err
		}, contract.SourceDynamoDBStreams, "dynamodbstream.Start"},
		{"FromEnv on a Kinesis contract", func(env map[string]string) error {
			_, err := dynamodbstream.FromEnv(rowKey, noEffect[dynamodbstream.Change[row]], getenv(env), store, quiet)
			return err
		}, contract.SourceKinesis, "kinesis.Start"},
	} {
		err := c.build(streamContract(c.src).Encode())
		if !errors.Is(err, contract.ErrSource) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), c.fix) || !strings.Contains(err.Error(), contract.SourceVar) {
			t.Errorf("%s: %v; want one line naming %s and %s", c.name, err, contract.SourceVar, c.fix)
		}
	}
}

// TestFromEnvRunsTheContractsSettings: the images and the REMOVE choice
// come from the contract.
func TestFromEnvRunsTheContractsSettings(t *testing.T) {
	var got []dynamodbstream.Change[row]
	var logs strings.Builder
	h, err := dynamodbstream.FromEnv(rowKey, func(ctx context.Context, c dynamodbstream.Change[row], r idempotency.Reservation) (string, error) {
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
