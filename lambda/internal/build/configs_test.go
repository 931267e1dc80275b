package build_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/streambatch"
)

// guardFrom and batchFrom say which setting each field of the guard's and
// the queue adapter's config carries.
var (
	guardFrom = map[string]string{
		"Namespace": "Namespace", "Window": "Window", "TTLAfterWindow": "TTLAfterWindow", "LeaseMax": "LeaseMax",
		"FinishBudget": "FinishBudget", "PayloadIgnore": "PayloadIgnore", "CacheSize": "CacheSize", "KeySecret": "KeySecret",
	}
	batchFrom = map[string]string{
		"Concurrency": "BatchConcurrency", "MinRemaining": "MinRemaining", "MaxMessageBytes": "MaxMessageBytes", "Delivery": "Delivery",
		"FIFO": "FIFO", "MaxReceiveCount": "MaxReceiveCount", "Consumer": "Consumer", "MetricsNamespace": "MetricsNamespace",
		"BackoffBase": "BackoffBase", "BackoffCap": "BackoffCap", "BackoffFIFOCap": "BackoffFIFOCap",
	}
)

func streamSettings(src contract.Source) contract.Settings {
	s := contract.Defaults(time.Minute)
	s.Table, s.Namespace, s.Consumer = "t", "ns", "c"
	s.Source = src
	s.StreamRemoves = contract.RemoveRun
	return s
}

// TestBatchMappingIsFieldByField: batchConfig carries each setting into the
// field of the same meaning (BackoffBase: 0, off, is the adapter's
// negative), and leaves the handler's own to the handler.
func TestBatchMappingIsFieldByField(t *testing.T) {
	env := map[string]string{}
	for _, f := range contract.Fields() {
		env[f.Var] = f.Example
	}
	s, err := contract.Decode(func(k string) string { return env[k] }, "")
	if err != nil {
		t.Fatalf("the examples together are not valid settings: %v", err)
	}
	handlers := []string{"Logger", "Metrics", "MetricsLevel", "Visibility", "InProgressWait", "Random"}
	cv, sv := reflect.ValueOf(queue.ConfigOf(s)), reflect.ValueOf(s)
	for i := range cv.NumField() {
		name := cv.Type().Field(i).Name
		setting, mapped := batchFrom[name]
		switch {
		case mapped:
			if got, want := cv.Field(i).Interface(), sv.FieldByName(setting).Interface(); !reflect.DeepEqual(got, want) {
				t.Errorf("sqsbatch.Config.%s = %v, want %v (the setting %s)", name, got, want, setting)
			}
		case slices.Contains(handlers, name):
			if !cv.Field(i).IsZero() {
				t.Errorf("sqsbatch.Config.%s is set; it is the handler's", name)
			}
		default:
			t.Errorf("sqsbatch.Config.%s is neither mapped from a setting nor the handler's", name)
		}
	}
}

// httpFrom says which setting each field of the HTTP adapter's config
// carries.
var httpFrom = map[string]string{
	"Name": "Consumer", "ReplayHeaders": "ReplayHeaders", "HashHeaders": "HashHeaders",
	"MaxBodyBytes": "MaxRequestBytes", "MetricsNamespace": "MetricsNamespace",
}

