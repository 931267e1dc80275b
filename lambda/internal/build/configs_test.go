package build_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue"
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
	handlers := []string{"Logger", "Metrics", "MetricsLevel", "Region", "Visibility", "InProgressWait", "Random"}
	cv, sv := reflect.ValueOf(queue.ConfigOf(s)), reflect.ValueOf(s)
	for _, f := range reflect.VisibleFields(cv.Type()) {
		if f.Anonymous { // handler.Batch: its fields are visited too
			continue
		}
		name, field := f.Name, cv.FieldByIndex(f.Index)
		setting, mapped := batchFrom[name]
		switch {
		case mapped:
			if got, want := field.Interface(), sv.FieldByName(setting).Interface(); !reflect.DeepEqual(got, want) {
				t.Errorf("sqsbatch.Config.%s = %v, want %v (the setting %s)", name, got, want, setting)
			}
		case slices.Contains(handlers, name):
			if !field.IsZero() {
				t.Errorf("sqsbatch.Config.%s is set; it is the handler's", name)
			}
		default:
			t.Errorf("sqsbatch.Config.%s is neither mapped from a setting nor the handler's", name)
		}
	}
}

// streamFrom says which setting each stream source's configuration
// carries: the ones every batch source shares by batch.Of (lambda/internal/batch's
// TestOf), the images and the REMOVE choice by dynamodbstream's own
// (its TestOwnOf).
var streamFrom = map[string]string{
	"Concurrency": "BatchConcurrency", "MinRemaining": "MinRemaining", "Removes": "StreamRemoves",
	"Consumer": "Consumer", "MetricsNamespace": "MetricsNamespace", "OldImage": "StreamImages",
}

// TestEverySettingReachesItsUser: every setting is carried into a config
// (guardFrom, batchFrom), or is one that the handler reads
// itself (the table, the timeout the other rules are checked against, the
// declared tables), so that a new setting cannot be forgotten by both.
func TestEverySettingReachesItsUser(t *testing.T) {
	var mapped []string
	for _, m := range []map[string]string{guardFrom, batchFrom, streamFrom} {
		for _, setting := range m {
			mapped = append(mapped, setting)
		}
	}
	handlers := []string{"Table", "Timeout", "TxTables", "Source", // Source: each entry point's CheckSource (the handler's TestEntryPointsRefuseAnotherSource)
		"WebhookProvider", "WebhookSecret", "ClientAttribute", // the HTTP handler's verifier and client (lambda/endpoint's tests)
		"StepName",                                        // step.FromEnv (step/start_test.go)
		"ReplayHeaders", "HashHeaders", "MaxRequestBytes", // the HTTP adapter's config (lambda/endpoint's TestHTTPMappingIsFieldByField)
		// the table's design, which dynamostore.FromEnv maps onto the store's
		// options (pinned by the handler's TestNewStoreMapsTheDesign)
		"TablePartitionKey", "TableSortKey", "TableRecordKeyIn", "TableFixedKeyValue", "TableTTLAttribute"}
	for _, f := range contract.Fields() {
		if !slices.Contains(mapped, f.Setting) && !slices.Contains(handlers, f.Setting) {
			t.Errorf("the setting %s reaches neither the guard, the adapter, nor the handler", f.Setting)
		}
	}
}
