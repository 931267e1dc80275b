package consumer

import (
	"fmt"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
)

// This file holds the rules of a shared table of the app's own design
// (DESIGN.md, "A shared table of the app's own design"): the props that
// declare it agree with a table of the app, and apply to a given Table
// only. The rules of the design itself (names the store can use, a sort
// key's value) are the runtime contract's, which the handler applies at
// init in the same words (contract.Settings.Problems); the key types are
// table.Problems'.

// WarnTablePartitionScope: the record key is in the sort key
// (TableKeyInSortKey), so IAM scopes the consumer to its partition value,
// not to its namespace.
const WarnTablePartitionScope = "idempotent-consumer:tablePartitionScope"

// designProblems checks the props of the table's design against the
// given Table: none without a Table (the construct's table is of its own
// design), and, for a table the app defines, keys that are the table's.
// It reads the props and the settings and writes neither.
func (p *IdempotentConsumerProps) designProblems(s *settings) []string {
	var out []string
	declared := []struct {
		prop string
		set  bool
	}{
		{"TablePartitionKey", p.TablePartitionKey != nil}, {"TableSortKey", p.TableSortKey != nil},
		{"TableKeyInSortKey", p.TableKeyInSortKey != nil}, {"TableFixedKeyValue", p.TableFixedKeyValue != nil},
		{"TableTTLAttribute", p.TableTTLAttribute != nil},
	}
	if p.Table == nil {
		for _, d := range declared {
			if d.set {
				out = append(out, fmt.Sprintf("%s is set, but Table is not: the props of a table's design describe a given Table (shared-table mode), and the table the construct creates is of its own design (partition key %q, no sort key, TTL on %q); remove %s, or give the Table it describes", d.prop, PartitionKey, TTLAttribute, d.prop))
			}
		}
		return out
	}
	k := s.tableKeys
	if !k.Known {
		return nil
	}
	path := *p.Table.Node().Path()
	if v := p.TablePartitionKey; v != nil && *v != k.Partition {
		out = append(out, fmt.Sprintf("TablePartitionKey is %q, but the partition key of Table %s is %q: the construct reads the key schema of a table the app defines; leave TablePartitionKey nil, or give %q", *v, path, k.Partition, k.Partition))
	}
	if v := p.TableSortKey; v != nil && *v != k.Sort {
		has := fmt.Sprintf("is %q", k.Sort)
		if k.Sort == "" {
			has = "does not exist (the table has none)"
		}
		out = append(out, fmt.Sprintf("TableSortKey is %q, but the sort key of Table %s %s: the construct reads the key schema of a table the app defines; leave TableSortKey nil", *v, path, has))
	}
	return out
}

// partitionScopeWarnings is the warning that IAM cannot scope a consumer
// whose record key is in the sort key to its namespace: dynamodb:LeadingKeys
// holds the partition key's values only, so the role is scoped to the
// partition value, which consumers may share.
func partitionScopeWarnings(path string, r contract.Settings) []synthWarning {
	if r.TableRecordKeyIn != contract.KeyInSort {
		return nil
	}
	return []synthWarning{{WarnTablePartitionScope, fmt.Sprintf("Table %s holds this consumer's records in its sort key %q, under the partition value %q (TableKeyInSortKey): IAM's dynamodb:LeadingKeys condition sees the partition key only, so the role is scoped to that partition value (ForAllValues:StringEquals), not to the namespace %q: a consumer of another namespace given the same partition value can overwrite or delete this consumer's records, and this one theirs. Give each consumer a partition value of its own (the default TableFixedKeyValue, %q and the Namespace, is one), or keep the record key in the partition key (TableKeyInSortKey false), where the role is scoped to %q.",
		path, r.TableSortKey, r.TableFixedKeyValue, r.Namespace, DefaultPartitionValuePrefix, table.LeadingKeys(r.Namespace))}}
}
