package emf_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/emf"
)

// TestWrite: one JSON line, its dimensions one set (the consumer and the
// Region, in order), their values beside the metrics'.
func TestWrite(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 12, 1, 10, 0, 0, 123e6, time.UTC)
	err := emf.Write(&buf, emf.Line{
		Namespace: "NS", Dimensions: map[string]string{"Region": "eu-west-2", "Consumer": "Stack/C"},
		LevelKey: "level", Level: "WARN", TimeKey: "timestamp",
		Metrics: []emf.Metric{{Name: "Processed", Unit: "Count", Value: 3}, {Name: "BatchDuration", Unit: "Milliseconds", Value: 12}},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(buf.Bytes(), []byte("}\n")) || bytes.Count(buf.Bytes(), []byte("\n")) != 1 {
		t.Fatalf("not one JSON line: %q", buf.String())
	}
	var got struct {
		Consumer      string
		Region        string
		Level         string `json:"level"`
		Timestamp     string `json:"timestamp"`
		Processed     int
		BatchDuration int
		AWS           struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Consumer != "Stack/C" || got.Region != "eu-west-2" || got.Level != "WARN" || got.Timestamp != now.Format("2006-01-02T15:04:05.000Z") || got.Processed != 3 || got.BatchDuration != 12 {
		t.Errorf("values: %+v", got)
	}
	if got.AWS.Timestamp != now.UnixMilli() || len(got.AWS.CloudWatchMetrics) != 1 {
		t.Fatalf("_aws: %+v", got.AWS)
	}
	d := got.AWS.CloudWatchMetrics[0]
	if d.Namespace != "NS" || len(d.Dimensions) != 1 || len(d.Dimensions[0]) != 2 || d.Dimensions[0][0] != "Consumer" || d.Dimensions[0][1] != "Region" || len(d.Metrics) != 2 || d.Metrics[1].Name != "BatchDuration" || d.Metrics[1].Unit != "Milliseconds" {
		t.Errorf("definitions: %+v", d)
	}
}
