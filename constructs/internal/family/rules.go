package family

import (
	"fmt"
	"sort"
	"strings"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// Rule is one rule of a construct's props, as data: the props it reads,
// and its check, which returns a problem (a refusal: the value given, the
// rule and the fix) or a warning (what the construct cannot check at
// synth, stated) per breach. A check reads the settings and writes
// nothing. S is the settings the rule reads: *Settings for the shared
// rules, a construct's own for its rules.
type Rule[S any] struct {
	// Reads are the props the rule judges.
	Reads []string
	// Check returns the rule's problems and warnings for s.
	Check func(s S) (problems []string, warnings []Warning)
}

// Warning is a synth warning: its id (for
// awscdk.Annotations_Of(scope).AcknowledgeWarning) and its message.
type Warning struct{ ID, Message string }

// Evaluate runs every rule once over s: all their problems and warnings,
// in the rules' order.
func Evaluate[S any](s S, rules []Rule[S]) (problems []string, warnings []Warning) {
	for _, r := range rules {
		p, w := r.Check(s)
		problems, warnings = append(problems, p...), append(warnings, w...)
	}
	return problems, warnings
}

// Problem adapts a check that has problems only.
func Problem[S any](check func(S) []string) func(S) ([]string, []Warning) {
	return func(s S) ([]string, []Warning) { return check(s), nil }
}

// Warns adapts a check that has warnings only.
func Warns[S any](check func(S) []Warning) func(S) ([]string, []Warning) {
	return func(s S) ([]string, []Warning) { return nil, check(s) }
}

// Rules are the rules of the shared props, on every construct.
var Rules = append(append([]Rule[*Settings]{
	{Reads: []string{"Entry"}, Check: Problem(entryProblems)},
}, functionRules...), append(tableRules, globalRules...)...)

// tableRules are the rules of the table, its design and the runtime
// settings.
var tableRules = []Rule[*Settings]{
	{Reads: []string{"Table", "Namespace"}, Check: Problem(namespaceProblems)},
	{Reads: []string{"Table", "SingleWritingRegion"}, Check: Problem(tableProblems)},
	{Reads: []string{"Table", "TablePartitionKey", "TableSortKey", "TableKeyInSortKey", "TableFixedKeyValue", "TableTTLAttribute"}, Check: Problem(designProblems)},
	{Reads: []string{"Table", "TableTTLAttribute"}, Check: ttlFindings},
	{Reads: []string{"Table", "TablePartitionKey", "TableSortKey", "TableKeyInSortKey", "TableFixedKeyValue"}, Check: Warns(importedTableWarnings)},
	{Reads: []string{"Table", "TableKeyInSortKey"}, Check: Warns(partitionScopeWarnings)},
	{Reads: []string{"Environment"}, Check: Problem(environmentProblems)},
	{Reads: []string{"TransactionalTables"}, Check: Problem(txTableProblems)},
	{Reads: []string{"the runtime settings"}, Check: Problem(runtimeProblems)},
}

func entryProblems(s *Settings) []string {
	if strings.TrimSpace(s.Entry) == "" {
		return []string{"Entry is required: set it to the directory of the handler's main package, for example jsii.String(\"cmd/charge\")"}
	}
	return nil
}

func namespaceProblems(s *Settings) []string {
	switch p := s.props; {
	case p.Table != nil && p.Namespace == nil:
		return []string{"Table is given (shared-table mode), so Namespace is required: the default, the construct id in lower case, is the same for a construct of that id in another stack, and two constructs with one namespace on one table suppress each other's facts; set Namespace to a name that is this construct's alone"}
	case p.Namespace == nil && s.Runtime.Namespace == "":
		return []string{fmt.Sprintf("the construct id %q gives no namespace: the default Namespace is the id in lower case without the characters a namespace cannot hold ('#', '*', '?', control characters), and none is left; set Namespace to a short name (for example \"orders\")", s.ID)}
	}
	return nil
}

func tableProblems(s *Settings) []string {
	if s.Table == nil {
		return nil
	}
	p := s.props
	return table.Problems(s.Table, p.SingleWritingRegion != nil && *p.SingleWritingRegion)
}

// environmentProblems refuses a variable of the runtime contract in
// Environment: the construct writes them from its props.
func environmentProblems(s *Settings) []string {
	var refused []string
	for k := range s.Environment {
		if _, ok := ContractProp(k); ok {
			refused = append(refused, k)
		}
	}
	sort.Strings(refused)
	var out []string
	for _, k := range refused {
		prop, _ := ContractProp(k)
		out = append(out, fmt.Sprintf("Environment sets %s, a variable of the runtime contract that the construct sets itself; remove it from Environment and use %s instead", k, prop))
	}
	return out
}

// ContractProp returns the prop that sets the variable name of the runtime
// contract (contract.Fields), and whether name is one.
func ContractProp(name string) (string, bool) {
	if name == contract.VersionVar {
		return "the construct itself", true
	}
	f, ok := contract.FieldOf(name)
	return f.Prop, ok
}

func txTableProblems(s *Settings) []string {
	p := s.props
	if p.TransactionalTables == nil {
		return nil
	}
	var out []string
	for i, t := range *p.TransactionalTables {
		if t == nil {
			out = append(out, fmt.Sprintf("TransactionalTables[%d] is nil; remove it, or give the table the transactional effect writes", i))
		}
	}
	return out
}

// runtimeProblems are the runtime contract's rules, which the handler
// applies at init in the same words (contract.Settings.Problems), so that
// what deploys starts. A missing namespace is said by namespaceProblems.
func runtimeProblems(s *Settings) []string {
	checked := s.Runtime
	if checked.Namespace == "" && s.props.Namespace == nil {
		checked.Namespace = "said-above"
	}
	return checked.Problems()
}
