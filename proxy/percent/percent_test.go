package percent

import "testing"

func TestAtReadsOnlyWholeEscapes(t *testing.T) {
	for _, tt := range []struct {
		s    string
		i    int
		want byte
		ok   bool
	}{
		{"%2F", 0, '/', true}, {"a%2f", 1, '/', true}, {"%41", 0, 'A', true}, {"%4", 0, 0, false},
		{"%G1", 0, 0, false}, {"%1g", 0, 0, false}, {"x", 0, 0, false}, {"%%41", 0, 0, false}, {"%%41", 1, 'A', true},
	} {
		got, ok := At([]byte(tt.s), tt.i)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("At(%q, %d) = %q, %v; want %q, %v", tt.s, tt.i, got, ok, tt.want, tt.ok)
		}
	}
}

func TestDecodeKeepsInvalidEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"/a%20b": "/a b", "/%zz/%4": "/%zz/%4", "/plain": "/plain", "%25%32%46": "%2F", "/%C3%A9": "/é",
	} {
		if got := string(Decode([]byte(in))); got != want {
			t.Errorf("Decode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEscapedPathDecodesBack(t *testing.T) {
	in := []byte("/a b/%/ü?#\x00\xff-_.~!$&'()*+,;=:@")
	esc := AppendEscapedPath(nil, in)
	if want := "/a%20b/%25/%C3%BC%3F%23%00%FF-_.~!$&'()*+,;=:@"; string(esc) != want {
		t.Errorf("escaped %q, want %q", esc, want)
	}
	if got := Decode(esc); string(got) != string(in) {
		t.Errorf("decoded back %q, want %q", got, in)
	}
}

func FuzzDecodeUndoesEscape(f *testing.F) {
	for _, s := range []string{"/a b", "%", "%zz", "/ü", "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		if got := Decode(AppendEscapedPath(nil, s)); string(got) != string(s) {
			t.Errorf("Decode(Escape(%q)) = %q", s, got)
		}
		_ = Decode(s) // any input: no panic
	})
}
