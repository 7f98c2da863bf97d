package tmplexec

import (
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"text/template/parse"
)

var (
	errorType        = reflect.TypeFor[error]()
	fmtStringerType  = reflect.TypeFor[fmt.Stringer]()
	reflectValueType = reflect.TypeFor[reflect.Value]()
	stringType       = reflect.TypeFor[string]()
	intType          = reflect.TypeFor[int]()
	boolType         = reflect.TypeFor[bool]()
)

// missingVal marks the absent value of a command that has none before
// it, as text/template's does.
type missingVal struct{}

var missing = reflect.ValueOf(missingVal{})

// getter gives one argument of a call: a compiled argument, or the value
// of the command before.
type getter func(s *state, dot, final reflect.Value) reflect.Value

// fieldChain compiles .A.B.C on the value recv gives: the last name gets
// the command's arguments and final value.
func (c *compiler) fieldChain(idents []string, args []parse.Node, hasFinal bool, recv expr) (command, error) {
	if len(idents) == 0 {
		return nil, fmt.Errorf("empty field chain: %w", errUnsupported)
	}
	steps := make([]*field, len(idents))
	for i, name := range idents {
		steps[i] = &field{c: c, name: name}
	}
	last := steps[len(steps)-1]
	last.args, last.hasFinal = args, hasFinal
	inner := steps[:len(steps)-1]
	return func(s *state, dot, final reflect.Value) reflect.Value {
		r := recv(s, dot)
		for _, f := range inner {
			r = f.eval(s, dot, r, missing)
		}
		return last.eval(s, dot, r, final)
	}, nil
}

// field is one name of a chain, with what it resolved to for the last
// type it met: a chain almost always meets one type.
type field struct {
	c        *compiler
	name     string
	args     []parse.Node
	hasFinal bool
	seen     atomic.Pointer[resolved]
	mu       sync.Mutex // held while resolving: compiling a method's call
}

type resolvedKind int

const (
	unresolved resolvedKind = iota // text/template fails here, or it is left to it
	byMethod
	byField
	byKey
)

type resolved struct {
	ptr, recv reflect.Type // the receiver as methods see it, and as fields do
	kind      resolvedKind
	method    int
	call      *call
	index     []int
	key       reflect.Value
	why       error
}

func (f *field) hasArgs() bool { return len(f.args) > 0 || f.hasFinal }

// eval is text/template's evalField, with the lookups done once per type.
func (f *field) eval(s *state, dot, receiver, final reflect.Value) reflect.Value {
	if !receiver.IsValid() {
		fail("nil data; no entry for key %q", f.name)
	}
	rv, isNil := indirect(receiver)
	if rv.Kind() == reflect.Interface && isNil {
		fail("nil pointer evaluating %s.%s", receiver.Type(), f.name)
	}
	// Methods of both T and *T are seen through a *T.
	ptr := rv
	if k := ptr.Kind(); k != reflect.Interface && k != reflect.Pointer && ptr.CanAddr() {
		ptr = ptr.Addr()
	}
	r := f.seen.Load()
	if r == nil || r.ptr != ptr.Type() || r.recv != rv.Type() {
		r = f.resolve(ptr, rv)
		f.seen.Store(r)
	}
	switch r.kind {
	case byMethod:
		return r.call.run(s, dot, ptr.Method(r.method), final)
	case byField:
		if rv.Kind() != reflect.Struct {
			fail("nil pointer evaluating %s.%s", receiver.Type(), f.name)
		}
		if len(r.index) == 1 {
			return rv.Field(r.index[0])
		}
		v, err := rv.FieldByIndexErr(r.index)
		if err != nil {
			fail("%v", err)
		}
		return v
	case byKey:
		if v := rv.MapIndex(r.key); v.IsValid() {
			return v
		}
		fail("map has no entry for key %q", f.name)
	}
	fail("field %s of %s: %w", f.name, receiver.Type(), r.why)
	panic("not reached")
}

