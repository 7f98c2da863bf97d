package templates

import (
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"sync"
	"time"
)

// errUnkeyable says a value holds something appendKey cannot write out
// whole: the part of the message it is in is rendered for its reader alone.
var errUnkeyable = errors.New("templates: the value cannot be keyed")

var (
	timeType     = reflect.TypeFor[time.Time]()
	locationType = reflect.TypeFor[*time.Location]()
	viewPtrType  = reflect.TypeFor[*View]()
)

// appendKey writes v to key so that two values write the same bytes only
// when every template reads the same in them: each string and slice is
// preceded by its length, each pointer by whether it is nil, and every
// field of a struct is written in order. It refuses what it cannot write
// whole (maps, interfaces, functions, unexported fields), and a struct's
// link back to its message (Section.Msg), which the caller keys itself.
func appendKey(key []byte, v reflect.Value) ([]byte, error) {
	switch v.Type() {
	case timeType:
		// The instant, its offset and its zone's name: what a time
		// formats to.
		t, _ := reflect.TypeAssert[time.Time](v)
		var buf [32]byte
		b, err := t.AppendBinary(buf[:0])
		if err != nil {
			return nil, errUnkeyable
		}
		key = append(binary.AppendUvarint(key, uint64(len(b))), b...)
		return appendString(key, t.Location().String()), nil
	case locationType:
		// A zone is known by its name: zones are loaded by their names
		// from the zone database, and a fixed offset's name says the
		// offset (engine.ReadZone).
		if v.IsNil() {
			return append(key, 0), nil
		}
		return appendString(append(key, 1), v.Interface().(*time.Location).String()), nil
	case viewPtrType:
		return nil, errUnkeyable
	}
	switch v.Kind() {
	case reflect.String:
		return appendString(key, v.String()), nil
	case reflect.Bool:
		if v.Bool() {
			return append(key, 1), nil
		}
		return append(key, 0), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.AppendVarint(key, v.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return binary.AppendUvarint(key, v.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return binary.BigEndian.AppendUint64(key, math.Float64bits(v.Float())), nil
	case reflect.Pointer:
		if v.IsNil() {
			return append(key, 0), nil
		}
		return appendKey(append(key, 1), v.Elem())
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return appendString(key, string(v.Bytes())), nil
		}
		fallthrough
	case reflect.Array:
		key = binary.AppendUvarint(key, uint64(v.Len()))
		for i := range v.Len() {
			var err error
			if key, err = appendKey(key, v.Index(i)); err != nil {
				return nil, err
			}
		}
		return key, nil
	case reflect.Struct:
		ks := keyShapeOf(v.Type())
		if ks.unkeyable {
			return nil, errUnkeyable
		}
		for _, i := range ks.fields {
			var err error
			if key, err = appendKey(key, v.Field(i)); err != nil {
				return nil, err
			}
		}
		return key, nil
	}
	return nil, errUnkeyable
}

// keyShape is what appendKey writes of a struct type: the fields it keys,
// in order, or that it cannot key the type at all.
type keyShape struct {
	fields    []int
	unkeyable bool
}

// keyShapes holds a keyShape per struct type: every copy of a message
// keys its news and tally, and asking reflect for a type's fields each
// time allocated for every field.
var keyShapes sync.Map // reflect.Type → *keyShape

func keyShapeOf(t reflect.Type) *keyShape {
	if s, ok := keyShapes.Load(t); ok {
		return s.(*keyShape)
	}
	s := &keyShape{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			if t == viewType {
				continue // main and headlineSet, keyed by the caller
			}
			s.unkeyable = true
			break
		}
		if f.Type == viewPtrType && t == sectionType {
			continue // Section.Msg: the message, keyed by the caller
		}
		s.fields = append(s.fields, i)
	}
	keyShapes.Store(t, s)
	return s
}

var (
	sectionType = reflect.TypeFor[Section]()
	viewType    = reflect.TypeFor[View]()
)

func appendString(key []byte, s string) []byte {
	return append(binary.AppendUvarint(key, uint64(len(s))), s...)
}
