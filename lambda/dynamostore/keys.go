package dynamostore

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Option configures a Store for a table of the app's own design: a shared,
// single-table design whose primary key and TTL attribute are named by the
// app, with a sort key. The default is the table the construct creates: a
// string partition key "pk" holding the record's key, no sort key,
// TTL on "ttl".
//
// The record's key is "<namespace>#<key>" (the key possibly hashed, see
// idempotency.Config.KeySecret). Where it goes:
//   - without a sort key, or with WithSortKey: in the partition key, so
//     that IAM can scope each consumer to its namespace (the condition
//     dynamodb:LeadingKeys like "<namespace>#*");
//   - with WithKeyInSortKey: in the sort key, under a partition key value
//     derived from the namespace. dynamodb:LeadingKeys only ever sees the
//     partition key, so IAM can scope a consumer to its partition value
//     (exactly, "StringEquals") but not to its records within a partition
//     that several consumers share: give each namespace a partition value
//     of its own if one consumer must not write another's records.
//
// Whatever the design, a record is one item, and the attributes other than
// the key and TTL keep the names of package schema.
type Option func(*Store)

// WithPartitionKey names the table's partition key attribute (a string).
// Default: "pk". An empty name keeps the default.
func WithPartitionKey(name string) Option {
	return func(s *Store) {
		if name != "" {
			s.partition = name
		}
	}
}

// WithSortKey is for a table with a sort key (a string) named name: the
// record's key stays in the partition key and the sort key holds
// value(namespace), for example a fixed "IDEMPOTENCY" (func(string) string
// { return "IDEMPOTENCY" }) or one derived from the namespace. The value
// must not be empty. It replaces an earlier WithKeyInSortKey.
func WithSortKey(name string, value func(namespace string) string) Option {
	return func(s *Store) {
		if name != "" && value != nil {
			s.sort, s.sortValue, s.partitionValue = name, value, nil
		}
	}
}

// WithKeyInSortKey is for a table with a sort key (a string) named name
// that holds the record's key, under the partition key value
// partition(namespace): the layout of the most used peer library, whose
// records share a static partition value ("idempotency#<function>"). The
// value must not be empty. See Option for what IAM can then scope. It
// replaces an earlier WithSortKey.
func WithKeyInSortKey(name string, partition func(namespace string) string) Option {
	return func(s *Store) {
		if name != "" && partition != nil {
			s.sort, s.partitionValue, s.sortValue = name, partition, nil
		}
	}
}

// WithTTLAttribute names the attribute the table's TTL is enabled on
// (epoch seconds). Default: "ttl". An empty name keeps the
// default.
func WithTTLAttribute(name string) Option {
	return func(s *Store) {
		if name != "" {
			s.ttl = name
		}
	}
}

// KeyAttributes returns the names of the table's key attributes the store
// writes: the partition key, and the sort key if it has one.
func (s *Store) KeyAttributes() []string {
	if s.sort == "" {
		return []string{s.partition}
	}
	return []string{s.partition, s.sort}
}

// ItemKey returns the primary key of the item that holds the record of key
// (a record key, "<namespace>#<key>").
func (s *Store) ItemKey(key string) map[string]types.AttributeValue {
	item := make(map[string]types.AttributeValue, 2)
	s.putKey(item, key)
	return item
}

// putKey puts the key attributes of the record key into item.
func (s *Store) putKey(item map[string]types.AttributeValue, key string) {
	str := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	switch {
	case s.sortValue != nil:
		item[s.partition], item[s.sort] = str(key), str(s.sortValue(namespace(key)))
	case s.partitionValue != nil:
		item[s.partition], item[s.sort] = str(s.partitionValue(namespace(key))), str(key)
	default:
		item[s.partition] = str(key)
	}
}

// keySize is the size of putKey's attributes (recordSize).
func (s *Store) keySize(key string) int {
	switch {
	case s.sortValue != nil:
		return len(s.partition) + len(key) + len(s.sort) + len(s.sortValue(namespace(key)))
	case s.partitionValue != nil:
		return len(s.partition) + len(s.partitionValue(namespace(key))) + len(s.sort) + len(key)
	}
	return len(s.partition) + len(key)
}

// recordKeyAttribute is the attribute that holds the record's key.
func (s *Store) recordKeyAttribute() string {
	if s.partitionValue != nil {
		return s.sort
	}
	return s.partition
}

// namespace is the namespace of a record key: what precedes its first '#'
// (a namespace holds none).
func namespace(key string) string {
	ns, _, _ := strings.Cut(key, "#")
	return ns
}
