package dynamostore

import (
	"fmt"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// FromSettings returns the DynamoDB store over s's table, of the table's design
// that s describes (TablePartitionKey, TableSortKey, TableRecordKeyIn,
// TableFixedKeyValue, TableTTLAttribute): the store every entry
// point builds, for a caller that brings its own client (handler.WithStore). The record
// key goes where TableRecordKeyIn says, and the other key, if the table has
// a sort key, holds TableFixedKeyValue (WithSortKey or
// WithKeyInSortKey). A design the store cannot use is an error that names
// the variables that carry it; s is usually what contract.Decode returns,
// which refuses such a design already.
func FromSettings(api API, s contract.Settings) (*Store, error) {
	opts := []Option{WithPartitionKey(s.TablePartitionKey), WithTTLAttribute(s.TableTTLAttribute)}
	if s.TableSortKey != "" {
		value := s.TableFixedKeyValue
		fixed := func(string) string { return value }
		if s.TableRecordKeyIn == contract.KeyInSort {
			opts = append(opts, WithKeyInSortKey(s.TableSortKey, fixed))
		} else {
			opts = append(opts, WithSortKey(s.TableSortKey, fixed))
		}
	}
	store := New(api, s.Table, opts...)
	err := store.Err()
	if err == nil && s.TableSortKey != "" && s.TableFixedKeyValue == "" {
		err = fmt.Errorf("the table's sort key %q has no value to hold", s.TableSortKey)
	}
	if err != nil {
		return nil, fmt.Errorf("the table's design (%s=%q, %s=%q, %s=%q, %s=%q, %s=%q): %w",
			contract.PartitionKeyVar, s.TablePartitionKey, contract.SortKeyVar, s.TableSortKey, contract.RecordKeyInVar, s.TableRecordKeyIn,
			contract.FixedKeyValueVar, s.TableFixedKeyValue, contract.TTLAttributeVar, s.TableTTLAttribute, err)
	}
	return store, nil
}
