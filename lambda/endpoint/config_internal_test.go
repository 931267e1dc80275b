package endpoint

import (
	"reflect"
	"slices"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// httpFrom says which setting each field of the HTTP adapter's config
// carries.
var httpFrom = map[string]string{
	"Name": "Consumer", "ReplayHeaders": "ReplayHeaders", "HashHeaders": "HashHeaders",
	"MaxBodyBytes": "MaxRequestBytes", "MetricsNamespace": "MetricsNamespace",
}

// TestHTTPMappingIsFieldByField: httpConfigOf carries each setting into the
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
	cfg := httpConfigOf(s)
	handlers := []string{"Header", "MaxKeyBytes", "Optional", "Verifier", "Key", "Client", "Logger", "Metrics", "MetricsLevel", "Region", "Now"}
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
