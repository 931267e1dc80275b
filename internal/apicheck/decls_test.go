package apicheck

import (
	"fmt"
	"go/types"
	"strings"
)

// decl is one exported declaration of a package, as a user's module sees
// it: a const, var, func, type, exported field, interface method or method
// of an exported type.
type decl struct {
	// name is the declaration's name, "sqsbatch.Config.Delivery".
	name string
	// line is its line in the listing: the package's path in the module,
	// then the declaration, in the spirit of Go's api/*.txt
	// ("lambda/sqsbatch, type Config struct, Delivery contract.Delivery").
	line string
	// types are the types its signature names: a field's or var's type,
	// a function's parameters and results, an alias's target, the
	// underlying type of a defined type that is neither a struct nor an
	// interface (whose fields and methods are their own declarations).
	types []types.Type
}

// decls returns pkg's exported declarations, in the order of its scope
// (sorted by name).
func decls(pkg *types.Package) []decl {
	var out []decl
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		out = append(out, objectDecls(pkg, obj)...)
	}
	return out
}

func objectDecls(pkg *types.Package, obj types.Object) []decl {
	q := qualifier(pkg)
	prefix := rel(pkg.Path()) + ", "
	name := pkg.Name() + "." + obj.Name()
	one := func(line string, ts ...types.Type) []decl {
		return []decl{{name: name, line: prefix + line, types: ts}}
	}
	switch obj := obj.(type) {
	case *types.Const:
		return one(fmt.Sprintf("const %s %s = %s", obj.Name(), types.TypeString(obj.Type(), q), obj.Val().ExactString()), obj.Type())
	case *types.Var:
		return one(fmt.Sprintf("var %s %s", obj.Name(), types.TypeString(obj.Type(), q)), obj.Type())
	case *types.Func:
		sig := obj.Type().(*types.Signature)
		return one("func "+obj.Name()+typeParams(sig.TypeParams(), q)+signature(sig, q), sigTypes(sig)...)
	case *types.TypeName:
		return typeDecls(obj, prefix, name, q)
	}
	return nil
}

// typeDecls are the declarations of a type: the type, its exported fields
// or interface methods, and its exported methods. An alias of a type of an
// internal package brings that type's fields and methods in as its own: a
// user reaches them only through the alias.
func typeDecls(obj *types.TypeName, prefix, name string, q types.Qualifier) []decl {
	if a, ok := obj.Type().(*types.Alias); ok {
		out := []decl{{name: name, line: prefix + "type " + obj.Name() + typeParams(a.TypeParams(), q) + " = " + types.TypeString(a.Rhs(), q), types: []types.Type{a.Rhs()}}}
		if n, ok := a.Rhs().(*types.Named); ok && n.Obj().Pkg() != nil && isInternal(n.Obj().Pkg().Path()) {
			out = append(out, namedDecls(n, "type "+obj.Name(), prefix, name, q)[1:]...)
		}
		return out
	}
	if named, ok := obj.Type().(*types.Named); ok {
		return namedDecls(named, "type "+obj.Name()+typeParams(named.TypeParams(), q), prefix, name, q)
	}
	return nil
}

// namedDecls are the declarations of a defined type written head ("type
// Config"): the type first, then its members.
func namedDecls(named *types.Named, head, prefix, name string, q types.Qualifier) []decl {
	var out []decl
	add := func(member, line string, ts ...types.Type) {
		n := name
		if member != "" {
			n += "." + member
		}
		out = append(out, decl{name: n, line: prefix + line, types: ts})
	}
	var tparams []types.Type
	for i := range named.TypeParams().Len() {
		tparams = append(tparams, named.TypeParams().At(i).Constraint())
	}
	switch u := named.Underlying().(type) {
	case *types.Struct:
		add("", head+" struct", tparams...)
		for i := range u.NumFields() {
			f := u.Field(i)
			switch {
			case !f.Exported():
			case f.Embedded():
				add(f.Name(), head+" struct, embedded "+types.TypeString(f.Type(), q), f.Type())
			default:
				add(f.Name(), head+" struct, "+f.Name()+" "+types.TypeString(f.Type(), q), f.Type())
			}
		}
	case *types.Interface:
		add("", head+" interface", tparams...)
		for i := range u.NumMethods() {
			m := u.Method(i)
			if !m.Exported() {
				add("", head+" interface, unexported methods")
				continue
			}
			sig := m.Type().(*types.Signature)
			add(m.Name(), head+" interface, "+m.Name()+signature(sig, q), sigTypes(sig)...)
		}
	default:
		add("", head+" "+types.TypeString(u, q), append(tparams, u)...)
	}
	for i := range named.NumMethods() {
		m := named.Method(i)
		if !m.Exported() {
			continue
		}
		sig := m.Type().(*types.Signature)
		recv := types.TypeString(sig.Recv().Type(), q)
		add(m.Name(), fmt.Sprintf("method (%s) %s%s", recv, m.Name(), signature(sig, q)), sigTypes(sig)...)
	}
	return out
}

// qualifier writes a type of pkg unqualified, another by its package's
// name ("contract.Delivery", "awssqs.IQueue").
func qualifier(pkg *types.Package) types.Qualifier {
	return func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Name()
	}
}

// signature writes a function's parameters and results by type alone, as
// Go's api files do: a parameter's name is no part of the API.
func signature(sig *types.Signature, q types.Qualifier) string {
	var b strings.Builder
	b.WriteString("(")
	for i := range sig.Params().Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		t := sig.Params().At(i).Type()
		if sig.Variadic() && i == sig.Params().Len()-1 {
			b.WriteString("..." + types.TypeString(t.(*types.Slice).Elem(), q))
			continue
		}
		b.WriteString(types.TypeString(t, q))
	}
	b.WriteString(")")
	switch r := sig.Results(); r.Len() {
	case 0:
	case 1:
		b.WriteString(" " + types.TypeString(r.At(0).Type(), q))
	default:
		b.WriteString(" (")
		for i := range r.Len() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(types.TypeString(r.At(i).Type(), q))
		}
		b.WriteString(")")
	}
	return b.String()
}

// typeParams writes a type parameter list, "[T any]", or "".
func typeParams(tps *types.TypeParamList, q types.Qualifier) string {
	if tps.Len() == 0 {
		return ""
	}
	parts := make([]string, tps.Len())
	for i := range tps.Len() {
		tp := tps.At(i)
		parts[i] = tp.Obj().Name() + " " + types.TypeString(tp.Constraint(), q)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// sigTypes are the types a signature names: its parameters', its results'
// and its type parameters' constraints.
func sigTypes(sig *types.Signature) []types.Type {
	var ts []types.Type
	for _, tup := range []*types.Tuple{sig.Params(), sig.Results()} {
		for i := range tup.Len() {
			ts = append(ts, tup.At(i).Type())
		}
	}
	for i := range sig.TypeParams().Len() {
		ts = append(ts, sig.TypeParams().At(i).Constraint())
	}
	return ts
}
