package nettune_test

import (
	"encoding/json"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// publicPackages are the packages another module imports.
var publicPackages = []string{"bootcfg", "tuning", "numa", "nic", "tomcatconf", "loadgen", "loadgen/stats", "loadgen/report"}

const modulePath = "github.com/nettune/nettune"

// TestAPIUsesNoInternalTypes checks, from the compiled export data, that
// every exported function, method, field, variable and constant of the
// public packages has a type another module can name and build: none
// mentions a type from internal/, unless the package exports an alias of
// that type (numa.CPUSet = cpuset.Set is how importers name a CPU set).
// An importer cannot import internal/, so such a signature could not be
// called or such a field set.
func TestAPIUsesNoInternalTypes(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH to read the export data with")
	}
	pkgs := make([]string, len(publicPackages))
	for i, p := range publicPackages {
		pkgs[i] = modulePath + "/" + p
	}
	exports, err := exportData(pkgs)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	var bad []string
	for _, path := range pkgs {
		pkg, err := imp.Import(path)
		if err != nil {
			t.Fatal(err)
		}
		bad = append(bad, internalUses(pkg)...)
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("%d exported names use types an importer cannot name (give the package a public type, an alias, a string root or []int):\n  %s",
			len(bad), strings.Join(bad, "\n  "))
	}
}

// exportData builds pkgs and returns the export data file of each
// package they depend on, by import path.
func exportData(pkgs []string) (map[string]string, error) {
	cmd := exec.Command("go", append([]string{"list", "-export", "-deps", "-json=ImportPath,Export"}, pkgs...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %w", err)
	}
	m := map[string]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err != nil {
			return nil, err
		}
		m[p.ImportPath] = p.Export
	}
	return m, nil
}

// internalUses lists the exported names of pkg whose types mention an
// internal/ type that pkg does not alias.
func internalUses(pkg *types.Package) []string {
	aliased := map[*types.TypeName]bool{}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		if tn, ok := scope.Lookup(name).(*types.TypeName); ok && tn.Exported() && tn.IsAlias() {
			if n, ok := types.Unalias(tn.Type()).(*types.Named); ok {
				aliased[n.Obj()] = true
			}
		}
	}
	var bad []string
	check := func(what string, typ types.Type) {
		if uses := internalIn(typ, aliased, map[types.Type]bool{}); len(uses) > 0 {
			bad = append(bad, fmt.Sprintf("%s.%s: %s", pkg.Name(), what, strings.Join(uses, ", ")))
		}
	}
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		tn, ok := obj.(*types.TypeName)
		if !ok {
			check(name, obj.Type())
			continue
		}
		named, ok := types.Unalias(tn.Type()).(*types.Named)
		if !ok {
			continue
		}
		if tn.IsAlias() {
			// An alias of another package's type: its methods are
			// this package's API too.
			for i := range named.NumMethods() {
				if m := named.Method(i); m.Exported() {
					check(name+"."+m.Name(), m.Type())
				}
			}
			continue
		}
		switch u := named.Underlying().(type) {
		case *types.Struct:
			for i := range u.NumFields() {
				if f := u.Field(i); f.Exported() {
					check(name+"."+f.Name(), f.Type())
				}
			}
		case *types.Interface:
			for i := range u.NumMethods() {
				if m := u.Method(i); m.Exported() {
					check(name+"."+m.Name(), m.Type())
				}
			}
		default:
			check(name, u)
		}
		for i := range named.NumMethods() {
			if m := named.Method(i); m.Exported() {
				check(name+"."+m.Name(), m.Type())
			}
		}
	}
	return bad
}

// internalIn returns the internal/ types that typ mentions, outside the
// ones aliased. Named types of the package itself are checked where they
// are declared, so it does not look inside them.
func internalIn(typ types.Type, aliased map[*types.TypeName]bool, seen map[types.Type]bool) []string {
	if seen[typ] {
		return nil
	}
	seen[typ] = true
	switch t := typ.(type) {
	case *types.Alias:
		return internalIn(types.Unalias(t), aliased, seen)
	case *types.Named:
		obj := t.Obj()
		var out []string
		if obj.Pkg() != nil && strings.Contains(obj.Pkg().Path()+"/", "/internal/") && !aliased[obj] {
			out = append(out, obj.Pkg().Path()+"."+obj.Name())
		}
		if args := t.TypeArgs(); args != nil {
			for i := range args.Len() {
				out = append(out, internalIn(args.At(i), aliased, seen)...)
			}
		}
		return out
	case *types.Pointer:
		return internalIn(t.Elem(), aliased, seen)
	case *types.Slice:
		return internalIn(t.Elem(), aliased, seen)
	case *types.Array:
		return internalIn(t.Elem(), aliased, seen)
	case *types.Chan:
		return internalIn(t.Elem(), aliased, seen)
	case *types.Map:
		return append(internalIn(t.Key(), aliased, seen), internalIn(t.Elem(), aliased, seen)...)
	case *types.Signature:
		var out []string
		for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tup.Len() {
				out = append(out, internalIn(tup.At(i).Type(), aliased, seen)...)
			}
		}
		return out
	case *types.Struct:
		var out []string
		for i := range t.NumFields() {
			if f := t.Field(i); f.Exported() {
				out = append(out, internalIn(f.Type(), aliased, seen)...)
			}
		}
		return out
	case *types.Interface:
		var out []string
		for i := range t.NumMethods() {
			out = append(out, internalIn(t.Method(i).Type(), aliased, seen)...)
		}
		return out
	}
	return nil
}
