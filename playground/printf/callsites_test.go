package printf_test

import (
	"go/ast"
	"go/constant"
	"go/types"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// TestCallSitesUseSupportedOperands type-checks every package of the module
// and inspects each call of this package's functions: an operand must be of
// a kind the package prints without reflection (a basic type, []byte,
// []string, error, a Stringer, nil), and a Stringer whose underlying type is
// basic may only meet a verb that prints its String text. fmt would print
// such operands differently, so a miss here is a wrong message at run time.
func TestCallSitesUseSupportedOperands(t *testing.T) {
	cfg := &packages.Config{
		Mode:  packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:   "../..",
		Tests: false,
	}
	pkgs, err := packages.Load(cfg, "./playground/...", "./generator/...")
	if err != nil {
		t.Fatalf("load packages: %v", err)
	}
	const self = "github.com/distributed-nav/distributed-nav/playground/printf"
	stringer := types.NewInterfaceType([]*types.Func{
		types.NewFunc(0, nil, "String", types.NewSignatureType(nil, nil, nil, nil,
			types.NewTuple(types.NewVar(0, nil, "", types.Typ[types.String])), false)),
	}, nil).Complete()
	errType := types.Universe.Lookup("error").Type().Underlying().(*types.Interface)
	calls := 0
	for _, pkg := range pkgs {
		for _, e := range pkg.Errors {
			t.Fatalf("%s: %v", pkg.PkgPath, e)
		}
		for _, file := range pkg.Syntax {
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				fn, ok := pkg.TypesInfo.Uses[sel.Sel].(*types.Func)
				if !ok || fn.Pkg() == nil || fn.Pkg().Path() != self || !fn.Exported() || pkg.PkgPath == self {
					return true
				}
				calls++
				if call.Ellipsis.IsValid() {
					return true // forwarded operands were checked at their own call
				}
				name := fn.Name()
				first := 0 // index of the first operand
				var verbs []rune
				switch name {
				case "Sprintf", "Errorf":
					first = 1
				case "Fprintf", "Appendf":
					first = 2
				case "Fprint", "Fprintln":
					first = 1
				}
				if strings.HasSuffix(name, "f") && first > 0 {
					tv := pkg.TypesInfo.Types[call.Args[first-1]]
					if tv.Value != nil && tv.Value.Kind() == constant.String {
						verbs = operandVerbs(constant.StringVal(tv.Value))
					}
				}
				for i, arg := range call.Args[first:] {
					pos := pkg.Fset.Position(arg.Pos())
					typ := pkg.TypesInfo.TypeOf(arg)
					verb := 'v'
					if verbs != nil && i < len(verbs) {
						verb = verbs[i]
					}
					if msg := checkOperand(typ, verb, stringer, errType); msg != "" {
						t.Errorf("%s: printf.%s operand %d (%s): %s", pos, name, i+1, types.TypeString(typ, nil), msg)
					}
				}
				return true
			})
		}
	}
	if calls < 100 {
		t.Fatalf("found only %d calls of package printf: the scan is broken", calls)
	}
}

// operandVerbs returns, for each operand a format consumes in order, the verb
// that reads it ('*' for a width or precision operand).
func operandVerbs(format string) []rune {
	var out []rune
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("+-# 0123456789.*", format[i]) >= 0 {
			if format[i] == '*' {
				out = append(out, '*')
			}
			i++
		}
		if i < len(format) && format[i] != '%' {
			out = append(out, rune(format[i]))
		}
	}
	return out
}

func checkOperand(typ types.Type, verb rune, stringer, errType *types.Interface) string {
	if typ == nil {
		return "no type"
	}
	if verb == '*' {
		if b, ok := types.Unalias(typ).(*types.Basic); ok && b.Info()&types.IsInteger != 0 {
			return ""
		}
		return "width or precision operand must be a basic integer"
	}
	switch u := typ.Underlying().(type) {
	case *types.Basic:
		if _, named := types.Unalias(typ).(*types.Named); !named {
			return "" // predeclared types, untyped constants and nil print as with fmt
		}
	case *types.Slice:
		if b, ok := types.Unalias(u.Elem()).(*types.Basic); ok && (b.Kind() == types.Byte || b.Kind() == types.String) {
			return ""
		}
	case *types.Interface:
		if !types.Implements(typ, errType) && !types.Implements(typ, stringer) {
			return "an interface operand's dynamic type is unknown; pass a concrete supported type"
		}
	}
	if !types.Implements(typ, errType) && !types.Implements(typ, stringer) {
		return "named or composite type without String or Error: convert it (string(x), int(x)) or give it a String method"
	}
	if strings.ContainsRune("vsqxXw", verb) {
		return ""
	}
	return "verb %" + string(verb) + " on a Stringer or error: fmt would print the underlying value; convert it"
}
