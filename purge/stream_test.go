package purge

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestFanoutStreamID(t *testing.T) {
	for _, s := range []string{"0-0", "1526919030474-55", "18446744073709551615-18446744073709551615"} {
		id, err := parseStreamID(s)
		if err != nil || id.String() != s {
			t.Errorf("parse %q = %v, %v", s, id, err)
		}
	}
	for _, s := range []string{"", "1", "1-", "-1", "a-1", "1-1-1", "1-b"} {
		if _, err := parseStreamID(s); err == nil {
			t.Errorf("parse %q succeeded", s)
		}
	}
	if !(streamID{1, 9}).less(streamID{2, 0}) || !(streamID{2, 0}).less(streamID{2, 1}) || (streamID{2, 1}).less(streamID{2, 1}) {
		t.Error("less is not the stream order")
	}
}

func TestFanoutGapDetection(t *testing.T) {
	// Redis 7 reports entries-added and recorded-first-entry-id.
	v7 := func(added, length int64, first, last string) look {
		return look{exists: true, epoch: "e", last: mustID(t, last), info: &redis.XInfoStream{
			EntriesAdded: added, Length: length, LastGeneratedID: last,
			RecordedFirstEntryID: first, FirstEntry: redis.XMessage{ID: first},
		}}
	}
	v6 := func(length int64, first, last string) look {
		return look{exists: true, epoch: "e", last: mustID(t, last), info: &redis.XInfoStream{
			Length: length, LastGeneratedID: last, FirstEntry: redis.XMessage{ID: first},
		}}
	}
	at := func(id string, seen int64) cursor {
		return cursor{placed: true, id: mustID(t, id), seen: seen, epoch: "e"}
	}
	tests := []struct {
		name string
		cur  cursor
		look look
		gap  bool
	}{
		{"caught up", at("5-0", 5), v7(5, 5, "1-0", "5-0"), false},
		{"behind, nothing trimmed", at("3-0", 3), v7(5, 5, "1-0", "5-0"), false},
		{"trimmed only what was seen", at("3-0", 3), v7(5, 2, "4-0", "5-0"), false},
		{"trimmed up to the next entry, which survives", at("3-0", 3), v7(9, 6, "4-0", "9-0"), false},
		{"trimmed past the position", at("3-0", 3), v7(9, 5, "5-0", "9-0"), true},
		{"epoch changed", at("3-0", 3), look{epoch: "other"}, true},
		{"stream deleted", at("3-0", 3), look{epoch: "e"}, true},
		{"stream never existed", at("0-0", 0), look{epoch: "e"}, false},
		{"stream recreated", at("3-0", 3), v7(2, 2, "1-0", "2-0"), true},
		{"fewer added than seen", at("3-0", 3), v7(2, 2, "1-0", "4-0"), true},
		{"placed on a missing stream, then created", at("0-0", 0), v7(2, 2, "7-0", "8-0"), false},
		{"redis 6: head at or below position", at("3-0", 3), v6(3, "3-0", "5-0"), false},
		{"redis 6: head past position", at("3-0", 3), v6(3, "4-0", "6-0"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cur.gap(tt.look); (got != nil) != tt.gap {
				t.Errorf("gap = %v, want gap %v", got, tt.gap)
			}
		})
	}
}

func mustID(t *testing.T, s string) streamID {
	t.Helper()
	id, err := parseStreamID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
