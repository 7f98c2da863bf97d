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
	setOwn(reflect.ValueOf(v), own, map[uintptr]bool{})
}

// setOwn walks the view's exported fields, the pointers and slices among
// them, and sets Own on every Moment it finds. It goes only into this
// package's types (a time.Time holds no Moment), and visits a pointer once,
// so that a section's link back to its message ends the walk.
func setOwn(v reflect.Value, own *time.Location, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		setOwn(v.Elem(), own, seen)
	case reflect.Slice:
		for i := range v.Len() {
			setOwn(v.Index(i), own, seen)
		}
	case reflect.Struct:
		if v.Type() == momentType {
			if v.CanSet() {
				v.FieldByName("Own").Set(reflect.ValueOf(own))
			}
			return
		}
		if v.Type().PkgPath() != momentType.PkgPath() {
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				setOwn(v.Field(i), own, seen)
			}
		}
	}
}
