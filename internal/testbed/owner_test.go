package testbed

import (
	"net"
	"os"
	"os/exec"
	"testing"
)

// TestAListenerOfAnotherProcessIsNotTheStartedOnes: a port another
// process listens on does not count as the started process's, and one
// of this process's own does (the test's process stands in for it).
func TestAListenerOfAnotherProcessIsNotTheStartedOnes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	other := exec.Command("sleep", "5")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	if ownsListener(&proc{cmd: other}, ln.Addr().String()) {
		t.Fatal("the test's listener counted as another process's")
	}
	self := exec.Command("true")
	if self.Process, err = os.FindProcess(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if !ownsListener(&proc{cmd: self}, ln.Addr().String()) {
		t.Fatal("the test's own listener not found among its descriptors")
	}
}

// TestAPortHandedOutIsNotHandedOutAgainSoon: FreePorts never returns a
// port it returned lately, even one the kernel offers again because
// nothing bound it yet.
func TestAPortHandedOutIsNotHandedOutAgainSoon(t *testing.T) {
	seen := map[int]bool{}
	for range 200 {
		p := FreePort(t)
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
}
