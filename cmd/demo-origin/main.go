// Command demo-origin is a tiny origin for trying ramjet without nginx:
// `make run` starts it behind ramjet. Its pages say how they may be
// cached, the way an application behind ramjet would.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("listen", "127.0.0.1:8081", "address to listen on")
	flag.Parse()
	var served atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		n := served.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=60")
		w.Header().Set("X-LiteSpeed-Tag", "demo,page")
		fmt.Fprintf(w, "<!doctype html><title>ramjet demo</title>\n<h1>Hello from the origin</h1>\n"+
			"<p>Rendered at %s (origin response #%d). Cached by ramjet for 60 s: reload and the time stays.</p>\n%s",
			time.Now().Format(time.RFC3339Nano), n, strings.Repeat("<p>filler to make the page compressible.</p>\n", 40))
	})
	mux.HandleFunc("/private", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "private, no-store")
		fmt.Fprintf(w, "private page rendered at %s\n", time.Now().Format(time.RFC3339Nano))
	})
	log.Printf("demo origin on http://%s", *addr)
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
