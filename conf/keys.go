package conf

import (
	"reflect"
	"strings"
)

// Keys lists every key path of the file's schema, in schema order:
// "cache.disk.path", list items as "[]" ("hosts[].names"). A host's
// keys are listed under hosts[] too, though they are the defaults keys.
func Keys() []string { return schemaKeys(reflect.TypeFor[Config](), "") }

// schemaKeys lists the key paths of t's yaml tags.
func schemaKeys(t reflect.Type, path string) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opt, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opt == "inline" {
			keys = append(keys, schemaKeys(f.Type, path)...)
			continue
		}
		if name == "-" {
			continue // not a key
		}
		kp := join(path, name)
		keys = append(keys, kp)
		switch {
		case f.Type.Kind() == reflect.Struct:
			keys = append(keys, schemaKeys(f.Type, kp)...)
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			keys = append(keys, schemaKeys(f.Type.Elem(), kp+"[]")...)
		}
	}
	return keys
}
