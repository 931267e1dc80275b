package family

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/bundle"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/sweeper"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
)

// The table in two Regions (DESIGN.md, "Two Regions"): a global table in
// multi-Region strong consistency (MRSC), created by the construct in the
// first of GlobalTable.Regions and imported by name in the others, or a
// Table of the app read as one, or an imported Table declared as one. Its
// rules: the Regions MRSC allows, and what MRSC does not support (TTL,
// local secondary indexes, transactions). A global table in eventual
// consistency is table.Problems's refusal.

// globalSettings are GlobalTable's, resolved.
type globalSettings struct {
	set bool
	// regions are GlobalTable.Regions in their order (the first creates
	// the table), witness its WitnessRegion, name its TableName.
	regions       []string
	witness, name string
}

// readGlobal reads GlobalTable and the Regions of a given Table: the
// table's replication, read (a table of the app) or declared.
func (s *Settings) readGlobal(p *core.Props) {
	if p.Table != nil {
		s.replication = table.ReplicationOf(p.Table)
	}
	g := p.GlobalTable
	if g == nil {
		return
	}
	s.global = globalSettings{set: true, witness: Str(g.WitnessRegion, ""), name: Str(g.TableName, "")}
	if g.Regions != nil {
		for _, r := range *g.Regions {
			s.global.regions = append(s.global.regions, Str(r, ""))
		}
	}
	if !s.replication.Known {
		regions := slices.Clone(s.global.regions)
		sort.Strings(regions)
		s.replication = table.Replication{Known: true, Regions: regions, Witness: s.global.witness, Strong: true}
	}
}

// Strong says the idempotency table is in multi-Region strong consistency.
func (s *Settings) Strong() bool { return s.replication.Strong }

// globalRules are the rules of GlobalTable and of an MRSC table.
var globalRules = []Rule[*Settings]{
	{Reads: []string{"GlobalTable", "Table"}, Check: Problem(globalProblems)},
	{Reads: []string{"GlobalTable", "Table"}, Check: Problem(regionProblems)},
	{Reads: []string{"GlobalTable", "Table", "TransactionalTables"}, Check: Problem(strongProblems)},
}

// globalProblems checks GlobalTable against Table: a table the app defines
// is read, not declared; the construct's own needs a name by which the
// other Regions find it.
func globalProblems(s *Settings) []string {
	p, g := s.props, s.global
	if !g.set {
		return nil
	}
	var out []string
	for _, r := range *orEmpty(p.GlobalTable.Regions) {
		if r == nil || *awscdk.Token_IsUnresolved(r) {
			out = append(out, "GlobalTable.Regions holds a nil or a token; give the Region names, for example jsii.Strings(\"us-east-1\", \"us-east-2\")")
			break
		}
	}
	switch {
	case p.Table != nil && s.tableKeys.Known:
		out = append(out, fmt.Sprintf("GlobalTable is set, but Table %s is defined in the app, and the construct reads its Regions and consistency; remove GlobalTable (it declares an imported Table)", *p.Table.Node().Path()))
	case p.Table != nil && p.GlobalTable.TableName != nil:
		out = append(out, "GlobalTable.TableName is set, but so is Table, which has its name; remove TableName (it names the table the construct creates)")
	case p.Table == nil && (g.name == "" || *awscdk.Token_IsUnresolved(jsii.String(g.name))):
		out = append(out, "GlobalTable.TableName is required without Table: the construct creates the table in the first of Regions, and the stacks of the other Regions import it by that name; give a literal name, the same in every Region's stack")
	}
	return out
}

// regionProblems checks the Regions of an MRSC table, declared or read:
// exactly three (replicas and witness), distinct, of one Region set.
func regionProblems(s *Settings) []string {
	r := s.replication
	if !r.Strong {
		return nil
	}
	all := slices.Clone(r.Regions)
	if r.Witness != "" {
		all = append(all, r.Witness)
	}
	var out []string
	if len(all) != limits.MRSCRegions {
		out = append(out, fmt.Sprintf("the MRSC table spans %d Regions (%s), but DynamoDB deploys an MRSC global table in exactly %d: three replicas, or two and a witness; give GlobalTable.Regions three Regions, or two and a WitnessRegion", len(all), strings.Join(all, ", "), limits.MRSCRegions))
	}
	seen, sets := map[string]bool{}, map[string]bool{}
	for _, region := range all {
		if seen[region] {
			out = append(out, fmt.Sprintf("the MRSC table names the Region %s twice (replicas and witness are in three distinct Regions); give three distinct Regions", region))
		}
		seen[region] = true
		set, ok := limits.MRSCRegionSet(region)
		if !ok {
			out = append(out, fmt.Sprintf("Region %q is in no MRSC Region set, so DynamoDB cannot create the table there; give Regions of one set: %s", region, regionSets()))
			continue
		}
		sets[set] = true
	}
	if len(sets) > 1 {
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range sets {
				if !yield(n) {
					return
				}
			}
		})
		out = append(out, fmt.Sprintf("the MRSC table's Regions (%s) span the Region sets %s, but an MRSC global table cannot span Region sets; give Regions of one set: %s", strings.Join(all, ", "), strings.Join(names, " and "), regionSets()))
	}
	return out
}

// regionSets writes MRSC's Region sets, as a message gives them.
func regionSets() string {
	var parts []string
	for _, name := range []string{"US", "EU", "AP"} {
		parts = append(parts, name+" ("+strings.Join(limits.MRSCRegionSets[name], ", ")+")")
	}
	return strings.Join(parts, "; ")
}

