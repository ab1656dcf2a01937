package purge

import (
	"context"
	"errors"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// startAdmin runs the real API on a fasthttp server on 127.0.0.1:0, with
// a few extra paths that misbehave. It returns the base URL.
func startAdmin(t *testing.T, cfg APIConfig, a Applier) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	api := NewAPI(cfg, a)
	release := make(chan struct{})
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Path()) {
		case "/purge", "/base/purge":
			api.ServePurge(ctx)
		case "/redirect/purge":
			ctx.Redirect("/purge", fasthttp.StatusFound)
		case "/slow/purge":
			<-release
		default:
			ctx.Error("no such page", fasthttp.StatusNotFound)
		}
	}}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		close(release)
		if err := srv.Shutdown(); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return "http://" + ln.Addr().String()
}

func TestSendRoundTrip(t *testing.T) {
	f := &fakeApplier{}
	base := startAdmin(t, APIConfig{Token: "tok"}, f)
	r := Request{Tags: []string{"368_Po.1", "368_T.3"}, URLs: []string{"/a"}, Prefixes: []string{"/blog/"}, Soft: true, Host: "ex.com"}
	for _, admin := range []string{base, base + "/", base + "/base"} {
		t.Run(admin, func(t *testing.T) {
			got, err := Send(context.Background(), ClientConfig{Admin: admin, Token: "tok"}, r)
			if err != nil {
				t.Fatal(err)
			}
			if want := (Result{Tags: 2, URLs: 1, Prefixes: 1}); got != want {
				t.Fatalf("result %+v, want %+v", got, want)
			}
			cmd, _ := f.last()
			want := Command{Host: "ex.com", Targets: []Target{
				{KindTag, "368_Po.1", true}, {KindTag, "368_T.3", true}, {KindURL, "/a", true}, {KindPrefix, "/blog/", true}}}
			if !reflect.DeepEqual(cmd, want) {
				t.Fatalf("applied %+v, want %+v", cmd, want)
			}
		})
	}
}

func TestSendAll(t *testing.T) {
	f := &fakeApplier{}
	base := startAdmin(t, APIConfig{}, f)
	got, err := Send(context.Background(), ClientConfig{Admin: base}, Request{All: true})
	if err != nil || !got.All {
		t.Fatalf("Send all = %+v, %v", got, err)
	}
}

func TestSendReportsRefusals(t *testing.T) {
	base := startAdmin(t, APIConfig{Token: "tok"}, &fakeApplier{})
	tests := []struct {
		name    string
		cfg     ClientConfig
		req     Request
		code    int
		msgPart string
	}{
		{"no token", ClientConfig{Admin: base}, Request{Tags: []string{"a"}}, 401, "unauthorized"},
		{"wrong token", ClientConfig{Admin: base, Token: "nope"}, Request{Tags: []string{"a"}}, 401, "unauthorized"},
		{"nothing to purge", ClientConfig{Admin: base, Token: "tok"}, Request{Soft: true}, 400, "nothing to purge"},
		{"bad url", ClientConfig{Admin: base, Token: "tok"}, Request{URLs: []string{"x"}}, 400, "absolute"},
		{"not our API", ClientConfig{Admin: base + "/nothing", Token: "tok"}, Request{All: true}, 404, "no such page"},
		{"redirect not followed", ClientConfig{Admin: base + "/redirect", Token: "tok"}, Request{All: true}, 302, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Send(context.Background(), tt.cfg, tt.req)
			var se *StatusError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want *StatusError", err)
			}
			if se.Code != tt.code || !strings.Contains(se.Message, tt.msgPart) {
				t.Fatalf("got %d %q, want %d containing %q", se.Code, se.Message, tt.code, tt.msgPart)
			}
			if !strings.Contains(err.Error(), tt.msgPart) {
				t.Fatalf("error text %q lacks the server message", err)
			}
		})
	}
}

func TestSendTransportErrors(t *testing.T) {
	base := startAdmin(t, APIConfig{}, &fakeApplier{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  ClientConfig
	}{
		{"empty admin", ClientConfig{}},
		{"no scheme", ClientConfig{Admin: "127.0.0.1:9090"}},
		{"ftp", ClientConfig{Admin: "ftp://127.0.0.1"}},
		{"refused", ClientConfig{Admin: closed}},
		{"timeout", ClientConfig{Admin: base + "/slow", Timeout: 100 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Send(context.Background(), tt.cfg, Request{All: true})
			var se *StatusError
			if err == nil || errors.As(err, &se) {
				t.Fatalf("err = %v, want a transport or config error", err)
			}
		})
	}
}
