package dynamodbstream

import (
	"bytes"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// TestOptionsCarryEveryField: options carries each field of Config, but for
// this source's own (OldImage, Removes: the handler's, by New), into the
// stream core's field of the same name, so that a field added to Config and
// not carried fails here.
func TestOptionsCarryEveryField(t *testing.T) {
	cfg := Config{Concurrency: 3, MinRemaining: 4 * time.Second, OldImage: true, Removes: contract.RemoveRun, Consumer: "c",
		MetricsNamespace: "ns", Logger: slog.Default(), Metrics: new(bytes.Buffer), MetricsLevel: "WARN"}
	cv, ov := reflect.ValueOf(cfg), reflect.ValueOf(cfg.options())
	for i := range cv.NumField() {
		name := cv.Type().Field(i).Name
		if cv.Field(i).IsZero() {
			t.Fatalf("the test leaves Config.%s zero: give it a value", name)
		}
		if name == "OldImage" || name == "Removes" {
			continue
		}
		got := ov.FieldByName(name)
		if !got.IsValid() || !reflect.DeepEqual(got.Interface(), cv.Field(i).Interface()) {
			t.Errorf("Config.%s = %v is not carried into the core's options", name, cv.Field(i).Interface())
		}
	}
}