// TestHTTPMappingIsFieldByField: httpkey.ConfigOf carries each setting into the
// field of the same meaning, and leaves the handler's own to the handler.
func TestHTTPMappingIsFieldByField(t *testing.T) {
	env := map[string]string{contract.SourceVar: string(contract.SourceHTTP)}
	for _, f := range contract.Fields() {
		if _, set := env[f.Var]; !set {
			env[f.Var] = f.Example
		}
	}
	s, err := contract.Decode(func(k string) string { return env[k] }, "")
	if err != nil {
		t.Fatalf("the examples of an HTTP endpoint are not valid settings: %v", err)
	}
	cfg := httpkey.ConfigOf(s)
	handlers := []string{"Header", "MaxKeyBytes", "Optional", "Verifier", "Key", "Client", "Logger", "Metrics", "MetricsLevel", "Now"}
	cv, sv := reflect.ValueOf(cfg), reflect.ValueOf(s)
	for i := range cv.NumField() {
		name := cv.Type().Field(i).Name
		setting, mapped := httpFrom[name]
		switch {
		case mapped:
			if got, want := cv.Field(i).Interface(), sv.FieldByName(setting).Interface(); !reflect.DeepEqual(got, want) {
				t.Errorf("httpkey.Config.%s = %v, want %v (the setting %s)", name, got, want, setting)
			}
		case slices.Contains(handlers, name):
			if !cv.Field(i).IsZero() {
				t.Errorf("httpkey.Config.%s is set; it is the handler's", name)
			}
		default:
			t.Errorf("httpkey.Config.%s is neither mapped from a setting nor the handler's", name)
		}
	}
}

// streamFrom says which setting each field of the stream adapter's config
// carries (OldImage: StreamImages, by TestStreamConfig).
var streamFrom = map[string]string{
	"Concurrency": "BatchConcurrency", "MinRemaining": "MinRemaining", "Removes": "StreamRemoves",
	"Consumer": "Consumer", "MetricsNamespace": "MetricsNamespace", "OldImage": "StreamImages",
}

// TestStreamConfig: streambatch.ConfigOf carries each setting into its field.
func TestStreamConfig(t *testing.T) {
	s := streamSettings(contract.SourceDynamoDBStreams)
	s.BatchConcurrency, s.MinRemaining, s.StreamImages, s.StreamRemoves, s.MetricsNamespace = 7, 9*time.Second, contract.ImagesNewAndOld, contract.RemoveSkip, "Shop"
	got := streambatch.ConfigOf(s)
	want := streambatch.Config{Concurrency: 7, MinRemaining: 9 * time.Second, OldImage: true, Removes: contract.RemoveSkip, Consumer: "c", MetricsNamespace: "Shop"}
	if got.Concurrency != want.Concurrency || got.MinRemaining != want.MinRemaining || got.OldImage != want.OldImage || got.Removes != want.Removes || got.Consumer != want.Consumer || got.MetricsNamespace != want.MetricsNamespace {
		t.Errorf("StreamConfig() = %+v, want %+v", got, want)
	}
	if got.Logger != nil || got.Metrics != nil || got.MetricsLevel != "" {
		t.Error("StreamConfig set what is the handler's to choose")
	}
	s.StreamImages = contract.ImagesNew
	if streambatch.ConfigOf(s).OldImage {
		t.Error("ImagesNew asks for the old image")
	}
}

// TestEverySettingReachesItsUser: every setting is carried into a config
// (guardFrom, batchFrom), or is one that the handler reads
// itself (the table, the timeout the other rules are checked against, the
// declared tables), so that a new setting cannot be forgotten by both.
func TestEverySettingReachesItsUser(t *testing.T) {
	var mapped []string
	for _, m := range []map[string]string{guardFrom, batchFrom, streamFrom, httpFrom} {
		for _, setting := range m {
			mapped = append(mapped, setting)
		}
	}
	handlers := []string{"Table", "Timeout", "TxTables", "Source", // Source: each entry point's CheckSource (the handler's TestEntryPointsRefuseAnotherSource)
		"WebhookProvider", "WebhookSecret", "ClientAttribute", // the HTTP handler's verifier and client (lambda/endpoint's tests)
		"StepName", // step.FromEnv (step/start_test.go)
		// the table's design, which dynamostore.FromSettings maps onto the store's
		// options (pinned by the handler's TestNewStoreMapsTheDesign)
		"TablePartitionKey", "TableSortKey", "TableRecordKeyIn", "TableFixedKeyValue", "TableTTLAttribute"}
	for _, f := range contract.Fields() {
		if !slices.Contains(mapped, f.Setting) && !slices.Contains(handlers, f.Setting) {
			t.Errorf("the setting %s reaches neither the guard, the adapter, nor the handler", f.Setting)
		}
	}
}
