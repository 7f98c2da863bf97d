package templates

import (
	"reflect"
	"sync"
	"time"
)

var momentType = reflect.TypeFor[Moment]()

// ShowOwnZone makes every time a copy shows read in the reader's own zone
// too, beside the game's (ZONE). v must be one reader's copy, built for
// them alone: its moments are changed in place.
func ShowOwnZone(v *View, own *time.Location) {
	if v == nil || own == nil {
		return
	}
	walk(reflect.ValueOf(v), map[uintptr]bool{}, func(s reflect.Value) {
		if s.Type() == momentType {
			s.FieldByName("Own").Set(reflect.ValueOf(own))
		}
	})
}

// Localize sets the language of everything in v that writes words of its
// own (times, lengths of time, the end's reasons) to tag. Render calls it
// on its copy of the view.
func Localize(v *View, tag string) {
	if v == nil {
		return
	}
	v.Lang = tag
	walk(reflect.ValueOf(v), map[uintptr]bool{}, func(s reflect.Value) {
		if i := shapeOf(s.Type()).lang; i != nil {
			if f := s.FieldByIndex(i); f.CanSet() {
				f.SetString(tag)
			}
		}
	})
}

// shape is what walk needs of one of the package's struct types: its
// exported fields, and where its Lang field is (nil: it has none).
type shape struct {
	exported []int
	lang     []int
}

// shapes holds a shape per type. Every copy of every message is walked
// at least once; asking reflect for a type's fields each time allocated
// for every field of every struct.
var shapes sync.Map // reflect.Type → *shape

func shapeOf(t reflect.Type) *shape {
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	s := &shape{}
	for i := range t.NumField() {
		if t.Field(i).IsExported() {
			s.exported = append(s.exported, i)
		}
	}
	if f, ok := t.FieldByName("Lang"); ok && f.Type.Kind() == reflect.String {
		s.lang = f.Index
	}
	shapes.Store(t, s)
	return s
}

// walk visits the view's exported fields, the pointers and slices among
// them, and calls visit on every struct of this package it finds, settable.
// It goes only into this package's types (a time.Time is not entered), and
// visits a pointer once, so that a section's link back to its message ends
// the walk.
func walk(v reflect.Value, seen map[uintptr]bool, visit func(reflect.Value)) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		walk(v.Elem(), seen, visit)
	case reflect.Slice:
		for i := range v.Len() {
			walk(v.Index(i), seen, visit)
		}
	case reflect.Struct:
		if v.Type().PkgPath() != momentType.PkgPath() {
			return
		}
		if v.CanSet() {
			visit(v)
		}
		for _, i := range shapeOf(v.Type()).exported {
			walk(v.Field(i), seen, visit)
		}
	}
}