// strongProblems are what MRSC does not support, on a table of the app and
// in the props: TTL, local secondary indexes, and transactions (a
// transactional effect writes its record and its business items in one
// TransactWriteItems).
func strongProblems(s *Settings) []string {
	if !s.Strong() {
		return nil
	}
	var out []string
	if t := s.tableTTL; s.Table != nil && t.known && t.enabled {
		out = append(out, fmt.Sprintf("Table %s has its TTL on %q, but DynamoDB does not support TTL on an MRSC global table, so the deployment fails; remove its TimeToLiveAttribute: the construct's sweeper deletes the records whose TTL attribute has passed (DESIGN.md, \"Two Regions\")", *s.Table.Node().Path(), t.attribute))
	}
	if lsi := s.replication.LocalIndexes; len(lsi) > 0 {
		out = append(out, fmt.Sprintf("Table %s has local secondary indexes (%s), but DynamoDB does not support them on an MRSC global table, so the deployment fails; remove them (a global secondary index is supported)", *s.Table.Node().Path(), strings.Join(lsi, ", ")))
	}
	if len(s.TxTables) > 0 {
		out = append(out, TransactionsProblem("TransactionalTables is set"))
	}
	return out
}

// TransactionsProblem is the refusal of transactions on an MRSC table:
// what asks for them (the prop, or the handler's bootstrap), why and the
// fix.
func TransactionsProblem(what string) string {
	return what + ", but the idempotency table is in multi-Region strong consistency (MRSC), which supports no transaction operations: every TransactWriteItems of the effect with its record would fail, and every record end in the dead-letter queue; fix: run the effect without a transaction (sqsbatch.Start, kinesis.Start, an effect that writes its business items itself), or keep this construct on a table of one Region for its transactional effect (DESIGN.md, \"Two Regions\")"
}

// orEmpty is the list l points to, or an empty one.
func orEmpty(l *[]*string) *[]*string {
	if l == nil {
		return &[]*string{}
	}
	return l
}

// localRegion is the Region of scope's stack, which must be one of the
// MRSC table's replicas: the construct's function runs on its local
// replica.
func (s *Settings) localRegion(scope constructs.Construct) string {
	region := awscdk.Stack_Of(scope).Region()
	if region == nil || *awscdk.Token_IsUnresolved(region) {
		s.fail(fmt.Sprintf("the idempotency table is an MRSC global table, but the stack %s has no concrete Region, so the construct cannot tell which replica is local; give the stack its Region (awscdk.StackProps.Env)", *awscdk.Stack_Of(scope).Node().Path()))
	}
	if !slices.Contains(s.replication.Regions, *region) {
		what := "not one of its replicas' Regions"
		if *region == s.replication.Witness {
			what = "its witness, which serves no request"
		}
		s.fail(fmt.Sprintf("the stack's Region %s is %s (%s): the function runs on the replica of its Region; deploy this stack in one of %s", *region, what, strings.Join(s.replication.Regions, ", "), strings.Join(s.replication.Regions, ", ")))
	}
	return *region
}

// fail panics with the construct's refusal of problem.
func (s *Settings) fail(problem string) {
	panic(Fail(s.Kind, s.ID, []string{problem}))
}

// globalTable is the MRSC table of GlobalTable without Table: created in
// scope in the first Region, imported by its name in the others.
func (s *Settings) globalTable(scope constructs.Construct, region string) awsdynamodb.ITable {
	g := s.global
	if region != g.regions[0] {
		return table.ImportGlobal(scope, ids.GlobalTable, g.name)
	}
	return table.NewGlobal(scope, ids.GlobalTable, g.name, g.regions[1:], g.witness, s.Removal)
}

// homeRegion is the Region that sweeps an MRSC table: the first of
// GlobalTable.Regions, or the Region of the stack of a table of the app.
func (s *Settings) homeRegion(t awsdynamodb.ITable) string {
	if s.global.set && len(s.global.regions) > 0 {
		return s.global.regions[0]
	}
	return *awscdk.Stack_Of(t).Region()
}

// sweep creates the sweeper of the MRSC table t in scope's stack, unless
// the app has one for t already: one per table, in its home Region.
func (s *Settings) sweep(scope constructs.Construct, t awsdynamodb.ITable) {
	root, ok := scope.Node().Root().(constructs.Construct)
	if !ok {
		return
	}
	holder, ok := root.Node().TryFindChild(jsii.String(ids.Sweepers)).(constructs.Construct)
	if !ok {
		holder = constructs.NewConstruct(root, jsii.String(ids.Sweepers))
	}
	sum := sha256.Sum256([]byte(table.Key(t)))
	id := hex.EncodeToString(sum[:4])
	if holder.Node().TryFindChild(jsii.String(id)) != nil {
		return
	}
	constructs.NewConstruct(holder, jsii.String(id))
	dir, err := bundle.PackageDir(sweeper.Entry)
	if err != nil {
		s.fail(err.Error())
	}
	asset, err := bundle.Dir(dir, s.Goarch)
	if err != nil {
		s.fail(err.Error())
	}
	stack := awscdk.Stack_Of(scope)
	sweeper.New(constructs.NewConstruct(stack, jsii.String(ids.SweeperPrefix+id)), sweeper.Config{
		Table: t, Design: s.Runtime, AssetDir: asset, Architecture: s.Architecture,
		Interval: limits.DefaultSweepInterval, AlarmAction: s.AlarmAction,
	})
}
