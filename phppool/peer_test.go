package phppool

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// diagReply builds a sock_diag answer: one message of type typ whose
// data is a unix_diag_msg followed by attrs.
func diagReply(typ uint16, data []byte) []byte {
	b := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(data)+4)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	binary.NativeEndian.PutUint32(b[0:], uint32(len(b)))
	binary.NativeEndian.PutUint16(b[4:], typ)
	return b
}

// unixDiagMsg is a unix_diag_msg with the given attributes (type, value).
func unixDiagMsg(attrs ...[2]uint32) []byte {
	b := make([]byte, unixDiagMsgLen)
	for _, a := range attrs {
		attr := make([]byte, 8)
		binary.NativeEndian.PutUint16(attr[0:], 8)
		binary.NativeEndian.PutUint16(attr[2:], uint16(a[0]))
		binary.NativeEndian.PutUint32(attr[4:], a[1])
		b = append(b, attr...)
	}
	return b
}

func TestParseDiagReplyFindsThePeer(t *testing.T) {
	errMsg := make([]byte, 4)
	errno := -int32(syscall.ENOENT)
	binary.NativeEndian.PutUint32(errMsg, uint32(errno))
	tests := []struct {
		name    string
		reply   []byte
		want    uint32
		wantErr error
	}{
		{"peer attribute", diagReply(unix.SOCK_DIAG_BY_FAMILY, unixDiagMsg([2]uint32{1, 7}, [2]uint32{unixDiagPeer, 4242})), 4242, nil},
		{"not accepted yet: no peer", diagReply(unix.SOCK_DIAG_BY_FAMILY, unixDiagMsg([2]uint32{1, 7})), 0, nil},
		{"no such socket", diagReply(unix.NLMSG_ERROR, errMsg), 0, syscall.ENOENT},
		{"no answer", diagReply(unix.NLMSG_DONE, nil), 0, errNoPeer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseDiagReply(tt.reply)
			if got != tt.want || (tt.wantErr == nil) != (err == nil) || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
				t.Fatalf("parseDiagReply = %d, %v; want %d, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func FuzzParseDiagReply(f *testing.F) {
	f.Add(diagReply(unix.SOCK_DIAG_BY_FAMILY, unixDiagMsg([2]uint32{unixDiagPeer, 4242})))
	f.Add(diagReply(unix.SOCK_DIAG_BY_FAMILY, unixDiagMsg()))
	f.Add(diagReply(unix.NLMSG_ERROR, []byte{0xfe, 0xff, 0xff, 0xff}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = parseDiagReply(b) // must not panic or loop on any input
	})
}

func TestChildrenByParentFindsAChildTheListMisses(t *testing.T) {
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if !slices.Contains(childrenByParent(os.Getpid()), cmd.Process.Pid) {
		t.Errorf("childrenByParent(%d) misses child %d", os.Getpid(), cmd.Process.Pid)
	}
	if parentOf(cmd.Process.Pid) != os.Getpid() {
		t.Errorf("parentOf(%d) = %d, want %d", cmd.Process.Pid, parentOf(cmd.Process.Pid), os.Getpid())
	}
}
