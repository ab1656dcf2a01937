package main_test

// A hit sent from a cache file whose pages left the page cache makes the
// kernel read them from the disk inside sendfile. Sent with a raw system
// call, that read held the thread and Go's only P with it (GOMAXPROCS=1,
// as on a small shared host): every other client waited for the disk.
// A file not sent lately is now sent with an ordinary system call, which
// the scheduler sees and hands the P to another thread for.

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"golang.org/x/sys/unix"
)

// dropFromPageCache writes the file at path back and drops its pages from
// the page cache; it reports the share of its pages still cached.
func dropFromPageCache(t *testing.T, path string) float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	if err := unix.Fdatasync(fd); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(fd, 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m) //nolint:errcheck // read-only mapping
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	in := 0
	for _, v := range vec {
		in += int(v & 1)
	}
	return float64(in) / float64(len(vec))
}

// throttleReads makes the disk under dir read at bps bytes a second for
// the process pid (slowReads).
func throttleReads(t *testing.T, dir string, pid int, bps int) {
	t.Helper()
	if err := os.WriteFile(slowReads(t, dir, bps), []byte(strconv.Itoa(pid)), 0); err != nil {
		t.Fatal(err)
	}
}

// cgroups numbers the test process's cgroups.
var cgroups atomic.Int32

// slowReads makes a cgroup whose processes read the disk under dir at bps
// bytes a second, as a busy or throttled disk of a shared host does (a
// blkio cgroup of v1, io.max on v2), and returns its cgroup.procs, where
// a process id written joins it. At cleanup its processes go back to the
// root cgroup and it is removed. Without root or the controller the test
// is skipped (a failure in CI).
func slowReads(t *testing.T, dir string, bps int) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	dev := wholeDisk(t, unix.Major(st.Dev), unix.Minor(st.Dev))
	root, limit, line := "/sys/fs/cgroup/blkio", "blkio.throttle.read_bps_device", fmt.Sprintf("%s %d", dev, bps)
	if _, err := os.Stat(root); err != nil {
		root, limit, line = "/sys/fs/cgroup", "io.max", fmt.Sprintf("%s rbps=%d", dev, bps)
		if err := os.WriteFile(filepath.Join(root, "cgroup.subtree_control"), []byte("+io"), 0); err != nil {
			testbed.Skipf(t, "no blkio or io cgroup controller to slow the disk with: %v", err)
		}
	}
	cg := filepath.Join(root, fmt.Sprintf("ramjet-test-%d-%d", os.Getpid(), cgroups.Add(1)))
	if err := os.Mkdir(cg, 0o755); err != nil {
		testbed.Skipf(t, "cannot make a cgroup to slow the disk with: %v", err)
	}
	procs := filepath.Join(cg, "cgroup.procs")
	t.Cleanup(func() {
		b, _ := os.ReadFile(procs)
		for _, pid := range strings.Fields(string(b)) {
			os.WriteFile(filepath.Join(root, "cgroup.procs"), []byte(pid), 0) //nolint:errcheck // it may have exited
		}
		if err := os.Remove(cg); err != nil {
			t.Errorf("remove the test's cgroup: %v", err)
		}
	})
	if err := os.WriteFile(filepath.Join(cg, limit), []byte(line), 0); err != nil {
		testbed.Skipf(t, "cannot bound the disk's reads (%s %q): %v", limit, line, err)
	}
	return procs
}

