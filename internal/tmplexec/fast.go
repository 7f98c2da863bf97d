package tmplexec

import (
	htmltemplate "html/template"
	"reflect"
)

var stringsType = reflect.TypeFor[[]string]()

// fastCall calls f without reflection when its type is one of those the
// host's templates call most; nil for any other. The arguments the
// getters give are already checked against f's parameter types.
func fastCall(f any, get []getter) command {
	switch f := f.(type) {
	case func() string:
		if len(get) == 0 {
			return func(*state, reflect.Value, reflect.Value) reflect.Value { return reflect.ValueOf(f()) }
		}
	case func(string) string:
		if len(get) == 1 {
			a := get[0]
			return func(s *state, dot, final reflect.Value) reflect.Value {
				return reflect.ValueOf(f(a(s, dot, final).String()))
			}
		}
	case func(string) htmltemplate.HTML:
		if len(get) == 1 {
			a := get[0]
			return func(s *state, dot, final reflect.Value) reflect.Value {
				return reflect.ValueOf(f(a(s, dot, final).String()))
			}
		}
	case func(string, string) string:
		if len(get) == 2 {
			a, b := get[0], get[1]
			return func(s *state, dot, final reflect.Value) reflect.Value {
				x := a(s, dot, final).String()
				return reflect.ValueOf(f(x, b(s, dot, final).String()))
			}
		}
	case func(int, string, string) string:
		if len(get) == 3 {
			a, b, c := get[0], get[1], get[2]
			return func(s *state, dot, final reflect.Value) reflect.Value {
				x := int(a(s, dot, final).Int())
				y := b(s, dot, final).String()
				return reflect.ValueOf(f(x, y, c(s, dot, final).String()))
			}
		}
	case func(int, int) int:
		if len(get) == 2 {
			a, b := get[0], get[1]
			return func(s *state, dot, final reflect.Value) reflect.Value {
				x := int(a(s, dot, final).Int())
				return reflect.ValueOf(f(x, int(b(s, dot, final).Int())))
			}
		}
	case func([]string) string:
		if len(get) == 1 {
			a := get[0]
			return func(s *state, dot, final reflect.Value) reflect.Value {
				// A named slice type is assignable to []string too.
				v := a(s, dot, final).Convert(stringsType)
				return reflect.ValueOf(f(v.Interface().([]string)))
			}
		}
	case func(...any) string:
		return func(s *state, dot, final reflect.Value) reflect.Value {
			args := make([]any, len(get))
			for i, g := range get {
				args[i] = g(s, dot, final).Interface()
			}
			return reflect.ValueOf(f(args...))
		}
	}
	return nil
}