func (f *field) resolve(ptr, rv reflect.Value) *resolved {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := &resolved{ptr: ptr.Type(), recv: rv.Type()}
	if m, ok := ptr.Type().MethodByName(f.name); ok {
		call, err := f.c.newCall(f.name, ptr.Method(m.Index).Type(), f.args, f.hasFinal)
		if err != nil {
			r.why = err
			return r
		}
		r.kind, r.method, r.call = byMethod, m.Index, call
		return r
	}
	switch rv.Kind() {
	case reflect.Struct:
		sf, ok := rv.Type().FieldByName(f.name)
		switch {
		case !ok:
			r.why = fmt.Errorf("no such field")
		case !sf.IsExported():
			r.why = fmt.Errorf("unexported field")
		case f.hasArgs():
			r.why = fmt.Errorf("field with arguments")
		default:
			r.kind, r.index = byField, sf.Index
		}
	case reflect.Map:
		key := reflect.ValueOf(f.name)
		switch {
		case !key.Type().AssignableTo(rv.Type().Key()):
			r.why = fmt.Errorf("map key type %s", rv.Type().Key())
		case f.hasArgs():
			r.why = fmt.Errorf("map key with arguments")
		default:
			r.kind, r.key = byKey, key
		}
	default:
		r.why = fmt.Errorf("not a struct or map")
	}
	return r
}

// call is a compiled call of a function or method: its arguments
// compiled for the function's parameter types.
type call struct {
	name  string
	get   []getter
	twoRV bool // returns (value, error)
}

// newCall compiles a call of a function of type typ with args, and the
// final value when hasFinal, as text/template's evalCall does.
func (c *compiler) newCall(name string, typ reflect.Type, args []parse.Node, hasFinal bool) (*call, error) {
	numIn := len(args)
	if hasFinal {
		numIn++
	}
	numFixed := len(args)
	if typ.IsVariadic() {
		numFixed = typ.NumIn() - 1
		if numIn < numFixed {
			return nil, fmt.Errorf("%s: wrong number of arguments: %w", name, errUnsupported)
		}
	} else if numIn != typ.NumIn() {
		return nil, fmt.Errorf("%s: wrong number of arguments: %w", name, errUnsupported)
	}
	switch {
	case typ.NumOut() == 1:
	case typ.NumOut() == 2 && typ.Out(1) == errorType:
	default:
		return nil, fmt.Errorf("%s: results: %w", name, errUnsupported)
	}
	k := &call{name: name, twoRV: typ.NumOut() == 2}
	i := 0
	for ; i < numFixed && i < len(args); i++ {
		e, err := c.arg(args[i], typ.In(i))
		if err != nil {
			return nil, err
		}
		k.get = append(k.get, fromExpr(e))
	}
	if typ.IsVariadic() {
		elem := typ.In(typ.NumIn() - 1).Elem()
		for ; i < len(args); i++ {
			e, err := c.arg(args[i], elem)
			if err != nil {
				return nil, err
			}
			k.get = append(k.get, fromExpr(e))
		}
	}
	if hasFinal {
		t := typ.In(typ.NumIn() - 1)
		if typ.IsVariadic() {
			if numIn-1 < numFixed {
				t = typ.In(numIn - 1)
			} else {
				t = t.Elem()
			}
		}
		k.get = append(k.get, func(_ *state, _, final reflect.Value) reflect.Value { return validateType(final, t) })
	}
	return k, nil
}

func fromExpr(e expr) getter {
	return func(s *state, dot, _ reflect.Value) reflect.Value { return e(s, dot) }
}

// run calls fn.
func (k *call) run(s *state, dot, fn, final reflect.Value) reflect.Value {
	argv := make([]reflect.Value, len(k.get))
	for i, g := range k.get {
		argv[i] = g(s, dot, final)
	}
	out := fn.Call(argv)
	if k.twoRV && !out[1].IsNil() {
		fail("error calling %s: %w", k.name, out[1].Interface().(error))
	}
	v := out[0]
	if v.Type() == reflectValueType {
		v = v.Interface().(reflect.Value)
	}
	return v
}

// call compiles a call of the function name: the template's own, an
// escaper of html/template's, or a builtin, in that order.
func (c *compiler) call(name string, args []parse.Node, hasFinal bool) (command, error) {
	if f, ok := c.funcs[name]; ok {
		return c.callFunc(name, f, args, hasFinal)
	}
	if f, ok := escapers[name]; ok {
		return c.callFunc(name, f, args, hasFinal)
	}
	return c.builtin(name, args, hasFinal)
}

func (c *compiler) callFunc(name string, f any, args []parse.Node, hasFinal bool) (command, error) {
	fn := reflect.ValueOf(f)
	if fn.Kind() != reflect.Func || fn.IsNil() {
		return nil, fmt.Errorf("%s is not a function: %w", name, errUnsupported)
	}
	k, err := c.newCall(name, fn.Type(), args, hasFinal)
	if err != nil {
		return nil, err
	}
	if cmd := fastCall(f, k.get); cmd != nil {
		return cmd, nil
	}
	return func(s *state, dot, final reflect.Value) reflect.Value { return k.run(s, dot, fn, final) }, nil
}

