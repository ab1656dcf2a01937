package proxy

import (
	"testing"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// A stored variant answers another Accept-Language when its
// Content-Language is one the request prefers most.
func TestStoredContentLanguageServesTheRequestsTopPreference(t *testing.T) {
	tests := []struct {
		name, accept, contentLanguage string
		want                          bool
	}{
		{"the top range is the language", "de, en;q=0.5", "de", true},
		{"a range takes its subtags", "de;q=0.9, fr;q=0.1", "de-CH", true},
		{"case does not matter", "DE-ch", "de-CH", true},
		{"one of two top ranges", "fr, de", "de", true},
		{"a listed Content-Language", "fr", "de, fr", true},
		{"a lower preference is not enough", "fr, de;q=0.9", "de", false},
		{"a longer range does not take a shorter tag", "de-AT", "de", false},
		{"a prefix that is not a subtag", "d", "de", false},
		{"q=0 refuses", "de;q=0, fr;q=0.1", "de", false},
		{"* names no language", "*", "de", false},
		{"no Content-Language", "de", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &cache.Entry{}
			if tt.contentLanguage != "" {
				e.Header = []cache.Field{{Name: []byte("Content-Language"), Value: []byte(tt.contentLanguage)}}
			}
			top, ok := topLanguages([]byte(tt.accept))
			if got := ok && servesLanguage(e, &top); got != tt.want {
				t.Fatalf("Accept-Language %q, Content-Language %q: %v, want %v", tt.accept, tt.contentLanguage, got, tt.want)
			}
		})
	}
}

// Only the Accept-Language value may differ between the stored variant
// and the request's.
func TestLanguageSelectionKeepsTheOtherSelectingValues(t *testing.T) {
	tests := []struct {
		name, stored, request string
		want                  bool
	}{
		{"only the language differs", "a\x00de\x00c\x00", "a\x00en\x00c\x00", true},
		{"another value differs", "a\x00de\x00c\x00", "b\x00de\x00c\x00", false},
		{"a cookie differs", "a\x00de\x00c\x00", "a\x00de\x00d\x00", false},
		{"another shape", "a\x00de\x00", "a\x00de\x00c\x00", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sameExcept(tt.stored, []byte(tt.request), 1); got != tt.want {
				t.Fatalf("sameExcept(%q, %q, 1) = %v, want %v", tt.stored, tt.request, got, tt.want)
			}
		})
	}
}

func FuzzTopLanguagesNeverPanics(f *testing.F) {
	f.Add("de-CH, de;q=0.9, en;q=0.5, *;q=0.1", "de")
	f.Add(",,;q=,", "")
	f.Fuzz(func(t *testing.T, accept, contentLanguage string) {
		top, _ := topLanguages([]byte(accept))
		e := &cache.Entry{Header: []cache.Field{{Name: []byte("Content-Language"), Value: []byte(contentLanguage)}}}
		servesLanguage(e, &top)
	})
}
