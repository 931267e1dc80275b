package dynamostore

import (
	"fmt"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// FromEnv returns the DynamoDB store over the table of a consumer's
// environment, read through getenv (os.Getenv, or a test's
// contract.Env.Getenv): the table contract.TableVar names, of the design its
// variables describe (contract.PartitionKeyVar, SortKeyVar, RecordKeyInVar,
// FixedKeyValueVar, TTLAttributeVar; absent, the table the constructs
// create). It is the store every entry point builds, for a caller that
// brings its own client (handler.WithStore) or a tool that reads a
// consumer's records. The record key goes where RecordKeyInVar says, and
// the other key, if the table has a sort key, holds FixedKeyValueVar's
// value (WithSortKey or WithKeyInSortKey). A design the store cannot use is
// an error that names the variables that carry it.
func FromEnv(api API, getenv func(string) string) (*Store, error) {
	s, err := contract.DecodeTable(getenv)
	if err != nil {
		return nil, err
	}
	return fromSettings(api, s)
}

// fromSettings returns the store over s's table, of the table's design
// that s describes (TablePartitionKey, TableSortKey, TableRecordKeyIn,
// TableFixedKeyValue, TableTTLAttribute).
func fromSettings(api API, s contract.Settings) (*Store, error) {
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
