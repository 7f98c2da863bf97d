package templates

import (
	"reflect"
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
		if f := s.FieldByName("Lang"); f.IsValid() && f.Kind() == reflect.String && f.CanSet() {
			f.SetString(tag)
		}
	})
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
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walk(v.Field(i), seen, visit)
			}
		}
	}
}