// wholeDisk is the device MAJ:MIN of the disk that holds the block
// device maj:min (itself, or the disk of a partition): read bounds apply
// to whole disks.
func wholeDisk(t *testing.T, maj, min uint32) string {
	t.Helper()
	dev := fmt.Sprintf("%d:%d", maj, min)
	sys := filepath.Join("/sys/dev/block", dev)
	if _, err := os.Stat(filepath.Join(sys, "partition")); err != nil {
		return dev
	}
	b, err := os.ReadFile(filepath.Join(sys, "..", "dev"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// cacheFiles are the disk tier's object files under dir.
func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "objects", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// probe asks for path on one kept-alive connection again and again until
// stop closes, and returns the longest an answer took.
func probe(t *testing.T, addr, path string, stop <-chan struct{}) (longest time.Duration, n int) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return 0, 0
	}
	defer c.Close()
	br := bufio.NewReader(c)
	req := "GET " + path + " HTTP/1.1\r\nHost: cold.test\r\n\r\n"
	for {
		select {
		case <-stop:
			return longest, n
		default:
		}
		began := time.Now()
		if _, err := io.WriteString(c, req); err != nil {
			t.Error(err)
			return longest, n
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Error(err)
			return longest, n
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Error(err)
			return longest, n
		}
		longest = max(longest, time.Since(began))
		n++
	}
}

// incompressible is n random bytes: a body stored and sent as it is,
// with no compressed copy beside it.
func incompressible(n int) []byte {
	b := make([]byte, n)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// startWithBigPage starts ramjet on one P (GOMAXPROCS=1, as on a small
// shared host) with a disk tier, in front of an origin of two pages,
// /big (size incompressible bytes) and /small, and caches both: their
// files are written, /big never sent from its file yet.
func startWithBigPage(t *testing.T, size int) (rj *testbed.Ramjet, dir string, c *http.Client) {
	t.Helper()
	big := incompressible(size)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=600")
		w.Header().Set("Content-Type", "application/octet-stream")
		if r.URL.Path == "/big" {
			w.Header().Set("Content-Length", strconv.Itoa(size))
			w.Write(big) //nolint:errcheck // the test's own origin
			return
		}
		io.WriteString(w, "small page") //nolint:errcheck // the test's own origin
	}))
	t.Cleanup(origin.Close)
	dir = t.TempDir()
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf("cache:\n  size: 256MiB\n  max_object_size: 64MiB\n  disk:\n    path: %q\n    size: 1GiB\n", dir))
	rj = testbed.NewRamjet(t)
	rj.Env = []string{"GOMAXPROCS=1"}
	rj.Start(t, "--origin", origin.URL, "--config", cfg)
	c = newClient(t)
	for _, p := range []string{"/big", "/small"} {
		mustMissStored(t, get(t, c, rj.URL+p, "Host: cold.test"), p)
	}
	if !testbed.Poll(testbed.StopTimeout, func() bool { return metricValue(t, rj.AdminURL, "ramjet_disk_written_total") >= 2 }) {
		t.Fatal("the pages were never written to disk")
	}
	mustFreshHit(t, get(t, c, rj.URL+"/small", "Host: cold.test"), "/small")
	return rj, dir, c
}

func TestOtherClientsAreServedWhileAHitIsSentFromAColdCacheFile(t *testing.T) {
	const size, bps = 3 << 20, 1 << 20
	rj, dir, c := startWithBigPage(t, size)
	var file string
	for _, f := range cacheFiles(t, dir) {
		if st, err := os.Stat(f); err == nil && st.Size() > size {
			file = f
		}
	}
	if file == "" {
		t.Fatal("no cache file holds /big")
	}
	if cached := dropFromPageCache(t, file); cached > 0.1 {
		testbed.Skipf(t, "%.0f%% of the cache file's pages stayed in the page cache after FADV_DONTNEED", cached*100)
	}
	throttleReads(t, dir, rj.Pid(), bps)

	stop := make(chan struct{})
	type res struct {
		longest time.Duration
		n       int
	}
	done := make(chan res, 1)
	go func() { l, n := probe(t, rj.Addr, "/small", stop); done <- res{l, n} }()
	began := time.Now()
	r := get(t, c, rj.URL+"/big", "Host: cold.test")
	took := time.Since(began)
	close(stop)
	p := <-done
	mustFreshHit(t, r, "/big")
	if len(r.Body) != size {
		t.Fatalf("/big: %d bytes", len(r.Body))
	}
	t.Logf("the cold hit took %v; the other client had %d answers meanwhile, the longest in %v", took, p.n, p.longest)
	if p.n == 0 {
		t.Fatal("the other client had no answer while the cold hit was sent")
	}
	if took < time.Second {
		t.Fatalf("the cold hit took %v, not the %v its throttled reads take: the test's file was not cold", took, size*time.Second/bps)
	}
	if v := metricValue(t, rj.AdminURL, "ramjet_disk_sendfile_total"); v != 1 {
		t.Fatalf("ramjet_disk_sendfile_total = %v, want the 1 cold hit sent from its file", v)
	}
	// One sendfile reads as much as the socket's buffer takes (about 2 MB
	// on loopback), nearly two seconds from this disk: on a raw call the
	// other client waited as long (1.7 s); on an ordinary one the
	// scheduler hands the P over within milliseconds.
	if p.longest > 500*time.Millisecond {
		t.Fatalf("while a cold file was sent, another client's hit waited %v (%d answers in %v): the disk's reads held ramjet's only P", p.longest, p.n, took)
	}
}
