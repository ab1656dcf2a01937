package proxy

import (
	"context"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"
)

// Every part of a request, once reset (as release resets them), is what
// a fresh request's is, but for its buffers (slices emptied, not
// dropped): nothing of one request leaks into the next one the pool
// hands out. Each part is filled with values in every field it owns (a
// field its reset forgot fails the test), then reset.
func TestEachPartResetIsAFreshPart(t *testing.T) {
	fresh, r := requestPool.New().(*request), requestPool.New().(*request)
	rv, fv := reflect.ValueOf(r).Elem(), reflect.ValueOf(fresh).Elem()
	parts := 0
	for i := range rv.NumField() {
		if f := rv.Type().Field(i); f.Anonymous {
			parts++
			dirty(rv.Field(i), f.Type.PkgPath())
			for j := range f.Type.NumField() {
				name := f.Name + "." + f.Type.Field(j).Name
				if same(rv.Field(i).Field(j), fv.Field(i).Field(j)) && !unfilled[name] {
					t.Errorf("%s: the test cannot fill it, so it cannot tell whether reset does", name)
				}
			}
		}
	}
	if parts < 9 {
		t.Fatalf("%d parts, want every stage's", parts)
	}
	r.resetParts()
	for i := range rv.NumField() {
		if f := rv.Type().Field(i); f.Anonymous && !same(rv.Field(i), fv.Field(i)) {
			t.Errorf("%s after reset: %+v\nfresh: %+v", f.Name, rv.Field(i), fv.Field(i))
		}
	}
}

// A request's answer, once reset, is a fresh one: release hands out no
// entry, response or error of the request before.
func TestResultResetIsAFreshResult(t *testing.T) {
	var res result
	v := reflect.ValueOf(&res).Elem()
	dirty(v, v.Type().PkgPath())
	for i := range v.NumField() {
		if same(v.Field(i), reflect.Zero(v.Type().Field(i).Type)) {
			t.Errorf("result.%s: the test cannot fill it, so it cannot tell whether reset does", v.Type().Field(i).Name)
		}
	}
	res.reset()
	if !same(v, reflect.ValueOf(result{})) {
		t.Errorf("after reset: %+v", res)
	}
}

// unfilled are the fields dirty leaves as they are: a buffer with its own
// Reset, a transaction only the WAF makes.
var unfilled = map[string]bool{"fragPart.sub": true, "wafPart.wafTx": true}

// dirty sets every field of v it can to a value that is not the zero
// one: all fields of this package's types, the exported ones of others'.
// A fasthttp.Request is left alone: it is a buffer with its own Reset.
func dirty(v reflect.Value, pkg string) {
	switch v.Type() {
	case reflect.TypeFor[netip.Addr]():
		v.Set(reflect.ValueOf(netip.MustParseAddr("192.0.2.1")))
		return
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Unix(1, 0)))
		return
	case reflect.TypeFor[fasthttp.Request](), reflect.TypeFor[[]*fasthttp.Request]():
		return
	case reflect.TypeFor[context.Context]():
		v.Set(reflect.ValueOf(context.Background()))
		return
	case reflect.TypeFor[error]():
		v.Set(reflect.ValueOf(errors.New("dirty")))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		own := v.Type().PkgPath() == pkg
		for i := range v.NumField() {
			f := v.Field(i)
			if !v.Type().Field(i).IsExported() {
				if !own {
					continue
				}
				f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
			}
			dirty(f, pkg)
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		dirty(s.Index(0), pkg)
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			dirty(v.Index(i), pkg)
		}
	case reflect.Pointer:
		if !strings.HasSuffix(v.Type().Elem().PkgPath(), "/waf") { // a Tx is the WAF's to make and close
			v.Set(reflect.New(v.Type().Elem()))
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.String:
		v.SetString("dirty")
	}
}

// same reports whether a and b are equal but for their buffers: two
// empty slices are the same, whatever their capacity.
func same(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !same(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Array:
		for i := range a.Len() {
			if !same(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		if a.Type() == reflect.TypeFor[fasthttp.Request]() {
			return true // a buffer, with its own Reset
		}
		for i := range a.NumField() {
			if !same(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return a.Pointer() == b.Pointer()
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return same(a.Elem(), b.Elem())
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.String:
		return a.String() == b.String()
	}
	panic("same: unhandled kind " + a.Kind().String())
}
