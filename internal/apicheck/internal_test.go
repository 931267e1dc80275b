package apicheck

import (
	"go/types"
	"slices"
	"strings"
	"testing"
)

// TestNoInternalTypes: no exported declaration of the library names a type
// of an internal package, which a user's module cannot name: the go
// command refuses to import it, so that a field of such a type cannot be
// set, a function taking one cannot be called with a value the user built,
// and an alias of one hides its methods from go doc. Every exported
// declaration is read: a const's or var's type, a function's or method's
// parameters and results, an exported field's type (an embedded field
// too), an interface's methods, an alias's target, a defined type's
// underlying type; a type is reached through pointers, slices, maps,
// channels, function types, anonymous structs and type arguments. A
// public named type (or a public alias) stops the walk: its own
// declarations are checked as declarations of its package. So does an
// unexported type of a public package, which a user cannot name and go doc
// does not open: an opaque option (handler.Option is func(*options), as
// aws-lambda-go's lambda.Option is func(*handlerOptions)) or the engine a
// public type is made of (sqsbatch.Handler), whose exported fields and
// methods are the public type's declarations.
//
// The source is read too, as go doc shows it: a const's or var's value, a
// defined type's or alias's type expression, and every doc comment of an
// exported declaration or of a package must not cite an internal
// package's name (sourceNames).
func TestNoInternalTypes(t *testing.T) {
	lib := loadLibrary(t)
	found, err := sourceNames(lib) // declaration → what its source names
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range lib.pkgs {
		for _, d := range decls(pkg) {
			for _, typ := range d.types {
				found[d.name] = append(found[d.name], internalTypes(typ, nil)...)
			}
		}
	}
	var lines []string
	for name, names := range found {
		slices.Sort(names)
		if names = slices.Compact(names); len(names) > 0 {
			lines = append(lines, name+": "+strings.Join(names, ", "))
		}
	}
	slices.Sort(lines)
	t.Logf("%d exported declarations name something of an internal package", len(lines))
	if len(lines) > 0 {
		t.Errorf("%d exported declarations name a type or a name of an internal package, which a user's module cannot name; give it a public home (a public package, or a defined type of the declaring package), say it in words, or unexport the declaration:\n  %s",
			len(lines), strings.Join(lines, "\n  "))
	}
}

// internalTypes returns the internal types that t names, written as
// "path.Name".
func internalTypes(t types.Type, seen map[types.Type]bool) []string {
	if seen == nil {
		seen = map[types.Type]bool{}
	}
	if seen[t] {
		return nil
	}
	seen[t] = true
	var out []string
	walk := func(ts ...types.Type) {
		for _, x := range ts {
			out = append(out, internalTypes(x, seen)...)
		}
	}
	switch t := t.(type) {
	case *types.Alias:
		if obj := t.Obj(); obj.Pkg() != nil && isInternal(obj.Pkg().Path()) {
			out = append(out, rel(obj.Pkg().Path())+"."+obj.Name())
		}
		if obj := t.Obj(); obj.Pkg() != nil && !isInternal(obj.Pkg().Path()) {
			break // a public alias: its declaration is checked in its own package; an unexported one is opaque
		}
		walk(t.Rhs())
	case *types.Named:
		if obj := t.Obj(); obj.Pkg() != nil && isInternal(obj.Pkg().Path()) {
			out = append(out, rel(obj.Pkg().Path())+"."+obj.Name())
		}
		for i := range t.TypeArgs().Len() {
			walk(t.TypeArgs().At(i))
		}
	case *types.Pointer:
		walk(t.Elem())
	case *types.Slice:
		walk(t.Elem())
	case *types.Array:
		walk(t.Elem())
	case *types.Map:
		walk(t.Key(), t.Elem())
	case *types.Chan:
		walk(t.Elem())
	case *types.Signature:
		walk(sigTypes(t)...)
	case *types.Struct:
		for i := range t.NumFields() {
			walk(t.Field(i).Type())
		}
	case *types.Interface:
		for i := range t.NumEmbeddeds() {
			walk(t.EmbeddedType(i))
		}
		for i := range t.NumExplicitMethods() {
			walk(t.ExplicitMethod(i).Type())
		}
	case *types.Union:
		for i := range t.Len() {
			walk(t.Term(i).Type())
		}
	case *types.TypeParam:
		walk(t.Constraint())
	}
	return out
}