// validateType is text/template's check of a value against a parameter's
// type, with the one dereference or address-of it allows; typ nil is any
// value.
func validateType(value reflect.Value, typ reflect.Type) reflect.Value {
	if !value.IsValid() {
		if typ == nil {
			return reflect.Value{}
		}
		if canBeNil(typ) {
			return reflect.Zero(typ)
		}
		fail("invalid value; expected %s", typ)
	}
	if typ == reflectValueType && value.Type() != typ {
		return reflect.ValueOf(value)
	}
	if typ != nil && !value.Type().AssignableTo(typ) {
		if value.Kind() == reflect.Interface && !value.IsNil() {
			value = value.Elem()
			if value.Type().AssignableTo(typ) {
				return value
			}
		}
		switch {
		case value.Kind() == reflect.Pointer && value.Type().Elem().AssignableTo(typ):
			value = value.Elem()
			if !value.IsValid() {
				fail("dereference of nil pointer of type %s", typ)
			}
		case reflect.PointerTo(value.Type()).AssignableTo(typ) && value.CanAddr():
			value = value.Addr()
		default:
			fail("wrong type for value; expected %s; got %s", typ, value.Type())
		}
	}
	return value
}

func canBeNil(typ reflect.Type) bool {
	switch typ.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice:
		return true
	case reflect.Struct:
		return typ == reflectValueType
	}
	return false
}

// indirect steps through pointers and interfaces to the value, stopping
// at a nil one.
func indirect(v reflect.Value) (rv reflect.Value, isNil bool) {
	for ; v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface; v = v.Elem() {
		if v.IsNil() {
			return v, true
		}
	}
	return v, false
}

// indirectInterface is the value inside an interface, if v is one.
func indirectInterface(v reflect.Value) reflect.Value {
	if v.Kind() != reflect.Interface {
		return v
	}
	if v.IsNil() {
		return reflect.Value{}
	}
	return v.Elem()
}

// isTrue is text/template's truth: not the zero value of its type.
func isTrue(val reflect.Value) (truth, ok bool) {
	if !val.IsValid() {
		return false, true
	}
	switch val.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		truth = val.Len() > 0
	case reflect.Bool:
		truth = val.Bool()
	case reflect.Complex64, reflect.Complex128:
		truth = val.Complex() != 0
	case reflect.Chan, reflect.Func, reflect.Pointer, reflect.UnsafePointer, reflect.Interface:
		truth = !val.IsNil()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		truth = val.Int() != 0
	case reflect.Float32, reflect.Float64:
		truth = val.Float() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		truth = val.Uint() != 0
	case reflect.Struct:
		truth = true
	default:
		return
	}
	return truth, true
}

// writer is where a run writes.
type writer interface {
	Write([]byte) (int, error)
	WriteString(string) (int, error)
}

// printValue writes v as text/template prints an action's value: plain
// strings, ints and bools directly, anything else through fmt.
func printValue(w writer, v reflect.Value) {
	if v.IsValid() {
		switch v.Type() {
		case stringType:
			w.WriteString(v.String())
			return
		case intType:
			var b [24]byte
			w.Write(strconv.AppendInt(b[:0], v.Int(), 10))
			return
		case boolType:
			w.WriteString(strconv.FormatBool(v.Bool()))
			return
		}
	}
	iface, ok := printableValue(v)
	if !ok {
		fail("can't print value of type %s", v.Type())
	}
	fmt.Fprint(w, iface)
}

func printableValue(v reflect.Value) (any, bool) {
	if v.Kind() == reflect.Pointer {
		v, _ = indirect(v)
	}
	if !v.IsValid() {
		return "<no value>", true
	}
	if !v.Type().Implements(errorType) && !v.Type().Implements(fmtStringerType) {
		if v.CanAddr() && (reflect.PointerTo(v.Type()).Implements(errorType) || reflect.PointerTo(v.Type()).Implements(fmtStringerType)) {
			v = v.Addr()
		} else {
			switch v.Kind() {
			case reflect.Chan, reflect.Func:
				return nil, false
			}
		}
	}
	return v.Interface(), true
}
