package family

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
)

// The table's design (DESIGN.md, "A shared table of the app's own
// design"): the construct's own table, or a given Table's design as the app
// defines it (its key schema, its TTL attribute), else as the props declare
// it (an imported table), else the construct's. Every construct of the
// family writes the same variables from it, so that its handler writes the
// items the table takes.

// read reads, from the props and the resources they name, what the rules
// judge (a given table's keys and TTL, the layers' architectures), and
// computes the runtime's table design from them.
func (s *Settings) read(p *core.Props) {
	if p.Layers != nil {
		for _, l := range *p.Layers {
			if l != nil {
				s.layers = append(s.layers, layerInfoOf(l))
			}
		}
	}
	s.readGlobal(p)
	if p.Table == nil {
		return // the construct's table: the contract's defaults; designProblems refuses the props
	}
	s.tableTTL = ttlOf(p.Table)
	s.tableKeys = table.KeysOf(p.Table)
	r := &s.Runtime
	r.TablePartitionKey = Str(p.TablePartitionKey, r.TablePartitionKey)
	r.TableSortKey = Str(p.TableSortKey, r.TableSortKey)
	if k := s.tableKeys; k.Known {
		r.TablePartitionKey, r.TableSortKey = k.Partition, k.Sort
	}
	if p.TableKeyInSortKey != nil && *p.TableKeyInSortKey {
		r.TableRecordKeyIn = contract.KeyInSort
	}
	def := ""
	if r.TableSortKey != "" {
		def = r.Namespace
		if r.TableRecordKeyIn == contract.KeyInSort {
			def = DefaultPartitionValuePrefix + r.Namespace
		}
	}
	r.TableFixedKeyValue = Str(p.TableFixedKeyValue, def)
	r.TableTTLAttribute = Str(p.TableTTLAttribute, r.TableTTLAttribute)
	if t := s.tableTTL; t.known && t.enabled && t.attribute != "" && p.TableTTLAttribute == nil {
		r.TableTTLAttribute = t.attribute
	}
}

