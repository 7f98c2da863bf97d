package tmplexec

import (
	"fmt"
	"reflect"
	"text/template/parse"
)

// builtin compiles a call of one of text/template's builtins, as plain
// Go. The ones the host's templates do not use are left to text/template.
func (c *compiler) builtin(name string, args []parse.Node, hasFinal bool) (command, error) {
	gets := make([]getter, 0, len(args)+1)
	for _, a := range args {
		e, err := c.valueArg(a)
		if err != nil {
			return nil, err
		}
		gets = append(gets, fromExpr(e))
	}
	if hasFinal {
		// text/template hands a builtin the value before as it is.
		gets = append(gets, func(_ *state, _, final reflect.Value) reflect.Value { return final })
	}
	n := len(gets)
	switch {
	case (name == "and" || name == "or") && n >= 1:
		or := name == "or"
		explicit := gets[:len(args)]
		return func(s *state, dot, final reflect.Value) reflect.Value {
			var v reflect.Value
			// Short-circuit: the arguments are evaluated in turn, up to
			// the first that settles the answer.
			for _, g := range explicit {
				v = g(s, dot, final)
				if t, _ := isTrue(indirectInterface(v)); t == or {
					return v
				}
			}
			if hasFinal {
				v = final
			}
			return v
		}, nil
	case name == "not" && n == 1:
		g := gets[0]
		return func(s *state, dot, final reflect.Value) reflect.Value {
			t, _ := isTrue(indirectInterface(g(s, dot, final)))
			return reflect.ValueOf(!t)
		}, nil
	case name == "eq" && n >= 2:
		first, rest := gets[0], gets[1:]
		return func(s *state, dot, final reflect.Value) reflect.Value {
			a := first(s, dot, final)
			for _, g := range rest {
				if eq(a, g(s, dot, final)) {
					return reflect.ValueOf(true)
				}
			}
			return reflect.ValueOf(false)
		}, nil
	case name == "ne" && n == 2:
		return compare(gets, func(a, b reflect.Value) bool { return !eq(a, b) }), nil
	case name == "lt" && n == 2:
		return compare(gets, lt), nil
	case name == "le" && n == 2:
		return compare(gets, func(a, b reflect.Value) bool { return lt(a, b) || eq(a, b) }), nil
	case name == "gt" && n == 2:
		return compare(gets, func(a, b reflect.Value) bool { return !(lt(a, b) || eq(a, b)) }), nil
	case name == "ge" && n == 2:
		return compare(gets, func(a, b reflect.Value) bool { return !lt(a, b) }), nil
	case name == "len" && n == 1:
		g := gets[0]
		return func(s *state, dot, final reflect.Value) reflect.Value {
			return reflect.ValueOf(length(g(s, dot, final)))
		}, nil
	case name == "index" && n >= 1:
		item, indexes := gets[0], gets[1:]
		return func(s *state, dot, final reflect.Value) reflect.Value {
			v := indirectInterface(item(s, dot, final))
			if !v.IsValid() {
				fail("index of untyped nil")
			}
			for _, g := range indexes {
				v = index(v, indirectInterface(g(s, dot, final)))
			}
			return v
		}, nil
	}
	return nil, fmt.Errorf("function %s with %d arguments: %w", name, n, errUnsupported)
}

func compare(gets []getter, op func(a, b reflect.Value) bool) command {
	a, b := gets[0], gets[1]
	return func(s *state, dot, final reflect.Value) reflect.Value {
		x := a(s, dot, final)
		return reflect.ValueOf(op(x, b(s, dot, final)))
	}
}

type basic int

const (
	invalidKind basic = iota
	boolKind
	complexKind
	intKind
	floatKind
	stringKind
	uintKind
)

