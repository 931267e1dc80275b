package guardconfig_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/guardconfig"
)

// guardFrom says which setting each field of the guard's config carries.
var (
	guardFrom = map[string]string{
		"Namespace": "Namespace", "Window": "Window", "TTLAfterWindow": "TTLAfterWindow", "LeaseMax": "LeaseMax",
		"FinishBudget": "FinishBudget", "PayloadIgnore": "PayloadIgnore", "CacheSize": "CacheSize", "KeySecret": "KeySecret",
	}
)

// TestMappingIsFieldByField: Of carries each setting
// into the field of the same meaning. The settings are every entry's
// example at once, pairwise different within a type, so that two fields
// swapped in the mapping, or one dropped, change a compared value.
func TestMappingIsFieldByField(t *testing.T) {
	env := map[string]string{}
	for _, f := range contract.Fields() {
		env[f.Var] = f.Example
	}
	s, err := contract.Decode(func(k string) string { return env[k] }, "")
	if err != nil {
		t.Fatalf("the examples together are not valid settings: %v", err)
	}
	// The examples must tell fields of one type apart, or a swap of two
	// of them would go unseen.
	byValue := map[string]string{}
	sv := reflect.ValueOf(s)
	for i := range sv.NumField() {
		k := fmt.Sprintf("%s=%v", sv.Field(i).Type(), sv.Field(i).Interface())
		if other, dup := byValue[k]; dup {
			t.Errorf("the examples of %s and %s are equal (%s): a swap of the two would go unseen", other, sv.Type().Field(i).Name, k)
		}
		byValue[k] = sv.Type().Field(i).Name
	}
	for _, tc := range []struct {
		config any
		// from says which setting each field of the config carries; fields
		// in handlerSets are the handler's own choice, zero here; fields in
		// sourceSets follow from the source.
		from        map[string]string
		handlerSets []string
		sourceSets  []string
	}{
		{guardconfig.Of(s), guardFrom, []string{"ExpiryRetries", "Now", "MaxResultBytes"}, nil},
	} {
		cv := reflect.ValueOf(tc.config)
		for i := range cv.NumField() {
			name := cv.Type().Field(i).Name
			got := cv.Field(i).Interface()
			setting, mapped := tc.from[name]
			switch {
			case mapped:
				want := sv.FieldByName(setting).Interface()
				if str, ok := want.(string); ok && cv.Field(i).Kind() == reflect.Slice {
					want = []byte(str) // KeySecret
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%T.%s = %v, want %v (the setting %s)", tc.config, name, got, want, setting)
				}
			case slices.Contains(tc.handlerSets, name):
				if !cv.Field(i).IsZero() {
					t.Errorf("%T.%s = %v; it is the handler's to set", tc.config, name, got)
				}
			case slices.Contains(tc.sourceSets, name):
			default:
				t.Errorf("%T.%s is neither mapped from a setting nor the handler's: map it, or say why not", tc.config, name)
			}
		}
	}
}
