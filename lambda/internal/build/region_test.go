package build_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// TestEveryLineCarriesTheRegion: a consumer in a Region (AWS_REGION, which
// Lambda sets) writes the Region in every log line ("region"), its own
// logger's or the default, and as the second dimension of its metrics
// (outcome.RegionDimension, one dimension set with the consumer): a fact
// delivered in two Regions is told apart in both. Without AWS_REGION the
// metrics keep the consumer's dimension alone.
func TestEveryLineCarriesTheRegion(t *testing.T) {
	for _, region := range []string{"eu-west-2", ""} {
		env := settings().Encode()
		env["AWS_REGION"] = region
		var logs, metrics strings.Builder
		h, err := sqsbatch.FromEnv(orderKey, func(context.Context, order, idempotency.Reservation) (string, error) { return "", nil },
			getenv(env), handler.WithStore(storetest.NewMemoryStore()), handler.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))), handler.WithMetrics(&metrics))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err = h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "1", Body: `{"orderId":"o-1","amount":5}`}, {MessageId: "2", Body: `not json`}}})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		lines := 0
		for sc := bufio.NewScanner(strings.NewReader(logs.String())); sc.Scan(); lines++ {
			var line map[string]any
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatal(err)
			}
			if got, _ := line["region"].(string); got != region {
				t.Errorf("region %q: log line %s", region, sc.Text())
			}
		}
		if lines < 2 {
			t.Fatalf("%d log lines, want one per record:\n%s", lines, logs.String())
		}
		var emf struct {
			Consumer, Region string
			AWS              struct {
				CloudWatchMetrics []struct{ Dimensions [][]string }
			} `json:"_aws"`
		}
		if err := json.Unmarshal([]byte(metrics.String()), &emf); err != nil {
			t.Fatalf("%v: %s", err, metrics.String())
		}
		want := []string{outcome.MetricDimension, outcome.RegionDimension}
		if region == "" {
			want = want[:1]
		}
		dims := emf.AWS.CloudWatchMetrics[0].Dimensions
		if emf.Consumer != "ChargeOrder" || emf.Region != region || len(dims) != 1 || strings.Join(dims[0], ",") != strings.Join(want, ",") {
			t.Errorf("region %q: metrics line %s; want the dimensions %v", region, metrics.String(), want)
		}
	}
}
