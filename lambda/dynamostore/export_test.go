package dynamostore

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// ObserveCapacity sets the test hook that sees every request's reported
// and computed capacity.
func ObserveCapacity(f func(reported *idempotency.Capacity, computed idempotency.Capacity)) {
	observeCapacity = f
}

// KeyAttributesOf is s.keyAttributes, for the tests of package
// dynamostore_test.
func KeyAttributesOf(s *Store) []string { return s.keyAttributes() }

// ItemKeyOf is s.itemKey, for the tests of package dynamostore_test.
func ItemKeyOf(s *Store, key string) map[string]types.AttributeValue { return s.itemKey(key) }