func basicKind(v reflect.Value) basic {
	switch v.Kind() {
	case reflect.Bool:
		return boolKind
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intKind
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintKind
	case reflect.Float32, reflect.Float64:
		return floatKind
	case reflect.Complex64, reflect.Complex128:
		return complexKind
	case reflect.String:
		return stringKind
	}
	return invalidKind
}

// eq is text/template's eq of two values.
func eq(a, b reflect.Value) bool {
	a, b = indirectInterface(a), indirectInterface(b)
	ka, kb := basicKind(a), basicKind(b)
	if ka != kb {
		switch {
		case ka == intKind && kb == uintKind:
			return a.Int() >= 0 && uint64(a.Int()) == b.Uint()
		case ka == uintKind && kb == intKind:
			return b.Int() >= 0 && a.Uint() == uint64(b.Int())
		case a.IsValid() && b.IsValid():
			fail("incompatible types for comparison: %v and %v", a.Type(), b.Type())
		}
		return false
	}
	switch ka {
	case boolKind:
		return a.Bool() == b.Bool()
	case complexKind:
		return a.Complex() == b.Complex()
	case floatKind:
		return a.Float() == b.Float()
	case intKind:
		return a.Int() == b.Int()
	case stringKind:
		return a.String() == b.String()
	case uintKind:
		return a.Uint() == b.Uint()
	}
	if a.Kind() != b.Kind() && a.IsValid() && b.IsValid() {
		fail("non-comparable types %v and %v", a.Type(), b.Type())
	}
	if isNil(a) || isNil(b) {
		return isNil(a) == isNil(b)
	}
	if !b.Type().Comparable() {
		fail("non-comparable type %v", b.Type())
	}
	return a.Interface() == b.Interface()
}

func isNil(v reflect.Value) bool {
	if !v.IsValid() {
		return true
	}
	switch v.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice:
		return v.IsNil()
	}
	return false
}

// lt is text/template's lt: basic kinds only.
func lt(a, b reflect.Value) bool {
	a, b = indirectInterface(a), indirectInterface(b)
	ka, kb := basicKind(a), basicKind(b)
	if ka == invalidKind || kb == invalidKind {
		fail("invalid type for comparison")
	}
	if ka != kb {
		switch {
		case ka == intKind && kb == uintKind:
			return a.Int() < 0 || uint64(a.Int()) < b.Uint()
		case ka == uintKind && kb == intKind:
			return b.Int() >= 0 && a.Uint() < uint64(b.Int())
		}
		fail("incompatible types for comparison: %v and %v", a.Type(), b.Type())
	}
	switch ka {
	case floatKind:
		return a.Float() < b.Float()
	case intKind:
		return a.Int() < b.Int()
	case stringKind:
		return a.String() < b.String()
	case uintKind:
		return a.Uint() < b.Uint()
	}
	fail("invalid type for comparison")
	panic("not reached")
}

func length(v reflect.Value) int {
	v, isNil := indirect(v)
	if isNil {
		fail("len of nil pointer")
	}
	switch v.Kind() {
	case reflect.Array, reflect.Chan, reflect.Map, reflect.Slice, reflect.String:
		return v.Len()
	}
	fail("len of type %s", v.Type())
	panic("not reached")
}

// index is one step of text/template's index, for slices, arrays and
// strings; maps are left to text/template.
func index(item, i reflect.Value) reflect.Value {
	item, isNil := indirect(item)
	if isNil {
		fail("index of nil pointer")
	}
	switch item.Kind() {
	case reflect.Array, reflect.Slice, reflect.String:
	default:
		fail("index of %s: %w", item.Kind(), errUnsupported)
	}
	var x int64
	switch i.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x = i.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		x = int64(i.Uint())
	default:
		fail("cannot index slice/array with %v", i)
	}
	// text/template lets an index equal to the length through to the
	// slice's own check, which panics; both end in an error.
	if x < 0 || int(x) < 0 || int(x) >= item.Len() {
		fail("index out of range: %d", x)
	}
	return item.Index(int(x))
}