// designProblems checks the props of the table's design against the given
// Table: none without a Table (the construct's table is of its own
// design), and, for a table the app defines, keys that are the table's.
func designProblems(s *Settings) []string {
	p := s.props
	declared := []struct {
		prop string
		set  bool
	}{
		{"TablePartitionKey", p.TablePartitionKey != nil}, {"TableSortKey", p.TableSortKey != nil},
		{"TableKeyInSortKey", p.TableKeyInSortKey != nil}, {"TableFixedKeyValue", p.TableFixedKeyValue != nil},
		{"TableTTLAttribute", p.TableTTLAttribute != nil},
	}
	var out []string
	if p.Table == nil {
		for _, d := range declared {
			if d.set {
				out = append(out, fmt.Sprintf("%s is set, but Table is not: the props of a table's design describe a given Table (shared-table mode), and the table the construct creates is of its own design (partition key %q, no sort key, TTL on %q); remove %s, or give the Table it describes", d.prop, schema.Key, schema.TTL, d.prop))
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

// importedTableWarnings is the warning that an imported Table's key schema
// cannot be read at synth: it names the schema the handler will write
// (declared by the props, or the construct's design), so that a table of
// another design is seen before every write fails.
func importedTableWarnings(s *Settings) []Warning {
	if s.Table == nil || s.tableKeys.Known {
		return nil
	}
	r := s.Runtime
	keys := table.Keys{Partition: r.TablePartitionKey, PartitionType: "S", Sort: r.TableSortKey, SortType: "S"}
	where := "the record key \"<Namespace>#<key>\" in the partition key"
	switch {
	case r.TableRecordKeyIn == contract.KeyInSort:
		where = fmt.Sprintf("the record key in the sort key, under the partition value %q", r.TableFixedKeyValue)
	case r.TableSortKey != "":
		where += fmt.Sprintf(", the sort key %q", r.TableFixedKeyValue)
	}
	return []Warning{{core.WarnTableImported, fmt.Sprintf("Table %s is imported, so the construct cannot read its key schema at synth: the handler will write items of the key schema %s (%s): if the table's is another, every write fails (ValidationException); declare the table's design with TablePartitionKey, TableSortKey, TableKeyInSortKey and TableFixedKeyValue, or give the table the app defines.",
		*s.Table.Node().Path(), keys, where)}}
}

// partitionScopeWarnings is the warning that IAM cannot scope a construct
// whose record key is in the sort key to its namespace: dynamodb:LeadingKeys
// holds the partition key's values only, so the role is scoped to the
// partition value, which constructs may share.
func partitionScopeWarnings(s *Settings) []Warning {
	r := s.Runtime
	if s.Table == nil || r.TableRecordKeyIn != contract.KeyInSort {
		return nil
	}
	return []Warning{{core.WarnTablePartitionScope, fmt.Sprintf("Table %s holds this consumer's records in its sort key %q, under the partition value %q (TableKeyInSortKey): IAM's dynamodb:LeadingKeys condition sees the partition key only, so the role is scoped to that partition value (ForAllValues:StringEquals), not to the namespace %q: a consumer of another namespace given the same partition value can overwrite or delete this consumer's records, and this one theirs. Give each consumer a partition value of its own (the default TableFixedKeyValue, %q and the Namespace, is one), or keep the record key in the partition key (TableKeyInSortKey false), where the role is scoped to %q.",
		*s.Table.Node().Path(), r.TableSortKey, r.TableFixedKeyValue, r.Namespace, DefaultPartitionValuePrefix, table.LeadingKeys(r.Namespace))}}
}

// tableTTL is the TTL of a shared table as the construct can know it.
type tableTTL struct {
	attribute string
	enabled   bool
	known     bool
}

// ttlOf reads the TTL specification of a table the app defines.
func ttlOf(t awsdynamodb.ITable) tableTTL {
	var spec any
	switch l1 := t.Node().DefaultChild().(type) {
	case awsdynamodb.CfnTable:
		spec = l1.TimeToLiveSpecification()
	case awsdynamodb.CfnGlobalTable:
		spec = l1.TimeToLiveSpecification()
	default:
		return tableTTL{}
	}
	if spec == nil {
		return tableTTL{known: true}
	}
	m, ok := awscdk.Stack_Of(t).Resolve(spec).(map[string]any)
	if !ok {
		return tableTTL{}
	}
	name, _ := m["attributeName"].(string)
	enabled, _ := m["enabled"].(bool)
	return tableTTL{attribute: name, enabled: enabled, known: true}
}

// ttlFindings is the rule that a shared table's TTL, if any, is on the
// records' TTL attribute: a table has one TTL attribute, so a TTL on
// another one never deletes the records. A table without TTL keeps every
// record forever (a warning); an imported table cannot be read (a
// warning).
func ttlFindings(s *Settings) (problems []string, warnings []Warning) {
	if s.Table == nil || s.Strong() {
		return nil, nil // an MRSC table has no TTL: strongProblems, and the sweeper
	}
	path, ttl, want := *s.Table.Node().Path(), s.tableTTL, s.Runtime.TableTTLAttribute
	switch {
	case !ttl.known:
		warnings = append(warnings, Warning{core.WarnTableTTL, fmt.Sprintf("Table %s is imported, so the construct cannot read its TTL at synth; enable its TTL on the attribute %q, which the records carry (TableTTLAttribute declares another), or they are never deleted.", path, want)})
	case ttl.enabled && ttl.attribute != want:
		problems = append(problems, fmt.Sprintf("Table %s has its TTL on the attribute %q, but TableTTLAttribute is %q, where the records would carry their expiry, and a table has one TTL attribute, so the records would never be deleted; leave TableTTLAttribute nil (the construct reads the TTL attribute of a table the app defines), or give %q",
			path, ttl.attribute, want, ttl.attribute))
	case !ttl.enabled:
		warnings = append(warnings, Warning{core.WarnTableTTL, fmt.Sprintf("Table %s has no TTL, so the records are never deleted (each stays after its window; the table grows with every fact); set TimeToLiveAttribute %q on it.", path, want)})
	}
	return problems, warnings
}
