package origin

import "testing"

func TestLoadIsRequestsAgainstConnections(t *testing.T) {
	p, err := New(Config{Servers: []string{"http://127.0.0.1:1", "http://127.0.0.1:2"}, MaxConns: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.asking.Add(4) // as four requests in Do would
	if busy, capacity := p.Load(); busy != 4 || capacity != 6 {
		t.Fatalf("Load() = %d, %d; want 4 of 6", busy, capacity)
	}
}
